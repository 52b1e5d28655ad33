"""What a tour's text tells the learner happens, or asks them to try, is what the model does."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.views.tours import TOURS, locate
from flinkstate.widgets.recovery_stepper import RecoveryStepper


@pytest.mark.slow
def test_the_blocked_subpartition_tour_ends_with_advice_that_works() -> None:
    tour = TOURS["blocked-subpartition"]
    assert "blocked_priority=fixed" in tour.stops[-1].text
    ended = run_scenario(tour.scenario, seed=tour.seed).world
    assert ended is not None
    slots = tour.stops[-1].figures(None, ended)["whole_job_slots"]
    assert isinstance(slots, int)
    assert f"master and slots_per_tm={slots} " in tour.stops[-1].describe(None, ended)
    for overrides in (
        {"blocked_priority": "fixed"},
        {"blocked_priority": "master", "slots_per_tm": slots},
    ):
        run = run_scenario(tour.scenario, seed=tour.seed, overrides=overrides)
        assert run.outcome is Outcome.RECOVERED, overrides
        assert run.first_checkpoint_step is not None, overrides
    # FLINK-39018 alone does not reach a remote reader that holds credit (FLINK-40519)
    remote = run_scenario(tour.scenario, seed=tour.seed, overrides={"blocked_priority": "master"})
    assert remote.outcome is Outcome.JOB_FAILED


def test_the_rescaling_tour_counts_filtered_records_so_far_not_in_all() -> None:
    tour = TOURS["rescaling-filtering"]
    last = locate(tour)[-1]
    run = run_scenario(tour.scenario, seed=tour.seed, overrides=tour.overrides)
    world, assignment = run.world, run.assignment
    assert world is not None
    assert assignment is not None
    assert run.resumed_step == last
    later = [record for (record, _), step in world.filtered.items() if step >= last]
    assert later, "nothing is filtered after every task runs: the stop's 'not all' is wrong"
    outputs = {
        f.record
        for state in assignment.checkpoint.result_subpartition_state
        for f in state.fragments
    }
    assert set(later) <= outputs  # what comes later is the sources' recovered output state


def test_channels_leave_recovery_after_the_drain_as_the_task_consumes_the_end_event() -> None:
    tour = TOURS["checkpointing-during-recovery"]
    step = locate(tour)[-1]
    run = prepare_scenario(tour.scenario, seed=tour.seed, overrides=tour.overrides)
    simulation, world = run.simulation, run.world
    assert simulation is not None
    assert world is not None
    simulation.run(step)
    task = world.tasks[world.actor(simulation.events[-1].action.actor).task]
    assert task.phase == TaskPhase.RUNNING
    assert all(
        c.recoverable.in_recovery for g in task.gates for c in g.channels
    )  # events queued, unread
    simulation.run()
    assert not any(c.recoverable.in_recovery for g in task.gates for c in g.channels)


@pytest.mark.slow
def test_notebook_02s_hint_for_the_held_barrier_stops_at_the_tour_s_step() -> None:
    """Notebook 02 sends the learner to *run to next: checkpoint triggered or acknowledged*
    for the step a barrier starts waiting in a blocked subpartition: the trigger, then the
    first source's snapshot must be that step (*barrier*, a counter taking one, comes later)."""
    tour = TOURS["blocked-subpartition"]
    steps = dict(zip((s.title for s in tour.stops), locate(tour), strict=True))
    stepper = RecoveryStepper(tour.scenario, seed=tour.seed)
    stepper.until.value = "checkpoint triggered or acknowledged"
    stepper.run_to_next()
    assert stepper.current_step == steps["A checkpoint during the restart"]
    stepper.run_to_next()
    assert stepper.current_step == steps["The barrier is held"]
    stepper.until.value = "barrier"
    stepper.goto(0)
    stepper.run_to_next()
    assert stepper.current_step > steps["The barrier is held"]
