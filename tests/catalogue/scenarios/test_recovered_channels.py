"""FLINK-18989: a recovered channel converted before the task consumed its recovered state,
with Flink 1.11's conversion (nothing checked, the rest released unread) and since the fix
(refused)."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.scenarios import scenarios_of_bug
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import run_scenario
from flinkstate.runtime.checkpoint.channel.happenings import GateConverted
from flinkstate.runtime.restore_versions import ConversionCheck
from flinkstate.runtime.world.world import NetworkWorld
from tests.catalogue.scenarios.pairs import differ_only_in

BEFORE = "converted-early-state-lost"
AFTER = "converted-early-refused"


def test_the_pair_differs_in_the_check_only() -> None:
    differ_only_in(BEFORE, AFTER, "conversion_check")


def released_unread(name: str, seed: int) -> int:
    run = run_scenario(name, seed=seed)
    assert run.simulation is not None
    return sum(
        h.released
        for event in run.simulation.events
        for h in event.happenings
        if isinstance(h, GateConverted)
    )


@pytest.mark.parametrize("seed", range(6))
def test_before_the_fix_the_conversion_releases_recovered_records_unread(seed: int) -> None:
    run = run_scenario(BEFORE, seed=seed)
    assert run.outcome is Outcome.VIOLATION, run.summary()
    assert run.result is not None
    assert [v.invariant for v in run.result.violations] == ["exactly-once"]
    assert "never processed" in run.result.violations[0].message
    assert "task_failure" not in run.summary()  # nothing failed: the records are just gone
    assert released_unread(BEFORE, seed) > 0


@pytest.mark.parametrize("seed", range(6))
def test_since_the_fix_the_conversion_is_refused_and_no_record_is_lost(seed: int) -> None:
    run = run_scenario(AFTER, seed=seed)
    assert run.outcome is Outcome.VIOLATION, run.summary()
    assert run.result is not None
    invariants = {v.invariant for v in run.result.violations}
    assert invariants == {"conversion-with-buffers"}
    failure = str(run.summary()["task_failure"])
    assert "failed: it still queues recovered buffers" in failure
    assert "fails over" in failure
    assert released_unread(AFTER, seed) == 0


def test_the_restarted_job_reads_recovered_input_state() -> None:
    run = run_scenario(BEFORE, seed=0)
    assert run.simulation is not None
    model = run.simulation.model
    assert isinstance(model, NetworkWorld)
    assert model.options.conversion_check is ConversionCheck.NONE
    assert model.restore is not None
    assert any(s.input_state for s in model.restore.subtasks.values())


def test_a_check_flink_does_not_have_is_named() -> None:
    with pytest.raises(InvalidParameterError, match=r"one of flink-1\.11, flink-1\.12"):
        run_scenario(AFTER, overrides={"conversion_check": "1.13"})


def test_the_pair_is_found_by_its_bug() -> None:
    assert [s.name for s in scenarios_of_bug("FLINK-18989")] == [BEFORE, AFTER]
