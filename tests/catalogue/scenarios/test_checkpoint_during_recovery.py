"""Checkpoints during V2's recovery: the checkpoint-during-drain scenario really checkpoints while
channels are in recovery, and each pair of PR #28554's review and its fixes (FLINK-40518,
FLINK-40520) differs as it should."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.runtime.events import RECOVERY_BARRIER
from flinkstate.runtime.options import CheckpointFailureReason, RecoveryGeneration
from flinkstate.runtime.world.world import NetworkWorld
from tests.catalogue.scenarios.pairs import differ_only_in


@pytest.mark.parametrize("seed", range(6))
def test_a_checkpoint_completes_while_the_drainer_is_still_delivering(seed: int) -> None:
    run = prepare_scenario("checkpoint-during-drain", seed=seed)
    assert run.simulation is not None
    model = run.simulation.model
    assert isinstance(model, NetworkWorld)
    during = []
    while (event := run.simulation.step()) is not None:
        if event.action.kind == "trigger" and any(
            c.recoverable.in_recovery for c in model.channels.values()
        ):
            assert model.checkpoints.pending is not None
            during.append(model.checkpoints.pending.id)
    run.conclude(run.simulation.run())
    assert run.outcome is Outcome.RECOVERED, run.summary()
    taken = [c for c in model.checkpoints.completed if c.id in during]
    assert taken
    assert any(
        f.record in model.recovered_records
        for checkpoint in taken
        for state in checkpoint.input_channel_state
        for f in state.fragments
    )
    assert model.spill.bytes_written > 0


@pytest.mark.slow
def test_checkpoints_before_the_drainer_are_declined_as_not_ready_and_retried() -> None:
    details = []
    for seed in range(6):
        run = run_scenario("checkpoint-before-drainer", seed=seed)
        assert run.outcome is Outcome.RECOVERED, run.summary()
        model = run.world
        assert model is not None
        assert model.checkpoints.completed
        assert not model.checkpoints.job_failed
        for failure in model.checkpoints.failures:
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
    assert not run.world.checkpoints.failures


def test_master_and_seed_declines_of_a_missing_recovery_barrier() -> None:
    master = run_scenario("missing-recovery-barrier", seed=0)
    assert master.outcome is Outcome.JOB_FAILED
    assert "CHECKPOINT_DECLINED, counted" in master.message
    seed = run_scenario("missing-recovery-barrier-seed", seed=0)
    assert seed.outcome is Outcome.RECOVERED
    assert seed.world is not None
    assert seed.world.checkpoints.failures
    assert {f.reason for f in seed.world.checkpoints.failures} == {
        CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY
    }


@pytest.mark.parametrize("seed", range(3))
def test_requesting_partitions_before_consumption_is_refused_as_flink_refuses_it(
    seed: int,
) -> None:
    """The early conversion meets RecoveredInputChannel.toInputChannel's check: the channel
    still queues recovered data, the conversion is refused and the task fails; nothing is
    dropped quietly, so no record goes missing later."""
    run = prepare_scenario("partitions-requested-before-consumed", seed=seed)
    assert run.simulation is not None
    result = run.simulation.run(stop_on_violation=False)
    assert [v.invariant for v in result.violations] == ["conversion-with-buffers"]
    (refused,) = result.violations
    assert "still queues recovered buffers or events" in refused.message
    assert "RecoveredInputChannel.toInputChannel refuses it" in refused.message
    model = run.simulation.model
    assert isinstance(model, NetworkWorld)
    assert model.failover is not None
    assert "converting " in model.checkpoints.job_failed
    gate = model.gates[run.simulation.events[model.failover.step - 1].action.target]
    assert not gate.converted
    assert all(c.recovered and not c.recovery.queue for c in gate.channels)  # released
    assert run_scenario("partitions-requested-before-consumed", seed=seed).outcome is (
        Outcome.VIOLATION
    )
    # the same restart in master's order (keyed-upscale has the same parameters) recovers
    assert run_scenario("keyed-upscale", seed=seed).outcome is Outcome.RECOVERED


@pytest.mark.parametrize("seed", range(3))
def test_an_aligned_checkpoint_during_recovery_is_neither_cut_nor_declined(seed: int) -> None:
    """Before FLINK-40518 (and with no timeout): the checkpoint triggered while channels are in
    recovery completes only once no channel is in recovery any more; nothing declined it and
    no RecoveryCheckpointBarrier was put into a channel."""
    run = prepare_scenario(
        "aligned-checkpoint-during-recovery", seed=seed, overrides={"checkpoint_timeout": 0}
    )
    assert run.simulation is not None
    model = run.simulation.model
    assert isinstance(model, NetworkWorld)
    triggered_in_recovery = False
    completed_in_recovery: bool | None = None
    while (event := run.simulation.step()) is not None:
        in_recovery = any(c.recoverable.in_recovery for c in model.channels.values())
        if event.action.kind == "trigger":
            triggered_in_recovery |= in_recovery
        if model.checkpoints.completed and completed_in_recovery is None:
            completed_in_recovery = in_recovery
        assert not any(
            b.event == RECOVERY_BARRIER for c in model.channels.values() for b in c.recovery.queue
        )
    run.conclude(run.simulation.run())
    assert run.outcome is Outcome.RECOVERED, run.summary()
    assert triggered_in_recovery
    assert completed_in_recovery is False
    assert model.checkpoints.completed
    assert not model.checkpoints.failures
    assert model.effective_generation is RecoveryGeneration.V2


def test_the_pair_differs_in_the_rule_only_and_says_why() -> None:
    before = run_scenario("aligned-checkpoint-during-recovery", seed=0)
    after = run_scenario("aligned-restart-recovers-classic", seed=0)
    assert {k: v for k, v in before.values.items() if k != "during_recovery_gate"} == {
        k: v for k, v in after.values.items() if k != "during_recovery_gate"
    }
    assert before.world is not None
    assert after.world is not None
    (failure,) = before.world.checkpoints.failures
    assert failure.reason is CheckpointFailureReason.CHECKPOINT_EXPIRED
    assert before.world.checkpoints.job_failed
    assert "before FLINK-40518" in before.summary()["recovery_note"]
    assert after.world.effective_generation is RecoveryGeneration.CLASSIC
    assert not after.world.checkpoints.failures
    assert "FLINK-40518" in after.summary()["recovery_note"]
    # the same restart with unaligned checkpoints checkpoints during recovery either way
    for gate in ("two-options", "requires-unaligned"):
        unaligned = run_scenario(
            "aligned-restart-recovers-classic",
            overrides={"restart_aligned": False, "during_recovery_gate": gate},
        )
        assert unaligned.world is not None
        assert unaligned.world.effective_generation is RecoveryGeneration.V2
        assert unaligned.summary()["recovery_note"] == ""


@pytest.mark.parametrize("seed", range(6))
def test_the_trigger_reset_at_the_drain_declines_a_checkpoint_and_master_completes_it(
    seed: int,
) -> None:
    """PR #28554's review: a NO_OP trigger while channels are still in recovery inserts no
    recovery barrier, so the checkpoint is declined (counted: the job fails over); master keeps
    the drainer as trigger until every channel has left recovery, and the checkpoints
    complete."""
    before = run_scenario("trigger-no-op-after-drain", seed=seed)
    after = run_scenario("trigger-no-op-after-consumed", seed=seed)
    assert before.outcome is Outcome.JOB_FAILED
    assert before.world is not None
    (failure,) = before.world.checkpoints.failures
    assert failure.reason is CheckpointFailureReason.CHECKPOINT_DECLINED
    assert failure.detail.startswith(
        f"no RecoveryCheckpointBarrier of checkpoint {failure.checkpoint}"
    )
    assert after.outcome is Outcome.RECOVERED
    assert after.world is not None
    assert not after.world.checkpoints.failures
    assert after.world.checkpoints.completed


def test_the_flink_40520_pair_differs_in_the_cleanup_only() -> None:
    differ_only_in("spill-files-left-on-abort", "spill-files-deleted-on-abort", "spill_cleanup")


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
