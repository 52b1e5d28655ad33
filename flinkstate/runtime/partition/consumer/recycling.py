"""Where a buffer goes when its holder is done with it: Flink's ``BufferRecycler``s.

A consumed buffer returns to the producer's pool (a local channel: counted against its
subpartition), to the consumer channel's exclusive buffers or the gate's floating ones (a remote
channel, as credit), or, while the channel recovers, where recovery took it from. A shared
buffer (retained by the channel-state writer, or one recovered buffer in several subpartitions)
returns only when its last holder lets go.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from flinkstate.runtime.buffer.buffer import HEAP, Buffer
from flinkstate.runtime.buffer.ledger import ReturnKind, ReturnTo
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.options import Fault, RunOptions
from flinkstate.runtime.partition.consumer import recovered_channel
from flinkstate.runtime.partition.consumer.input_gate import Channel, RecycledTo
from flinkstate.runtime.partition.consumer.recovered_channel import RecoveredChannelWorld
from flinkstate.runtime.partition.record_writer import ProducingTask
from flinkstate.runtime.partition.result_partition import ResultPartition, Subpartition


class ReadingTask(Protocol):
    """A task as the recycling of the buffer it reads sees it: the channel and buffer its
    record deserializer reads (Flink's ``StreamTaskNetworkInput``'s current one), and what
    holds that buffer. The task (``Task``) is one; mypy checks it at every call."""

    current: Channel | None
    current_buffer: Buffer | None

    @property
    def deserializer(self) -> Owner: ...


class RecyclingWorld(RecoveredChannelWorld, Protocol):
    """What recycling reaches of the world, beside what a recovered channel does: the
    subpartitions and their partitions (a local channel's buffer returns to its producer's
    pool), the tasks, and the options (the faults that put a recycling bug back).
    The world (``NetworkState``) is one; mypy checks it at every call."""

    @property
    def subpartitions(self) -> dict[str, Subpartition]: ...
    @property
    def tasks(self) -> Mapping[str, ProducingTask]: ...
    def partition_of(self, task: ProducingTask, sub: Subpartition) -> ResultPartition: ...
    def partition_named(self, name: str) -> ResultPartition: ...
    @property
    def options(self) -> RunOptions: ...


# The hot path's enum members, read once: a member read through its class costs about 45 ns on
# Python 3.11, and a step reads several.
_TO_CHANNEL = ReturnKind.CHANNEL
_TO_SUBPARTITION = ReturnKind.SUBPARTITION
_KEPT_EXCLUSIVE = RecycledTo.EXCLUSIVE
_KEPT_FLOATING = RecycledTo.FLOATING
_TO_POOL = RecycledTo.POOL
_DOUBLE_RECYCLE = Fault.DOUBLE_RECYCLE
_LEAK_BUFFER = Fault.LEAK_BUFFER


def release_current(world: RecyclingWorld, task: ReadingTask) -> None:
    channel, buffer = task.current, task.current_buffer
    assert channel is not None
    assert buffer is not None
    holder = task.deserializer
    if buffer.segment == HEAP:  # a heap fallback buffer: freed, nothing to recycle
        world.ledger.heap(-buffer.capacity)
        channel.buffer_consumed(world.journal.changes)
        task.current = None
        task.current_buffer = None
        return
    recycle_consumed(world, channel, buffer.segment, holder)
    if _DOUBLE_RECYCLE in world.options.faults:
        recycle_consumed(world, channel, buffer.segment, holder)
    task.current = None
    task.current_buffer = None


def recycle_consumed(world: RecyclingWorld, channel: Channel, segment: int, holder: Owner) -> None:
    if _LEAK_BUFFER in world.options.faults:
        return
    channel.buffer_consumed(world.journal.changes)
    if channel.recovered or channel.recoverable.in_recovery:
        drop(world, segment, holder, ReturnTo(_TO_CHANNEL, channel.name))
    elif not channel.remote:
        drop(world, segment, holder, ReturnTo(_TO_SUBPARTITION, channel.subpartition))
    else:
        drop(world, segment, holder, ReturnTo(_TO_CHANNEL, channel.name))


def recycle_to_channel(
    world: RecyclingWorld, channel: Channel, segment: int, holder: Owner
) -> None:
    """A segment of the channel's comes back: the channel says where it goes
    (:meth:`Channel.recycle`), the ledger and the pools move it there."""
    if channel.recovered:
        recovered_channel.recycle(world, channel, segment, holder)
        return
    gate = world.gate_of(channel)
    to, extra = channel.recycle(segment, gate.exclusive_per_channel, world.journal.changes)
    if to is _KEPT_EXCLUSIVE:
        world.ledger.move(segment, holder, channel.owners.exclusive)
        if extra >= 0:
            world.buffer_pools.recycle(gate.pool, extra, channel.owners.floating)
    elif to is _TO_POOL:
        world.buffer_pools.recycle(gate.pool, segment, holder)
    elif to is _KEPT_FLOATING:
        world.ledger.move(segment, holder, channel.owners.floating)
    else:
        world.buffer_pools.give_back(gate.pool.global_pool, segment, holder)


def drop(world: RecyclingWorld, segment: int, holder: Owner, release: ReturnTo | None) -> None:
    """``holder`` is done with a segment; if it was the last holder, the segment is
    recycled to where it belongs."""
    destination = world.ledger.let_go(segment, holder, release)
    if destination is None:
        return
    if destination.kind is _TO_CHANNEL:
        recycle_to_channel(world, world.channels[destination.name], segment, holder)
        return
    if destination.kind is _TO_SUBPARTITION:
        sub = world.subpartitions[destination.name]
        partition = world.partition_of(world.tasks[sub.producer], sub)
        world.buffer_pools.recycle(partition.pool, segment, holder, sub.index)
    else:
        partition = world.partition_named(destination.name)
        world.buffer_pools.recycle(partition.pool, segment, holder, -1)
