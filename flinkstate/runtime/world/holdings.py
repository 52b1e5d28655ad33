"""Every container that holds buffers or segments, walked once: the invariants read it for
segments, the canvas for buffers.

A component keeps its buffers in one or more containers (a subpartition its queue and the
buffer being filled, an input channel its received, recovered and stashed buffers and its free
exclusive and floating segments, a pool its free segments, ...). The list of containers is
written here only, so that a new container (say the buffers a ``LocalInputChannel`` persists
between a checkpoint's start and its barrier) is added once and both the segment audit
(:func:`~flinkstate.runtime.world.invariants.check_consistency`) and the scene
(:func:`~flinkstate.views.scene_items.scene_items`) see it. The walk goes task by task, in the order
the canvas draws them (a task's subpartitions, then its input channels, then its
deserializer), then the channel-state readers, the channel-state writers and the pools.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
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


#: the bare segments that may be the heap (a buffer on the heap stands for its segment)
_MAYBE_HEAP = frozenset({Lane.PRE_FILTER, Lane.REQUEST})

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


#: one container and what it holds now: its lane, its owner, the component it belongs to, the
#: operator that consumes what it holds (a subpartition's downstream operator, a channel's or
#: a reader's task's; empty for writers and pools), its buffers (events and heap buffers among
#: them) and its bare segments (free lists, a reader's pre-filter segment, a writer's retained
#: ones). A plain tuple: the segment audit makes hundreds each time it runs, and a named tuple
#: made it cost a tenth more of a whole run.
Holding: TypeAlias = tuple[Lane, Owner, Component, str, Sequence[Buffer], Sequence[int]]


def held_segments(holding: Holding) -> Sequence[int]:
    """The memory segments a container holds: events and heap buffers hold none (of the bare
    segments, only a reader's pre-filter buffer and a writer's requests can be the heap).

    Examples
    --------
    >>> from flinkstate.runtime.buffer.owners import ChannelOwners
    >>> owners = ChannelOwners.of("keyed[0]<source[1]")
    >>> held_segments((Lane.FLOATING, owners.floating, None, "", (), [4, 9]))
    [4, 9]
    >>> held_segments((Lane.PRE_FILTER, owners.pre_filter, None, "", (), (HEAP,)))
    []
    """
    _, _, _, _, buffers, segments = holding
    if buffers:
        return [b.segment for b in buffers if b.event is None and b.segment != HEAP]
    if holding[0] in _MAYBE_HEAP:
        return [s for s in segments if s != HEAP]
    return segments


def holdings(state: NetworkState, *, network_pools: bool = True) -> Iterator[Holding]:
    """Every container of the world that holds something, task by task as the canvas draws
    them; the network pools' free lists last, unless ``network_pools`` is false.

    Examples
    --------
    The keyed job before its first step: each of its segments is held by exactly one
    container, most of them free in a pool, the rest input channels' exclusive segments:

    >>> from flinkstate.catalogue.topologies import topology
    >>> world = topology("keyed").build()
    >>> held = {}
    >>> for holding in holdings(world):
    ...     lane = holding[0].value
    ...     held[lane] = held.get(lane, 0) + len(held_segments(holding))
    >>> {lane: count for lane, count in held.items() if count}
    {'exclusive': 24, 'free': 8168}
    >>> sum(held.values()) == len(world.owner)
    True
    """
    for task in state.tasks.values():
        operator = task.operator
        for partition in task.partitions:
            downstream = partition.exchange.downstream
            for sub in partition.subpartitions:
                if sub.queue:
                    yield (Lane.QUEUE, sub.owners.queue, sub, downstream, sub.queue, ())
                if sub.builder is not None:
                    builder = (sub.builder,)
                    yield (Lane.BUILDER, sub.owners.builder, sub, downstream, builder, ())
        for gate in task.gates:
            for channel in gate.channels:
                owners = channel.owners
                recovery = channel.recovery
                if recovery.exclusive:
                    segments = recovery.exclusive
                    owner = owners.recovered_exclusive
                    yield (Lane.RECOVERED_EXCLUSIVE, owner, channel, operator, (), segments)
                if recovery.queue:
                    owner = owners.recovered
                    yield (Lane.RECOVERED, owner, channel, operator, recovery.queue, ())
                stash = channel.recoverable.stash
                if stash:  # events only (no segment): the received buffers' owner stands in
                    yield (Lane.STASH, owners.received, channel, operator, stash, ())
                if channel.received:
                    received = channel.received
                    yield (Lane.RECEIVED, owners.received, channel, operator, received, ())
                buffers = channel.buffers
                if buffers.exclusive:
                    segments = buffers.exclusive
                    yield (Lane.EXCLUSIVE, owners.exclusive, channel, operator, (), segments)
                if buffers.floating:
                    segments = buffers.floating
                    yield (Lane.FLOATING, owners.floating, channel, operator, (), segments)
        current = task.current_buffer
        if current is not None:
            yield (Lane.DESERIALIZER, task.deserializer, task, operator, (current,), ())
    for task in state.tasks.values():
        reader = state.readers.get(task.name)
        if reader is not None and reader.pre_channel:
            yield from _reader(reader, state.channels[reader.pre_channel], task.operator)
    for writer in state.writers.values():
        if writer.requests:
            segments = [r.segment for r in writer.requests]
            yield (Lane.REQUEST, writer.owner, writer, "", (), segments)
    for pool in state.pools.values():
        if pool.free:
            yield (Lane.FREE, pool.owner, pool, "", (), pool.free)
    if network_pools:
        for nbp in state.network_pools.values():
            if nbp.free:
                yield (Lane.FREE, nbp.owner, nbp, "", (), nbp.free)


def _reader(reader: ChannelStateReader, channel: Channel, operator: str) -> Iterator[Holding]:
    owners = channel.owners
    if reader.pre is not None:
        yield (Lane.PRE_FILTER, owners.pre_filter, reader, operator, (), (reader.pre,))
    if reader.posts:
        yield (Lane.POST_FILTER, owners.post_filter, reader, operator, reader.posts, ())
