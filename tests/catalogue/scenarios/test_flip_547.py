"""FLIP-547's scenarios: three phases (``then_parallelism``), its 1 -> 10 -> 1 and the
large-record ITCase; what an unfiltered checkpoint during recovery would have persisted; and
V2's heap against V1's under spill pressure."""

from __future__ import annotations

from collections import Counter

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint
from flinkstate.runtime.checkpoint.state_assignment import assign_state
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import Simulation, make_scheduler


def _recovered_copies(checkpoint: Checkpoint, recovered: frozenset[int]) -> Counter[int]:
    """How many whole copies of each recovered record a checkpoint holds."""
    copies: Counter[int] = Counter()
    for state in checkpoint.input_channel_state:
        for fragment in state.fragments:
            if fragment.record in recovered and fragment.is_first:
                copies[fragment.record] += 1
    return copies


@pytest.mark.slow
@pytest.mark.parametrize("name", ["flip-547-rescale-cycle", "large-records-three-phases"])
def test_every_record_once_across_three_phases(name: str) -> None:
    held = 0
    for seed in range(6):
        run = run_scenario(name, seed=seed)
        assert run.outcome is Outcome.RECOVERED, run.summary()
        assert run.between is not None
        assert run.second_checkpoint is not None
        copies = _recovered_copies(run.second_checkpoint, run.between.recovered_records)
        assert all(n == 1 for n in copies.values())
        held += bool(copies)
    assert held >= 3  # most seeds checkpoint while recovered data is still on its way


def test_the_third_phase_starts_from_the_second_checkpoint() -> None:
    run = prepare_scenario("flip-547-rescale-cycle", seed=0)
    assert run.assignment is not None
    assert run.second_checkpoint is not None
    assert run.assignment.checkpoint is run.second_checkpoint
    counters = [s for s in run.assignment.subtasks.values() if s.operator == "counter"]
    assert len(counters) == 1


def test_the_first_restart_is_a_phase_of_its_own() -> None:
    """``first-restart`` steps the middle run: the restart from the job's checkpoint, which the
    full run stops at its own first checkpoint."""
    run = run_scenario("flip-547-rescale-cycle", seed=0)
    assert [name for name, _ in run.phase_events()] == ["job", "first-restart", "restart"]
    first = prepare_scenario("flip-547-rescale-cycle", seed=0, phase="first-restart")
    assert first.simulation is not None
    assert list(first.earlier) == ["job"]
    assert first.second_checkpoint is None
    first.simulation.run(lambda world: bool(world.checkpoints.completed))
    assert run.between is not None
    assert first.world is not None
    assert first.world.fingerprint() == run.between.fingerprint()
    assert [e.to_json() for e in first.simulation.events] == [
        e.to_json() for e in run.earlier["first-restart"]
    ]
    with pytest.raises(InvalidParameterError, match="first-restart needs then_parallelism"):
        prepare_scenario("keyed-upscale", phase="first-restart")
    with pytest.raises(InvalidParameterError, match="phase must be one of job, first-restart"):
        prepare_scenario("keyed-upscale", phase="second-restart")


def test_an_unfiltered_checkpoint_during_recovery_holds_the_state_ten_times() -> None:
    """FLIP-547's motivation: without filtering before the checkpoint, each of the ten new
    counters persists all of the old counter's recovered state."""
    run = prepare_scenario("flip-547-rescale-cycle", seed=1)
    assert run.checkpoint is not None
    scenario = get_scenario("flip-547-rescale-cycle")
    values = {
        k: v
        for k, v in scenario.parameters.items()
        if k not in ("new_parallelism", "then_parallelism", "recover_output_on_downstream")
    }
    values["checkpoint_interval"] = values.pop("restart_checkpoint_interval")
    assignment = assign_state(
        run.checkpoint, {"counter": 10, "sink": 10}, recover_output_on_downstream=True
    )
    results = {}
    for faults in (frozenset(), frozenset({"no-filter"})):
        sim = Simulation(
            lambda faults=faults: topology("keyed").build(
                values, seed=1, faults=faults, restore=assignment
            ),
            make_scheduler("random", 1),
        )
        result = sim.run(stop_on_violation=False)
        model = sim.model
        assert isinstance(model, NetworkWorld)
        copies = _recovered_copies(model.checkpoints.completed[0], model.recovered_records)
        results[bool(faults)] = (result, copies)
    filtered_result, filtered = results[False]
    assert not filtered_result.violations
    assert all(n == 1 for n in filtered.values())
    unfiltered_result, unfiltered = results[True]
    assert max(unfiltered.values()) == 10
    assert sum(unfiltered.values()) > 5 * sum(filtered.values())
    messages = [v.message for v in unfiltered_result.violations]
    assert any("which does not own it" in m for m in messages)


@pytest.mark.parametrize("seed", range(3))
def test_the_unfiltered_variant_is_caught_processing_a_record_never_sent(seed: int) -> None:
    run = run_scenario("unfiltered-checkpoint-during-recovery", seed=seed)
    assert run.outcome is Outcome.VIOLATION
    assert run.result is not None
    first = run.result.violations[0]
    assert first.invariant == "exactly-once"
    assert "without it being sent" in first.message


@pytest.mark.slow
def test_under_spill_pressure_v2_keeps_the_heap_small_and_v1_does_not() -> None:
    for seed in range(3):
        v1 = run_scenario("spill-pressure-v1", seed=seed).summary()
        v2 = run_scenario("spill-pressure-v2", seed=seed).summary()
        assert v1["spilled_bytes"] == 0
        assert v2["spilled_bytes"] > 0
        assert v1["heap_peak_bytes"] > 10 * v2["heap_peak_bytes"]
