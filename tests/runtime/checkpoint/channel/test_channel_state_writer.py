"""The channel-state writer: grouping of subtasks, retained buffers, acknowledgement."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.buffer.owners import OwnerKind
from flinkstate.runtime.checkpoint.channel.channel_state_writer import assign_writers
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import RunStatus, Simulation, make_scheduler


def test_a_writer_serves_up_to_n_subtasks_of_one_task_manager() -> None:
    subtasks = [(f"task a[{i}]", 0) for i in range(12)] + [("task b[0]", 1)]
    writers = assign_writers(subtasks, 5)
    assert [(w.task_manager, len(w.subtasks)) for w in writers] == [(0, 5), (0, 5), (0, 2), (1, 1)]
    assert writers[1].subtasks[0] == "task a[5]"  # registration order
    assert len(assign_writers(subtasks, 1)) == 13


@pytest.mark.parametrize("bad", [0, -1])
def test_writer_group_size_is_checked(bad: int) -> None:
    with pytest.raises(InvalidParameterError, match="max-subtasks-per-channel-state-file"):
        assign_writers([("task a[0]", 0)], bad)


def test_the_topology_parameter_reaches_the_world() -> None:
    world = topology("keyed").build({"slots_per_tm": 4, "subtasks_per_state_file": 2})
    sizes = sorted(len(w.subtasks) for w in world.writers.values())
    assert sizes == [2] * 6  # 3 operators x 4 subtasks, all in the 4 slots of TaskManager 0
    assert set(world.writer_of) == {task.name for task in world.tasks.values()}


def simulate(seed: int) -> Simulation:
    return Simulation(
        lambda: topology("backpressure").build(
            {"checkpoint_interval": 150, "record_size": 2500, "cost": 20, "records": 60},
            seed=seed,
            full_check_every=1,
            check_actions=True,
        ),
        make_scheduler("random", seed),
    )


@pytest.mark.slow
def test_a_sent_buffer_stays_with_the_writer_until_written() -> None:
    """Sending a retained buffer does not return it to the producer's pool: the writer becomes
    its last holder, and it counts against its subpartition until the writer has written it."""
    for seed in range(20):
        sim = simulate(seed)
        world = sim.model
        assert isinstance(world, NetworkWorld)
        while (event := sim.step()) is not None:
            handed = [m for m in event.moves if m.target.kind is OwnerKind.CHANNEL_STATE_WRITER]
            if handed:
                segment = handed[0].segment
                writer = next(w for w in world.writers.values() if w.owner == handed[0].target)
                assert world.owner[segment] == writer.owner
                assert any(r.segment == segment for r in writer.requests)
                break
        else:
            continue
        # run until the writer lets go of it, and check where it went
        while (event := sim.step()) is not None:
            released = [m for m in event.moves if m.segment == segment]
            if released:
                assert event.action.actor == writer.name
                assert event.action.kind == "write"
                assert released[0].source == writer.owner
                assert released[0].target.kind in (
                    OwnerKind.POOL,
                    OwnerKind.NETWORK_POOL,
                    OwnerKind.EXCLUSIVE,
                )
                assert segment not in world.shares
                break
        assert sim.run().status is RunStatus.FINISHED
        return
    pytest.fail("no seed handed a buffer over to the writer")


@pytest.mark.slow
def test_tasks_acknowledge_only_after_their_writes() -> None:
    waited = False
    for seed in range(6):
        sim = simulate(seed)
        world = sim.model
        assert isinstance(world, NetworkWorld)
        while sim.step() is not None:
            progress = world.checkpoints.pending
            if progress is None:
                continue
            for task in progress.acknowledged:
                assert not progress.pending_writes.get(task)
                writer = world.writers[world.writer_of[task]]
                assert not any(r.task == task for r in writer.requests)
            waited |= bool(progress.barriers_complete - progress.acknowledged)
        assert world.checkpoints.completed
    assert waited, "no task ever waited for its writer"
