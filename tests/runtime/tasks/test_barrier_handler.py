"""The barrier handler's unaligned snapshot of its task's input channels: what each persists
between the checkpoint's start at its task and the channel's barrier, before and since
FLINK-17315 (a local channel) and FLINK-18139 (a task of two gates); and whether a restored
task's recovered channels decline it, before and since FLINK-20654."""

from __future__ import annotations

from flinkstate.catalogue.topologies import topology
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.capture_versions import (
    InflightDataLookup,
    LocalChannelPersistence,
    RecoveredChannelCheckpointStart,
)
from flinkstate.runtime.tasks.barrier_handler import not_ready
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import Simulation, make_scheduler
from flinkstate.sim.core import RunStatus

#: two sources into one map over local channels, each record flushed on its own buffer
_TWO_INTO_ONE = {
    "parallelism": 1,
    "source_parallelism": 2,
    "records": 2,
    "flush_every_record": True,
    "slots_per_tm": 3,
    "network_buffers": 16,
    "checkpoint_interval": 2,
}
CHANNEL = "map[0]<source[0]"


def take(world: NetworkWorld, actor: str, kind: ActionKind, target: str = "") -> None:
    """Apply the one enabled action of ``actor`` of ``kind`` (on ``target``)."""
    matching = [
        a
        for a in world.enabled_actions()
        if a.actor == actor and a.kind == kind and a.target == target
    ]
    assert len(matching) == 1, (actor, kind, target, world.enabled_actions())
    world.apply(matching[0])


def send_one(world: NetworkWorld, source: str, to: str = "map[0]") -> tuple[int, int]:
    """The source emits a record and flushes it on a buffer of its own towards ``to``: the
    buffer's uid and the record's id."""
    sub = f"{source}>{to}"
    take(world, f"task {source}", ActionKind.EMIT)
    take(world, f"task {source}", ActionKind.REQUEST_BUFFER, sub)
    take(world, f"task {source}", ActionKind.WRITE, sub)
    buffer = world.subpartitions[sub].queue[-1]
    (record,) = {f.record for f in buffer.fragments}
    return buffer.uid, record


def around_barrier(
    persistence: LocalChannelPersistence,
) -> tuple[NetworkWorld, tuple[int, int], tuple[int, int]]:
    """LocalInputChannelTest.testCheckpointingInflightData, driven step by step: the map's
    checkpoint starts at source[1]'s barrier; it reads one buffer of source[0], then source[0]'s
    barrier, then one more buffer. The world then, and the two buffers read (with their
    records)."""
    world = topology("itcase-unaligned").build(
        {**_TWO_INTO_ONE, "local_channel_persistence": persistence.value}
    )
    before = send_one(world, "source[0]")
    take(world, "checkpoint-coordinator", ActionKind.TRIGGER, "checkpoint 1")
    take(world, "task source[1]", ActionKind.CHECKPOINT)
    take(world, "task map[0]", ActionKind.BARRIER, "map[0]<source[1]")  # checkpointStarted
    take(world, "task map[0]", ActionKind.POLL, CHANNEL)
    take(world, "task map[0]", ActionKind.PROCESS)
    take(world, "task map[0]", ActionKind.REQUEST_BUFFER, "map[0]>sink[0]")
    take(world, "task map[0]", ActionKind.WRITE, "map[0]>sink[0]")
    take(world, "task source[0]", ActionKind.CHECKPOINT)
    take(world, "task map[0]", ActionKind.BARRIER, CHANNEL)
    after = send_one(world, "source[0]")
    take(world, "task map[0]", ActionKind.POLL, CHANNEL)
    assert world.violations == []
    return world, before, after


def persisted(world: NetworkWorld) -> frozenset[int]:
    pending = world.checkpoints.pending
    assert pending is not None
    return frozenset(pending.persisted_buffers)


def test_a_local_channel_persists_the_buffer_before_its_barrier_only() -> None:
    """Flink's test adds a 1-byte buffer, the barrier and a 2-byte buffer to the subpartition
    after ``checkpointStarted`` and reads all three: the channel-state writer holds the 1-byte
    buffer alone. The model's buffers each carry a whole record, so the test names them."""
    world, before, after = around_barrier(LocalChannelPersistence.PERSISTER)
    assert before[0] in persisted(world)
    assert after[0] not in persisted(world)
    result = Simulation(world.clone, make_scheduler("random", 0)).run()
    assert result.status is RunStatus.FINISHED
    assert not result.violations


def test_before_flink_17315_a_local_channel_persists_nothing() -> None:
    """The same steps with the local channel as it was: the buffer read between the map's
    checkpoint start and the channel's barrier is persisted nowhere (Flink's test, written for
    the fix, found no buffer in its listener). Once the checkpoint completes, the
    checkpoint-consistency check finds the record neither processed before the map's snapshot
    nor persisted: a restore would lose it."""
    world, before, after = around_barrier(LocalChannelPersistence.NONE)
    assert before[0] not in persisted(world)
    assert after[0] not in persisted(world)
    result = Simulation(world.clone, make_scheduler("random", 0)).run()
    assert [(v.invariant, v.message) for v in result.violations] == [
        (
            "checkpoint-consistency",
            f"checkpoint 1: record {before[1]} towards map[0]<source: neither processed before "
            "the snapshot nor persisted",
        )
    ]


def forward(world: NetworkWorld, task: str, channel: str) -> None:
    """The task reads one buffer of one record from ``channel``, processes it and sends it on."""
    take(world, f"task {task}", ActionKind.POLL, channel)
    take(world, f"task {task}", ActionKind.PROCESS)
    take(world, f"task {task}", ActionKind.REQUEST_BUFFER, f"{task}>sink[0]")
    take(world, f"task {task}", ActionKind.WRITE, f"{task}>sink[0]")


def two_gates(lookup: InflightDataLookup) -> tuple[NetworkWorld, int, list[tuple[int, int]]]:
    """StreamTaskNetworkInputTest.testSnapshotWithTwoInputGates, step by step: the co-map's
    gate 0 (left) and gate 1 (right) have one channel each, index 0 in its gate. Right sends
    two buffers; left's barrier comes first and the snapshot starts; a buffer of left follows
    its barrier; the co-map reads right's two, then right's barrier. The world then, left's
    buffer and right's two (with their records)."""
    world = topology("co-map-two-gates").build(
        {
            "parallelism": 1,
            "source_parallelism": 1,
            "records": 2,
            "flush_every_record": True,
            "network_buffers": 16,
            "checkpoint_interval": 2,
            "inflight_data_lookup": lookup.value,
        }
    )
    right = [send_one(world, "right[0]", "co-map[0]") for _ in range(2)]
    take(world, "checkpoint-coordinator", ActionKind.TRIGGER, "checkpoint 1")
    take(world, "task left[0]", ActionKind.CHECKPOINT)
    take(world, "task co-map[0]", ActionKind.BARRIER, "co-map[0]<left[0]")
    left, _ = send_one(world, "left[0]", "co-map[0]")
    forward(world, "co-map[0]", "co-map[0]<left[0]")
    for _ in right:
        forward(world, "co-map[0]", "co-map[0]<right[0]")
    take(world, "task right[0]", ActionKind.CHECKPOINT)
    take(world, "task co-map[0]", ActionKind.BARRIER, "co-map[0]<right[0]")
    assert world.violations == []
    return world, left, right


def test_each_gates_channel_persists_what_it_reads_before_its_own_barrier() -> None:
    """Flink's test: gate 0's channel persists nothing (its 1-byte buffer came after its
    barrier), gate 1's channel its buffers of 2 and 3 bytes. The model's buffers each carry a
    record, so the test names them."""
    world, left, right = two_gates(InflightDataLookup.CHANNEL_INFO)
    assert left not in persisted(world)
    assert {uid for uid, _ in right} <= persisted(world)
    result = Simulation(world.clone, make_scheduler("random", 0)).run()
    assert result.status is RunStatus.FINISHED
    assert not result.violations


def test_before_flink_18139_gate_1s_channel_is_answered_for_gate_0s() -> None:
    """Asked with its index in its gate, 0, gate 1's channel gets gate 0's channel 0's answer:
    its barrier has come, so right's channel is skipped and its two buffers are persisted
    nowhere; the completed checkpoint breaks checkpoint-consistency for both records."""
    world, left, right = two_gates(InflightDataLookup.CHANNEL_INDEX)
    assert left not in persisted(world)
    assert not {uid for uid, _ in right} & persisted(world)
    result = Simulation(world.clone, make_scheduler("random", 0)).run()
    assert [(v.invariant, v.message) for v in result.violations] == [
        (
            "checkpoint-consistency",
            f"checkpoint 1: record {record} towards co-map[0]<right: neither processed before "
            "the snapshot nor persisted",
        )
        for _, record in right
    ]


def restored_co_map(rule: RecoveredChannelCheckpointStart) -> tuple[Simulation, NetworkWorld]:
    """FLINK-20654's pair at the first step of its restart: every channel of the co-maps is
    still a RecoveredInputChannel, its gate's state not consumed."""
    name = (
        "checkpoint-declined-until-recovered"
        if rule is RecoveredChannelCheckpointStart.DECLINED
        else "checkpoint-excludes-replaying-gate"
    )
    run = prepare_scenario(name, keep_snapshots=False)
    assert run.simulation is not None
    world = run.simulation.model
    assert isinstance(world, NetworkWorld)
    assert world.options.recovered_channel_checkpoint_start is rule
    return run.simulation, world


def test_a_recovered_channel_cannot_start_a_checkpoint() -> None:
    """RecoveredInputChannelTest.testCheckpointStartImpossible: checkpointStarted on a
    RecoveredInputChannel (Flink's barrier: checkpoint 0, unaligned) throws a
    CheckpointException. The model asks the task, whose first recovered channel says why."""
    _, world = restored_co_map(RecoveredChannelCheckpointStart.DECLINED)
    channel = world.channels["co-map[0]<left[0]"]
    assert channel.recovered
    assert not_ready(world, world.task_named("task co-map[0]")) == (
        "co-map[0]<left[0] is still a RecoveredInputChannel"
    )


def test_before_flink_20654_a_recovered_channel_lets_the_checkpoint_start() -> None:
    """Flink 1.12.0: InputChannel's empty checkpointStarted; nothing stops the snapshot."""
    _, world = restored_co_map(RecoveredChannelCheckpointStart.IGNORED)
    assert world.channels["co-map[0]<left[0]"].recovered
    assert not_ready(world, world.task_named("task co-map[0]")) == ""


def test_checkpoints_are_declined_unless_the_state_is_consumed() -> None:
    """SingleInputGateTest.testCheckpointsDeclinedUnlessStateConsumed (its barrier: checkpoint
    1, aligned): a gate whose recovered state is not consumed declines. In the model the task
    declines while either gate's channels are recovered, and stops once both gates have
    consumed their state and been converted."""
    sim, world = restored_co_map(RecoveredChannelCheckpointStart.DECLINED)
    task = world.task_named("task co-map[0]")
    gates = task.gates
    assert not any(c.recovery.state_consumed for g in gates for c in g.channels)
    assert not_ready(world, task)
    while any(c.recovered for g in gates for c in g.channels):
        assert not_ready(world, task).endswith("is still a RecoveredInputChannel")
        assert sim.step() is not None
    assert all(c.recovery.state_consumed for g in gates for c in g.channels)
    assert not_ready(world, task) == ""
