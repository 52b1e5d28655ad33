"""A restored task's recovered input channels: their buffers and their conversion.

Until its gate is converted, each input channel of a restored task is a
``RecoveredInputChannel``: it has no credit-based buffers of its own, but requests its
exclusive buffers from the global pool the first time the reader needs one
(``RecoveredInputChannel.requestBufferBlocking``), and after those takes floating buffers of
the gate. Every recovery generation's reader takes its buffers this way (the classic reader for
the recovered data itself, V1 for pre- and post-filter buffers, V2's no-filtering handler for the
buffer it copies to disk), so it is written here once. Conversion (``toInputChannel``) gives
the idle recovery buffers back and lets the physical channels take their exclusive ones; it
refuses, as Flink's checks there do, a channel recovery is not done with
(``conversion_refusal``): an ``IllegalStateException`` in Flink, which fails the task. Before
FLINK-18989 (``ConversionCheck``) it checked nothing, and releasing the converted channel
(``release_queued``) recycled what it still queued: recovered records lost.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Protocol

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorRef
from flinkstate.runtime.buffer.buffer import HEAP, Buffer
from flinkstate.runtime.buffer.ledger import SegmentLedger, StepJournal
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.buffer.pools import BufferPools
from flinkstate.runtime.options import RecoveryGeneration, RunOptions
from flinkstate.runtime.partition.consumer.input_gate import Channel, Gate
from flinkstate.runtime.partition.happenings import RecoveredExclusiveBuffersTaken


class RecoveringTask(Protocol):
    """A restored task as its recovered channels see it: its gates, and the buffer its record
    deserializer holds (a holder of a recovered buffer too). The task (``Task``) is one; mypy
    checks it at every call."""

    @property
    def name(self) -> str: ...
    @property
    def gates(self) -> list[Gate]: ...
    @property
    def current_buffer(self) -> Buffer | None: ...
    @property
    def deserializer(self) -> Owner: ...


class ChunkTarget(Protocol):
    """Where a recovered buffer goes: gate ``index`` of the task, and its channels there."""

    @property
    def index(self) -> int: ...
    @property
    def targets(self) -> tuple[int, ...]: ...


class StateReader(Protocol):
    """A restored task's channel-state reader as its recovered channels see it (Flink's
    ``ChannelStateReader`` fills them): the task it reads for, the buffers still to read and
    where they go, the channel of the buffer it holds, and whether it is done. The reader
    (``ChannelStateReader``) is one; mypy checks it at every call."""

    @property
    def task(self) -> str: ...
    @property
    def chunks(self) -> Sequence[ChunkTarget]: ...
    @property
    def pre_channel(self) -> str: ...
    @property
    def finished(self) -> bool: ...


class RecoveredChannelWorld(Protocol):
    """What a recovered channel reaches of the world: the channels and their gates, the
    buffer pools and the ledger its buffers move through, the readers that fill it, the tasks
    by name and their actors (for waits-for), the recovery generation, and the step's journal.
    The world (``NetworkState``) is one; mypy checks it at every call."""

    @property
    def channels(self) -> dict[str, Channel]: ...
    def gate_of(self, channel: Channel) -> Gate: ...
    @property
    def buffer_pools(self) -> BufferPools: ...
    @property
    def ledger(self) -> SegmentLedger: ...
    @property
    def owner(self) -> list[Owner]: ...
    @property
    def readers(self) -> Mapping[str, StateReader]: ...
    def task_named(self, name: str) -> RecoveringTask: ...
    def actor(self, name: str) -> ActorRef: ...
    @property
    def effective_generation(self) -> RecoveryGeneration: ...
    @property
    def options(self) -> RunOptions: ...
    @property
    def journal(self) -> StepJournal: ...


_REQUEST_EXCLUSIVE = ActionKind.REQUEST_EXCLUSIVE


def reader_target(world: RecoveredChannelWorld, reader: StateReader) -> tuple[Gate, Channel]:
    """The gate and recovered channel the reader works for now: the channel of the
    buffer it holds (V1's pre-filter buffer), else the first target of its next chunk."""
    if reader.pre_channel:
        channel = world.channels[reader.pre_channel]
        return world.gate_of(channel), channel
    chunk = reader.chunks[0]
    gate = world.task_named(reader.task).gates[chunk.index]
    return gate, gate.channels[chunk.targets[0]]


def check_virtual_channel(
    world: RecoveredChannelWorld,
    gate: Gate,
    descriptor: tuple[int, int],
    channel: Channel | None = None,
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


def exclusive_request(
    world: RecoveredChannelWorld, gate: Gate, channel: Channel
) -> tuple[ActionKind, str] | None:
    """The reader's step that requests the exclusive buffers, once the global pool has them."""
    if world.buffer_pools.free_in(gate.pool.global_pool) >= gate.exclusive_per_channel:
        return (_REQUEST_EXCLUSIVE, channel.name)
    return None


def has_buffer(world: RecoveredChannelWorld, gate: Gate, channel: Channel) -> bool:
    """An exclusive buffer of the channel is idle, or the gate's pool can give a floating one."""
    return bool(channel.recovery.exclusive) or world.buffer_pools.can_request(gate.pool, False)


def buffer_step(
    world: RecoveredChannelWorld, gate: Gate, channel: Channel, kind: ActionKind
) -> tuple[ActionKind, str] | None:
    """A reader step of ``kind`` that needs a buffer of the channel: first its exclusive
    buffers are requested, then it waits for one (exclusive or floating) to be there."""
    if needs_exclusive(gate, channel):
        return exclusive_request(world, gate, channel)
    if has_buffer(world, gate, channel):
        return (kind, channel.name)
    return None


def request_exclusive(world: RecoveredChannelWorld, gate: Gate, channel: Channel) -> None:
    """The channel takes its exclusive buffers from the global pool."""
    taken = world.buffer_pools.take(
        gate.pool.global_pool, gate.exclusive_per_channel, channel.owners.recovered_exclusive
    )
    channel.on_recovery_exclusive_buffers(taken, world.journal.changes)
    world.journal.tell(RecoveredExclusiveBuffersTaken(len(taken), channel.name))


def take_buffer(world: RecoveredChannelWorld, gate: Gate, channel: Channel, holder: Owner) -> int:
    """A buffer of the channel for ``holder``: an exclusive one, else a floating one of the
    gate (:func:`has_buffer` said one is there)."""
    segment = channel.request_recovery_buffer(world.journal.changes)
    if segment is not None:
        world.ledger.move(segment, channel.owners.recovered_exclusive, holder)
        return segment
    floating = world.buffer_pools.request(gate.pool, holder)
    assert floating is not None
    return floating


def recycle(world: RecoveredChannelWorld, channel: Channel, segment: int, holder: Owner) -> None:
    """A buffer taken with :func:`take_buffer` returns: to the channel if it is one of its
    exclusive buffers, else to the gate's pool."""
    if channel.recycle_recovered(segment, world.journal.changes):
        world.ledger.move(segment, holder, channel.owners.recovered_exclusive)
    else:
        world.buffer_pools.recycle(world.gate_of(channel).pool, segment, holder)


class ConversionRefusal(StrEnum):
    """Why ``RecoveredInputChannel.toInputChannel`` refuses to turn a recovered channel into a
    local or remote one. Each is a state check there: Flink throws an
    ``IllegalStateException``, ``SingleInputGate.convertRecoveredInputChannels`` stores it as
    the channel's error, and the task fails when it next reads the channel."""

    #: ``release-2.3`` with checkpointing during recovery: the reader has not finished filtering
    FILTERING_INCOMPLETE = "filtering-incomplete"
    #: up to ``release-2.3`` with checkpointing during recovery off: the task has not consumed
    #: the channel's recovered state
    STATE_NOT_CONSUMED = "state-not-consumed"
    #: master: the channel still queues what recovery put into it
    BUFFERS_QUEUED = "buffers-queued"

    @property
    def meaning(self) -> str:
        """What is not done yet, in the model's words."""
        return {
            "filtering-incomplete": "its reader has not filtered all of its recovered state yet",
            "state-not-consumed": (
                "the task has not consumed its recovered state (its end-of-state event) yet"
            ),
            "buffers-queued": (
                "it still queues recovered buffers or events the task has not taken yet"
            ),
        }[self.value]

    @property
    def flink(self) -> str:
        """Which Flink checks it, and when."""
        return {
            "filtering-incomplete": "Flink 2.3, with checkpointing during recovery on",
            "state-not-consumed": "Flink up to 2.3, with checkpointing during recovery off",
            "buffers-queued": "Flink master; up to 2.3 as recovered state not consumed",
        }[self.value]


def conversion_refusal(world: RecoveredChannelWorld, channel: Channel) -> ConversionRefusal | None:
    """Whether ``toInputChannel`` would convert ``channel`` now: None if it would (or if the
    channel is no recovered channel), else why not. V1 (Flink 2.3 with checkpointing during
    recovery) asks only that the reader has filtered everything, since the buffers still queued
    migrate into the physical channel; otherwise master asks that nothing is queued any more,
    and the releases up to 2.3 that the recovered state is consumed (its end-of-state event,
    queued last, taken), which in the classic sequence is the same moment once the reader is
    done. Before FLINK-18989 (``ConversionCheck.NONE``, Flink 1.11) it refuses nothing."""
    if not channel.recovered or not world.options.conversion_check.checks:
        return None
    generation = world.effective_generation
    if generation is RecoveryGeneration.V1:
        reader = world.readers.get(channel.task)
        if reader is not None and not reader.finished:
            return ConversionRefusal.FILTERING_INCOMPLETE
        return None
    if channel.recovery.queue:
        return ConversionRefusal.BUFFERS_QUEUED
    if generation is RecoveryGeneration.CLASSIC and not channel.recovery.state_consumed:
        return ConversionRefusal.STATE_NOT_CONSUMED
    return None


def refuse_conversion(world: RecoveredChannelWorld, gate: Gate) -> str | None:
    """Flink's checks of ``toInputChannel`` for every channel of ``gate``, before any is
    converted: None if all pass; else the invariant ``conversion-with-buffers`` names the
    first channel refused and why, and the cause of the task's failure is returned (the
    caller fails the task; Flink would have converted the channels before that one)."""
    for channel in gate.channels:
        refusal = conversion_refusal(world, channel)
        if refusal is None:
            continue
        world.journal.violate(
            "conversion-with-buffers",
            f"{channel.name} cannot be converted while {refusal.meaning}: "
            f"RecoveredInputChannel.toInputChannel refuses it ({refusal.flink}) with an "
            "IllegalStateException",
        )
        return f"converting {channel.name} failed: {refusal.meaning}"
    return None


def release_queued(world: RecoveredChannelWorld, channel: Channel) -> int:
    """``RecoveredInputChannel.releaseAllResources``: every buffer the recovered channel still
    queues is recycled (heap ones freed), never to be read. The number of data buffers
    released."""
    released = 0
    for buffer in channel.release_all_resources(world.journal.changes):
        if buffer.is_event:
            continue
        released += 1
        if buffer.segment == HEAP:
            world.ledger.heap(-buffer.capacity)
        else:
            recycle(world, channel, buffer.segment, channel.owners.recovered)
    return released


def convert_gate(
    world: RecoveredChannelWorld,
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
    changes = world.journal.changes
    for channel in gate.channels:
        for segment in channel.release_recovery_buffers(keep_recovery_segments, changes):
            pools.give_back(global_pool, segment, channel.owners.recovered_exclusive)
    for channel in gate.channels:
        taken = None
        if exclusive(channel) and gate.exclusive_per_channel:
            taken = pools.take(global_pool, gate.exclusive_per_channel, channel.owners.exclusive)
            for segment in taken:
                world.ledger.rehome(segment, channel.owners.exclusive)
        channel.to_input_channel(taken, changes)
    gate.converted = True


def buffer_holders(
    world: RecoveredChannelWorld, gate: Gate, *, received: bool = False
) -> set[ActorRef]:
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
