"""The checkpoint coordinator: when checkpoints are triggered, expire, and fail the job."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.checkpoint import coordinator
from flinkstate.runtime.checkpoint.state_assignment import assign_state
from flinkstate.runtime.options import CheckpointFailureReason
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import RunStatus, Simulation, make_scheduler
from tests.runtime.checkpoint.channel.test_classic_recovery import PARAMS, taken
from tests.runtime.checkpoint.test_checkpoint import run
from tests.runtime.world.test_independence import restart

_EXPIRING = {
    "checkpoints": 1,
    "checkpoint_interval": 100,
    "checkpoint_timeout": 40,
    "record_size": 2500,
    "records": 60,
    "cost": 8,
}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_expired_checkpoint_is_aborted_cleanly(seed: int) -> None:
    """Timeout: its barriers are dropped where they arrive, its unwritten channel state is
    released, and a later checkpoint (with a new id) still completes."""
    sim = Simulation(
        lambda: topology("backpressure").build(
            {**_EXPIRING, "tolerable_failed_checkpoints": 1},
            seed=seed,
            full_check_every=9,
            check_actions=True,
        ),
        make_scheduler("random", seed),
    )
    result = sim.run()
    assert result.status is RunStatus.FINISHED, [str(v) for v in result.violations]
    world = sim.model
    assert isinstance(world, NetworkWorld)
    assert world.checkpoints.expired, "the timeout never hit"
    notes = [e.note for e in sim.events]
    assert any(
        n.startswith(f"checkpoint {world.checkpoints.expired[0]} expired after 40 steps")
        for n in notes
    )
    assert all(c.id not in world.checkpoints.expired for c in world.checkpoints.completed)
    assert not world.shares  # nothing retained for an aborted checkpoint


def test_timeout_zero_never_expires() -> None:
    sim = run(checkpoint_timeout=0)
    assert isinstance(sim.model, NetworkWorld)
    assert not sim.model.checkpoints.expired


def test_at_the_default_tolerance_an_expired_checkpoint_fails_the_job() -> None:
    """``execution.checkpointing.tolerable-failed-checkpoints`` defaults to 0 and an expiry
    counts (``CheckpointFailureManager``): the first one fails the job over."""
    sim = Simulation(
        lambda: topology("backpressure").build(
            _EXPIRING,
            seed=0,
        ),
        make_scheduler("random", 0),
    )
    result = sim.run()
    world = sim.model
    assert isinstance(world, NetworkWorld)
    assert result.status is RunStatus.FINISHED, [str(v) for v in result.violations]
    assert world.checkpoints.expired == [world.checkpoints.failures[0].checkpoint]
    assert world.checkpoints.failures[0].reason is CheckpointFailureReason.CHECKPOINT_EXPIRED
    assert "CHECKPOINT_EXPIRED, counted" in world.checkpoints.job_failed
    assert not world.checkpoints.completed


def test_a_checkpoint_is_triggered_an_interval_after_the_last_end_and_only_once_running() -> None:
    assignment = assign_state(taken("keyed", 0), {})
    world = topology("keyed").build(
        {**PARAMS, "checkpoint_interval": 30, "checkpoints": 1}, restore=assignment
    )
    sim = Simulation(lambda: world, make_scheduler("random", 0))
    triggered_at = None
    while triggered_at is None and sim.step() is not None:
        if not all(t.phase is TaskPhase.RUNNING for t in world.tasks.values()):
            assert not coordinator.can_trigger(world), "planned while a task still restores"
        if world.checkpoints.pending is not None:
            triggered_at = world.checkpoints.pending.trigger_step
    assert triggered_at is not None
    assert triggered_at >= 30
    assert coordinator.next_checkpoint_id(world) == 1


def test_the_restore_is_over_once_every_task_runs_and_no_gate_demultiplexes() -> None:
    world = restart("keyed-downscale", {"records": 10})
    assert not coordinator.restore_over(world)
    assert world.restore_hint is not None  # a task still restoring, or a gate demultiplexing
    copy = world.clone()
    sim = Simulation(world.clone, make_scheduler("random", 0))
    answers = []
    while sim.step() is not None:
        now = sim.model
        assert isinstance(now, NetworkWorld)
        expected = all(t.phase is TaskPhase.RUNNING for t in now.tasks.values()) and not any(
            g.demultiplexing for g in now.gates.values()
        )
        # the kept answer (and the task or gate looked at first) never differs from a full look
        assert coordinator.restore_over(now) == expected, f"step {sim.step_count}"
        answers.append(expected)
    assert answers.index(True) > 0
    assert all(answers[answers.index(True) :])  # once over, it stays over
    # a copy taken before keeps its own answer: the kept one is only ever a true fact
    assert not coordinator.restore_over(copy)
