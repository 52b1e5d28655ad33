"""The named recovery scenarios: data only (what each runs and expects, and where in Flink it
comes from). The value type is :class:`~flinkstate.catalogue.scenario.Scenario`; running one is
:func:`~flinkstate.lab.scenario_run.run_scenario`.
"""

from __future__ import annotations

from collections.abc import Mapping

from flinkstate.catalogue.scenario import Outcome, Scenario
from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.options import Fault

_BACKPRESSURED = {"records": 120, "record_size": 3000, "cost": 4, "checkpoint_interval": 200}

#: restart with a checkpoint triggered as soon as every task runs, while counters still drain
#: the sources' recovered output (blocked subpartitions); 600 steps lie between the longest
#: checkpoint that passes blocked subpartitions and the shortest one held back by them
_BLOCKED = {
    "records": 200,
    "record_size": 3000,
    "cost": 16,
    "checkpoint_interval": 200,
    "checkpoints": 1,
    "restart_checkpoint_interval": 1,
    "checkpoint_timeout": 600,
    "subtasks_per_state_file": 1,
    "slots_per_tm": 1,
}

#: a rescaled restart that filters on the reader thread, with records that complete needing
#: ten 4 KiB post-filter buffers (k = 10; E = 2 exclusive, L = 8 floating)
_FILTER_ON_READ = {
    "records": 40,
    "record_size": 37_000,
    "cost": 4,
    "checkpoint_interval": 200,
    "generation": "v1",
    "checkpointing_during_recovery": True,
    "recover_output_on_downstream": True,
    "new_parallelism": 3,
}

#: a V2 restart whose consumers take long to consume what the drain queued quickly, so
#: checkpoints reach them while their channels are still in recovery after the drain ended
_TRIGGER_WINDOW = {
    **_FILTER_ON_READ,
    "record_size": 3000,
    "generation": "v2",
    "restart_checkpoint_interval": 40,
    "checkpoints": 3,
}

#: the back-pressured keyed job with event time, halved with checkpointing during recovery
#: (V2): each new counter merges two old counters' channels from every source
_MERGED_WATERMARKS = {
    **_BACKPRESSURED,
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

#: V1 filtering on the reader, the first filtered buffer of the first source buffer that yields
#: any failing to reach its recovered channel (as InputChannelRecoveredStateHandlerTest's
#: FailingRecoveredInputChannel fails the first of three)
_FAILED_DELIVERY = {**_FILTER_ON_READ, "fail_filtered_delivery": 1}
_FAILED_DELIVERY_TEXT = (
    "Flink 2.3 filtering on the reader: the first 37 KB record kept is rewritten into three "
    "filtered buffers (the channel's exclusive buffer, then two 32 KiB heap segments of the "
    "fallback), and handing the first of them to the recovered channel fails (a test hook, "
    "as in Flink's test, which fails the first of three); the exception fails the task. "
)

#: V2 with rescale filtering into spill files, the first task with files failing in its
#: request-partitions mail, between its fetch and its drain
_ABORTED_FETCH = {
    **_FILTER_ON_READ,
    "record_size": 3000,
    "generation": "v2",
    "abort_recovery": "request-partitions",
}
_ABORTED_FETCH_TEXT = (
    "Master's recovery with checkpointing during recovery fetches each counter's rescaled "
    "input state into spill files; the first counter to go on to its request-partitions mail "
    "fails there (a test hook for the abort paths PR #29065 lists), before its drainer "
    "exists. "
)

#: a V2 restart of an unaligned checkpoint that takes aligned checkpoints itself, with a
#: timeout shorter than the drain
_ALIGNED_RESTART = {
    **_FILTER_ON_READ,
    "records": 32,
    "record_size": 3000,
    "generation": "v2",
    "restart_aligned": True,
    "restart_checkpoint_interval": 40,
    "checkpoint_timeout": 600,
}
_ALIGNED_RESTART_TEXT = (
    "The job checkpoints unaligned and fails; it is restored, with both recovery options on, "
    "by a job that takes aligned checkpoints (Flink allows that); a checkpoint still pending "
    "after 600 steps expires. "
)

#: FLIP-547's example: one counter restarted as ten, with V2 and a checkpoint every 40 steps
_FLIP_547 = {
    "parallelism": 1,
    "source_parallelism": 2,
    "records": 60,
    "record_size": 3000,
    "cost": 4,
    "checkpoint_interval": 150,
    "recover_output_on_downstream": True,
    "checkpointing_during_recovery": True,
    "generation": "v2",
    "new_parallelism": 10,
    "restart_checkpoint_interval": 40,
}

#: FLINK-40482: the restarted job's bounded pipeline finishes early; sink[1] fails after 30 of
#: its 50 records, and a checkpoint is asked for by hand while its region is down (the restart
#: waits 300 steps, far longer than that checkpoint takes)
_FAILOVER = {
    "records": 50,
    "bounded_records": 10,
    "checkpoint_interval": 1,
    "fail_operator": "sink",
    "fail_subtask": 1,
    "fail_after_records": 30,
    "checkpoint_during_failover": True,
    "restart_delay": 300,
}
_FAILOVER_TEXT = (
    "Beside a bounded pipeline, source -> sink runs at parallelism 2 over forward exchanges "
    "only, so each subtask index is a pipelined region of its own. The job checkpoints once "
    "and is restarted from it; in the restart the bounded pipeline FINISHES, then sink[1] "
    "fails after 30 records: the periodic checkpoint scheduler stops, and its region "
    "(source[1], sink[1]) is canceled while source[0] -> sink[0] keeps running. While the "
    "region is down, a checkpoint is triggered by hand (REST). A subtask has finished, so the "
    "plan takes its after-finished path. "
)
_FAILOVER_MATTERS = (
    "terminal_tasks",
    "checkpoint_during_failover",
    "fail_operator",
    "fail_after_records",
    "restart_delay",
)

#: the ITCase's keys are value % 100 (NUM_GROUPS)
#: (the checkpoint comes late enough for in-flight data to reach the keyBy exchange)
_ITCASE = {
    "records": 150,
    "record_size": 2000,
    "keys": 100,
    "cost": 8,
    "checkpoint_interval": 800,
}

#: the multi-pipeline topologies are several times larger: fewer records keep a run short
_ITCASE_LARGE = {**_ITCASE, "records": 60}


def _itcase_pair(
    kind: str, old: int, new: int, what: str, parameters: Mapping[str, object] = _ITCASE
) -> Scenario:
    """One of UnalignedCheckpointRescaleITCase's (topology, old, new) parameter rows, its
    operators rescaled with the job parallelism as the ITCase's functions of it say."""
    direction = "upscaled" if new > old else "downscaled"
    flink_name = kind.upper().replace("-", "_")
    return Scenario(
        f"itcase-{kind}-{old}-to-{new}",
        f"UnalignedCheckpointRescaleITCase: {flink_name} {direction} {old} -> {new}",
        what,
        f"itcase-{kind}",
        {**parameters, "parallelism": old, "new_job_parallelism": new},
        Outcome.RECOVERED,
        f"UnalignedCheckpointRescaleITCase ({direction.removesuffix('d')}, {flink_name}, "
        f"{old}, {new})",
        ("parallelism", "new_job_parallelism"),
    )


_PIPELINE = (
    "The ITCase's pipeline, every operator rescaled with the job parallelism: global, "
    "rebalance and shuffle exchanges split their state round robin or to the first subtask, "
    "the keyBy exchange by key group with filtering; the pointwise rescale exchange carries no "
    "channel state. Sources' splits are dealt out anew."
)
_UNION = (
    "Three source pipelines unioned into the failing map: its subtasks have one input gate "
    "per pipeline, each with its own channel state, rescaled round robin like any shuffle. "
    "(The ITCase's three sources emit the same numbers and filter them apart; here each "
    "emits its own.)"
)
_MULTI_INPUT = (
    "Three source pipelines combined by two two-input maps: min1 reads two rebalanced gates, "
    "each with its own channel state rescaled round robin; min2 reads min1 over a forward "
    "exchange, so Flink aligns both of min2's inputs and neither carries channel state."
)
_KEYED_DIFFERENT = (
    "Two source pipelines at p/2 and p/3 keyed into one keyed co-process function at p: both "
    "input gates are split by key group, each old subtask's state read by every new subtask "
    "whose range overlaps, and filtered."
)
_BROADCAST = (
    "A broadcast source connected to a rebalanced pipeline in a broadcast process function at "
    "2p. Broadcast exchanges are never checkpointed unaligned, and Flink then aligns every "
    "input of that operator, the rebalanced one too: the process function persists no input "
    "state and the map none for it. The in-flight data recovered is the source pipeline's."
)
_KEYED_BROADCAST = (
    "Three single-subtask broadcast sources and a keyed pipeline into a keyed broadcast "
    "process function at p + 2. Reading broadcast inputs, the operator has all its inputs "
    "aligned, the keyBy one too, so its key groups are redistributed with its keyed state but "
    "no in-flight data reaches it from the checkpoint; the source pipeline's is rescaled and "
    "filtered. The broadcast sources keep parallelism 1."
)

#: the sequential reader restored at the same parallelism, cost enough that both of its inputs
#: hold in-flight data at the checkpoint (the second one waits behind the first throughout)
_SEQUENTIAL = {
    "records": 60,
    "record_size": 2000,
    "cost": 4,
    "checkpoint_interval": 150,
    "parallelism": 2,
    "source_parallelism": 2,
}
_SEQUENTIAL_READER = (
    "The operator implements InputSelectable like StreamTaskSelectiveReadingITCase's "
    "sequential reader: it reads input 0 until every channel of that input has sent "
    "EndOfPartitionEvent, and only then looks at input 1. That holds during recovery too: "
    "while input 0 is selected the task never polls input 1's channels, so input 1's "
    "recovered state (and its EndOfInputChannelStateEvent) stays unread. "
)

#: UnalignedCheckpointRescaleSameUpstreamITCase: the job at parallelism 2, restored at 4, with
#: back-pressure enough that both edges hold in-flight data and records cut by the checkpoint
_SAME_UPSTREAM = {
    "parallelism": 2,
    "new_job_parallelism": 4,
    "records": 50,
    "record_size": 2000,
    "cost": 4,
    "checkpoint_interval": 300,
}
_SAME_UPSTREAM_TEXT = (
    "UnalignedCheckpointRescaleSameUpstreamITCase's CONNECT job restarted from parallelism 2 "
    "at 4: one source rebalanced into the co-map's first input and keyed into its second, so "
    "two edges join the same two operators (source->co-map and source->co-map#2). Each gate's "
    "and partition's rescaling descriptor carries the other side's mapping of its edge: the "
    "keyBy partition's is RANGE, which copies each old subpartition to the two new co-maps "
    "whose key groups it held, the rebalance partition's ROUND_ROBIN. "
)

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "baseline-recovery",
            "Restart at the same parallelism",
            "Every subtask reads back its own in-flight data: the sources' output state into "
            "their subpartitions, the counters' input state into recovered input channels. "
            "Channels convert to local and remote ones once their state is consumed; nothing "
            "is filtered.",
            "keyed",
            _BACKPRESSURED,
            Outcome.RECOVERED,
            "FLIP-76; UnalignedCheckpointITCase",
            ("records", "record_size", "cost", "buffers_per_channel"),
        ),
        Scenario(
            "keyed-upscale",
            "keyBy exchange rescaled 4 -> 7",
            "Old input state is read by every new subtask whose key-group range overlaps the "
            "old one (RANGE mapping); old subtasks read by two new ones are ambiguous, so their "
            "records are filtered by key group.",
            "keyed",
            {**_BACKPRESSURED, "new_parallelism": 7},
            Outcome.RECOVERED,
            "UnalignedCheckpointRescaleITCase (upscale); SubtaskStateMapper.RANGE",
            ("parallelism", "new_parallelism", "max_parallelism"),
        ),
        Scenario(
            "keyed-downscale",
            "keyBy exchange rescaled 7 -> 3",
            "A non-divisible downscale: new subtasks share old ones, records are filtered, and "
            "the sources' output state is copied into every subpartition that reads it.",
            "keyed",
            {**_BACKPRESSURED, "parallelism": 7, "new_parallelism": 3},
            Outcome.RECOVERED,
            "UnalignedCheckpointRescaleITCase (downscale); StateAssignmentOperationTest",
            ("parallelism", "new_parallelism"),
        ),
        Scenario(
            "rebalance-rescale",
            "rebalance and keyBy exchanges rescaled 4 -> 3",
            "The back-pressured pipeline restarted with fewer map and keyed subtasks: the "
            "rebalance exchange's state is split round-robin (no filtering needed), the keyBy "
            "exchange's by key-group range.",
            "backpressure",
            {**_BACKPRESSURED, "new_parallelism": 3},
            Outcome.RECOVERED,
            "UnalignedCheckpointRescaleITCase (pipeline); SubtaskStateMapper.ROUND_ROBIN",
            ("parallelism", "new_parallelism", "cost"),
        ),
        Scenario(
            "spanning-records-rescale",
            "Records 8x the segment size, rescaled with filtering",
            "Each 32 KiB record spans nine 4 KiB buffers; the checkpoint cuts records between "
            "input and output state. Recovery reassembles them per virtual channel (old "
            "subtask, old channel) before filtering by key group.",
            "keyed-chain",
            {**_BACKPRESSURED, "records": 40, "record_size": 8 * 4096, "new_parallelism": 3},
            Outcome.RECOVERED,
            "RecoveredStateFilteringLargeRecordITCase; DemultiplexingRecordDeserializer",
            ("record_size", "segment_size", "new_parallelism"),
        ),
        Scenario(
            "recover-output-on-downstream",
            "Upstream output state read by the downstream",
            "With recover-output-on-downstream the sources' persisted output is handed to the "
            "counters as input state of the same virtual channels, so a record cut between "
            "both sides is reassembled by one deserializer; the sources still send the "
            "end-of-output event.",
            "keyed",
            {
                **_BACKPRESSURED,
                "parallelism": 7,
                "new_parallelism": 3,
                "recover_output_on_downstream": True,
            },
            Outcome.RECOVERED,
            "FLINK-38542; TaskStateAssignment.distributeOutputBuffersToDownstream",
            ("recover_output_on_downstream", "new_parallelism"),
        ),
        Scenario(
            "keyed-12-to-7",
            "The keyed job, 12 -> 7 (a parallelism pair of UnalignedCheckpointRescaleITCase)",
            "The plain keyed job with the ITCase's KEYED_DIFFERENT_PARALLELISM pair: old "
            "key-group ranges straddle new ones, so every new subtask reads two or three old "
            "ones and filters. The ITCase's own topology for this pair is "
            "itcase-keyed-different-parallelism-12-to-7.",
            "keyed",
            {**_BACKPRESSURED, "records": 60, "parallelism": 12, "new_parallelism": 7},
            Outcome.RECOVERED,
            "parallelism pair of UnalignedCheckpointRescaleITCase (KEYED_DIFFERENT_PARALLELISM)",
            ("parallelism", "new_parallelism"),
        ),
        Scenario(
            "keyed-7-to-12",
            "The keyed job, 7 -> 12 (a parallelism pair of UnalignedCheckpointRescaleITCase)",
            "The same pair upscaled: every old subtask's state is read by two or three new ones.",
            "keyed",
            {**_BACKPRESSURED, "records": 60, "parallelism": 7, "new_parallelism": 12},
            Outcome.RECOVERED,
            "parallelism pair of UnalignedCheckpointRescaleITCase (KEYED_DIFFERENT_PARALLELISM)",
            ("parallelism", "new_parallelism"),
        ),
        _itcase_pair("pipeline", 3, 7, _PIPELINE),
        _itcase_pair("pipeline", 7, 3, "The same pipeline downscaled."),
        _itcase_pair("union", 2, 3, _UNION, _ITCASE_LARGE),
        _itcase_pair("union", 3, 2, _UNION, _ITCASE_LARGE),
        _itcase_pair("multi-input", 2, 3, _MULTI_INPUT, _ITCASE_LARGE),
        _itcase_pair("multi-input", 3, 2, _MULTI_INPUT, _ITCASE_LARGE),
        _itcase_pair("keyed-different-parallelism", 12, 7, _KEYED_DIFFERENT, _ITCASE_LARGE),
        _itcase_pair("keyed-different-parallelism", 7, 12, _KEYED_DIFFERENT, _ITCASE_LARGE),
        _itcase_pair("keyed-broadcast", 7, 2, _KEYED_BROADCAST, _ITCASE_LARGE),
        _itcase_pair("keyed-broadcast", 2, 7, _KEYED_BROADCAST, _ITCASE_LARGE),
        _itcase_pair("broadcast", 5, 2, _BROADCAST, _ITCASE_LARGE),
        _itcase_pair("broadcast", 2, 5, _BROADCAST, _ITCASE_LARGE),
        Scenario(
            "barrier-held-by-blocked-subpartition",
            "A barrier stuck behind a blocked subpartition (before FLINK-39018)",
            "Right after the restart each counter has taken the end-of-output event from some "
            "sources but not all, so those subpartitions are blocked until it resumes them. A "
            "checkpoint is triggered then; its priority barrier sits at the head of the blocked "
            "subpartitions and is not handed out until resumeConsumption, after the counter has "
            "worked through every source's recovered output: the checkpoint expires, and at "
            "Flink's default tolerance (0 failed checkpoints) the job fails over, to meet the "
            "same blocked subpartitions after its next restart.",
            "keyed",
            {**_BLOCKED, "blocked_priority": "held"},
            Outcome.JOB_FAILED,
            "PR #27861, FLINK-39018 part 4; docs/concepts/hazards.md#blocked-subpartition-barrier",
            (
                "blocked_priority",
                "checkpoint_timeout",
                "tolerable_failed_checkpoints",
                "cost",
                "slots_per_tm",
            ),
        ),
        Scenario(
            "barrier-bypasses-blocked-subpartition",
            "The FLINK-39018 fix: priority events pass a blocked subpartition",
            "The same restart with local channels: the blocked subpartition hands out the "
            "priority barrier (data stays blocked until resume), so the checkpoint completes "
            "while recovery is still draining.",
            "keyed",
            {**_BLOCKED, "blocked_priority": "master", "slots_per_tm": 4},
            Outcome.RECOVERED,
            "FLINK-39018; PipelinedSubpartitionWithReadViewTest."
            "testPriorityEventBypassesBlockedSubpartition",
            ("blocked_priority", "slots_per_tm"),
        ),
        Scenario(
            "barrier-hidden-from-credited-reader",
            "A credited remote reader still misses the barrier (FLINK-40519)",
            "With remote channels that hold credit, Flink 2.3 and the master snapshot still ask "
            "the blocked subpartition whether data is available, get no, and never look for "
            "the priority event: the checkpoint waits for resumeConsumption and expires; at "
            "the default tolerance the job fails over (tolerable_failed_checkpoints=1 lets it "
            "run on with the expired checkpoint).",
            "keyed",
            {**_BLOCKED, "blocked_priority": "master"},
            Outcome.JOB_FAILED,
            "FLINK-40519 (PR #29056); PipelinedSubpartition.getAvailabilityAndBacklog",
            (
                "blocked_priority",
                "tolerable_failed_checkpoints",
                "slots_per_tm",
                "buffers_per_channel",
            ),
        ),
        Scenario(
            "barrier-credited-reader-fixed",
            "FLINK-40519 fixed: the credited reader gets the barrier",
            "The same remote restart with the barrier handed to credited readers too: the "
            "checkpoint completes during recovery.",
            "keyed",
            {**_BLOCKED, "blocked_priority": "fixed"},
            Outcome.RECOVERED,
            "FLINK-40519 (PR #29056)",
            ("blocked_priority",),
        ),
        Scenario(
            "prefilter-deadlock",
            "Pre- and post-filter buffers from one channel: the reader waits on itself",
            "Filtering on the reader (checkpointing during recovery, before FLINK-38930's heap "
            "fallback), each source buffer is read into a pre-filter buffer of the recovered "
            "channel and the records completing in it are rewritten into post-filter buffers of "
            "the same channel, all held until the source buffer is done. A 37 KB record needs "
            "ten 4 KiB post-filter buffers; with the pre-filter one that is eleven, one more "
            "than the channel's 2 exclusive plus the gate's 8 floating buffers, and the only "
            "thread that could return one is the one waiting.",
            "keyed",
            {**_FILTER_ON_READ, "prefilter_source": "network"},
            Outcome.DEADLOCK,
            "PR #28001, FLINK-39519 (the hazard); FLINK-38930 part 1 (commit 23ebbb5d2bb)",
            (
                "prefilter_source",
                "record_size",
                "segment_size",
                "buffers_per_channel",
                "floating_buffers",
            ),
        ),
        Scenario(
            "prefilter-below-threshold",
            "The same reader with one post-filter buffer less: no deadlock",
            "36 KB records need nine post-filter buffers: with the pre-filter buffer that is "
            "ten, exactly the channel's budget, so the reader never waits on itself (it hangs "
            "iff 1 + k > exclusive + floating).",
            "keyed",
            {**_FILTER_ON_READ, "prefilter_source": "network", "record_size": 36_000},
            Outcome.RECOVERED,
            "FLINK-39519; RecoveredStateFilteringLargeRecordITCase sits at this boundary",
            ("record_size", "segment_size"),
        ),
        Scenario(
            "prefilter-heap-fallback",
            "Flink 2.3: recovery buffers fall back to the heap",
            "Flink 2.3's RecoveredInputChannel hands out a channel's exclusive buffer or else a "
            "fresh 32 KiB heap segment, for pre- and post-filter buffers alike: no deadlock, "
            "but heap use grows with the recovered data (the gate's floating buffers are never "
            "used).",
            "keyed",
            {**_FILTER_ON_READ, "prefilter_source": "heap-fallback"},
            Outcome.RECOVERED,
            "FLINK-38930 part 2 (release-2.3 RecoveredInputChannel.requestBufferBlocking)",
            ("prefilter_source", "record_size"),
        ),
        Scenario(
            "prefilter-heap-segment",
            "FLINK-39519: one reusable heap segment for pre-filter buffers",
            "The pre-filter buffer is one heap segment per task, reused for every source buffer "
            "and checked to be recycled before the next is taken; post-filter buffers still come "
            "from the channel with the heap fallback. The network pools are not touched by "
            "pre-filter reads.",
            "keyed",
            {**_FILTER_ON_READ, "prefilter_source": "heap-segment"},
            Outcome.RECOVERED,
            "PR #28001, FLINK-39519; InputChannelRecoveredStateHandlerTest",
            ("prefilter_source",),
        ),
        Scenario(
            "failed-delivery-recycled-twice",
            "A failed hand-over recycles a buffer the channel holds (before FLINK-40345)",
            _FAILED_DELIVERY_TEXT
            + "Flink 2.3's compensating loop starts at the buffer that failed, which the "
            "channel already queues: it goes back to the channel's exclusive buffers while "
            "the queue still holds it, and when the failed task releases the channel it is "
            "recycled a second time. The ledger names the double recycle.",
            "keyed",
            {**_FAILED_DELIVERY, "failed_delivery_recycle": "from-failed"},
            Outcome.VIOLATION,
            "FLINK-40345 (PR #28936); release-2.3 InputChannelRecoveredStateHandler."
            "recoverWithFiltering",
            ("failed_delivery_recycle", "fail_filtered_delivery", "prefilter_source"),
        ),
        Scenario(
            "failed-delivery-recycled-once",
            "FLINK-40345: a failed hand-over recycles only the buffers not handed over",
            _FAILED_DELIVERY_TEXT
            + "Since FLINK-40345 the loop starts after the buffer that failed: the two never "
            "handed over are freed once, the first stays with the channel until the failed "
            "task releases it, and the job fails over cleanly to its last checkpoint.",
            "keyed",
            _FAILED_DELIVERY,
            Outcome.JOB_FAILED,
            "FLINK-40345 (PR #28936); InputChannelRecoveredStateHandlerTest."
            "testFilteredBuffersRecycledOnceWhenDeliveryFails",
            ("failed_delivery_recycle", "fail_filtered_delivery", "prefilter_source"),
        ),
        Scenario(
            "selective-reading-all-gates",
            "Gates converted only together: a selective reader deadlocks on restore",
            _SEQUENTIAL_READER
            + "In the intermediate rewrite of PR #28554, no recovered gate was converted to "
            "local/remote channels (requestPartitions) before every gate's recovered state "
            "was consumed. The task consumes input 0's recovered state, then needs input 0's "
            "live data and EndOfPartitionEvent to move on to input 1, and those arrive only "
            "after input 0's gate is converted. The conversion waits for input 1's recovered "
            "state to be consumed, which the task will not read while input 0 is selected: "
            "the task waits for the conversion, the conversion for the task. (Flink refuses to "
            "checkpoint InputSelectable operators, but every task start restores its gates, so "
            "there the same cycle forms even with no state at all.)",
            "sequential-reading",
            {**_SEQUENTIAL, "gate_conversion": "all-gates"},
            Outcome.DEADLOCK,
            "PR #28554 (last commit); StreamTaskSelectiveReadingITCase",
            ("gate_conversion", "exchange", "parallelism"),
        ),
        Scenario(
            "selective-reading-per-gate",
            "Each gate converted on its own: the selective reader recovers",
            _SEQUENTIAL_READER
            + "Master converts each gate as soon as its own recovered state is consumed; only "
            "the end of restore waits for every gate. Input 0's gate converts right after its "
            "recovered state, its live data and EndOfPartitionEvent arrive, input 0 ends, and "
            "the task then reads input 1's recovered state, converts that gate, and finishes "
            "restoring. (This needs input 1's recovered state to fit its recovered channels' "
            "buffers: the reader thread appends the end-of-state events only after reading "
            "every gate's state, so a reader blocked on input 1's buffers would hold input 0 "
            "back too.)",
            "sequential-reading",
            {**_SEQUENTIAL, "gate_conversion": "per-gate"},
            Outcome.RECOVERED,
            "FLINK-39522; StreamTask.recoverChannelsWithoutCheckpointing",
            (
                "gate_conversion",
                "exchange",
                "parallelism",
                "buffers_per_channel",
                "floating_buffers",
            ),
        ),
        Scenario(
            "same-upstream-first-edge",
            "Two edges from one upstream take the first edge's mapping (before FLINK-40269)",
            _SAME_UPSTREAM_TEXT
            + "Before FLINK-40269 the JobManager looked the other side up by the connected "
            "operator alone and took the first edge it found, for both partitions: the keyBy "
            "partition's output state goes where ROUND_ROBIN sends it, old subpartition 1 to "
            "new co-map 1 instead of 2 and 3. A co-map then meets bytes of an old subtask its "
            "descriptor does not name, or finishes its recovered input with the first half of "
            "a record whose second half went elsewhere; Flink's restored task fails with an "
            "IllegalStateException either way, and the model stops at the first of them.",
            "same-upstream",
            {**_SAME_UPSTREAM, "connected_mapping_lookup": "first-edge"},
            Outcome.VIOLATION,
            "FLINK-40269 (PR #28856); UnalignedCheckpointRescaleSameUpstreamITCase; "
            "docs/concepts/hazards.md#duplicate-edges",
            ("connected_mapping_lookup", "new_job_parallelism", "recover_output_on_downstream"),
        ),
        Scenario(
            "same-upstream-by-data-set",
            "FLINK-40269: each edge finds its own mapping by its intermediate data set",
            _SAME_UPSTREAM_TEXT
            + "Since FLINK-40269 each gate and partition finds the other side by its edge's "
            "intermediate data set: the keyBy partition's output state follows RANGE, the two "
            "co-maps reading an old subpartition filter its records by key group, and every "
            "record is processed exactly once, at its owner, on both inputs.",
            "same-upstream",
            _SAME_UPSTREAM,
            Outcome.RECOVERED,
            "FLINK-40269 (PR #28856); StateAssignmentOperationTest."
            "testChannelStateAssignmentUsesResultIdForDuplicateJobVertexConnections",
            ("connected_mapping_lookup", "new_job_parallelism", "recover_output_on_downstream"),
        ),
        Scenario(
            "checkpoint-during-drain",
            "Checkpoints while V2 still drains recovered data (Flink master)",
            "With both checkpointing-during-recovery options on, the reader filters the "
            "rescaled input into spill files, every channel is converted in recovery and the "
            "task is RUNNING as soon as the drainer is installed. Checkpoints come every 40 "
            "steps meanwhile: each puts a recovery barrier into every channel still in "
            "recovery and cuts the drainer's position; the channels persist the recovered "
            "buffers queued before their barrier and the writer adds the spill files' "
            "undrained rest. Every recovered record is processed or persisted exactly once, "
            "and the files are deleted when the last checkpoint has read them.",
            "keyed",
            {
                **_FILTER_ON_READ,
                "record_size": 3000,
                "generation": "v2",
                "restart_checkpoint_interval": 40,
                "checkpoints": 3,
            },
            Outcome.RECOVERED,
            "FLIP-547, FLINK-38544; StreamTask.recoverChannelsWithCheckpointing, "
            "FetchedChannelStateDrainer, ChannelState.onCheckpointStartedForAllInputs",
            (
                "generation",
                "checkpointing_during_recovery",
                "restart_checkpoint_interval",
                "new_parallelism",
                "spill_segment_size",
                "spill_file_size",
            ),
        ),
        Scenario(
            "checkpoint-before-drainer",
            "What if the coordinator did not wait: checkpoints meet restoring tasks",
            "Flink plans a checkpoint only once every task is RUNNING. Without that check, "
            "checkpoints come every 10 steps from the restart: a source still restoring "
            "declines its trigger, and a counter whose channels are converted but whose "
            "drainer is not installed yet (trigger NOT_READY) declines the barrier, both as "
            "CHECKPOINT_DECLINED_TASK_NOT_READY. Those are not counted: the coordinator "
            "retries, a later checkpoint completes during the drain, nothing is lost.",
            "keyed",
            {
                **_FILTER_ON_READ,
                "record_size": 3000,
                "generation": "v2",
                "coordinator_waits_for_running": False,
                "restart_checkpoint_interval": 10,
                "checkpoints": 3,
            },
            Outcome.RECOVERED,
            "RecoveryCheckpointTrigger.NOT_READY; CheckpointFailureManager; "
            "DefaultCheckpointPlanCalculator",
            (
                "coordinator_waits_for_running",
                "restart_checkpoint_interval",
                "tolerable_failed_checkpoints",
            ),
        ),
        Scenario(
            "spill-files-left-on-abort",
            "Recovery aborts before its drain: the spill files stay (before FLINK-40520)",
            _ABORTED_FETCH_TEXT
            + "In master of August 2026 only the drain releases the files, and this drain never "
            "starts: the failed task's files, and those of every task whose drain had not "
            "started, stay on the TaskManager's disk until it shuts down, one more set for "
            "every failed recovery. The invariant that no spill file outlives its recovery "
            "names them.",
            "keyed",
            {**_ABORTED_FETCH, "spill_cleanup": "drain-only"},
            Outcome.VIOLATION,
            "FLINK-40520 (PR #29065); StreamTask.recoverChannelsWithCheckpointing",
            ("spill_cleanup", "abort_recovery"),
        ),
        Scenario(
            "spill-files-deleted-on-abort",
            "FLINK-40520: the files of an aborted recovery are deleted",
            _ABORTED_FETCH_TEXT
            + "Since FLINK-40520 the fetched state belongs to the task's cleanup once the fetch "
            "hands it over (and a fetch that fails deletes its own spill directory): the "
            "failover deletes every task's files, and the job fails over cleanly.",
            "keyed",
            _ABORTED_FETCH,
            Outcome.JOB_FAILED,
            "FLINK-40520 (PR #29065); StreamTask.cleanUp",
            ("spill_cleanup", "abort_recovery"),
        ),
        Scenario(
            "partitions-requested-before-consumed",
            "Gates converted before their state is consumed: Flink's own check refuses",
            "PR #28554's async rewrite let the task's record processing and its gate "
            "conversion run before the recovered state was consumed (the seed reports 3 of 10 "
            "records lost in MultipleInputStreamTaskTest). The model's reading of that "
            "ordering: each gate requests its partitions as soon as the reader is done, not "
            "once its recovered state is consumed. Flink does not let a conversion drop what a "
            "recovered channel still holds: RecoveredInputChannel.toInputChannel checks that "
            "the channel queues nothing any more (master; up to 2.3, that its recovered state "
            "is consumed) and throws an IllegalStateException, which fails the task. The "
            "invariant conversion-with-buffers names the channel. Master gates conversion and "
            "the end of restore on every gate's consumed state.",
            "keyed",
            {**_BACKPRESSURED, "new_parallelism": 7},
            Outcome.VIOLATION,
            "PR #28554 (restore ordering fix); StreamTask.recoverChannelsWithoutCheckpointing; "
            "RecoveredInputChannel.toInputChannel; "
            "docs/concepts/hazards.md#processed-before-recovery",
            ("new_parallelism",),
            faults=frozenset({Fault.CONVERT_BEFORE_CONSUMED}),
        ),
        Scenario(
            "missing-recovery-barrier",
            "A channel without its recovery barrier declines: master fails the job",
            "A bug that loses the RecoveryCheckpointBarrier (re-introduced here) leaves a "
            "channel in recovery with no barrier for the checkpoint. Master's "
            "collectPreRecoveryBarrier throws, the checkpoint is declined as "
            "CHECKPOINT_DECLINED, which counts: at the default tolerance the job fails over.",
            "keyed",
            {
                **_FILTER_ON_READ,
                "record_size": 3000,
                "generation": "v2",
                "restart_checkpoint_interval": 40,
                "checkpoints": 3,
            },
            Outcome.JOB_FAILED,
            "RemoteInputChannelTest.testCheckpointStartedDeclinesWhenRecoveryBarrierIsMissing; "
            "docs/concepts/hazards.md#declines",
            ("recovery_barrier_decline", "tolerable_failed_checkpoints"),
            faults=frozenset({Fault.MISSING_RECOVERY_BARRIER}),
        ),
        Scenario(
            "missing-recovery-barrier-seed",
            "The same decline as PR #28554 proposed: retried, the job survives",
            "PR #28554 declined a missing recovery barrier as CHECKPOINT_DECLINED_TASK_NOT_READY, "
            "which is not counted: the coordinator retries until the drain is over and a "
            "checkpoint completes. The job survives, and so would the bug that lost the barrier: "
            "the reviewer's objection, and why master counts it.",
            "keyed",
            {
                **_FILTER_ON_READ,
                "record_size": 3000,
                "generation": "v2",
                "restart_checkpoint_interval": 40,
                "checkpoints": 3,
                "recovery_barrier_decline": "seed",
            },
            Outcome.RECOVERED,
            "PR #28554 review; CheckpointFailureManager",
            ("recovery_barrier_decline", "tolerable_failed_checkpoints"),
            faults=frozenset({Fault.MISSING_RECOVERY_BARRIER}),
        ),
        Scenario(
            "trigger-no-op-after-drain",
            "Trigger reset at the drain's end declines a checkpoint "
            "(FLINK-38544, PR #28554 review)",
            "A V2 task's recovery checkpoint trigger cuts the recovered state while channels "
            "are still in recovery. PR #28554 first reset it to NO_OP as soon as the drain had "
            "queued every channel's end event, but a channel stays in recovery until the task "
            "polls that event. A checkpoint that reaches the task in between inserts no "
            "RecoveryCheckpointBarrier, the channel finds none, and the checkpoint is declined "
            "as CHECKPOINT_DECLINED, which counts: at the default tolerance the job fails over. "
            "The review caught it; master resets the trigger only once every channel has left "
            "recovery.",
            "keyed",
            {**_TRIGGER_WINDOW, "no_op_trigger_after": "drain-done"},
            Outcome.JOB_FAILED,
            "PR #28554 review (StreamTask: the NO_OP swap after drain()); "
            "docs/concepts/hazards.md#trigger-reset-early",
            ("no_op_trigger_after", "tolerable_failed_checkpoints"),
        ),
        Scenario(
            "trigger-no-op-after-consumed",
            "Trigger reset once every channel left recovery: checkpoints complete (FLINK-38544)",
            "The same restart with master's rule: the trigger goes back to NO_OP only when the "
            "last channel of the task's gates has consumed its recovered state (its end event "
            "polled, onRecoveredStateConsumed). Every checkpoint that reaches the task while a "
            "channel is still in recovery finds the drainer as trigger, which puts a recovery "
            "barrier into every such channel, and completes.",
            "keyed",
            {**_TRIGGER_WINDOW, "no_op_trigger_after": "state-consumed"},
            Outcome.RECOVERED,
            "StreamTask.recoverChannelsWithCheckpointing; FLINK-39523 (PR #28660: NO_OP once "
            "all gates report state consumed)",
            ("no_op_trigger_after", "tolerable_failed_checkpoints"),
        ),
        Scenario(
            "aligned-checkpoint-during-recovery",
            "Aligned checkpoints during V2 recovery expire (before FLINK-40518)",
            _ALIGNED_RESTART_TEXT
            + "Before FLINK-40518 the two recovery options alone turned checkpointing during "
            "recovery on: every task is RUNNING as soon as its drainer is installed, and the "
            "coordinator triggers. The aligned barrier handler has no recovery trigger, so the "
            "checkpoint is neither cut at the drainer's position nor declined as not ready: "
            "each barrier waits behind its channel's recovered data, the checkpoint stays "
            "pending until the task has consumed all of it, and expires. That counts; the job "
            "fails over to the same checkpoint and does it all again: a failover loop.",
            "keyed",
            {**_ALIGNED_RESTART, "during_recovery_gate": "two-options"},
            Outcome.JOB_FAILED,
            "FLINK-40518 (PR #29055); CheckpointingOptions.isCheckpointingDuringRecoveryEnabled, "
            "InputProcessorUtil.createBarrierHandler",
            ("during_recovery_gate", "restart_aligned", "checkpoint_timeout"),
        ),
        Scenario(
            "aligned-restart-recovers-classic",
            "FLINK-40518: with aligned checkpoints the restart recovers the classic way",
            _ALIGNED_RESTART_TEXT
            + "Since FLINK-40518 checkpointing during recovery also needs unaligned checkpoints, "
            "so this restart recovers the classic way: no task is RUNNING before it has "
            "consumed its recovered data, no checkpoint is pending meanwhile, and nothing "
            "expires. The price is FLIP-547's starting point: no checkpoint during recovery "
            "(this small job's sources have ended by the time it would come).",
            "keyed",
            _ALIGNED_RESTART,
            Outcome.RECOVERED,
            "FLINK-40518 (PR #29055); CheckpointingOptionsTest",
            ("during_recovery_gate", "restart_aligned", "checkpoint_timeout"),
        ),
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
        Scenario(
            "failed-task-counted-as-finished",
            "A checkpoint during a failover completes without the failed region (FLINK-40482)",
            _FAILOVER_TEXT
            + "Before FLINK-40482 the plan counted every terminal subtask as finished, the "
            "FAILED and CANCELED ones too: it triggers source[0], waits for source[0] and "
            "sink[0] only, and records source[1] and sink[1] as finished. The checkpoint "
            "completes with no state of theirs, and the region's restart would restore it: "
            "they would start without their state. The invariant that a completed checkpoint "
            "holds the state of every subtask that has not finished stops the run there.",
            "pipelined-regions",
            {**_FAILOVER, "terminal_tasks": "as-finished"},
            Outcome.VIOLATION,
            "FLINK-40482 (PR #29031); DefaultCheckpointPlanCalculator.collectTaskRunningStatus, "
            "Execution.isFinished; docs/concepts/hazards.md#failed-as-finished",
            _FAILOVER_MATTERS,
        ),
        Scenario(
            "checkpoint-aborted-during-failover",
            "FLINK-40482: a FAILED or CANCELED subtask aborts the checkpoint plan",
            _FAILOVER_TEXT
            + "Since FLINK-40482 a FAILED or CANCELED subtask aborts the plan before the "
            "checkpoint gets an id (NOT_ALL_REQUIRED_TASKS_RUNNING in the model, not counted). "
            "The scheduler then restarts the region from the last completed checkpoint, which "
            "holds its state: the job fails over as it should, and every invariant holds.",
            "pipelined-regions",
            _FAILOVER,
            Outcome.JOB_FAILED,
            "FLINK-40482 (PR #29031); DefaultCheckpointPlanCalculator.calculateCheckpointPlan; "
            "docs/concepts/hazards.md#failed-as-finished",
            _FAILOVER_MATTERS,
        ),
        Scenario(
            "unfiltered-checkpoint-during-recovery",
            "FLIP-547 without filtering first: every new subtask persists all the state",
            "The first restart of flip-547-rescale-cycle with the record filter switched off: "
            "each of the ten counters keeps the old counter's whole input state, processes "
            "records it was never sent, and a checkpoint taken meanwhile would hold each "
            "recovered record ten times. The exactly-once invariant stops it at the first "
            "such record.",
            "keyed",
            _FLIP_547,
            Outcome.VIOLATION,
            "FLIP-547 (motivation)",
            ("new_parallelism",),
            faults=frozenset({Fault.NO_FILTER}),
        ),
        Scenario(
            "spill-pressure-v2",
            "A tiny network pool: V2 spills everything and drains through one buffer",
            "One exclusive buffer per channel and one floating buffer per gate (the fewest "
            "Flink's gate arithmetic accepts). V2's fetch never touches the pool, so it spills "
            "the recovered data at full speed; the drain is what the small pool slows. Compare "
            "heap, bytes spilled and steps with spill-pressure-v1 and with more buffers "
            "(buffers_per_channel, floating_buffers).",
            "keyed",
            {
                **_FILTER_ON_READ,
                "record_size": 3000,
                "generation": "v2",
                "buffers_per_channel": 1,
                "floating_buffers": 1,
                "restart_checkpoint_interval": 40,
                "checkpoints": 3,
            },
            Outcome.RECOVERED,
            "FLINK-38544; FLINK-40080",
            ("generation", "buffers_per_channel", "floating_buffers", "spill_segment_size"),
        ),
        Scenario(
            "spill-pressure-v1",
            "The same tiny pool in Flink 2.3: the heap fallback takes over",
            "With one exclusive buffer per channel and one floating buffer per gate, Flink 2.3's "
            "reader gets a fresh 32 KiB heap segment whenever the channel has no buffer: it never "
            "blocks, and heap use grows with the recovered data (more than ten times V2's here).",
            "keyed",
            {
                **_FILTER_ON_READ,
                "record_size": 3000,
                "generation": "v1",
                "buffers_per_channel": 1,
                "floating_buffers": 1,
                "restart_checkpoint_interval": 40,
                "checkpoints": 3,
            },
            Outcome.RECOVERED,
            "FLINK-38930 (release-2.3 RecoveredInputChannel.requestBufferBlocking)",
            ("generation", "buffers_per_channel", "floating_buffers", "prefilter_source"),
        ),
        Scenario(
            "flip-547-rescale-cycle",
            "FLIP-547's example: rescale 1 -> 10 -> 1 with checkpoints during recovery",
            "One counter is restarted as ten, and a checkpoint is taken while they still drain "
            "their recovered input; the job is then restarted from that checkpoint as one "
            "counter again. Each of the ten reads the old counter's whole input state, so a "
            "checkpoint that persisted what they received before filtering would hold it ten "
            "times and the final restore would process it ten times. V2 filters at the fetch: "
            "every recovered record is in the second checkpoint at most once, at its owner, "
            "and the last restart processes each exactly once.",
            "keyed",
            {**_FLIP_547, "then_parallelism": 1},
            Outcome.RECOVERED,
            "FLIP-547 (motivation); FLINK-38544",
            ("generation", "new_parallelism", "then_parallelism", "restart_checkpoint_interval"),
        ),
        Scenario(
            "large-records-three-phases",
            "RecoveredStateFilteringLargeRecordITCase: three phases, records 8x the segment",
            "32 KiB records span nine 4 KiB buffers. Phase 1 takes an unaligned checkpoint "
            "with records cut between buffers; phase 2 restores it at parallelism 3 and "
            "checkpoints while the drainer still delivers; phase 3 restores that checkpoint, "
            "already filtered for parallelism 3, at parallelism 5 and checkpoints again. "
            "Every record is processed exactly once across the phases.",
            "keyed-chain",
            {
                **_BACKPRESSURED,
                "records": 40,
                "record_size": 8 * 4096,
                "recover_output_on_downstream": True,
                "checkpointing_during_recovery": True,
                "generation": "v2",
                "new_parallelism": 3,
                "then_parallelism": 5,
                "restart_checkpoint_interval": 40,
                "checkpoints": 3,
            },
            Outcome.RECOVERED,
            "RecoveredStateFilteringLargeRecordITCase (seed 000)",
            ("new_parallelism", "then_parallelism", "record_size", "spill_segment_size"),
        ),
        Scenario(
            "small-page-size",
            "A 1 KiB page size is refused",
            "taskmanager.memory.segment-size below Flink's 4096-byte minimum is refused with "
            "Flink's own configuration error before anything runs (in the seed it surfaced "
            "during recovery, from the record filter's page size).",
            "keyed",
            {**_BACKPRESSURED, "segment_size": 1024},
            Outcome.REJECTED,
            "PR #28001 (third commit), FLINK-39519; ConfigurationParserUtils.getPageSize",
            ("segment_size",),
        ),
    )
}


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise InvalidParameterError(
            f"unknown scenario {name!r}; known: {', '.join(sorted(SCENARIOS))}"
        ) from None
