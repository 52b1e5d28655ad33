"""The words of every kind of happening: one entry each, the sentences traces have always held,
joined as ``Event.note`` joins them."""

from __future__ import annotations

import pytest

from flinkstate.runtime.buffer.records import MAX_WATERMARK, MIN_WATERMARK
from flinkstate.runtime.checkpoint.channel import happenings as channel
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
from flinkstate.runtime.failover.happenings import RegionRestarted, TaskCanceled, TaskFailed
from flinkstate.runtime.happening import Happening
from flinkstate.runtime.jobgraph import SubtaskId
from flinkstate.runtime.options import CheckpointFailureReason
from flinkstate.runtime.partition.happenings import (
    BufferSent,
    EndOfPartitionSent,
    EventSent,
    RecoveredExclusiveBuffersTaken,
)
from flinkstate.runtime.restore_versions import FailedDeliveryRecycle
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
from flinkstate.runtime.world.narration import WORDS, narrate, sentence
from tests.runtime.test_happening import kinds

DECLINED = CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY
CH = "counter[1]<source[0]"
NOTHING = Teardown(0, SpillFilesLeft(0, 0))

#: one happening of every kind, with the words traces hold for it
EXAMPLES: list[tuple[Happening, str]] = [
    (RecordEmitted(4, 17, 3012), "record 4 key 17 (3012 bytes)"),
    (RecordProcessed(4, 17), "record 4 key 17"),
    (RecordsDeserialized(2, CH), f"2 complete record(s) from {CH}"),
    (EventPolled("EndOfPartitionEvent", CH), f"EndOfPartitionEvent on {CH}"),
    (
        StaleRecoveryBarrierSkipped(3),
        "stale RecoveryCheckpointBarrier of checkpoint 3 skipped",
    ),
    (EndOfPartitionSent(), "end of input: flushed and sent EndOfPartitionEvent"),
    (EventSent("CheckpointBarrier", CH), f"CheckpointBarrier to {CH}"),
    (BufferSent(4096, 3), "4096 bytes, backlog 3"),
    (
        RecoveredExclusiveBuffersTaken(2, CH),
        f"2 exclusive buffers for recovered channel {CH}",
    ),
    (SourceIdle(), "no split to read: watermark status IDLE"),
    (SourceEnded(), "end of input: watermark MAX"),
    (WatermarkRead(41, CH), f"watermark 41 on {CH}"),
    (WatermarkRead(MAX_WATERMARK, CH), f"watermark MAX on {CH}"),
    (WatermarkStatusRead(True, CH), f"watermark status IDLE on {CH}"),
    (WatermarkStatusRead(False, CH), f"watermark status ACTIVE on {CH}"),
    (WatermarkAdvanced("counter[1]", 41), "counter[1]'s watermark is now 41"),
    (WatermarkAdvanced("counter[1]", MIN_WATERMARK), "counter[1]'s watermark is now none"),
    (
        RecoveredWatermarkHeld(12, 2, 0),
        "watermark 12 of old 2<0 held: another old channel has none yet",
    ),
    (StaleBarrierDropped(2), "stale barrier of checkpoint 2 dropped"),
    (BarrierReceived(2, CH), f"barrier of checkpoint 2 on {CH}"),
    (
        AlignmentTimedOut(2, "map[0]", inputs=True),
        "map[0]'s alignment for checkpoint 2 timed out: it snapshots unaligned, persisting the "
        "channels still to align",
    ),
    (
        AlignmentTimedOut(2, "source[0]", inputs=False, converted=("source[0]>map[1]",)),
        "source[0]'s aligned barriers of checkpoint 2 timed out: unaligned priority events in "
        "source[0]>map[1]",
    ),
    (
        ChannelStateWritten(True, "source[0]>counter[1]", 3),
        "output state of source[0]>counter[1]: 3 fragment(s)",
    ),
    (ChannelStateWritten(False, CH, 1), f"input state of {CH}: 1 fragment(s)"),
    (CheckpointTriggered(1, True), "unaligned checkpoint 1 triggered at the sources"),
    (CheckpointTriggered(1, False), "aligned checkpoint 1 triggered at the sources"),
    (
        CheckpointExpired(2, 300, ("counter[0]", "sink[0]")),
        "checkpoint 2 expired after 300 steps; not acknowledged by counter[0], sink[0]",
    ),
    (
        CheckpointDeclined(2, "source[0]", DECLINED, "the source is still restoring"),
        "checkpoint 2 declined by source[0] (CHECKPOINT_DECLINED_TASK_NOT_READY): "
        "the source is still restoring",
    ),
    (
        ManualCheckpointRefused(DECLINED, "why"),
        "manual checkpoint refused by the plan (CHECKPOINT_DECLINED_TASK_NOT_READY): why",
    ),
    (
        ManualCheckpointFailed(3, DECLINED, "why"),
        "manual checkpoint 3 failed (CHECKPOINT_DECLINED_TASK_NOT_READY): why",
    ),
    (ManualCheckpointNotTaken("beyond"), "manual checkpoint not taken: beyond"),
    (
        ManualCheckpointPlanned(
            3, (SubtaskId("source", 0),), (SubtaskId("source", 0), SubtaskId("sink", 0)), ()
        ),
        "manual checkpoint 3 planned: triggered at source[0]; waits for source[0], sink[0]; "
        "counted as finished: none",
    ),
    (
        channel.OutputStateRecovered(old_subtask=1, old_channel=2, used=300, targets=(0, 3)),
        "output state of old subtask 2, subpartition 1: 300 bytes into subpartition(s) [0, 3]",
    ),
    (
        channel.OutputStateFinished(),
        "output state restored; EndOfOutputChannelStateEvent to every subpartition",
    ),
    (
        channel.InputStateRecovered(False, 1, 2, 300, CH),
        f"input state of old subtask 1, channel 2: 300 bytes into {CH}",
    ),
    (
        channel.InputStateRecovered(True, 1, 2, 300, CH),
        f"upstream output state of old subtask 1, channel 2: 300 bytes into {CH}",
    ),
    (
        channel.InputStateFinished(),
        "input state read; EndOfInputChannelStateEvent on every channel",
    ),
    (channel.ConversionRefused("counter[1]"), "counter[1]: conversion refused"),
    (
        channel.GateConverted("counter[1]", None),
        "counter[1]: recovered channels converted; subpartitions requested",
    ),
    (
        channel.GateConverted("counter[1]", 2),
        "counter[1]: recovered channels converted; subpartitions requested; "
        "2 recovered buffer(s) migrated",
    ),
    (channel.VirtualChannelSelected(CH, (1, 0)), f"{CH}: virtual channel (1, 0)"),
    (channel.DescriptorIgnored(CH), f"{CH}: descriptor ignored (gate not rescaled)"),
    (channel.RecoveredInputConsumed(CH), f"{CH}: recovered input state consumed"),
    (channel.UpstreamOutputThrough(CH), f"{CH}: upstream recovered output through; blocked"),
    (
        channel.UpstreamRecoveryComplete("counter[1]"),
        "counter[1]: upstream recovery complete, consumption resumed",
    ),
    (channel.RecordFilteredOut(9, 2), "record 9 filtered out (belongs to subtask 2)"),
    (
        channel.PrefilterBufferRead("exclusive", CH, 3, 1),
        f"pre-filter buffer (exclusive) for {CH}: 3 record(s) to rewrite, 1 filtered out",
    ),
    (channel.PostFilterBufferWritten(2, "heap", CH), f"post-filter buffer 2 (heap) for {CH}"),
    (
        channel.FilteredDeliveryFailed(2, 3, CH, (), FailedDeliveryRecycle.AFTER_FAILED),
        f"handing filtered buffer 2 of 3 to {CH} failed; the reader recycled buffer(s) none "
        f"({FailedDeliveryRecycle.AFTER_FAILED.value})",
    ),
    (
        channel.FilteredDeliveryFailed(1, 3, CH, (2, 3), FailedDeliveryRecycle.AFTER_FAILED),
        f"handing filtered buffer 1 of 3 to {CH} failed; the reader recycled buffer(s) 2, 3 "
        f"({FailedDeliveryRecycle.AFTER_FAILED.value})",
    ),
    (
        channel.PrefilteredSpilled(3, 1, 0, CH, 2),
        f"heap pre-filter segment: 3 record(s) of old 1<0 spilled for {CH}, 2 filtered out",
    ),
    (channel.BytesSpilled(300, 1, 0, CH), f"300 bytes of old 1<0 spilled for {CH}"),
    (channel.NothingFetched(), "fetch done: nothing to recover"),
    (channel.FetchDone(4, 2, 9000), "fetch done: 4 segment(s) in 2 spill file(s), 9000 bytes"),
    (channel.FetchFailed(2, 9000), "fetch failed after writing 2 spill file(s) of 9000 bytes"),
    (channel.SpillDirectoryDeleted(), "the fetch deleted its spill directory"),
    (
        channel.RequestPartitionsFailed(),
        "the request-partitions mail failed before converting any gate",
    ),
    (
        channel.GatesConverted(True),
        "all gates converted; every channel in recovery (needsRecovery)",
    ),
    (
        channel.GatesConverted(False),
        "all gates converted; nothing to drain: trigger NO_OP, task RUNNING",
    ),
    (
        channel.InstallDrainerFailed(),
        "the mail installing the drainer failed: no drain was submitted",
    ),
    (
        channel.DrainerInstalled(),
        "drainer installed as the recovery checkpoint trigger; task RUNNING",
    ),
    (channel.BytesDrained(300, CH), f"300 bytes drained into {CH}"),
    (
        channel.DrainFinished(True),
        "drain finished: EndOfFetchedChannelStateEvent on every channel; spill files deleted",
    ),
    (
        channel.DrainFinished(False),
        "drain finished: EndOfFetchedChannelStateEvent on every channel; "
        "spill files kept for a checkpoint",
    ),
    (
        channel.TriggerNoOpInRecovery(),
        "trigger NO_OP (the channels are still in recovery)",
    ),
    (
        channel.RecoveredStateConsumed(CH, True),
        f"{CH}: recovered state consumed; trigger NO_OP",
    ),
    (channel.RecoveredStateConsumed(CH, False), f"{CH}: recovered state consumed"),
    (
        TaskFailed("map[0]", "its user code threw after 3 record(s)", NOTHING, ()),
        "map[0] FAILED: its user code threw after 3 record(s); "
        "cancelling nothing else (its pipelined region)",
    ),
    (
        TaskFailed("map[0]", "why", Teardown(2, SpillFilesLeft(1, 0)), ("sink[0]", "src[0]")),
        "map[0] FAILED: why; 2 recovered buffer(s) released; 1 spill file(s) deleted; "
        "cancelling sink[0], src[0] (its pipelined region)",
    ),
    (TaskCanceled("sink[0]", NOTHING, False), "sink[0] CANCELED"),
    (
        TaskCanceled("sink[0]", Teardown(0, SpillFilesLeft(0, 2)), True),
        "sink[0] CANCELED; 2 spill file(s) stay on disk (before FLINK-40520 only a drain "
        "deletes them); every subtask of the failed region has stopped",
    ),
    (RegionRestarted(SubtaskId("map", 0)), "the scheduler restarts map[0]'s region"),
]


@pytest.mark.parametrize(("happening", "words"), EXAMPLES, ids=lambda v: type(v).__name__)
def test_a_happening_in_words(happening: Happening, words: str) -> None:
    assert sentence(happening) == words
    assert narrate((happening,)) == words


def test_every_kind_has_words_and_an_example() -> None:
    every = set(kinds())
    assert set(WORDS) == every
    assert {type(h) for h, _ in EXAMPLES} == every


def test_every_kind_renders_a_sentence() -> None:
    for happening, _ in EXAMPLES:
        words = sentence(happening)
        assert words, happening
        assert words == words.strip(), happening
        assert not words.endswith((";", ".")), happening


def test_a_steps_happenings_are_joined_in_the_order_told() -> None:
    told = (WatermarkRead(41, CH), WatermarkAdvanced("counter[1]", 41))
    assert narrate(told) == f"watermark 41 on {CH}; counter[1]'s watermark is now 41"
    assert narrate(()) == ""
