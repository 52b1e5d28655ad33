"""Recovery options against Flink: CheckpointingOptionsTest's truth table, the keys, and
CheckpointFailureManager's counting."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.options import (
    CHECKPOINTING_DURING_RECOVERY_KEY,
    RECOVER_OUTPUT_ON_DOWNSTREAM_KEY,
    UNALIGNED_KEY,
    CheckpointFailure,
    CheckpointFailureReason,
    DuringRecoveryGate,
    FailedDeliveryRecycle,
    RecoveryGeneration,
    RecoveryOptions,
    RunOptions,
    checkpointing_during_recovery_enabled,
    job_fails,
)


@pytest.mark.parametrize(
    ("recover_output", "during_recovery", "enabled"),
    [(False, False, False), (True, False, False), (False, True, False), (True, True, True)],
)
def test_checkpointing_during_recovery_needs_both_options(
    recover_output: bool, during_recovery: bool, enabled: bool
) -> None:
    assert checkpointing_during_recovery_enabled(recover_output, during_recovery) is enabled
    for generation in ("v1", "v2"):
        options = RecoveryOptions(generation, recover_output, during_recovery)  # type: ignore[arg-type]
        assert options.checkpointing_during_recovery_enabled is enabled
        expected = RecoveryGeneration(generation) if enabled else RecoveryGeneration.CLASSIC
        assert options.effective_generation is expected


@pytest.mark.parametrize("unaligned", [False, True])
@pytest.mark.parametrize("gate", list(DuringRecoveryGate))
def test_since_flink_40518_aligned_checkpoints_turn_it_off(
    unaligned: bool, gate: DuringRecoveryGate
) -> None:
    """PR #29055 extends CheckpointingOptionsTest: both options on and unaligned checkpoints
    off is off; before it, the two options alone decided."""
    enabled = unaligned or gate is DuringRecoveryGate.TWO_OPTIONS
    assert checkpointing_during_recovery_enabled(True, True, unaligned, gate) is enabled
    for recover_output, during_recovery in ((False, True), (True, False), (False, False)):
        assert not checkpointing_during_recovery_enabled(
            recover_output, during_recovery, unaligned, gate
        )
    options = RecoveryOptions(RecoveryGeneration.V2, True, True, unaligned, gate)
    assert options.effective_generation is (
        RecoveryGeneration.V2 if enabled else RecoveryGeneration.CLASSIC
    )
    if unaligned:
        assert options.note == ""
    else:
        assert "FLINK-40518" in options.note
        assert ("classic" in options.note) is not enabled


def test_keys_are_flinks() -> None:
    assert CHECKPOINTING_DURING_RECOVERY_KEY == "execution.checkpointing.during-recovery.enabled"
    assert RECOVER_OUTPUT_ON_DOWNSTREAM_KEY == (
        "execution.checkpointing.unaligned.recover-output-on-downstream.enabled"
    )
    assert UNALIGNED_KEY == "execution.checkpointing.unaligned.enabled"


def test_one_option_alone_says_why_it_is_ignored() -> None:
    options = RecoveryOptions(RecoveryGeneration.V2, False, True)
    assert RECOVER_OUTPUT_ON_DOWNSTREAM_KEY in options.note
    assert RecoveryOptions(RecoveryGeneration.V2, True, True).note == ""


def test_bad_generations_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="v1, v2"):
        RecoveryOptions("v3")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="classic generation"):
        RecoveryOptions(RecoveryGeneration.CLASSIC, True, True)


def test_failure_reasons_count_as_flinks_failure_manager_counts_them() -> None:
    counted = {r for r in CheckpointFailureReason if r.counted}
    assert counted == {
        CheckpointFailureReason.CHECKPOINT_DECLINED,
        CheckpointFailureReason.CHECKPOINT_EXPIRED,
    }
    assert CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY.value == (
        "Checkpoint was declined (tasks not ready)"
    )


def test_the_job_fails_after_more_counted_failures_than_tolerated() -> None:
    declined = CheckpointFailure(1, CheckpointFailureReason.CHECKPOINT_DECLINED, 10, "task a[0]")
    twice = CheckpointFailure(1, CheckpointFailureReason.CHECKPOINT_DECLINED, 11, "task a[1]")
    not_ready = CheckpointFailure(2, CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY, 20)
    assert not job_fails([not_ready] * 5, 0)
    assert job_fails([declined], 0)
    assert not job_fails([declined, twice], 1)  # one checkpoint counts once
    assert "not counted" in not_ready.describe()
    assert "CHECKPOINT_DECLINED, counted" in declined.describe()
    with pytest.raises(InvalidParameterError, match="tolerable"):
        job_fails([], -1)


def test_the_compensating_loop_skips_the_buffer_the_channel_took_flink_40345() -> None:
    """InputChannelRecoveredStateHandlerTest.testFilteredBuffersRecycledOnceWhenDeliveryFails:
    three filtered buffers, handing over the first fails; the channel keeps the first and only
    the other two are recycled. Flink 2.3's loop recycles all three."""
    fixed = FailedDeliveryRecycle.AFTER_FAILED
    assert list(fixed.recycled(0, 3)) == [1, 2]
    assert list(FailedDeliveryRecycle.FROM_FAILED.recycled(0, 3)) == [0, 1, 2]
    assert list(fixed.recycled(2, 3)) == []  # the last one failed: nothing is left over
    assert RunOptions().failed_delivery_recycle is fixed
    with pytest.raises(InvalidParameterError, match="one of the 3 filtered buffers"):
        fixed.recycled(3, 3)
    with pytest.raises(InvalidParameterError, match="choose from-failed, after-failed"):
        RunOptions(failed_delivery_recycle="from-i")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="fail_filtered_delivery must not be negative"):
        RunOptions(fail_filtered_delivery=-1)
