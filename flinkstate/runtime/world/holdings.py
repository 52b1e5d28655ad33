"""Every container that holds buffers or segments, walked once: the invariants read it for
segments, the canvas for buffers.

A component keeps its buffers in one or more containers (a subpartition its queue and the
buffer being filled, an input channel its received, recovered and stashed buffers and its free
exclusive and floating segments, a pool its free segments, ...). The list of containers is
written here only, so that a new container (say the buffers a ``LocalInputChannel`` persists
between a checkpoint's start and its barrier) is added once and both the segment audit
(:func:`~flinkstate.runtime.world.invariants.check_consistency`) and the scene
(:func:`~flinkstate.views.scene.scene_items`) see it. The walk goes task by task, in the order
the canvas draws them (a task's subpartitions, then its input channels, then its
deserializer), then the channel-state readers, the channel-state writers and the pools.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from flinkstate.runtime.buffer.buffer import HEAP, Buffer, LocalBufferPool, NetworkBufferPool
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.checkpoint.channel.channel_state_reader import ChannelStateReader
from flinkstate.runtime.checkpoint.channel.channel_state_writer import ChannelStateWriter
from flinkstate.runtime.partition.consumer.input_gate import Channel
from flinkstate.runtime.partition.result_partition import Subpartition
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world.state import NetworkState


class Lane(StrEnum):
    """Which container of its component a holding is (the canvas's name for it).

    Examples
    --------
    An input channel's containers, as the walk gives them:

    >>> [lane.value for lane in CHANNEL_LANES]
    ['recovered-exclusive', 'recovered', 'stash', 'received', 'exclusive', 'floating']
    """

    QUEUE = "queue"  # a subpartition's finished buffers (and events)
    BUILDER = "builder"  # the subpartition's buffer being filled
    RECOVERED_EXCLUSIVE = "recovered-exclusive"  # a recovered channel's free exclusive segments
    RECOVERED = "recovered"  # a recovered channel's buffers of channel state
    STASH = "stash"  # events held back until a channel's recovered state is drained (V2)
    RECEIVED = "received"  # an input channel's received buffers (and events)
    EXCLUSIVE = "exclusive"  # an input channel's free exclusive segments
    FLOATING = "floating"  # the floating segments it holds
    DESERIALIZER = "deserializer"  # the buffer a task's record deserializer reads
    PRE_FILTER = "pre-filter"  # the buffer a channel-state reader filters
    POST_FILTER = "post-filter"  # the buffers it re-serialized the kept records into
    REQUEST = "request"  # the buffers a channel-state writer retains until written
    FREE = "free"  # a pool's free segments


#: an input channel's containers, in the walk's order
CHANNEL_LANES = (
    Lane.RECOVERED_EXCLUSIVE,
    Lane.RECOVERED,
    Lane.STASH,
    Lane.RECEIVED,
    Lane.EXCLUSIVE,
    Lane.FLOATING,
)

#: the component a container belongs to
Component: TypeAlias = (
    Subpartition
    | Channel
    | Task
    | ChannelStateReader
    | ChannelStateWriter
    | LocalBufferPool
    | NetworkBufferPool
)


@dataclass(frozen=True, slots=True)
class Holding:
    """One container and what it holds now: buffers (events and heap buffers among them),
    or bare segments (free lists, a reader's pre-filter segment, a writer's retained ones).

    Examples
    --------
    >>> from flinkstate.runtime.buffer.owners import Owner, OwnerKind
    >>> owner = Owner(OwnerKind.FLOATING, "keyed[0]<source[1]")
    >>> holding = Holding(Lane.FLOATING, owner, None, "", segments=(4, 9))
    >>> holding.held_segments()
    [4, 9]
    """

    lane: Lane
    owner: Owner
    #: the component it belongs to (None: a free list a caller asked for without one)
    component: Component | None
    #: the operator that consumes what it holds (a subpartition's downstream operator, a
    #: channel's or reader's task's); empty for writers and pools
    operator: str
    buffers: Sequence[Buffer] = ()
    segments: Sequence[int] = ()

    def held_segments(self) -> list[int]:
        """The memory segments it holds: events and heap buffers hold none."""
        held = [s for s in self.segments if s != HEAP]
        if self.buffers:
            held += [b.segment for b in self.buffers if b.event is None and b.segment != HEAP]
        return held


def holdings(state: NetworkState, *, network_pools: bool = True) -> Iterator[Holding]:
    """Every container of the world, empty ones included, task by task as the canvas draws
    them; the network pools' free lists last, unless ``network_pools`` is false.

    Examples
    --------
    The keyed job before its first step: each of its segments is held by exactly one
    container, most of them free in a pool, the rest input channels' exclusive segments:

    >>> from flinkstate.catalogue.topologies import topology
    >>> world = topology("keyed").build()
    >>> held = {}
    >>> for holding in holdings(world):
    ...     lane = holding.lane.value
    ...     held[lane] = held.get(lane, 0) + len(holding.held_segments())
    >>> {lane: count for lane, count in held.items() if count}
    {'exclusive': 24, 'free': 8168}
    >>> sum(held.values()) == len(world.owner)
    True
    """
    for task in state.tasks.values():
        for partition in task.partitions:
            for sub in partition.subpartitions:
                yield from _subpartition(sub, partition.exchange.downstream)
        for gate in task.gates:
            for channel in gate.channels:
                yield from _channel(channel, task.operator)
        current = task.current_buffer
        if current is not None:
            yield Holding(Lane.DESERIALIZER, task.deserializer, task, task.operator, (current,))
    for task in state.tasks.values():
        reader = state.readers.get(task.name)
        if reader is not None and reader.pre_channel:
            yield from _reader(reader, state.channels[reader.pre_channel], task.operator)
    for writer in state.writers.values():
        segments = [r.segment for r in writer.requests]
        yield Holding(Lane.REQUEST, writer.owner, writer, "", segments=segments)
    for pool in state.pools.values():
        yield Holding(Lane.FREE, pool.owner, pool, "", segments=pool.free)
    if network_pools:
        for nbp in state.network_pools.values():
            yield Holding(Lane.FREE, nbp.owner, nbp, "", segments=nbp.free)


def _subpartition(sub: Subpartition, operator: str) -> Iterator[Holding]:
    owners = sub.owners
    yield Holding(Lane.QUEUE, owners.queue, sub, operator, sub.queue)
    if sub.builder is not None:
        yield Holding(Lane.BUILDER, owners.builder, sub, operator, (sub.builder,))


def _channel(channel: Channel, operator: str) -> Iterator[Holding]:
    owners = channel.owners
    recovery = channel.recovery
    yield Holding(
        Lane.RECOVERED_EXCLUSIVE,
        owners.recovered_exclusive,
        channel,
        operator,
        segments=recovery.exclusive,
    )
    yield Holding(Lane.RECOVERED, owners.recovered, channel, operator, recovery.queue)
    # events only (no segment): the received buffers' owner stands for them
    yield Holding(Lane.STASH, owners.received, channel, operator, channel.recoverable.stash)
    yield Holding(Lane.RECEIVED, owners.received, channel, operator, channel.received)
    buffers = channel.buffers
    yield Holding(Lane.EXCLUSIVE, owners.exclusive, channel, operator, segments=buffers.exclusive)
    yield Holding(Lane.FLOATING, owners.floating, channel, operator, segments=buffers.floating)


def _reader(reader: ChannelStateReader, channel: Channel, operator: str) -> Iterator[Holding]:
    owners = channel.owners
    if reader.pre is not None:
        yield Holding(Lane.PRE_FILTER, owners.pre_filter, reader, operator, segments=(reader.pre,))
    yield Holding(Lane.POST_FILTER, owners.post_filter, reader, operator, reader.posts)
