"""Checkpoints while a restarted job still recovers (FLIP-547, FLINK-38544: V2's fetch into
spill files and drain), and the review of PR #28554 that made it: when the coordinator may
trigger, the recovery barrier and trigger of each channel, what an aborted recovery leaves on
disk, gates converted too early, and aligned checkpoints during recovery (FLINK-40518)."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario
from flinkstate.catalogue.scenarios.workloads import BACKPRESSURED, FILTER_ON_READ
from flinkstate.runtime.options import Fault

#: a V2 restart whose consumers take long to consume what the drain queued quickly, so
#: checkpoints reach them while their channels are still in recovery after the drain ended
_TRIGGER_WINDOW = {
    **FILTER_ON_READ,
    "record_size": 3000,
    "generation": "v2",
    "restart_checkpoint_interval": 40,
    "checkpoints": 3,
}

#: V2 with rescale filtering into spill files, the first task with files failing in its
#: request-partitions mail, between its fetch and its drain
_ABORTED_FETCH = {
    **FILTER_ON_READ,
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
    **FILTER_ON_READ,
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


SCENARIOS: tuple[Scenario, ...] = (
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
            **FILTER_ON_READ,
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
            **FILTER_ON_READ,
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
        {**BACKPRESSURED, "new_parallelism": 7},
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
            **FILTER_ON_READ,
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
            **FILTER_ON_READ,
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
        "Trigger reset at the drain's end declines a checkpoint (FLINK-38544, PR #28554 review)",
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
)
