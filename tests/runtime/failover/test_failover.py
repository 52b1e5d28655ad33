"""A subtask failure: its region fails over, the checkpoint scheduler stops, a checkpoint asked
for by hand meets the plan calculator's rule for FAILED and CANCELED subtasks (FLINK-40482),
and the region's restart ends the run."""

from __future__ import annotations

from dataclasses import replace

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.cli.run_report import MANUAL_BEYOND, failover_lines
from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.checkpoint import coordinator
from flinkstate.runtime.checkpoint.happenings import ManualCheckpointNotTaken
from flinkstate.runtime.execution_state import ExecutionState
from flinkstate.runtime.failover import failover
from flinkstate.runtime.jobgraph import SubtaskId
from flinkstate.runtime.options import (
    CheckpointFailure,
    CheckpointFailureReason,
    RunOptions,
    TaskFailure,
    TerminalTaskRule,
)
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import RunStatus, Simulation, make_scheduler

#: pipelined-regions with sink[1] failing after 30 of its 50 records, and a checkpoint asked
#: for by hand while its region is down
FAILOVER = {
    "checkpoint_interval": 1,
    "fail_operator": "sink",
    "fail_subtask": 1,
    "fail_after_records": 30,
    "checkpoint_during_failover": True,
    "restart_delay": 300,
}


def _run(seed: int, **overrides: object) -> tuple[Simulation, NetworkWorld]:
    values = {**FAILOVER, **overrides}
    sim = Simulation(
        lambda: topology("pipelined-regions").build(
            values, seed=seed, full_check_every=1, check_actions=True
        ),
        make_scheduler("random", seed),
    )
    sim.run(stop_on_violation=False)
    world = sim.model
    assert isinstance(world, NetworkWorld)
    return sim, world


def _kinds(sim: Simulation) -> list[str]:
    return [e.action.kind for e in sim.events]


@pytest.mark.parametrize("seed", range(3))
def test_a_failed_subtask_fails_over_its_region_and_the_rest_keeps_running(seed: int) -> None:
    sim, world = _run(seed, checkpoint_during_failover=False)
    kinds = _kinds(sim)
    failed_at = kinds.index("fail")
    assert sim.events[failed_at].action.actor == "task sink[1]"
    assert kinds.count("cancel") == 1  # source[1], the rest of its region
    assert kinds[-1] == "restart"
    assert world.tasks["sink[1]"].execution_state is ExecutionState.FAILED
    assert world.tasks["source[1]"].execution_state is ExecutionState.CANCELED
    assert world.tasks["sink[1]"].processed == 30
    others = {e.action.actor for e in sim.events[failed_at + 1 :]}
    assert "task sink[0]" in others or "task source[0]" in others
    assert not others & {"task sink[1]"}
    assert world.failover is not None
    assert world.failover.to_restart == (SubtaskId("source", 1), SubtaskId("sink", 1))
    assert world.checkpoints.job_failed.endswith("from checkpoint 1")
    assert not world.violations


@pytest.mark.parametrize("seed", range(3))
def test_before_the_fix_the_checkpoint_completes_without_the_failed_region(seed: int) -> None:
    _, world = _run(seed, terminal_tasks="as-finished")
    manual = world.checkpoints.completed[-1]
    assert manual.id == 2
    assert set(manual.finished_subtasks) == {
        "bounded[0]",
        "bounded-sink[0]",
        "source[1]",
        "sink[1]",
    }
    assert {s.subtask for s in manual.subtasks} == {"source[0]", "sink[0]"}
    (violation,) = world.violations
    assert violation.invariant == "checkpoint-completeness"
    assert "source[1] (CANCELED), sink[1] (FAILED)" in violation.message
    # the region restarts from it: it holds nothing of theirs
    assert "which records source[1], sink[1] as finished" in world.checkpoints.job_failed


@pytest.mark.parametrize("seed", range(3))
def test_the_fix_refuses_the_plan_before_an_id_is_drawn(seed: int) -> None:
    _, world = _run(seed)
    (refused,) = world.checkpoints.failures
    assert refused.checkpoint == 0
    assert refused.reason is CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING
    assert not refused.reason.counted
    assert refused.detail == "source[1] is CANCELED, sink[1] is FAILED: a failover is in progress"
    assert [c.id for c in world.checkpoints.completed] == [1]
    assert coordinator.next_checkpoint_id(world) == 2
    assert world.checkpoints.job_failed.endswith("from checkpoint 1")
    assert not world.violations


def test_before_the_fix_a_plan_waiting_for_no_subtask_fails_its_trigger() -> None:
    """p = 1: the failed region is every subtask not finished. The plan waits for none, which
    a pending checkpoint refuses after its id was drawn (TRIGGER_CHECKPOINT_FAILURE): the rule's
    worst case, masked."""
    _, world = _run(0, parallelism=1, fail_subtask=0, terminal_tasks="as-finished")
    (failure,) = world.checkpoints.failures
    assert failure.checkpoint == 2
    assert failure.reason is CheckpointFailureReason.TRIGGER_CHECKPOINT_FAILURE
    assert not failure.reason.counted
    assert not world.violations


def test_a_failure_during_a_checkpoint_suspends_it_and_fails_over_the_whole_keyed_job() -> None:
    """One all-to-all region: every subtask is canceled. The checkpoint pending at the failure
    never gets the failed subtask's acknowledgement; the stopped scheduler aborts it
    (CHECKPOINT_COORDINATOR_SUSPEND, not counted), and nothing is left to checkpoint."""
    base = topology("keyed").build({"records": 40, "checkpoint_interval": 30}, seed=1)
    failure = TaskFailure(SubtaskId("counter", 1), 0)
    options = replace(base.options, checkpoint_during_failover=True, full_check_every=1)
    world = NetworkWorld(base.graph, base.config, options)
    sim = Simulation(lambda: world.clone(), make_scheduler("random", 1))
    while not sim.model.checkpoints.pending:  # type: ignore[attr-defined]
        assert sim.step() is not None
    pending = sim.model.checkpoints.pending  # type: ignore[attr-defined]
    model = sim.model
    assert isinstance(model, NetworkWorld)
    model.tasks["counter[1]"].fail_after = failure.after_records
    model.invalidate_actions()
    while sim.step() is not None and model.failover is None:
        pass
    suspended = model.checkpoints.failures[-1]
    assert suspended == CheckpointFailure(
        pending.id,
        CheckpointFailureReason.CHECKPOINT_COORDINATOR_SUSPEND,
        sim.step_count,
        detail="counter[1] is FAILED: the periodic checkpoint scheduler stops",
    )
    assert model.checkpoints.pending is None
    assert model.failover is not None
    assert len(model.failover.to_restart) == len(model.tasks)
    result = sim.run()
    assert result.status is RunStatus.FINISHED
    assert not result.violations
    assert model.checkpoints.job_failed.endswith(
        "from no checkpoint (the region starts its input over)"
    )
    # every other subtask was canceled; the all-to-all job has nothing left running, so the
    # plan is refused by the fix
    assert (
        model.checkpoints.failures[-1].reason
        is CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING
    )


def test_the_restart_aborts_the_pending_checkpoint() -> None:
    sim = Simulation(
        lambda: topology("pipelined-regions").build(
            {**FAILOVER, "terminal_tasks": "as-finished"}, seed=0
        ),
        make_scheduler("random", 0),
    )
    while (event := sim.step()) is not None and event.action.kind != "manual-checkpoint":
        pass
    world = sim.model
    assert isinstance(world, NetworkWorld)
    pending = world.checkpoints.pending
    assert pending is not None
    assert pending.manual
    failover.restart(world)
    assert world.checkpoints.pending is None
    aborted = world.checkpoints.failures[-1]
    assert (aborted.checkpoint, aborted.reason) == (
        pending.id,
        CheckpointFailureReason.JOB_FAILOVER_REGION,
    )
    assert world.checkpoints.job_failed
    assert world.enabled_actions() == []


def test_a_plan_the_model_cannot_carry_out_is_not_taken() -> None:
    """After source[0] has finished, Flink triggers sink[0] itself (no running predecessor);
    the model triggers sources only and says so rather than starting a checkpoint."""
    world = topology("pipelined-regions").build({"terminal_tasks": "as-finished"})
    world.tasks["source[0]"].finished = True
    coordinator.trigger_manual(world)
    assert world.checkpoints.pending is None
    assert not world.checkpoints.failures
    assert world.checkpoints.manual_requested
    assert world.journal.happenings == (
        ManualCheckpointNotTaken("the plan triggers sink[0], whose predecessors have finished"),
    )


def test_a_manual_checkpoint_not_taken_is_reported_with_the_failure() -> None:
    """The model's limit changes the run's outcome (the checkpoint Flink would take never
    starts), so the run's summary and report say so, not only the step's note."""
    world = topology("pipelined-regions").build({"terminal_tasks": "as-finished"})
    world.tasks["source[0]"].finished = True
    failover.fail_task(world, world.tasks["sink[1]"], "a test")
    world.tasks["source[1]"].failover = ExecutionState.CANCELED  # the region is down
    assert "manual_checkpoint_not_taken" not in failover.failover_summary(world)
    assert not any("not taken" in line for line in failover_lines(world))
    coordinator.trigger_manual(world)
    why = "the plan triggers sink[0], whose predecessors have finished"
    assert world.checkpoints.manual_not_taken == why
    assert failover.failover_summary(world)["manual_checkpoint_not_taken"] == why
    lines = failover_lines(world)
    assert f"manual checkpoint not taken: {why}" in lines
    assert lines[lines.index(f"manual checkpoint not taken: {why}") + 1] == MANUAL_BEYOND
    # it is state: a copy keeps it, and it tells the two worlds apart
    twin = world.clone()
    assert twin.checkpoints.manual_not_taken == why
    other = topology("pipelined-regions").build({"terminal_tasks": "as-finished"})
    other.tasks["source[0]"].finished = True
    failover.fail_task(other, other.tasks["sink[1]"], "a test")
    other.tasks["source[1]"].failover = ExecutionState.CANCELED
    other.checkpoints.manual_requested = True
    assert other.checkpoints.state_key() != world.checkpoints.state_key()


def test_the_failure_names_a_subtask_of_the_job() -> None:
    with pytest.raises(InvalidParameterError, match=r"task failure of sink\[5\]: sink has 2"):
        topology("pipelined-regions").build({"fail_operator": "sink", "fail_subtask": 5})
    with pytest.raises(InvalidParameterError, match="not -1"):
        TaskFailure(SubtaskId("sink", 0), -1)
    with pytest.raises(InvalidParameterError, match="restart_delay must not be negative"):
        RunOptions(restart_delay=-1)
    with pytest.raises(InvalidParameterError, match="unknown terminal task rule 'x'"):
        RunOptions(terminal_tasks="x")  # type: ignore[arg-type]
    assert RunOptions().terminal_tasks is TerminalTaskRule.ABORT


def test_a_failure_that_never_comes_changes_nothing() -> None:
    """A subtask that finishes before its records run out never fails: the run is the plain
    one."""
    sim, world = _run(0, fail_after_records=10_000)
    assert "fail" not in _kinds(sim)
    assert world.failover is None
    assert world.is_finished()
    assert not world.violations
