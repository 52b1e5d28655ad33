"""How watermarks and watermark statuses are emitted, read and passed on.

A source subtask's watermark is its splits' watermarks combined (``CombinedWatermarkStatus``):
each split's is the largest timestamp it emitted minus the out-of-orderness bound minus one
(``BoundedOutOfOrdernessWatermarks``; a record's timestamp here is its position in its split),
and a finished split no longer holds the source back. Every ``watermark_interval`` records the
source emits its watermark if it grew (the periodic emission of ``WatermarkToDataOutput``,
counted in records instead of milliseconds), and at the end of its input it emits
``MAX_WATERMARK`` (``SourceOperatorStreamTask.advanceToEndOfEventTime``). Watermarks and
statuses are broadcast to every subpartition (``RecordWriter.broadcastEmit``) and travel in the
buffers between records.

A task reading one hands it to its gate's valve; when the task's watermark (its gates' valves
combined) grows, the task emits it downstream. A keyed operator stands for a window operator:
a record at or behind its watermark is late, and a window would drop it.

After a rescale, the recovered elements of several old channels can share one new channel:
:func:`recovered_element` applies the demultiplexer's rule (``VirtualChannelWatermarks``), or,
in the filtering handler before FLINK-40517, passes them on unchanged.
"""

from __future__ import annotations

from typing import Protocol

from flinkstate.runtime.buffer.ledger import StepJournal
from flinkstate.runtime.buffer.records import (
    MAX_WATERMARK,
    MIN_WATERMARK,
    WATERMARK_SIZE,
    WATERMARK_STATUS_SIZE,
    Record,
    StreamElementKind,
)
from flinkstate.runtime.jobgraph import JobGraph, OperatorKind
from flinkstate.runtime.partition.consumer.input_gate import Channel, Gate
from flinkstate.runtime.partition.record_writer import Output, ProducingTask
from flinkstate.runtime.watermark.combined_watermark_status import combine
from flinkstate.runtime.watermark.event_time import EventTimeState
from flinkstate.runtime.watermark.happenings import (
    RecoveredWatermarkHeld,
    SourceEnded,
    SourceIdle,
    WatermarkAdvanced,
    WatermarkRead,
    WatermarkStatusRead,
)
from flinkstate.runtime.watermark.status_watermark_valve import StatusWatermarkValve
from flinkstate.runtime.watermark.virtual_channel_watermarks import VirtualChannelWatermarks


class WatermarkingTask(ProducingTask, Protocol):
    """A task as event time sees it (Flink's ``StreamTask`` with its operator chain's
    watermark output): its operator, what a source has emitted and still reads, the gates a
    valve each watches, beside the partitions it broadcasts watermarks into. The task
    (``Task``) is one; mypy checks it at every call."""

    @property
    def operator(self) -> str: ...
    @property
    def kind(self) -> OperatorKind: ...
    @property
    def emitted(self) -> int: ...
    @property
    def splits(self) -> dict[str, int]: ...
    @property
    def gates(self) -> list[Gate]: ...


class EventTimeWorld(Protocol):
    """What event time reaches of the world, and nothing else: the job graph (each source's
    watermark strategy), the event-time state, the gates (a valve each), the record table (a
    watermark or status is a stream element with an id of its own), the step's journal, and
    the tasks by name. The world (``NetworkState``) is one; mypy checks it at every call."""

    @property
    def graph(self) -> JobGraph: ...
    @property
    def event_time(self) -> EventTimeState: ...
    @property
    def gates(self) -> dict[str, Gate]: ...
    @property
    def records(self) -> dict[int, Record]: ...
    @property
    def journal(self) -> StepJournal: ...

    next_record: int

    def task_named(self, name: str) -> WatermarkingTask: ...


def watermark_text(timestamp: int) -> str:
    """A watermark's timestamp as people read it."""
    if timestamp == MAX_WATERMARK:
        return "MAX"
    if timestamp == MIN_WATERMARK:
        return "none"
    return str(timestamp)


# -- sources


def source_watermark(world: EventTimeWorld, task: WatermarkingTask) -> int:
    """The source subtask's watermark now, from the splits it still reads."""
    op = world.graph.operator(task.operator)
    total = op.records_per_subtask
    parts = [
        (MIN_WATERMARK if offset == 0 else offset - 1 - op.out_of_orderness - 1, False)
        for offset in task.splits.values()
        if offset < total
    ]
    return combine(parts)[0]


def after_emit(world: EventTimeWorld, task: WatermarkingTask) -> None:
    """A source emitted a record: every ``watermark_interval`` records, its watermark follows
    if it grew."""
    interval = world.graph.operator(task.operator).watermark_interval
    if interval and task.emitted % interval == 0:
        watermark = source_watermark(world, task)
        if watermark > world.event_time.watermark.get(task.name, MIN_WATERMARK):
            emit_watermark(world, task, watermark)


def needs_final_watermark(world: EventTimeWorld, task: WatermarkingTask) -> bool:
    """A source with watermarks that has not yet emitted ``MAX_WATERMARK`` before it ends."""
    if not world.graph.operator(task.operator).watermark_interval:
        return False
    return world.event_time.watermark.get(task.name, MIN_WATERMARK) != MAX_WATERMARK


def emit_watermark(world: EventTimeWorld, task: WatermarkingTask, timestamp: int) -> None:
    """``task``'s watermark is now ``timestamp``: emitted to every subpartition of every output
    (a task without outputs only keeps it)."""
    world.event_time.watermark[task.name] = timestamp
    if task.partitions:
        element = _new_element(world, task, StreamElementKind.WATERMARK, timestamp=timestamp)
        _broadcast(task, element)


def emit_status(world: EventTimeWorld, task: WatermarkingTask, idle: bool) -> None:
    """``task``'s output turns idle or active again, emitted as :func:`emit_watermark` is."""
    world.event_time.idle[task.name] = idle
    if task.partitions:
        element = _new_element(world, task, StreamElementKind.WATERMARK_STATUS, idle=idle)
        _broadcast(task, element)


def goes_idle(world: EventTimeWorld, task: WatermarkingTask) -> bool:
    """A source that reads no split of its own (it waits for the other sources to end) and
    whose watermark strategy declares idleness (``withIdleness``) marks its output idle, once.
    Without idleness it holds back the watermark of every task downstream of it."""
    op = world.graph.operator(task.operator)
    return (
        op.watermark_interval > 0
        and op.source_idleness
        and not task.splits
        and not world.event_time.idle.get(task.name, False)
    )


def end_or_idle(world: EventTimeWorld, task: WatermarkingTask) -> None:
    """A source with no record left: idle while it waits for the others (``goes_idle``), or at
    the end of its input ``MAX_WATERMARK``, which also marks an idle output active again
    (emitting a watermark does, ``WatermarkToDataOutput.emitWatermark``)."""
    if goes_idle(world, task):
        emit_status(world, task, True)
        world.journal.tell(SourceIdle())
        return
    if world.event_time.idle.get(task.name, False):
        emit_status(world, task, False)
    emit_watermark(world, task, MAX_WATERMARK)
    world.journal.tell(SourceEnded())


def _new_element(
    world: EventTimeWorld,
    task: WatermarkingTask,
    kind: StreamElementKind,
    *,
    timestamp: int = 0,
    idle: bool = False,
) -> Record:
    size = WATERMARK_SIZE if kind is StreamElementKind.WATERMARK else WATERMARK_STATUS_SIZE
    element = Record(world.next_record, 0, size, task.name, -1, kind, timestamp, idle)
    world.records[element.id] = element
    world.next_record += 1
    return element


def _broadcast(task: WatermarkingTask, element: Record) -> None:
    total = element.serialized_length
    for partition in task.partitions:
        for sub in partition.subpartitions:
            task.pending.append(Output(sub.name, element.id, 0, total, True))


# -- reading


def process(
    world: EventTimeWorld, task: WatermarkingTask, channel: Channel, element: Record
) -> None:
    """``task`` reads a watermark or status from ``channel``: its gate's valve takes it, and
    what the task's watermark or status becomes because of it goes downstream."""
    valve = world.event_time.valves.get(channel.gate)
    if valve is None:
        valve = StatusWatermarkValve(len(world.gates[channel.gate].channels))
        world.event_time.valves[channel.gate] = valve
    if element.kind is StreamElementKind.WATERMARK:
        outputs = valve.input_watermark(channel.index, element.timestamp)
        world.journal.tell(WatermarkRead(element.timestamp, channel.name))
    else:
        outputs = valve.input_status(channel.index, element.idle)
        world.journal.tell(WatermarkStatusRead(element.idle, channel.name))
    if not outputs:
        return
    parts = []
    for gate in task.gates:
        gate_valve = world.event_time.valves.get(gate.name)
        parts.append(
            (MIN_WATERMARK, False)
            if gate_valve is None
            else (gate_valve.last_output, gate_valve.idle)
        )
    watermark, idle = combine(parts)
    if idle != world.event_time.idle.get(task.name, False):
        emit_status(world, task, idle)
    if watermark > world.event_time.watermark.get(task.name, MIN_WATERMARK):
        emit_watermark(world, task, watermark)
        world.journal.tell_also(WatermarkAdvanced(task.name, watermark))


def check_late(world: EventTimeWorld, task: WatermarkingTask, record: Record) -> None:
    """A keyed operator (a window operator's stand-in) drops a record at or behind its
    watermark as late. Here a source's watermark always trails the timestamps of what it has
    emitted (a record's timestamp is its position in its split, the watermark the largest
    timestamp minus the bound minus one), so no record is late where it was emitted, nor in a
    job that was never restarted: a late record is one that a watermark overtook."""
    if task.kind is not OperatorKind.KEYED:
        return
    watermark = world.event_time.watermark.get(task.name)
    if watermark is None or record.timestamp > watermark:
        return
    world.event_time.late[(record.id, task.name)] = (world.journal.step, watermark)
    world.journal.violate(
        "late-record",
        f"{task.name} dropped record {record.id} (timestamp {record.timestamp}, seq "
        f"{record.seq} of {record.source}) as late behind watermark {watermark_text(watermark)}, "
        f"though no watermark of its source had reached {record.timestamp} when it was "
        "emitted: a watermark overtook it",
    )


# -- recovered data of merged channels


def recovered_element(
    world: EventTimeWorld,
    channel: Channel,
    virtual_channel: tuple[int, int] | None,
    element: Record,
    aggregate: bool,
) -> int | None:
    """A watermark or status read back from virtual channel ``virtual_channel`` (old subtask,
    old channel) of ``channel``: the element to pass on, or None to hold it back.

    ``aggregate``: the demultiplexer's rule, the minimum watermark over every virtual channel
    of the new channel (none while any has none) and active while any is; otherwise (the
    filtering handler before FLINK-40517) the element as it came."""
    gate = world.gates[channel.gate]
    plan = gate.plan
    if not aggregate or virtual_channel is None or plan is None or not plan.demultiplexes:
        return element.id
    merged = world.event_time.merged.get(channel.name)
    if merged is None:
        merged = VirtualChannelWatermarks.of(
            [(vc.old_subtask, vc.old_channel) for vc in plan.virtual_channels[channel.index]]
        )
        world.event_time.merged[channel.name] = merged
    task = world.task_named(channel.task)
    if element.kind is StreamElementKind.WATERMARK:
        low = merged.on_watermark(virtual_channel, element.timestamp)
        if low is None:
            world.journal.tell_also(
                RecoveredWatermarkHeld(element.timestamp, virtual_channel[0], virtual_channel[1])
            )
            return None
        if low == element.timestamp:
            return element.id
        return _new_element(world, task, StreamElementKind.WATERMARK, timestamp=low).id
    idle = merged.on_status(virtual_channel, element.idle)
    if idle == element.idle:
        return element.id
    return _new_element(world, task, StreamElementKind.WATERMARK_STATUS, idle=idle).id
