"""Recoveries that fail: the before and after of Flink's fixes to what a failure leaves behind."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.lab.scenario_run import run_scenario


def _differ_only_in(before: str, after: str, name: str) -> None:
    one = run_scenario(before, seed=0).values
    other = run_scenario(after, seed=0).values
    assert {k: v for k, v in one.items() if k != name} == {
        k: v for k, v in other.items() if k != name
    }
    assert one[name] != other[name]


def test_the_flink_40345_pair_differs_in_the_compensating_loop_only() -> None:
    _differ_only_in(
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


def test_the_flink_40520_pair_differs_in_the_cleanup_only() -> None:
    _differ_only_in("spill-files-left-on-abort", "spill-files-deleted-on-abort", "spill_cleanup")


@pytest.mark.parametrize("seed", range(6))
def test_flink_40520_before_leaves_the_failed_tasks_files_and_after_deletes_all(
    seed: int,
) -> None:
    before = run_scenario("spill-files-left-on-abort", seed=seed)
    after = run_scenario("spill-files-deleted-on-abort", seed=seed)
    assert before.result is not None
    assert before.result.violations
    assert {v.invariant for v in before.result.violations} == {"spill-file-leak"}
    assert before.simulation is not None
    assert before.world is not None
    assert before.world.failover is not None
    failed = before.simulation.events[before.world.failover.step - 1]
    assert failed.action.kind == "request-partitions"
    failed_task = failed.action.actor
    assert any(
        v.message.startswith(f"1 spill file(s) of {failed_task} outlive its recovery: fetched")
        for v in before.result.violations
    )
    assert after.outcome is Outcome.JOB_FAILED
    assert "request-partitions mail failed" in after.message
    assert after.world is not None
    assert after.world.spill.files_alive == 0
    assert all(d.state is None or d.state.deleted for d in after.world.drainers.values())
    # a fetch still under way failed in the teardown and deleted whatever files it had
    assert all(
        r.finished or r.spill is None or r.spill.deleted or not r.spill.file_count
        for r in after.world.readers.values()
    )
