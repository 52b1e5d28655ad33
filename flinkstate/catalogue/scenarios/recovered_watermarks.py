"""Watermarks and watermark status in rescaled in-flight data: a new channel that merges old
ones passes their watermarks through (before FLINK-40517) or their minimum, and their IDLE
status through or ACTIVE while any is active."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario
from flinkstate.catalogue.scenarios.workloads import BACKPRESSURED

#: the back-pressured keyed job with event time, halved with checkpointing during recovery
#: (V2): each new counter merges two old counters' channels from every source
_MERGED_WATERMARKS = {
    **BACKPRESSURED,
    "parallelism": 4,
    "new_parallelism": 2,
    "watermark_interval": 5,
    "checkpointing_during_recovery": True,
    "recover_output_on_downstream": True,
    "generation": "v2",
}

_MERGED_WATERMARKS_TEXT = (
    "The sources emit a watermark every 5 records (a record's timestamp is its position in "
    "its split). The counters are halved from 4 to 2 with checkpointing during recovery: "
    "new counter 0 reads old counters 0 and 1's channels from each source through one new "
    "channel. The two old channels were drained unevenly before the checkpoint, so their "
    "in-flight data ends at different watermarks. "
)

#: the keyed job with event time whose sources go 2 -> 3 (source[2] gets no split and, its
#: strategy declaring idleness, marks its output IDLE) and, from the first checkpoint of that
#: restart, 3 -> 2: each counter's channel from new source 0 merges old sources 0 and 2
_MERGED_IDLE = {
    **_MERGED_WATERMARKS,
    "source_parallelism": 2,
    "new_parallelism": 0,
    "new_source_parallelism": 3,
    "source_idleness": True,
    "then_source_parallelism": 2,
    "restart_checkpoint_interval": 40,
}

_MERGED_IDLE_TEXT = (
    "The sources emit a watermark every 5 records and declare idleness. A first restart "
    "raises them from 2 to 3: source[2] gets no split, marks its output IDLE and waits for the "
    "others to end, and the first checkpoint of that run holds its IDLE status in flight with "
    "old sources 0 and 1's records and watermarks. A second restart from that checkpoint "
    "takes the sources back to 2 with checkpointing during recovery: each counter's channel "
    "from new source 0 merges the old channels of sources 0 (active, records still in "
    "flight) and 2 (IDLE). "
)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "merged-watermarks-passed-through",
        "A merged channel's watermark overtakes recovered records (before FLINK-40517)",
        _MERGED_WATERMARKS_TEXT
        + "Before FLINK-40517 the filtering handler wrote each old channel's watermarks "
        "into the spill files as they came. The new channel's valve takes the first old "
        "channel's latest watermark as its own, the counter's watermark follows once its "
        "other channels have one, and records of the second old channel, still behind in "
        "the files, are then at or behind that watermark: a window would drop them as "
        "late, silently. The late-record invariant stops the run at the first.",
        "keyed",
        {**_MERGED_WATERMARKS, "recovered_watermarks": "passed-through"},
        Outcome.VIOLATION,
        "FLINK-40517 (PR #29064); ChannelStateFilteringHandler, StatusWatermarkValve",
        ("recovered_watermarks", "watermark_interval", "new_parallelism"),
    ),
    Scenario(
        "merged-watermarks-aggregated",
        "FLINK-40517: a merged channel passes on the minimum of its old channels",
        _MERGED_WATERMARKS_TEXT
        + "Since FLINK-40517 the filtering handler does what the classic demultiplexer "
        "always did: it keeps each old channel's last watermark and writes on only their "
        "minimum, nothing while one of them has none yet, and ACTIVE while any old channel "
        "is active. No recovered record falls behind the counter's watermark.",
        "keyed",
        _MERGED_WATERMARKS,
        Outcome.RECOVERED,
        "FLINK-40517 (PR #29064); DemultiplexingRecordDeserializerTest.testWatermarks",
        ("recovered_watermarks", "watermark_interval", "new_parallelism"),
    ),
    Scenario(
        "merged-idle-status-passed-through",
        "An idle old channel idles its merged channel; records dropped (before FLINK-40517)",
        _MERGED_IDLE_TEXT
        + "Before FLINK-40517 the filtering handler passed the IDLE status through as it "
        "came: the merged channel goes idle, and since new source 0 never went idle it "
        "never sends ACTIVE, so the channel stays idle. Each counter's valve leaves it out: "
        "the counter's watermark follows its other channel alone (new source 1) and "
        "overtakes the records of split 0 that still come through the merged channel: a "
        "window would drop them as late. The late-record invariant stops the run at the "
        "first.",
        "keyed",
        {**_MERGED_IDLE, "recovered_watermarks": "passed-through"},
        Outcome.VIOLATION,
        "FLINK-40517 (PR #29064); ChannelStateFilteringHandler, StatusWatermarkValve",
        ("recovered_watermarks", "source_idleness", "then_source_parallelism"),
    ),
    Scenario(
        "merged-idle-status-aggregated",
        "FLINK-40517: a merged channel stays active while any of its old channels is",
        _MERGED_IDLE_TEXT
        + "Since FLINK-40517 the merged channel's status is ACTIVE while any of its old "
        "channels is (as the classic demultiplexer always did): old source 2's IDLE is "
        "kept, not passed on, the counters keep waiting for old source 0's watermarks, and "
        "no recovered record falls behind them.",
        "keyed",
        _MERGED_IDLE,
        Outcome.RECOVERED,
        "FLINK-40517 (PR #29064); DemultiplexingRecordDeserializerTest.testWatermarks",
        ("recovered_watermarks", "source_idleness", "then_source_parallelism"),
    ),
)
