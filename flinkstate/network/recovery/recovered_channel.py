"""A restored task's recovered input channels: their buffers and their conversion.

Until its gate is converted, each input channel of a restored task is a
``RecoveredInputChannel``: it has no credit-based buffers of its own, but requests its
exclusive buffers from the global pool the first time the reader needs one
(``RecoveredInputChannel.requestBufferBlocking``), and after those takes floating buffers of
the gate. Every recovery generation's reader takes its buffers this way (the classic reader for
the recovered data itself, V1 for pre- and post-filter buffers, V2's no-filtering handler for the
buffer it copies to disk), so it is written here once. Conversion (``toInputChannel``) gives
the idle recovery buffers back and lets the physical channels take their exclusive ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from flinkstate.network.actors import ActorRef
from flinkstate.network.buffer import HEAP
from flinkstate.network.channel_state_reader import ChannelStateReader
from flinkstate.network.consumer import Channel, Gate
from flinkstate.network.owners import Owner
from flinkstate.network.task import Task

if TYPE_CHECKING:
    from flinkstate.network.state import NetworkState


def reader_target(world: NetworkState, reader: ChannelStateReader) -> tuple[Task, Gate, Channel]:
    """The task, gate and recovered channel the reader works for now: the channel of the
    buffer it holds (V1's pre-filter buffer), else the first target of its next chunk."""
    task = world.task_named(reader.task)
    if reader.pre_channel:
        channel = world.channels[reader.pre_channel]
        return task, world.gate_of(channel), channel
    chunk = reader.chunks[0]
    gate = task.gates[chunk.index]
    return task, gate, gate.channels[chunk.targets[0]]


def check_virtual_channel(
    world: NetworkState, gate: Gate, descriptor: tuple[int, int], channel: Channel | None = None
) -> bool:
    """Whether the rescaled gate knows the virtual channel (old subtask, old channel) a
    recovered buffer names; a ``virtual-channel`` violation if not.

    The task's demultiplexer knows those of the buffer's ``channel``
    (``DemultiplexingRecordDeserializer.select``); the reader's filtering handler, given no
    channel, those of every channel of the gate (``ChannelStateFilteringHandler``). Flink
    throws an ``IllegalStateException`` for any other: the buffer reached a subtask whose
    rescaling descriptor does not name the old subtask it comes from, which a wrong channel
    mapping does (before FLINK-40269, docs/concepts/hazards.md#duplicate-edges)."""
    plan = gate.plan
    assert plan is not None
    channels = plan.virtual_channels if channel is None else (plan.virtual_channels[channel.index],)
    known = sorted({(vc.old_subtask, vc.old_channel) for vcs in channels for vc in vcs})
    if tuple(descriptor) in known:
        return True
    where = gate.name if channel is None else channel.name
    world.journal.violate(
        "virtual-channel",
        f"a recovered buffer of old subtask {descriptor[0]}, old channel {descriptor[1]} "
        f"reached {where}, which knows only the virtual channels {known}: its subtask's "
        "rescaling descriptor does not name that old subtask (Flink throws "
        "IllegalStateException)",
    )
    return False


def needs_exclusive(gate: Gate, channel: Channel) -> bool:
    """The channel has not requested its exclusive buffers yet (and the gate has some)."""
    return not channel.recovery.segments and gate.exclusive_per_channel > 0


def exclusive_request(world: NetworkState, gate: Gate, channel: Channel) -> tuple[str, str] | None:
    """The reader's step that requests the exclusive buffers, once the global pool has them."""
    if world.buffer_pools.free_in(gate.pool.global_pool) >= gate.exclusive_per_channel:
        return ("request-exclusive", channel.name)
    return None


def has_buffer(world: NetworkState, gate: Gate, channel: Channel) -> bool:
    """An exclusive buffer of the channel is idle, or the gate's pool can give a floating one."""
    return bool(channel.recovery.exclusive) or world.buffer_pools.can_request(gate.pool, False)


def buffer_step(
    world: NetworkState, gate: Gate, channel: Channel, kind: str
) -> tuple[str, str] | None:
    """A reader step of ``kind`` that needs a buffer of the channel: first its exclusive
    buffers are requested, then it waits for one (exclusive or floating) to be there."""
    if needs_exclusive(gate, channel):
        return exclusive_request(world, gate, channel)
    if has_buffer(world, gate, channel):
        return (kind, channel.name)
    return None


def request_exclusive(world: NetworkState, gate: Gate, channel: Channel) -> None:
    """The channel takes its exclusive buffers from the global pool."""
    taken = world.buffer_pools.take(
        gate.pool.global_pool, gate.exclusive_per_channel, channel.owners.recovered_exclusive
    )
    channel.recovery.segments = frozenset(taken)
    channel.recovery.exclusive = taken
    world.journal.changes.channel(channel.name)
    world.journal.note = f"{len(taken)} exclusive buffers for recovered channel {channel.name}"


def take_buffer(world: NetworkState, gate: Gate, channel: Channel, holder: Owner) -> int:
    """A buffer of the channel for ``holder``: an exclusive one, else a floating one of the
    gate (:func:`has_buffer` said one is there)."""
    if channel.recovery.exclusive:
        segment = channel.recovery.exclusive.pop()
        world.ledger.move(segment, channel.owners.recovered_exclusive, holder)
        return segment
    floating = world.buffer_pools.request(gate.pool, holder)
    assert floating is not None
    return floating


def recycle(world: NetworkState, channel: Channel, segment: int, holder: Owner) -> None:
    """A buffer taken with :func:`take_buffer` returns: to the channel if it is one of its
    exclusive buffers, else to the gate's pool."""
    world.journal.changes.channel(channel.name)
    if segment in channel.recovery.segments:
        world.ledger.move(segment, holder, channel.owners.recovered_exclusive)
        channel.recovery.exclusive.append(segment)
    else:
        world.buffer_pools.recycle(world.gate_of(channel).pool, segment, holder)


def convert_gate(
    world: NetworkState,
    gate: Gate,
    exclusive: Callable[[Channel], bool],
    *,
    keep_recovery_segments: bool = False,
) -> None:
    """Recovered channels become local and remote ones: the recovered channels' idle buffers
    go back to the global pool, and the channels ``exclusive`` picks take their exclusive ones.
    With migrated buffers still in use (V1) the channel remembers which were its recovery
    buffers, so that they too go back to the global pool once consumed."""
    pools = world.buffer_pools
    global_pool = gate.pool.global_pool
    for channel in gate.channels:
        idle = channel.recovery.exclusive
        for segment in idle:
            pools.give_back(global_pool, segment, channel.owners.recovered_exclusive)
        channel.recovery.exclusive = []
        channel.recovery.segments = (
            channel.recovery.segments - frozenset(idle) if keep_recovery_segments else frozenset()
        )
    for channel in gate.channels:
        if exclusive(channel) and gate.exclusive_per_channel:
            taken = pools.take(global_pool, gate.exclusive_per_channel, channel.owners.exclusive)
            for segment in taken:
                world.ledger.rehome(segment, channel.owners.exclusive)
            channel.buffers.exclusive_segments = frozenset(taken)
            channel.buffers.exclusive = taken
        channel.recovered = False
        world.journal.changes.channel(channel.name)
        world.journal.changes.subpartition(channel.subpartition)
    world.journal.changes.network_pool(global_pool)
    gate.converted = True


def buffer_holders(world: NetworkState, gate: Gate, *, received: bool = False) -> set[ActorRef]:
    """The tasks holding network buffers of the gate's channels: recovered buffers queued in
    a channel (and, ``received``, received ones) or the buffer in the task's deserializer.
    For waits-for reports: whoever must consume them before a buffer comes back."""
    owner = world.owner
    holders = set()
    for channel in gate.channels:
        queued = channel.owners.recovered
        if any(
            b.event is None and b.segment != HEAP and owner[b.segment] == queued
            for b in channel.recovery.queue
        ):
            holders.add(world.actor(channel.task))
        got = channel.owners.received
        if received and any(b.event is None and owner[b.segment] == got for b in channel.received):
            holders.add(world.actor(channel.task))
    task = world.task_named(gate.task)
    current = task.current_buffer
    if (
        current is not None
        and current.segment != HEAP
        and owner[current.segment] == task.deserializer
    ):
        holders.add(world.actor(task.name))
    return holders
