"""Filtering on the reader: FLINK-40345's pair, the before and after of what a failed hand-over of
filtered buffers recycles."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.lab.scenario_run import run_scenario
from tests.catalogue.scenarios.pairs import differ_only_in


def test_the_flink_40345_pair_differs_in_the_compensating_loop_only() -> None:
    differ_only_in(
        "failed-delivery-recycled-twice", "failed-delivery-recycled-once", "failed_delivery_recycle"
    )


@pytest.mark.parametrize("seed", range(6))
def test_flink_40345_before_double_recycles_and_after_fails_the_task_cleanly(seed: int) -> None:
    before = run_scenario("failed-delivery-recycled-twice", seed=seed)
    after = run_scenario("failed-delivery-recycled-once", seed=seed)
    assert before.result is not None
    assert [v.invariant for v in before.result.violations][:1] == ["double-recycle"]
    assert after.outcome is Outcome.JOB_FAILED
    assert after.result is not None
    assert not after.result.violations
    # the same step fails in both: the first hand-over of a filtered buffer; after it the
    # failed task's region is cancelled and restarts
    assert after.world is not None
    assert after.world.failover is not None
    assert before.result.violations[0].step + 1 == after.world.failover.step
    assert after.message.startswith("counter[")
    assert "failed to hand filtered buffer 1 of 3" in after.message
