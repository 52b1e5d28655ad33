"""A step's happenings in words: the one place the model's behaviour becomes its trace's note.

Behaviour tells the step journal what happened as values (``flinkstate.runtime.happening`` and
each room's ``happenings`` module); this module, at the edge of the runtime, writes the words
for every kind, and :func:`narrate` joins a step's with ``"; "`` into ``Event.note``, which
traces and their JSON keep. The words are the trace format's: changing one changes every
recorded trace that holds it. Each kind has exactly one entry in the table (``tests/runtime/
world/test_narration.py`` holds the table to the kinds).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flinkstate.runtime.checkpoint.channel.happenings import (
    BytesDrained,
    BytesSpilled,
    ConversionRefused,
    DescriptorIgnored,
    DrainerInstalled,
    DrainFinished,
    FetchDone,
    FetchFailed,
    FilteredDeliveryFailed,
    GateConverted,
    GatesConverted,
    InputStateFinished,
    InputStateRecovered,
    InstallDrainerFailed,
    NothingFetched,
    OutputStateFinished,
    OutputStateRecovered,
    PostFilterBufferWritten,
    PrefilterBufferRead,
    PrefilteredSpilled,
    RecordFilteredOut,
    RecoveredInputConsumed,
    RecoveredStateConsumed,
    RequestPartitionsFailed,
    SpillDirectoryDeleted,
    TriggerNoOpInRecovery,
    UpstreamOutputThrough,
    UpstreamRecoveryComplete,
    VirtualChannelSelected,
)
from flinkstate.runtime.checkpoint.happenings import (
    AlignmentTimedOut,
    BarrierReceived,
    ChannelStateWritten,
    CheckpointDeclined,
    CheckpointExpired,
    CheckpointTriggered,
    ManualCheckpointFailed,
    ManualCheckpointNotTaken,
    ManualCheckpointPlanned,
    ManualCheckpointRefused,
    StaleBarrierDropped,
)
from flinkstate.runtime.events import RECOVERY_BARRIER
from flinkstate.runtime.failover.happenings import RegionRestarted, TaskCanceled, TaskFailed
from flinkstate.runtime.happening import Happening
from flinkstate.runtime.partition.happenings import (
    BufferSent,
    EndOfPartitionSent,
    EventSent,
    RecoveredExclusiveBuffersTaken,
)
from flinkstate.runtime.tasks.happenings import (
    EventPolled,
    RecordEmitted,
    RecordProcessed,
    RecordsDeserialized,
    SpillFilesLeft,
    StaleRecoveryBarrierSkipped,
    Teardown,
)
from flinkstate.runtime.watermark.happenings import (
    RecoveredWatermarkHeld,
    SourceEnded,
    SourceIdle,
    WatermarkAdvanced,
    WatermarkRead,
    WatermarkStatusRead,
)
from flinkstate.runtime.watermark.watermarks import watermark_text

H = TypeVar("H", bound=Happening)
Words = Callable[[Any], str]

#: each kind of happening to the function that puts one into words
WORDS: dict[type[Happening], Words] = {}


def _words_for(kind: type[H]) -> Callable[[Callable[[H], str]], Callable[[H], str]]:
    """Enter the decorated function in :data:`WORDS` as ``kind``'s words (once per kind)."""

    def enter(words: Callable[[H], str]) -> Callable[[H], str]:
        assert kind not in WORDS, f"{kind.__name__} has words already"
        WORDS[kind] = words
        return words

    return enter


def sentence(happening: Happening) -> str:
    """One happening in words.

    Examples
    --------
    >>> sentence(RecordProcessed(record=7, key=42))
    'record 7 key 42'
    >>> sentence(WatermarkAdvanced("sink[0]", watermark=12))
    "sink[0]'s watermark is now 12"
    """
    return WORDS[type(happening)](happening)


def narrate(happenings: tuple[Happening, ...]) -> str:
    """A step's happenings in words, in the order told, joined with ``"; "`` (``""`` for none):
    the step's ``Event.note``. Called once per step by the world, so kept lean.

    Examples
    --------
    >>> narrate(())
    ''
    >>> narrate((WatermarkRead(3, "sink[0]<map[0]"), WatermarkAdvanced("sink[0]", 3)))
    "watermark 3 on sink[0]<map[0]; sink[0]'s watermark is now 3"
    """
    if not happenings:
        return ""
    if len(happenings) == 1:
        only = happenings[0]
        return WORDS[type(only)](only)
    return "; ".join([WORDS[type(h)](h) for h in happenings])


# -- the task's mailbox (``tasks``)


@_words_for(RecordEmitted)
def _record_emitted(h: RecordEmitted) -> str:
    return f"record {h.record} key {h.key} ({h.length} bytes)"


@_words_for(RecordProcessed)
def _record_processed(h: RecordProcessed) -> str:
    return f"record {h.record} key {h.key}"


@_words_for(RecordsDeserialized)
def _records_deserialized(h: RecordsDeserialized) -> str:
    return f"{h.count} complete record(s) from {h.channel}"


@_words_for(EventPolled)
def _event_polled(h: EventPolled) -> str:
    return f"{h.event} on {h.channel}"


@_words_for(StaleRecoveryBarrierSkipped)
def _stale_recovery_barrier(h: StaleRecoveryBarrierSkipped) -> str:
    return f"stale {RECOVERY_BARRIER} of checkpoint {h.checkpoint} skipped"


def _spill_files_left(spill: SpillFilesLeft) -> list[str]:
    parts = []
    if spill.deleted:
        parts.append(f"{spill.deleted} spill file(s) deleted")
    if spill.left:
        parts.append(
            f"{spill.left} spill file(s) stay on disk (before FLINK-40520 only a drain "
            "deletes them)"
        )
    return parts


def _teardown(teardown: Teardown) -> list[str]:
    """What a teardown let go of, part by part (none if nothing)."""
    released = [f"{teardown.released} recovered buffer(s) released"] if teardown.released else []
    return released + _spill_files_left(teardown.spill)


# -- record writers and the transport (``partition``)


@_words_for(EndOfPartitionSent)
def _end_of_partition_sent(h: EndOfPartitionSent) -> str:
    return "end of input: flushed and sent EndOfPartitionEvent"


@_words_for(EventSent)
def _event_sent(h: EventSent) -> str:
    return f"{h.event} to {h.channel}"


@_words_for(BufferSent)
def _buffer_sent(h: BufferSent) -> str:
    return f"{h.used} bytes, backlog {h.backlog}"


@_words_for(RecoveredExclusiveBuffersTaken)
def _recovered_exclusive(h: RecoveredExclusiveBuffersTaken) -> str:
    return f"{h.count} exclusive buffers for recovered channel {h.channel}"


# -- event time (``watermark``)


@_words_for(SourceIdle)
def _source_idle(h: SourceIdle) -> str:
    return "no split to read: watermark status IDLE"


@_words_for(SourceEnded)
def _source_ended(h: SourceEnded) -> str:
    return "end of input: watermark MAX"


@_words_for(WatermarkRead)
def _watermark_read(h: WatermarkRead) -> str:
    return f"watermark {watermark_text(h.timestamp)} on {h.channel}"


@_words_for(WatermarkStatusRead)
def _watermark_status_read(h: WatermarkStatusRead) -> str:
    return f"watermark status {'IDLE' if h.idle else 'ACTIVE'} on {h.channel}"


@_words_for(WatermarkAdvanced)
def _watermark_advanced(h: WatermarkAdvanced) -> str:
    return f"{h.task}'s watermark is now {watermark_text(h.watermark)}"


@_words_for(RecoveredWatermarkHeld)
def _recovered_watermark_held(h: RecoveredWatermarkHeld) -> str:
    return (
        f"watermark {watermark_text(h.timestamp)} of old {h.old_subtask}<{h.old_channel} "
        "held: another old channel has none yet"
    )


# -- barriers, channel-state writers, the coordinator (``checkpoint``)


@_words_for(StaleBarrierDropped)
def _stale_barrier(h: StaleBarrierDropped) -> str:
    return f"stale barrier of checkpoint {h.checkpoint} dropped"


@_words_for(BarrierReceived)
def _barrier_received(h: BarrierReceived) -> str:
    return f"barrier of checkpoint {h.checkpoint} on {h.channel}"


@_words_for(AlignmentTimedOut)
def _alignment_timed_out(h: AlignmentTimedOut) -> str:
    if h.inputs:
        return (
            f"{h.task}'s alignment for checkpoint {h.checkpoint} timed out: it snapshots "
            "unaligned, persisting the channels still to align"
        )
    where = ", ".join(h.converted) or "no subpartition"
    return (
        f"{h.task}'s aligned barriers of checkpoint {h.checkpoint} timed out: unaligned "
        f"priority events in {where}"
    )


@_words_for(ChannelStateWritten)
def _channel_state_written(h: ChannelStateWritten) -> str:
    side = "output" if h.output else "input"
    return f"{side} state of {h.channel}: {h.fragments} fragment(s)"


@_words_for(CheckpointTriggered)
def _checkpoint_triggered(h: CheckpointTriggered) -> str:
    kind = "unaligned" if h.unaligned else "aligned"
    return f"{kind} checkpoint {h.checkpoint} triggered at the sources"


@_words_for(CheckpointExpired)
def _checkpoint_expired(h: CheckpointExpired) -> str:
    return (
        f"checkpoint {h.checkpoint} expired after {h.timeout} steps; "
        f"not acknowledged by {', '.join(h.waiting)}"
    )


@_words_for(CheckpointDeclined)
def _checkpoint_declined(h: CheckpointDeclined) -> str:
    return f"checkpoint {h.checkpoint} declined by {h.task} ({h.reason.name}): {h.why}"


@_words_for(ManualCheckpointRefused)
def _manual_refused(h: ManualCheckpointRefused) -> str:
    return f"manual checkpoint refused by the plan ({h.reason.name}): {h.why}"


@_words_for(ManualCheckpointFailed)
def _manual_failed(h: ManualCheckpointFailed) -> str:
    return f"manual checkpoint {h.checkpoint} failed ({h.reason.name}): {h.why}"


@_words_for(ManualCheckpointNotTaken)
def _manual_not_taken(h: ManualCheckpointNotTaken) -> str:
    return f"manual checkpoint not taken: {h.beyond}"


@_words_for(ManualCheckpointPlanned)
def _manual_planned(h: ManualCheckpointPlanned) -> str:
    counted = ", ".join(str(s) for s in h.finished) or "none"
    return (
        f"manual checkpoint {h.checkpoint} planned: triggered at "
        f"{', '.join(str(s) for s in h.triggered)}; waits for "
        f"{', '.join(str(s) for s in h.waits_for)}; counted as finished: {counted}"
    )


# -- classic recovery (``checkpoint.channel``)


@_words_for(OutputStateRecovered)
def _output_state_recovered(h: OutputStateRecovered) -> str:
    # the words name the chunk's old channel "old subtask" and its old subtask "subpartition",
    # as traces always have
    return (
        f"output state of old subtask {h.old_channel}, subpartition {h.old_subtask}: "
        f"{h.used} bytes into subpartition(s) {list(h.targets)}"
    )


@_words_for(OutputStateFinished)
def _output_state_finished(h: OutputStateFinished) -> str:
    return "output state restored; EndOfOutputChannelStateEvent to every subpartition"


@_words_for(InputStateRecovered)
def _input_state_recovered(h: InputStateRecovered) -> str:
    side = "upstream output" if h.upstream_output else "input"
    return (
        f"{side} state of old subtask {h.old_subtask}, channel {h.old_channel}: "
        f"{h.used} bytes into {h.channel}"
    )


@_words_for(InputStateFinished)
def _input_state_finished(h: InputStateFinished) -> str:
    return "input state read; EndOfInputChannelStateEvent on every channel"


@_words_for(ConversionRefused)
def _conversion_refused(h: ConversionRefused) -> str:
    return f"{h.gate}: conversion refused"


@_words_for(GateConverted)
def _gate_converted(h: GateConverted) -> str:
    migrated = "" if h.migrated is None else f"; {h.migrated} recovered buffer(s) migrated"
    if h.released:
        migrated += f"; {h.released} recovered buffer(s) released unread"
    return f"{h.gate}: recovered channels converted; subpartitions requested{migrated}"


@_words_for(VirtualChannelSelected)
def _virtual_channel_selected(h: VirtualChannelSelected) -> str:
    return f"{h.channel}: virtual channel {h.descriptor}"


@_words_for(DescriptorIgnored)
def _descriptor_ignored(h: DescriptorIgnored) -> str:
    return f"{h.channel}: descriptor ignored (gate not rescaled)"


@_words_for(RecoveredInputConsumed)
def _recovered_input_consumed(h: RecoveredInputConsumed) -> str:
    return f"{h.channel}: recovered input state consumed"


@_words_for(UpstreamOutputThrough)
def _upstream_output_through(h: UpstreamOutputThrough) -> str:
    return f"{h.channel}: upstream recovered output through; blocked"


@_words_for(UpstreamRecoveryComplete)
def _upstream_recovery_complete(h: UpstreamRecoveryComplete) -> str:
    return f"{h.gate}: upstream recovery complete, consumption resumed"


@_words_for(RecordFilteredOut)
def _record_filtered_out(h: RecordFilteredOut) -> str:
    return f"record {h.record} filtered out (belongs to subtask {h.subtask})"


# -- filtering (V1) and spilling (V2) (``checkpoint.channel``)


@_words_for(PrefilterBufferRead)
def _prefilter_buffer_read(h: PrefilterBufferRead) -> str:
    return (
        f"pre-filter buffer ({h.origin}) for {h.channel}: {h.kept} record(s) to rewrite, "
        f"{h.filtered} filtered out"
    )


@_words_for(PostFilterBufferWritten)
def _post_filter_buffer_written(h: PostFilterBufferWritten) -> str:
    return f"post-filter buffer {h.number} ({h.origin}) for {h.channel}"


@_words_for(FilteredDeliveryFailed)
def _filtered_delivery_failed(h: FilteredDeliveryFailed) -> str:
    which = ", ".join(str(number) for number in h.recycled) or "none"
    return (
        f"handing filtered buffer {h.failed} of {h.total} to {h.channel} failed; "
        f"the reader recycled buffer(s) {which} ({h.rule.value})"
    )


@_words_for(PrefilteredSpilled)
def _prefiltered_spilled(h: PrefilteredSpilled) -> str:
    return (
        f"heap pre-filter segment: {h.kept} record(s) of old {h.old_subtask}<"
        f"{h.old_channel} spilled for {h.channel}, {h.dropped} filtered out"
    )


@_words_for(BytesSpilled)
def _bytes_spilled(h: BytesSpilled) -> str:
    return f"{h.used} bytes of old {h.old_subtask}<{h.old_channel} spilled for {h.channel}"


@_words_for(NothingFetched)
def _nothing_fetched(h: NothingFetched) -> str:
    return "fetch done: nothing to recover"


@_words_for(FetchDone)
def _fetch_done(h: FetchDone) -> str:
    return f"fetch done: {h.segments} segment(s) in {h.files} spill file(s), {h.size} bytes"


@_words_for(FetchFailed)
def _fetch_failed(h: FetchFailed) -> str:
    return f"fetch failed after writing {h.files} spill file(s) of {h.bytes_written} bytes"


@_words_for(SpillDirectoryDeleted)
def _spill_directory_deleted(h: SpillDirectoryDeleted) -> str:
    return "the fetch deleted its spill directory"


# -- draining (V2) (``checkpoint.channel``)


@_words_for(RequestPartitionsFailed)
def _request_partitions_failed(h: RequestPartitionsFailed) -> str:
    return "the request-partitions mail failed before converting any gate"


@_words_for(GatesConverted)
def _gates_converted(h: GatesConverted) -> str:
    if h.needs_recovery:
        return "all gates converted; every channel in recovery (needsRecovery)"
    return "all gates converted; nothing to drain: trigger NO_OP, task RUNNING"


@_words_for(InstallDrainerFailed)
def _install_drainer_failed(h: InstallDrainerFailed) -> str:
    return "the mail installing the drainer failed: no drain was submitted"


@_words_for(DrainerInstalled)
def _drainer_installed(h: DrainerInstalled) -> str:
    return "drainer installed as the recovery checkpoint trigger; task RUNNING"


@_words_for(BytesDrained)
def _bytes_drained(h: BytesDrained) -> str:
    return f"{h.used} bytes drained into {h.channel}"


@_words_for(DrainFinished)
def _drain_finished(h: DrainFinished) -> str:
    spill = "spill files deleted" if h.spill_deleted else "spill files kept for a checkpoint"
    return f"drain finished: EndOfFetchedChannelStateEvent on every channel; {spill}"


@_words_for(TriggerNoOpInRecovery)
def _trigger_no_op_in_recovery(h: TriggerNoOpInRecovery) -> str:
    return "trigger NO_OP (the channels are still in recovery)"


@_words_for(RecoveredStateConsumed)
def _recovered_state_consumed(h: RecoveredStateConsumed) -> str:
    trigger = "; trigger NO_OP" if h.trigger_no_op else ""
    return f"{h.channel}: recovered state consumed{trigger}"


# -- failover (``failover``)


@_words_for(TaskFailed)
def _task_failed(h: TaskFailed) -> str:
    return "; ".join(
        [
            f"{h.task} FAILED: {h.cause}",
            *_teardown(h.teardown),
            f"cancelling {', '.join(h.cancelling) or 'nothing else'} (its pipelined region)",
        ]
    )


@_words_for(TaskCanceled)
def _task_canceled(h: TaskCanceled) -> str:
    down = ["every subtask of the failed region has stopped"] if h.region_down else []
    return "; ".join([f"{h.task} CANCELED", *_teardown(h.teardown), *down])


@_words_for(RegionRestarted)
def _region_restarted(h: RegionRestarted) -> str:
    return f"the scheduler restarts {h.failed}'s region"
