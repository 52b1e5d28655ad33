"""Splitting a simulator checkpoint among the subtasks of the restored job."""

from __future__ import annotations

import functools

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.keygroups import assign_key_to_parallel_operator, assign_to_key_group
from flinkstate.rescale import Partitioner, SubtaskStateMapper
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint
from flinkstate.runtime.checkpoint.state_assignment import assign_state
from flinkstate.runtime.options import ConnectedMappingLookup
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import RunStatus, Simulation, make_scheduler


@functools.cache
def checkpoint(
    name: str = "keyed", seed: int = 1, record_size: int = 3000, parallelism: int = 0
) -> Checkpoint:
    item = topology(name)
    values = {"records": 120, "record_size": record_size, "cost": 3, "checkpoint_interval": 200}
    if parallelism:
        values["parallelism"] = parallelism
    sim = Simulation(
        lambda: item.build(values, seed=seed),
        make_scheduler("random", seed),
    )
    assert sim.run().status is RunStatus.FINISHED
    assert isinstance(sim.model, NetworkWorld)
    taken = sim.model.checkpoints.completed[0]
    assert taken.in_flight_bytes > 0
    return taken


def test_same_parallelism_gives_every_subtask_its_own_state() -> None:
    taken = checkpoint()
    assignment = assign_state(taken)
    persisted = {
        (s.owner, s.channel): s.size
        for s in (*taken.input_channel_state, *taken.result_subpartition_state)
    }
    assert assignment.recovered_bytes == sum(persisted.values())
    for name, share in assignment.subtasks.items():
        assert not share.rescaled
        for chunk in share.input_state:
            assert chunk.old_subtask == share.index  # its own input channels
            assert chunk.targets == (chunk.old_channel,)
        for chunk in share.output_state:
            assert chunk.old_channel == share.index  # its own subpartitions
            assert chunk.targets == (chunk.old_subtask,)
        state = taken.subtask(name)
        assert share.keyed_state == state.keyed_state
        assert share.source_splits == state.source_splits


@pytest.mark.parametrize("new", [1, 2, 3, 5, 8])
def test_keyed_state_is_split_by_key_group(new: int) -> None:
    taken = checkpoint()
    assignment = assign_state(taken, {"counter": new, "sink": new})
    before: dict[int, int] = {}
    for state in taken.subtasks:
        for key, count in state.keyed_state:
            before[key] = before.get(key, 0) + count
    after: dict[int, int] = {}
    for share in assignment.subtasks.values():
        if share.operator != "counter":
            continue
        assert share.key_groups is not None
        for key, count in share.keyed_state:
            assert assign_to_key_group(key, 128, "long") in share.key_groups
            assert key not in after
            after[key] = count
    assert after == before


@pytest.mark.parametrize("new", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("downstream", [False, True])
def test_every_recovered_record_expects_the_subtask_its_key_selects(
    new: int, downstream: bool
) -> None:
    taken = checkpoint()
    assignment = assign_state(
        taken, {"counter": new, "sink": new}, recover_output_on_downstream=downstream
    )
    first_fragments = {
        f.record
        for s in (*taken.input_channel_state, *taken.result_subpartition_state)
        for f in s.fragments
        if f.is_first
    }
    assert {record for record, _ in assignment.expected_subtask} == first_fragments
    for (record, exchange), subtask in assignment.expected_subtask.items():
        assert exchange == "source->counter"
        key = assignment.records[record].key
        assert subtask == assign_key_to_parallel_operator(key, 128, new, "long")
    if downstream:  # output state went to the consumers: the sources read nothing
        assert all(
            not s.output_state for s in assignment.subtasks.values() if s.operator == "source"
        )


def test_output_state_is_copied_to_every_subpartition_that_reads_its_old_one() -> None:
    """3 -> 2 over keyBy (RANGE downstream mapping: new 0 <- old {0, 1}, new 1 <- old {1, 2}):
    old subpartition 1 goes to both new subpartitions (StateAssignmentOperationTest)."""
    taken = checkpoint()
    assignment = assign_state(taken, {"counter": 3, "sink": 3})
    assignment = assign_state(
        _restored_checkpoint(assignment.checkpoint, {"counter": 3, "sink": 3}),
        {"counter": 2, "sink": 2},
    )
    expected = {0: (0,), 1: (0, 1), 2: (1,)}
    chunks = [c for share in assignment.subtasks.values() for c in share.output_state]
    assert chunks
    for chunk in chunks:
        assert chunk.targets == expected[chunk.old_subtask]


def _restored_checkpoint(taken: Checkpoint, parallelism: dict[str, int]) -> Checkpoint:
    """Run the job restored at ``parallelism`` until it takes a checkpoint of its own."""
    item = topology("keyed")
    assignment = assign_state(taken, parallelism)
    sim = Simulation(
        lambda: item.build(
            {"records": 120, "record_size": 3000, "cost": 6, "checkpoint_interval": 60},
            seed=2,
            restore=assignment,
        ),
        make_scheduler("random", 2),
    )
    assert sim.run().status is RunStatus.FINISHED
    assert isinstance(sim.model, NetworkWorld)
    assert sim.model.checkpoints.completed
    return sim.model.checkpoints.completed[0]


@pytest.mark.parametrize("new", [1, 2, 3, 4, 6])
def test_source_splits_are_dealt_out_round_robin(new: int) -> None:
    taken = checkpoint()
    assignment = assign_state(taken, {"source": new})
    before = [s for state in taken.subtasks for s in state.source_splits]
    assert [s[0] for s in before] == [f"task source[{i}]" for i in range(4)]
    for index in range(new):
        share = assignment.subtasks[f"source[{index}]"]
        assert share.source_splits == tuple(before[index::new])


def test_parallelism_above_max_parallelism_is_flinks_error() -> None:
    with pytest.raises(InvalidParameterError, match=r"maximum parallelism \(128\) of the restored"):
        assign_state(checkpoint(), {"counter": 129, "sink": 129})


def test_unknown_operator_is_named() -> None:
    with pytest.raises(InvalidParameterError, match=r"unknown operator.*'mapper'"):
        assign_state(checkpoint(), {"mapper": 2})


def test_a_checkpoint_without_its_job_is_refused() -> None:
    taken = checkpoint()
    bare = Checkpoint(
        taken.id,
        taken.unaligned,
        taken.trigger_step,
        taken.completion_step,
        taken.subtasks,
        taken.input_channel_state,
        taken.result_subpartition_state,
    )
    with pytest.raises(InvalidParameterError, match="does not record its job graph"):
        assign_state(bare)


@pytest.mark.parametrize("lookup", list(ConnectedMappingLookup))
def test_duplicate_connections_find_the_other_sides_mapping_by_their_data_set(
    lookup: ConnectedMappingLookup,
) -> None:
    """StateAssignmentOperationTest.testChannelStateAssignmentUsesResultIdForDuplicateJob-
    VertexConnections: one upstream read twice (rebalance, then keyBy), both operators 3 -> 2.
    Since FLINK-40269 each result partition's descriptor carries the mapping of its own edge
    (ROUND_ROBIN, then RANGE); before, the first edge's (ROUND_ROBIN twice). The gates carry
    the upstream's ARBITRARY on both edges either way."""
    taken = checkpoint("same-upstream", parallelism=3)
    assignment = assign_state(taken, {"source": 2, "co-map": 2}, connected_mapping=lookup)
    assert assignment.connected_mapping is lookup
    round_robin = SubtaskStateMapper.ROUND_ROBIN.new_to_old(3, 2)
    keyed = (
        SubtaskStateMapper.RANGE
        if lookup is ConnectedMappingLookup.DATA_SET
        else SubtaskStateMapper.ROUND_ROBIN
    ).new_to_old(3, 2)
    sources = [assignment.subtasks[f"source[{i}]"] for i in range(2)]
    for share in sources:
        assert [p.descriptor.rescaled_channels_mapping for p in share.partitions] == [
            round_robin,
            keyed,
        ]
    arbitrary = SubtaskStateMapper.ARBITRARY.new_to_old(3, 2)
    for index in range(2):
        gates = assignment.subtasks[f"co-map[{index}]"].gates
        assert [g.descriptor.rescaled_channels_mapping for g in gates] == [arbitrary, arbitrary]
    # the keyBy partition's old subpartition 1 goes to both new co-maps (RANGE), or to co-map
    # 1 alone (ROUND_ROBIN, the rebalance edge's)
    targets = {c.old_subtask: c.targets for s in sources for c in s.output_state if c.index == 1}
    assert targets[1] == ((0, 1) if lookup is ConnectedMappingLookup.DATA_SET else (1,))
    plan = assignment.exchanges["source->co-map#2"]
    assert plan.connected is (
        None if lookup is ConnectedMappingLookup.DATA_SET else Partitioner.REBALANCE
    )
    assert assignment.exchanges["source->co-map"].connected is None
    assert {name for _, name in assignment.expected_subtask} == {
        "source->co-map",
        "source->co-map#2",
    }


def test_with_one_edge_per_pair_both_lookups_assign_the_same() -> None:
    taken = checkpoint()
    by_data_set = assign_state(taken, {"counter": 3, "sink": 3})
    by_first_edge = assign_state(taken, {"counter": 3, "sink": 3}, connected_mapping="first-edge")
    assert by_first_edge.exchanges == by_data_set.exchanges
    assert by_first_edge.subtasks == by_data_set.subtasks
    with pytest.raises(InvalidParameterError, match="first-edge"):
        assign_state(taken, connected_mapping="first")
