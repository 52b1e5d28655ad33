"""FLINK-22376: an error in the classic reader's recover of recovered input, with Flink 1.13's
ownership of the buffer (recycled by the handler and the reader) and since the fix (by the
handler alone)."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import run_scenario
from tests.catalogue.scenarios.pairs import differ_only_in

BEFORE = "recovery-error-recycled-twice"
AFTER = "recovery-error-recycled-once"


def test_the_pair_differs_in_the_ownership_only() -> None:
    differ_only_in(BEFORE, AFTER, "recovered_buffer_ownership")


@pytest.mark.parametrize("seed", range(4))
def test_before_the_fix_the_failed_buffer_is_recycled_twice(seed: int) -> None:
    run = run_scenario(BEFORE, seed=seed)
    assert run.outcome is Outcome.VIOLATION, run.summary()
    assert run.result is not None
    (violation,) = run.result.violations
    assert violation.invariant == "double-recycle"
    assert " expected at recovered counter[" in violation.message


@pytest.mark.parametrize("seed", range(4))
def test_since_the_fix_the_task_fails_over_with_every_buffer_recycled_once(seed: int) -> None:
    run = run_scenario(AFTER, seed=seed)
    assert run.outcome is Outcome.JOB_FAILED, run.summary()
    assert run.result is not None
    assert not run.result.violations
    assert "failed recovering its last buffer" in run.message


def test_an_ownership_flink_does_not_have_is_named() -> None:
    with pytest.raises(InvalidParameterError, match=r"one of flink-1\.13, flink-1\.14"):
        run_scenario(AFTER, overrides={"recovered_buffer_ownership": "1.12"})
