"""Aligned checkpoints with an alignment timeout, driven step by step: Flink's
``AlternatingCheckpointsTest`` cases the model can express, with their values (the model's
clock is the step: a timeout counts steps from the trigger). Two sources feed one map over
local channels (the model has no barrier announcements, which Flink's remote-channel cases
rely on: a barrier the producer still holds overtakes there instead)."""

from __future__ import annotations

from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.checkpoint.checkpoint import CheckpointInProgress
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import Simulation, make_scheduler
from flinkstate.sim.core import RunStatus
from tests.runtime.tasks.test_barrier_handler import send_one, take

_TWO_INTO_ONE = {
    "parallelism": 1,
    "source_parallelism": 2,
    "records": 4,
    "flush_every_record": True,
    "slots_per_tm": 3,
    "network_buffers": 16,
    "checkpoint_interval": 2,
}
CH0 = "map[0]<source[0]"
CH1 = "map[0]<source[1]"


def two_into_one(timeout: int) -> NetworkWorld:
    return topology("itcase-alignment-timeout").build(
        {**_TWO_INTO_ONE, "aligned_checkpoint_timeout": timeout}
    )


def pending(world: NetworkWorld) -> CheckpointInProgress:
    checkpoint = world.checkpoints.pending
    assert checkpoint is not None
    return checkpoint


def start(world: NetworkWorld) -> int:
    """A buffer of source[0] towards the map (its uid), then the checkpoint's trigger."""
    data, _ = send_one(world, "source[0]")
    take(world, "checkpoint-coordinator", ActionKind.TRIGGER, "checkpoint 1")
    return data


def forward(world: NetworkWorld, channel: str) -> None:
    """The map reads one buffer of one record from ``channel`` and sends it on."""
    take(world, "task map[0]", ActionKind.POLL, channel)
    take(world, "task map[0]", ActionKind.PROCESS)
    take(world, "task map[0]", ActionKind.REQUEST_BUFFER, "map[0]>sink[0]")
    take(world, "task map[0]", ActionKind.WRITE, "map[0]>sink[0]")


def timers(world: NetworkWorld) -> list[str]:
    return [a.actor for a in world.enabled_actions() if a.kind == ActionKind.ALIGNMENT_TIMEOUT]


def finishes(world: NetworkWorld, *, unaligned: bool) -> None:
    """The run goes on to its end: checkpoint 1 completes (``unaligned`` or not), and every
    record is processed once."""
    sim = Simulation(world.clone, make_scheduler("random", 0))
    result = sim.run()
    assert result.status is RunStatus.FINISHED
    assert not result.violations
    end = sim.model
    assert isinstance(end, NetworkWorld)
    assert [(c.id, c.unaligned) for c in end.checkpoints.completed] == [(1, unaligned)]


def forward_next(world: NetworkWorld) -> str:
    """The map reads the next buffer it offers to read (round robin), processes its record
    and sends it on: the channel it read."""
    (poll,) = [
        a for a in world.enabled_actions() if a.actor == "task map[0]" and a.kind == ActionKind.POLL
    ]
    forward(world, poll.target)
    return poll.target


def test_a_checkpoint_with_a_timeout_starts_aligned() -> None:
    """``CheckpointOptions.forConfig``: unaligned checkpoints with an aligned checkpoint
    timeout start as aligned barriers (at the tail of the queues); without one, unaligned."""
    world = two_into_one(10)
    start(world)
    assert not pending(world).unaligned
    assert pending(world).alignment_timeout == 10
    take(world, "task source[0]", ActionKind.CHECKPOINT)
    barrier = world.subpartitions["source[0]>map[0]"].queue[-1]
    assert (barrier.checkpoint, barrier.priority) == (1, False)
    off = two_into_one(0)
    start(off)
    assert pending(off).unaligned
    assert pending(off).alignment_timeout == 0


def test_timeout_alignment() -> None:
    """testTimeoutAlignment (testTimeoutBarrierOnTwoChannels): two data buffers then the
    barrier on channel 0, one data buffer then the barrier on channel 1; once the timeout has
    passed the task is triggered once, unaligned, and the three overtaken buffers follow the
    barriers. Here the barriers still queue in the sources' subpartitions, whose timers turn
    them into priority events: the three buffers are the checkpoint's output state."""
    world = two_into_one(1)
    sent = [send_one(world, "source[0]")[0], send_one(world, "source[0]")[0]]
    sent.append(send_one(world, "source[1]")[0])
    take(world, "checkpoint-coordinator", ActionKind.TRIGGER, "checkpoint 1")
    take(world, "task source[0]", ActionKind.CHECKPOINT)
    take(world, "task source[1]", ActionKind.CHECKPOINT)
    assert "task map[0]" not in pending(world).snapshots
    assert sorted(timers(world)) == ["task source[0]", "task source[1]"]
    take(world, "task source[0]", ActionKind.ALIGNMENT_TIMEOUT)
    take(world, "task source[1]", ActionKind.ALIGNMENT_TIMEOUT)
    take(world, "task map[0]", ActionKind.BARRIER, CH0)
    take(world, "task map[0]", ActionKind.BARRIER, CH1)
    checkpoint = pending(world)
    assert "task map[0]" in checkpoint.snapshots  # triggered once: a snapshot per task
    assert "task map[0]" in checkpoint.timed_out
    assert checkpoint.persisted_buffers == set(sent)
    read = [forward_next(world) for _ in range(3)]  # followed by the overtaken buffers
    assert sorted(read) == [CH0, CH0, CH1]
    finishes(world, unaligned=True)


def test_aligned_never_timeoutable_checkpoint() -> None:
    """testAlignedNeverTimeoutableCheckpoint: a timeout that never elapses; a barrier on one
    channel and data on the other trigger nothing; the second barrier triggers the task once,
    aligned, and nothing is persisted."""
    world = two_into_one(10_000)
    start(world)
    take(world, "task source[1]", ActionKind.CHECKPOINT)
    take(world, "task map[0]", ActionKind.BARRIER, CH1)
    assert world.channels[CH1].blocked
    forward(world, CH0)
    assert "task map[0]" not in pending(world).snapshots
    take(world, "task source[0]", ActionKind.CHECKPOINT)
    take(world, "task map[0]", ActionKind.BARRIER, CH0)
    checkpoint = pending(world)
    assert "task map[0]" in checkpoint.snapshots
    assert not checkpoint.timed_out
    assert not checkpoint.persisted_buffers
    finishes(world, unaligned=False)


def test_timeout_alignment_before_first_barrier() -> None:
    """testTimeoutAlignmentBeforeFirstBarrier: the timeout has passed before the first
    barrier comes (local channels); the unaligned checkpoint starts as soon as it is
    received (``isTimedOut`` in ``barrierReceived``), the producer's timer not yet run."""
    world = two_into_one(1)
    start(world)
    take(world, "task source[0]", ActionKind.CHECKPOINT)
    take(world, "task source[1]", ActionKind.CHECKPOINT)
    take(world, "task map[0]", ActionKind.BARRIER, CH1)
    checkpoint = pending(world)
    assert "task map[0]" in checkpoint.snapshots
    assert "task map[0]" in checkpoint.timed_out
    assert world.channels[CH1].blocked
    assert not world.channels[CH0].blocked
    finishes(world, unaligned=True)


def test_all_channels_unblocked_after_aligned_checkpoint_timeout() -> None:
    """testAllChannelsUnblockedAfteralignedCheckpointTimeout (timeout 100 ms there, 8 steps
    here): channel 0's barrier blocks it; the timeout passes and the task's timer triggers
    the unaligned checkpoint, channel 0 staying blocked (FLINK-22638); channel 1's data is
    persisted until its barrier, which ends the checkpoint: one unaligned trigger, both
    channels unblocked."""
    world = two_into_one(8)
    data, _ = send_one(world, "source[1]")
    start(world)
    take(world, "task source[0]", ActionKind.CHECKPOINT)
    assert forward_next(world) == CH0
    take(world, "task map[0]", ActionKind.BARRIER, CH0)
    assert world.channels[CH0].blocked
    assert timers(world) == []
    send_one(world, "source[0]")  # time passes; it queues behind the barrier
    assert timers(world) == ["task map[0]"]
    take(world, "task map[0]", ActionKind.ALIGNMENT_TIMEOUT)
    checkpoint = pending(world)
    assert "task map[0]" in checkpoint.timed_out
    assert world.channels[CH0].blocked
    forward(world, CH1)
    assert data in checkpoint.persisted_buffers
    take(world, "task source[1]", ActionKind.CHECKPOINT)
    take(world, "task map[0]", ActionKind.BARRIER, CH1)
    assert not world.channels[CH0].blocked
    assert not world.channels[CH1].blocked
    assert "task map[0]" in checkpoint.snapshots  # triggered once: a snapshot per task
    finishes(world, unaligned=True)


def test_no_active_timeout_alignment_after_last_barrier() -> None:
    """testNoActiveTimeoutAlignmentAfterLastBarrier: both barriers in before the timeout;
    once it passes the handler's timer does not turn the map's snapshot unaligned. The map's
    own timer still fires for its output (``SubtaskCheckpointCoordinatorImpl``'s): the aligned
    barrier it sent, still queued for the sink, becomes a priority event."""
    world = two_into_one(10)
    start(world)
    take(world, "task source[0]", ActionKind.CHECKPOINT)
    take(world, "task source[1]", ActionKind.CHECKPOINT)
    take(world, "task map[0]", ActionKind.BARRIER, CH1)
    forward(world, CH0)
    take(world, "task map[0]", ActionKind.BARRIER, CH0)
    assert "task map[0]" in pending(world).snapshots
    for _ in range(3):
        send_one(world, "source[0]")
    assert pending(world).alignment_timed_out(world.journal.step)
    take(world, "task map[0]", ActionKind.ALIGNMENT_TIMEOUT)
    assert not pending(world).timed_out
    head = world.subpartitions["map[0]>sink[0]"].queue[0]
    assert (head.checkpoint, head.priority) == (1, True)
    assert "task map[0]" not in timers(world)
    finishes(world, unaligned=True)


def test_actions_stay_cached_consistently() -> None:
    """The incremental enabled-action cache with alignment timers equals a full scan at
    every step, for timeouts that fire early, late and never."""
    for timeout in (1, 7, 40, 10_000):
        for seed in range(3):
            sim = Simulation(
                lambda timeout=timeout, seed=seed: topology("itcase-alignment-timeout").build(
                    {
                        "records": 12,
                        "checkpoint_interval": 15,
                        "checkpoints": 2,
                        "aligned_checkpoint_timeout": timeout,
                    },
                    seed=seed,
                    check_actions=True,
                    full_check_every=1,
                ),
                make_scheduler("random", seed),
            )
            result = sim.run(max_steps=5000)
            assert result.status is RunStatus.FINISHED, (timeout, seed, result)
            assert not result.violations
