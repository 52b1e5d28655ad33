"""Unaligned and aligned checkpoints: what is persisted, where barriers go, consistency."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint
from flinkstate.runtime.events import BARRIER
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import RunStatus, Simulation, make_scheduler


def run(name: str = "backpressure", seed: int = 1, **overrides: object) -> Simulation:
    params = {"checkpoints": 2, "checkpoint_interval": 200, "record_size": 2500, **overrides}
    sim = Simulation(
        lambda: topology(name).build(params, seed=seed, full_check_every=10),
        make_scheduler("random", seed),
    )
    result = sim.run()
    assert result.status is RunStatus.FINISHED, [str(v) for v in result.violations]
    return sim


def checkpoints(sim: Simulation) -> list[Checkpoint]:
    assert isinstance(sim.model, NetworkWorld)
    return sim.model.checkpoints.completed


@pytest.mark.parametrize("name", ["keyed", "two-input", "backpressure"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_unaligned_checkpoints_complete_and_persist_in_flight_data(name: str, seed: int) -> None:
    sim = run(name, seed)
    taken = checkpoints(sim)
    assert [c.id for c in taken] == [1, 2]
    assert all(c.unaligned for c in taken)
    assert any(c.in_flight_bytes > 0 for c in taken)
    assert isinstance(sim.model, NetworkWorld)
    every_subtask = set(sim.model.tasks)  # keyed by subtask
    for checkpoint in taken:
        assert checkpoint.trigger_step < checkpoint.completion_step
        assert {s.subtask for s in checkpoint.subtasks} == every_subtask


def test_aligned_checkpoints_persist_no_channel_state() -> None:
    taken = checkpoints(run(unaligned=False))
    assert taken
    for checkpoint in taken:
        assert not checkpoint.unaligned
        assert checkpoint.in_flight_bytes == 0
        assert checkpoint.input_channel_state == ()
        assert checkpoint.result_subpartition_state == ()


@pytest.mark.slow
def test_unaligned_persists_more_and_completes_sooner_than_aligned() -> None:
    unaligned = checkpoints(run(cost=30, records=80))[0]
    aligned = checkpoints(run(cost=30, records=80, unaligned=False))[0]
    assert unaligned.in_flight_bytes > 0
    assert (unaligned.completion_step - unaligned.trigger_step) < (
        aligned.completion_step - aligned.trigger_step
    )


def test_forward_exchange_is_never_checkpointed_unaligned() -> None:
    for checkpoint in checkpoints(run("keyed", seed=2)):
        names = [s.channel for s in checkpoint.input_channel_state] + [
            s.channel for s in checkpoint.result_subpartition_state
        ]
        assert names
        assert not any("sink" in name for name in names), names


@pytest.mark.parametrize("name", ["itcase-broadcast", "itcase-keyed-broadcast"])
def test_inputs_of_a_broadcast_reading_operator_are_checkpointed_aligned(name: str) -> None:
    sim = run(name, seed=3, parallelism=2, records=40, checkpoints=1, cost=4)
    world = sim.model
    assert isinstance(world, NetworkWorld)
    (checkpoint,) = world.checkpoints.completed
    assert checkpoint.in_flight_bytes > 0  # the pipeline before it is checkpointed unaligned
    into_process = [s for s in checkpoint.input_channel_state if s.channel.startswith("process[")]
    assert into_process == []
    out_to_process = [s for s in checkpoint.result_subpartition_state if ">process[" in s.channel]
    assert out_to_process == []


def test_broadcast_side_feeds_state_not_the_output() -> None:
    sim = run("itcase-keyed-broadcast", seed=1, parallelism=2, records=30, checkpoints=1)
    world = sim.model
    assert isinstance(world, NetworkWorld)
    process = [key for key, t in world.tasks.items() if t.operator == "process"]
    side = [
        r
        for r in world.records.values()
        if world.task_named(r.source).operator.startswith("source-")
    ]
    assert len(side) == 3 * 30
    for record in side:
        origin = world.task_named(record.source).operator
        gates = {gate for (r, gate) in world.deliveries if r == record.id}
        # processed by every process subtask (broadcast), passed on to nobody
        assert gates == {f"{name}<{origin}" for name in process}
        assert all(world.deliveries[(record.id, gate)] >= 0 for gate in gates)


def test_barrier_overtakes_the_queue_and_the_queue_is_persisted() -> None:
    sim = Simulation(
        lambda: topology("backpressure").build(
            {"checkpoint_interval": 200, "record_size": 2500, "cost": 30}, seed=4
        ),
        make_scheduler("random", 4),
    )
    world = sim.model
    assert isinstance(world, NetworkWorld)
    while True:
        event = sim.step()
        assert event is not None
        if event.action.kind == "checkpoint":
            break
    source = world.task_named(event.action.actor)
    progress = world.checkpoints.pending
    assert progress is not None
    for partition in source.partitions:
        for sub in partition.subpartitions:
            assert sub.queue[0].event == BARRIER
            assert sub.queue[0].priority
            behind = [b for b in list(sub.queue)[1:] if not b.is_event]
            # handed to the channel-state writer, not yet written; each segment is retained
            writer = world.writers[world.writer_of[source.name]]
            handed = [r for r in writer.requests if r.channel == sub.name]
            assert all(r.output for r in handed)
            assert [r.fragments for r in handed] == [tuple(b.fragments) for b in behind]
            assert [r.segment for r in handed] == [b.segment for b in behind]
            assert all(world.shares[b.segment] == [writer.owner] for b in behind)
            assert sub.name not in progress.outputs


def test_records_spanning_the_cut_are_split_between_places() -> None:
    spanning = [
        f
        for checkpoint in checkpoints(run(record_size=9000, seed=3))
        for state in (*checkpoint.input_channel_state, *checkpoint.result_subpartition_state)
        for f in state.fragments
        if not f.is_whole
    ]
    assert spanning


@pytest.mark.parametrize("fault", ["persist-twice", "forget-in-flight"])
def test_checkpoint_consistency_catches_broken_persistence(fault: str) -> None:
    sim = Simulation(
        lambda: topology("backpressure").build(
            {"checkpoints": 2, "checkpoint_interval": 150, "record_size": 2500},
            seed=2,
            faults=frozenset({fault}),
        ),
        make_scheduler("random", 2),
    )
    result = sim.run()
    assert "checkpoint-consistency" in {v.invariant for v in result.violations}


#: a back-pressured job whose first checkpoint outlives a 40-step timeout
