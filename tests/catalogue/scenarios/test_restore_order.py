"""FLINK-19907: a restored task's operator chain opened before its recovered output was written
(Flink 1.11.2: watermarks overtake the recovered records, late) and after (the fix)."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import run_scenario
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.sim import Simulation
from tests.catalogue.scenarios.pairs import differ_only_in

BEFORE = "chain-before-output-restored"
AFTER = "output-restored-before-chain"


def test_the_pair_differs_in_the_order_only() -> None:
    differ_only_in(BEFORE, AFTER, "restore_order")


def emitted_first(sim: Simulation) -> list[bool]:
    """For each restored source subtask that both emitted and wrote recovered output in the
    run, whether it emitted before it wrote its first recovered buffer."""
    firsts = []
    for index in range(4):
        kinds = [e.action.kind for e in sim.events if e.action.actor == f"task source[{index}]"]
        if ActionKind.EMIT in kinds and ActionKind.RECOVER_OUTPUT in kinds:
            firsts.append(kinds.index(ActionKind.EMIT) < kinds.index(ActionKind.RECOVER_OUTPUT))
    return firsts


@pytest.mark.parametrize("seed", range(4))
def test_before_the_fix_a_watermark_overtakes_the_recovered_output(seed: int) -> None:
    run = run_scenario(BEFORE, seed=seed)
    assert run.outcome is Outcome.VIOLATION, run.summary()
    assert run.result is not None
    assert [v.invariant for v in run.result.violations] == ["late-record"]
    assert "a watermark overtook it" in run.result.violations[0].message
    assert run.simulation is not None
    firsts = emitted_first(run.simulation)
    assert firsts
    assert all(firsts)  # each opened chain emitted ahead of its old output


@pytest.mark.parametrize("seed", range(4))
def test_since_the_fix_the_recovered_output_goes_first_and_nothing_is_late(seed: int) -> None:
    run = run_scenario(AFTER, seed=seed)
    assert run.outcome is Outcome.RECOVERED, run.summary()
    assert run.summary()["late_records"] == 0
    assert run.simulation is not None
    firsts = emitted_first(run.simulation)
    assert firsts
    assert not any(firsts)


def test_the_restored_sources_have_output_state_and_watermarks_in_flight() -> None:
    summary = run_scenario(AFTER, seed=0).summary()
    assert summary["recovered_bytes"] > 0
    assert summary["watermarks_in_checkpoint"] > 0


def test_an_order_flink_does_not_have_is_named() -> None:
    with pytest.raises(InvalidParameterError, match=r"one of flink-1\.11\.2, flink-1\.11\.3"):
        run_scenario(AFTER, overrides={"restore_order": "1.12"})
