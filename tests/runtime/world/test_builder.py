"""Building a run: Flink's deployment of the job's network, and a restored job's start."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.checkpoint.state_assignment import assign_state
from flinkstate.runtime.task_phase import TaskPhase
from tests.runtime.checkpoint.channel.test_classic_recovery import PARAMS, taken


def test_remote_channels_own_their_exclusive_buffers_and_local_ones_have_none() -> None:
    world = topology("keyed").build({})
    assert world.violations == []
    for channel in world.channels.values():
        gate = world.gate_of(channel)
        if channel.remote:
            assert len(channel.buffers.exclusive) == gate.exclusive_per_channel > 0
            holder = channel.owners.exclusive
            assert all(world.owner[s] == world.home[s] == holder for s in channel.buffers.exclusive)
        else:
            assert channel.buffers.exclusive == []
    for nbp in world.network_pools.values():
        assert nbp.required <= nbp.total
        assert (
            len(nbp.free)
            + sum(
                len(c.buffers.exclusive)
                for c in world.channels.values()
                if c.remote
                if world.gate_of(c).pool.global_pool == nbp.name
            )
            == nbp.total
        )


def test_an_aligned_checkpoint_of_a_sequential_reader_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="would never complete"):
        topology("sequential-reading").build({"unaligned": False, "checkpoint_interval": 10})


def test_a_restored_subtask_starts_restoring_with_its_share_and_a_reader() -> None:
    assignment = assign_state(taken("keyed", 0), {})
    world = topology("keyed").build({**PARAMS, "checkpoint_interval": 0}, restore=assignment)
    for key, task in world.tasks.items():
        assert task.phase is TaskPhase.RESTORING_OUTPUT
        assert task.keyed_state == dict(assignment.subtasks[key].keyed_state)
        assert (task.name in world.readers) == bool(task.gates)
    # a recovered channel has no credit-based buffers until its gate is converted
    assert all(c.recovered and not c.buffers.exclusive for c in world.channels.values())
    assert world.recovered_records == frozenset(assignment.records)


def test_insufficient_network_buffers_is_flinks_error() -> None:
    with pytest.raises(InvalidParameterError, match="Insufficient number of network buffers"):
        topology("keyed").build({"network_buffers": 10})
