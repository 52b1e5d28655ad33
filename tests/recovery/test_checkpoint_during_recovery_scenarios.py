"""The checkpoint-during-drain scenario really checkpoints while channels are in recovery."""

from __future__ import annotations

import pytest

from flinkstate.network.options import CheckpointFailureReason
from flinkstate.network.world import NetworkWorld
from flinkstate.recovery.scenarios import Outcome, prepare_scenario, run_scenario


@pytest.mark.parametrize("seed", range(6))
def test_a_checkpoint_completes_while_the_drainer_is_still_delivering(seed: int) -> None:
    run = prepare_scenario("checkpoint-during-drain", seed=seed)
    assert run.simulation is not None
    model = run.simulation.model
    assert isinstance(model, NetworkWorld)
    during = []
    while (event := run.simulation.step()) is not None:
        if event.action.kind == "trigger" and any(c.in_recovery for c in model.channels.values()):
            assert model.checkpoint is not None
            during.append(model.checkpoint.id)
    run.conclude(run.simulation.run())
    assert run.outcome is Outcome.RECOVERED, run.summary()
    taken = [c for c in model.completed if c.id in during]
    assert taken
    assert any(
        f.record in model._recovered_records
        for checkpoint in taken
        for state in checkpoint.input_channel_state
        for f in state.fragments
    )
    assert model.spilled_bytes > 0


def test_checkpoints_before_the_drainer_are_declined_as_not_ready_and_retried() -> None:
    details = []
    for seed in range(6):
        run = run_scenario("checkpoint-before-drainer", seed=seed)
        assert run.outcome is Outcome.RECOVERED, run.summary()
        model = run.world
        assert model is not None
        assert model.completed
        assert not model.job_failed
        for failure in model.failures:
            assert failure.reason is CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY
            assert not failure.reason.counted
            details.append(failure.detail)
    assert any(d.startswith("recovery checkpoint trigger NOT_READY") for d in details)
    assert any(d == "the source is still restoring" for d in details)


def test_by_default_the_coordinator_waits_and_nothing_is_declined() -> None:
    run = run_scenario(
        "checkpoint-before-drainer", seed=1, overrides={"coordinator_waits_for_running": True}
    )
    assert run.outcome is Outcome.RECOVERED
    assert run.world is not None
    assert not run.world.failures
