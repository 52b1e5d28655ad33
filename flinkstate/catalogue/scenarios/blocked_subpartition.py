"""A checkpoint's barrier and the subpartitions a restarted consumer has blocked until it
resumes them: held before FLINK-39018, handed out since, and still hidden from a credited
remote reader until FLINK-40519 (the before and after of each fix)."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario

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


SCENARIOS: tuple[Scenario, ...] = (
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
)
