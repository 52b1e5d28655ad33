"""A local channel that delivered its aligned barrier, when its task's alignment times out
into an unaligned snapshot: before FLINK-19681 its persister had not noted the barrier (only
priority ones), so it persisted what it read afterwards; and what the task does with its
blocked channels at that moment, before and since FLINK-22638."""

from __future__ import annotations

from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.capture_versions import AlignedBarrierTracking, TimedOutAlignment
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import Simulation, make_scheduler
from tests.runtime.tasks.test_alignment_timeout import (
    _TWO_INTO_ONE,
    CH0,
    forward_next,
    pending,
    start,
)
from tests.runtime.tasks.test_barrier_handler import send_one, take


def after_aligned_barrier(
    tracking: AlignedBarrierTracking, alignment: TimedOutAlignment
) -> tuple[NetworkWorld, int]:
    """LocalInputChannelTest#testNoDataPersistedAfterReceivingAlignedBarrier, in the job: the
    map pulls source[0]'s aligned barrier (checkpoint 1, timeoutable) over a local channel;
    source[0] then sends a buffer of one record; the alignment times out (Flink's test
    pretends so, with a timeout of 123 ms; here 8 steps pass) and the unaligned snapshot
    starts on every input. The world then, and the buffer's uid."""
    world = topology("itcase-alignment-timeout").build(
        {
            **_TWO_INTO_ONE,
            "aligned_checkpoint_timeout": 8,
            "aligned_barrier_tracking": tracking.value,
            "timed_out_alignment": alignment.value,
        }
    )
    start(world)
    take(world, "task source[0]", ActionKind.CHECKPOINT)
    assert forward_next(world) == CH0
    take(world, "task map[0]", ActionKind.BARRIER, CH0)  # pull the aligned barrier
    after, _ = send_one(world, "source[0]")
    take(world, "task map[0]", ActionKind.ALIGNMENT_TIMEOUT)  # checkpointStarted
    assert "task map[0]" in pending(world).timed_out
    return world, after


def test_no_data_persisted_after_receiving_an_aligned_barrier() -> None:
    """Since FLINK-19681 (Flink 1.12.0, master): the channel noted its aligned barrier, so the
    snapshot leaves it alone and the buffer it reads next is not persisted."""
    for alignment in TimedOutAlignment:
        world, after = after_aligned_barrier(AlignedBarrierTracking.EVERY_BARRIER, alignment)
        assert world.channels[CH0].persister.persisting == 0
        if alignment.resumes_blocked:
            assert forward_next(world) == CH0
        assert after not in pending(world).persisted_buffers
        result = Simulation(world.clone, make_scheduler("random", 0)).run()
        assert not result.violations


def test_before_flink_19681_data_after_an_aligned_barrier_is_persisted() -> None:
    """Before it, the channel starts persisting at the switch; resumed at once (1.12, before
    FLINK-22638), it reads source[0]'s buffer sent after that source's snapshot and persists
    it: the checkpoint holds a record the restored job would also get from source[0] again."""
    world, after = after_aligned_barrier(
        AlignedBarrierTracking.PRIORITY_ONLY, TimedOutAlignment.RESUME
    )
    assert world.channels[CH0].persister.persisting == 1
    assert not world.channels[CH0].blocked
    assert forward_next(world) == CH0
    assert after in pending(world).persisted_buffers
    result = Simulation(world.clone, make_scheduler("random", 0)).run()
    assert [v.invariant for v in result.violations] == ["checkpoint-consistency"]
    assert "sent after the producer's snapshot but captured" in result.violations[0].message


def test_kept_blocked_the_unnoticed_barrier_persists_nothing() -> None:
    """Master keeps the channel blocked until every barrier is in (FLINK-22638), and stops
    every channel's persisting then (``checkpointStopped``): with the old tracking the channel
    still starts persisting, but reads nothing before it stops."""
    world, _ = after_aligned_barrier(
        AlignedBarrierTracking.PRIORITY_ONLY, TimedOutAlignment.KEEP_BLOCKED
    )
    assert world.channels[CH0].persister.persisting == 1
    assert world.channels[CH0].blocked
    result = Simulation(world.clone, make_scheduler("random", 0)).run()
    assert not result.violations
