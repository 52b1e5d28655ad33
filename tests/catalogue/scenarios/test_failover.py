"""FLINK-40482's pair: a checkpoint asked for while a failed region is down, planned with the
rule before the fix (it completes without the region's state) and after it (refused; the
region restarts from the last complete checkpoint)."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.runtime.execution_state import ExecutionState
from flinkstate.runtime.options import CheckpointFailureReason
from flinkstate.runtime.world.world import NetworkWorld

BEFORE = "failed-task-counted-as-finished"
AFTER = "checkpoint-aborted-during-failover"


def test_the_pair_differs_in_the_rule_only() -> None:
    before = run_scenario(BEFORE, seed=0)
    after = run_scenario(AFTER, seed=0)
    assert before.values["terminal_tasks"] == "as-finished"
    assert after.values["terminal_tasks"] == "abort"
    assert {k: v for k, v in before.values.items() if k != "terminal_tasks"} == {
        k: v for k, v in after.values.items() if k != "terminal_tasks"
    }


@pytest.mark.parametrize("name", [BEFORE, AFTER])
@pytest.mark.parametrize("seed", range(6))
def test_the_checkpoint_is_asked_for_after_a_subtask_finished_and_the_region_stopped(
    name: str, seed: int
) -> None:
    """The premise of the bug: when the checkpoint reaches the plan, the bounded pipeline has
    FINISHED (the plan's after-finished branch), sink[1] is FAILED and source[1] CANCELED,
    and source[0] -> sink[0] still runs."""
    run = prepare_scenario(name, seed=seed)
    assert run.simulation is not None
    world = run.simulation.model
    assert isinstance(world, NetworkWorld)
    while (event := run.simulation.step()) is not None:
        if event.action.kind == "manual-checkpoint":
            break
    else:
        raise AssertionError("no checkpoint was asked for")
    states = {key: task.execution_state for key, task in world.tasks.items()}
    assert states == {
        "bounded[0]": ExecutionState.FINISHED,
        "bounded-sink[0]": ExecutionState.FINISHED,
        "source[0]": ExecutionState.RUNNING,
        "source[1]": ExecutionState.CANCELED,
        "sink[0]": ExecutionState.RUNNING,
        "sink[1]": ExecutionState.FAILED,
    }


@pytest.mark.parametrize("seed", range(3))
def test_before_the_fix_the_completed_checkpoint_records_the_failed_region_finished(
    seed: int,
) -> None:
    run = run_scenario(BEFORE, seed=seed)
    assert run.outcome is Outcome.VIOLATION
    assert run.result is not None
    (violation,) = run.result.violations
    assert violation.invariant == "checkpoint-completeness"
    world = run.world
    assert world is not None
    manual = world.checkpoints.completed[-1]
    assert set(manual.finished_subtasks) >= {"source[1]", "sink[1]"}
    summary = run.summary()
    assert summary["task_failure"].startswith("sink[1] failed at step ")
    assert summary["checkpoint_failures"] == []


@pytest.mark.parametrize("seed", range(3))
def test_after_the_fix_the_plan_is_refused_and_the_region_fails_over(seed: int) -> None:
    run = run_scenario(AFTER, seed=seed)
    assert run.outcome is Outcome.JOB_FAILED
    world = run.world
    assert world is not None
    (refused,) = world.checkpoints.failures
    assert (refused.checkpoint, refused.reason) == (
        0,
        CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING,
    )
    assert run.message.startswith("sink[1] failed at step ")
    assert "(source[1], sink[1]) fails over; restarted at step" in run.message
    assert run.message.endswith("from checkpoint 1")
    assert run.summary()["checkpoint_failures"] == [refused.describe()]
