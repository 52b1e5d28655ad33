"""A checkpoint asked for while a failed pipelined region is down: planned with every terminal
subtask counted as finished (before FLINK-40482) or aborted by a FAILED or CANCELED one."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario

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


SCENARIOS: tuple[Scenario, ...] = (
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
)
