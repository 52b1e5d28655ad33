"""The checkpoint-during-drain scenario really checkpoints while channels are in recovery."""

from __future__ import annotations

import pytest

from flinkstate.network.world import NetworkWorld
from flinkstate.recovery.scenarios import Outcome, prepare_scenario


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
