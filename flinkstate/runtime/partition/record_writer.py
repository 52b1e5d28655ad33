"""A task's output: records routed to subpartitions and serialized into buffers.

Flink's ``RecordWriter`` picks the subpartition(s) by the exchange's partitioner and writes the
record's bytes into the subpartition's ``BufferBuilder``, requesting a buffer from the
partition's pool whenever the open one is full; a record longer than what is left spans
buffers. A full (or flushed) buffer is finished and queued for the consumer; at the end of
input every subpartition gets ``EndOfPartitionEvent``.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Protocol

from flinkstate.rescale.channel_selection import ChannelSelection
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.runtime.buffer.buffer import HEAP, BufferFactory
from flinkstate.runtime.buffer.ledger import SegmentLedger, StepJournal
from flinkstate.runtime.buffer.pools import BufferPools
from flinkstate.runtime.buffer.records import Fragment, Record
from flinkstate.runtime.copying import NotState, StateKey
from flinkstate.runtime.events import (
    END_OF_PARTITION,
)
from flinkstate.runtime.jobgraph import JobGraph
from flinkstate.runtime.options import Fault, RunOptions
from flinkstate.runtime.partition.happenings import EndOfPartitionSent
from flinkstate.runtime.partition.result_partition import ResultPartition, Subpartition
from flinkstate.runtime.shuffle.config import NetworkConfig
from flinkstate.sim.action import Action
from flinkstate.sim.scheduler import splitmix64

# Read once, as every record is routed: a member read through its class costs about 45 ns on
# Python 3.11, and each partitioner's channel selection is ChannelSelection.of's, looked up in
# one step.
_BROADCAST = Partitioner.BROADCAST
_NO_SELECTION = ChannelSelection.NONE
_WRONG_KEY_GROUP = Fault.WRONG_KEY_GROUP
_REORDER_BUFFERS = Fault.REORDER_BUFFERS
_SELECTION = {partitioner: ChannelSelection.of(partitioner) for partitioner in Partitioner}

#: a delivery not processed yet (a processed one holds the step it was processed at; that step
#: is read only against the consumer's snapshot in the pending checkpoint)
IN_FLIGHT = -1


@dataclass(slots=True)
class Output:
    """Bytes of one stream element still to be written into one subpartition."""

    subpartition: str
    record: int
    written: int
    total: int
    #: a watermark or status: broadcast, and never a delivery to account for
    watermark: bool = False

    NOT_STATE: ClassVar[NotState] = {}

    def state_key(self) -> StateKey:
        return (self.subpartition, self.record, self.written, self.total, self.watermark)


class ProducingTask(Protocol):
    """A task as its record writer sees it (Flink's ``RecordWriter`` writes into the task's
    ``ResultPartitionWriter``s): its result partitions, the bytes still to write into them,
    and whether it has ended its output. The task (``Task``) is one; mypy checks it at every
    call."""

    @property
    def name(self) -> str: ...
    @property
    def partitions(self) -> list[ResultPartition]: ...
    @property
    def pending(self) -> deque[Output]: ...

    finished: bool


class EmissionLog(Protocol):
    """Where the order checks remember when each record was emitted toward each gate."""

    @property
    def emitted_at(self) -> dict[tuple[int, str], tuple[int, str]]: ...


class ConsumingChannel(Protocol):
    """A channel as its producer sees it: the gate a record sent into it is delivered to."""

    @property
    def gate(self) -> str: ...


class RecordWriterWorld(BufferFactory, Protocol):
    """What a record writer reaches of the world: the job graph (each exchange's partitioner),
    the partitions, their subpartitions and pools, the ledger their segments move through, the
    channels a record is delivered to and the deliveries in flight, the order checks' log, the
    network configuration, the options (the faults that put a writer's bug back) and the
    step's journal. The world (``NetworkState``) is one; mypy checks it at every call."""

    @property
    def graph(self) -> JobGraph: ...
    @property
    def config(self) -> NetworkConfig: ...
    @property
    def options(self) -> RunOptions: ...
    @property
    def buffer_pools(self) -> BufferPools: ...
    @property
    def ledger(self) -> SegmentLedger: ...
    @property
    def journal(self) -> StepJournal: ...
    @property
    def subpartitions(self) -> dict[str, Subpartition]: ...
    def partition_of(self, task: ProducingTask, sub: Subpartition) -> ResultPartition: ...
    @property
    def channels(self) -> Mapping[str, ConsumingChannel]: ...
    @property
    def deliveries(self) -> dict[tuple[int, str], int]: ...
    @property
    def order(self) -> EmissionLog: ...


def route(world: RecordWriterWorld, task: ProducingTask, record: Record) -> None:
    for partition in task.partitions:
        for sub in select(world, partition, record):
            task.pending.append(Output(sub.name, record.id, 0, record.serialized_length))


def select(
    world: RecordWriterWorld, partition: ResultPartition, record: Record
) -> list[Subpartition]:
    subs = partition.subpartitions
    kind = partition.exchange.partitioner
    count = len(subs)
    if kind is _BROADCAST:
        return list(subs)
    selection = _SELECTION[kind]
    if selection is not _NO_SELECTION:
        down = world.graph.operator(partition.exchange.downstream)
        target = selection.select(record.key, down.effective_max_parallelism, count)
        if _WRONG_KEY_GROUP in world.options.faults:
            target = (target + 1) % count
        return [subs[target]]
    if kind is Partitioner.REBALANCE:
        if partition.next_channel < 0:
            partition.next_channel = (
                splitmix64(world.options.seed ^ hash_text(partition.name)) % count
            )
        partition.next_channel = (partition.next_channel + 1) % count
        return [subs[partition.next_channel]]
    if kind is Partitioner.RESCALE:
        partition.next_channel = (partition.next_channel + 1) % count
        return [subs[partition.next_channel]]
    if kind is Partitioner.SHUFFLE:
        return [subs[splitmix64(world.options.seed ^ (record.id << 8)) % count]]
    return [subs[0]]  # FORWARD (one subpartition) and GLOBAL


def do_request_buffer(world: RecordWriterWorld, task: ProducingTask, action: Action) -> None:
    sub = world.subpartitions[action.target]
    pool = world.partition_of(task, sub).pool
    segment = world.buffer_pools.request(pool, sub.owners.builder, sub.index)
    if segment is None:
        raise AssertionError(f"{action} was enabled but the pool is empty")
    sub.start_builder(world.new_buffer(segment, world.config.segment_size), world.journal.changes)


def do_write(world: RecordWriterWorld, task: ProducingTask, action: Action) -> None:
    out = task.pending[0]
    sub = world.subpartitions[out.subpartition]
    builder = sub.builder
    assert builder is not None
    length = min(builder.space, out.total - out.written)
    builder.fragments.append(Fragment(out.record, out.written, length, out.total))
    builder.used += length
    out.written += length
    if out.written == out.total:
        task.pending.popleft()
        if not out.watermark:
            gate = world.channels[sub.channel].gate
            start_delivery(world, out.record, gate)
            world.order.emitted_at[(out.record, gate)] = (world.journal.step, task.name)
    if builder.space == 0 or (world.options.flush_every_record and out.written == out.total):
        finish_builder(world, sub)


def start_delivery(world: RecordWriterWorld, record: int, gate: str) -> None:
    key = (record, gate)
    if key in world.deliveries:
        world.journal.violate("exactly-once", f"record {record} emitted twice towards {gate}")
    world.deliveries[key] = IN_FLIGHT
    world.journal.emitted.append(record)


def finish_builder(world: RecordWriterWorld, sub: Subpartition) -> None:
    builder = sub.finish_builder(world.journal.changes)
    world.ledger.move(builder.segment, sub.owners.builder, sub.owners.queue)
    if (
        _REORDER_BUFFERS in world.options.faults
        and len(sub.queue) >= 2
        and not sub.queue[-2].is_event
    ):
        sub.queue[-1], sub.queue[-2] = sub.queue[-2], sub.queue[-1]


def do_finish(world: RecordWriterWorld, task: ProducingTask, action: Action) -> None:
    for partition in task.partitions:
        for sub in partition.subpartitions:
            if sub.builder is not None:
                if sub.builder.used:
                    finish_builder(world, sub)
                else:
                    segment = sub.discard_builder(world.journal.changes)
                    world.buffer_pools.recycle(
                        partition.pool, segment, sub.owners.builder, sub.index
                    )
            sub.add(world.new_buffer(HEAP, 0, event=END_OF_PARTITION), world.journal.changes)
    task.finished = True
    world.journal.tell(EndOfPartitionSent())


@functools.lru_cache(maxsize=4096)
def hash_text(text: str) -> int:
    """A stable (not per-process salted) hash of a name, for seeding."""
    value = 0
    for char in text.encode():
        value = (value * 131 + char) & 0xFFFFFFFFFFFF
    return value
