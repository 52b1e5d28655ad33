"""Splitting a simulator checkpoint among the subtasks of the restored job."""

from __future__ import annotations

import functools

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.keygroups import assign_key_to_parallel_operator, assign_to_key_group
from flinkstate.rescale import MappingType, Partitioner, RescaleMappings, SubtaskStateMapper
from flinkstate.rescale.reassignment import InputReassignment, MappingScope, StatelessAssignment
from flinkstate.runtime.buffer.records import Fragment, Record
from flinkstate.runtime.checkpoint.checkpoint import (
    ChannelState,
    Checkpoint,
    InputChannelInfo,
    PersistedBuffer,
    ResultSubpartitionInfo,
    SubtaskState,
)
from flinkstate.runtime.checkpoint.state_assignment import assign_state
from flinkstate.runtime.jobgraph import Exchange, JobGraph, Operator, OperatorKind
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


SOURCE, MAP = OperatorKind.SOURCE, OperatorKind.MAP

# --- Flink's StateAssignmentOperationTest on jobs of several gates ---------------------------
# Flink's tests fill an OperatorState with a few dummy channel-state handles; here each handle
# is a ChannelState of one persisted buffer holding one record. Every operator is named by its
# role; Flink's sources are plain vertices, so the old parallelism is the operator's here.


def handmade(
    operators: dict[str, tuple[int, OperatorKind]],
    exchanges: tuple[Exchange, ...],
    inputs: dict[str, tuple[tuple[int, int], ...]],
    outputs: dict[str, tuple[tuple[int, int], ...]],
) -> Checkpoint:
    """A checkpoint of the job ``operators`` (name -> old parallelism and kind) joined by
    ``exchanges``, with one handle per (gate, channel) of ``inputs`` and per (partition,
    subpartition) of ``outputs`` (subtask name -> handles)."""
    graph = JobGraph(
        tuple(Operator(name, p, kind) for name, (p, kind) in operators.items()), exchanges
    )
    records: list[Record] = []

    def handle(owner: str, info: InputChannelInfo | ResultSubpartitionInfo) -> ChannelState:
        record = Record(len(records), len(records), 6, owner, len(records))
        records.append(record)
        buffer = PersistedBuffer((Fragment(record.id, 0, 10, 10),))
        return ChannelState(owner, f"{owner}/{info}", info, (buffer,))

    input_state = tuple(
        handle(owner, InputChannelInfo(gate, channel))
        for owner, handles in inputs.items()
        for gate, channel in handles
    )
    output_state = tuple(
        handle(owner, ResultSubpartitionInfo(partition, subpartition))
        for owner, handles in outputs.items()
        for partition, subpartition in handles
    )
    sources = tuple(
        SubtaskState(op.subtask_name(i), op.name, i, 0, None, ())
        for op in graph.operators
        if op.kind is OperatorKind.SOURCE
        for i in range(op.parallelism)
    )
    return Checkpoint(1, True, 0, 0, sources, input_state, output_state, graph, tuple(records))


def test_channel_state_assignment_downscaling_two_different_gates() -> None:
    """StateAssignmentOperationTest.testChannelStateAssignmentDownscalingTwoDifferentGates
    (FLINK-22686): every operator 3 -> 2; gate 0 from a keyBy (ARBITRARY upstream, RANGE
    downstream), gate 1 from a rebalance (ROUND_ROBIN both). New subtask 0's gates: old
    subtasks {0, 1} (1 ambiguous) and {0, 2} (none), both channel mappings {{0, 2}, {1}}."""
    taken = handmade(
        {"up1": (3, SOURCE), "up2": (3, SOURCE), "down": (3, MAP)},
        (Exchange("up1", "down", Partitioner.HASH), Exchange("up2", "down", Partitioner.REBALANCE)),
        {f"down[{i}]": ((0, 0), (1, 0)) for i in range(3)},
        {f"up{u}[{i}]": ((0, 0), (0, 0)) for u in (1, 2) for i in range(3)},
    )
    assignment = assign_state(taken, {"up1": 2, "up2": 2, "down": 2})
    gates = [g.descriptor for g in assignment.subtasks["down[0]"].gates]
    channels = RescaleMappings.of([[0, 2], [1]], 3)
    assert [
        (g.old_subtask_indexes, g.rescaled_channels_mapping, g.ambiguous_subtask_indexes)
        for g in gates
    ] == [((0, 1), channels, frozenset({1})), ((0, 2), channels, frozenset())]
    assert [g.mapping_type for g in gates] == [MappingType.RESCALING] * 2


def test_two_different_gates_before_flink_22686() -> None:
    """The same checkpoint under Flink 1.13.0: one subtask mapping for the whole downstream
    vertex, so its rebalance gate's ROUND_ROBIN mapping ([[0, 2], [1]]) meets the keyBy
    gate's RANGE one ([[0, 1], [1, 2]]) and the restore fails with Flink's message."""
    taken = handmade(
        {"up1": (3, SOURCE), "up2": (3, SOURCE), "down": (3, MAP)},
        (Exchange("up1", "down", Partitioner.HASH), Exchange("up2", "down", Partitioner.REBALANCE)),
        {f"down[{i}]": ((0, 0), (1, 0)) for i in range(3)},
        {f"up{u}[{i}]": ((0, 0), (0, 0)) for u in (1, 2) for i in range(3)},
    )
    parallelism = {"up1": 2, "up2": 2, "down": 2}
    with pytest.raises(InvalidParameterError, match="Incompatible subtask mappings") as refused:
        assign_state(taken, parallelism, mapping_scope=MappingScope.VERTEX)
    assert "Found [[0, 1], [1, 2]] and [[0, 2], [1]]." in str(refused.value)
    # input state on the keyBy gate alone fails it too: Flink computed every gate's mapping
    keyed_only = handmade(
        {"up1": (3, SOURCE), "up2": (3, SOURCE), "down": (3, MAP)},
        (Exchange("up1", "down", Partitioner.HASH), Exchange("up2", "down", Partitioner.REBALANCE)),
        {f"down[{i}]": ((0, 0),) for i in range(3)},
        {},
    )
    with pytest.raises(InvalidParameterError, match="Incompatible subtask mappings"):
        assign_state(keyed_only, parallelism, mapping_scope="flink-1.13.0")
    # two keyBy gates share their mapping: Flink 1.13.0 restored such a job
    same = handmade(
        {"up1": (3, SOURCE), "up2": (3, SOURCE), "down": (3, MAP)},
        (Exchange("up1", "down", Partitioner.HASH), Exchange("up2", "down", Partitioner.HASH)),
        {f"down[{i}]": ((0, 0), (1, 0)) for i in range(3)},
        {},
    )
    assert assign_state(same, parallelism, mapping_scope=MappingScope.VERTEX).mapping_scope is (
        MappingScope.VERTEX
    )


def test_channel_state_assignment_two_gates_partially_downscaling() -> None:
    """StateAssignmentOperationTest.testChannelStateAssignmentTwoGatesPartiallyDownscaling
    (FLINK-35351): both upstreams 3 -> 2, the downstream keeps 3; gate 0 from a custom
    partitioner (FULL downstream), gate 1 from a rebalance. Each old downstream subtask has two
    handles on gate 0, and each new one gets all six: FULL re-reads every old subtask."""
    taken = handmade(
        {"up1": (3, SOURCE), "up2": (3, SOURCE), "down": (3, MAP)},
        (
            Exchange("up1", "down", Partitioner.CUSTOM),
            Exchange("up2", "down", Partitioner.REBALANCE),
        ),
        {f"down[{i}]": ((0, 0), (0, 1)) for i in range(3)},
        {},
    )
    assignment = assign_state(taken, {"up1": 2, "up2": 2})
    assert [len(assignment.subtasks[f"down[{i}]"].input_state) for i in range(3)] == [6, 6, 6]


def test_two_gates_partially_downscaling_before_flink_35351() -> None:
    """The same checkpoint split by Flink 1.19.0's rule: the downstream keeps 3, so each
    subtask keeps its own two handles, although the custom partitioner's upstream went from
    3 to 2 (the assertion Flink's test makes fails there: 2 handles, not 6)."""
    taken = handmade(
        {"up1": (3, SOURCE), "up2": (3, SOURCE), "down": (3, MAP)},
        (
            Exchange("up1", "down", Partitioner.CUSTOM),
            Exchange("up2", "down", Partitioner.REBALANCE),
        ),
        {f"down[{i}]": ((0, 0), (0, 1)) for i in range(3)},
        {},
    )
    assignment = assign_state(
        taken, {"up1": 2, "up2": 2}, input_reassignment=InputReassignment.OWN_PARALLELISM
    )
    assert assignment.input_reassignment is InputReassignment.OWN_PARALLELISM
    shares = [assignment.subtasks[f"down[{i}]"] for i in range(3)]
    assert [len(share.input_state) for share in shares] == [2, 2, 2]
    assert all(c.old_subtask == share.index for share in shares for c in share.input_state)


@pytest.mark.parametrize(
    ("producer", "consumer", "handles"),
    [
        # producer 3 -> 2, consumer kept at 2: Flink compares the producer's new parallelism
        # with the consumer's old one, equal, so each keeps its own
        (3, 2, [1, 1]),
        # producer kept at 2, consumer kept at 3: they differ, so every subtask reads all three
        (2, 3, [3, 3, 3]),
    ],
)
def test_custom_partitioner_input_state_by_flinks_rule(
    producer: int, consumer: int, handles: list[int]
) -> None:
    """One handle on gate 0 per old consumer subtask; the producer ends at 2."""
    taken = handmade(
        {"up": (producer, SOURCE), "down": (consumer, MAP)},
        (Exchange("up", "down", Partitioner.CUSTOM),),
        {f"down[{i}]": ((0, 0),) for i in range(consumer)},
        {},
    )
    assignment = assign_state(taken, {"up": 2})
    assert [len(assignment.subtasks[f"down[{i}]"].input_state) for i in range(consumer)] == (
        handles
    )


def test_only_upstream_channel_state_assignment() -> None:
    """StateAssignmentOperationTest.testOnlyUpstreamChannelStateAssignment (FLINK-27031): only
    old upstream subtask 0 has (output) state, both operators 2 -> 3 over RANGE / ROUND_ROBIN:
    every new subtask still gets a restore, and the downstream ones a rescaling descriptor (to
    demultiplex the upstream's recovered buffers)."""
    taken = handmade(
        {"up": (2, SOURCE), "down": (2, MAP)},
        (Exchange("up", "down", Partitioner.HASH),),
        {},
        {"up[0]": ((0, 0), (0, 1))},
    )
    assignment = assign_state(taken, {"up": 3, "down": 3})
    assert sorted(assignment.subtasks) == [f"{op}[{i}]" for op in ("down", "up") for i in range(3)]
    assert all(
        assignment.subtasks[f"down[{i}]"].gates[0].descriptor.mapping_type is MappingType.RESCALING
        for i in range(3)
    )


def test_only_upstream_channel_state_assignment_before_flink_27031() -> None:
    """The same checkpoint under Flink 1.15.0's rule: the stateless downstream gets no
    restore, so its gates keep no descriptor (Flink's test finds no TaskRestore); since
    FLINK-27031 it gets one whose descriptor takes the upstream's output mapping."""
    taken = handmade(
        {"up": (2, SOURCE), "down": (2, MAP)},
        (Exchange("up", "down", Partitioner.HASH),),
        {},
        {"up[0]": ((0, 0), (0, 1))},
    )
    types = {
        rule: {
            assign_state(taken, {"up": 3, "down": 3}, stateless_assignment=rule)
            .subtasks[f"down[{i}]"]
            .gates[0]
            .descriptor.mapping_type
            for i in range(3)
        }
        for rule in StatelessAssignment
    }
    assert types == {
        StatelessAssignment.NOT_ASSIGNED: {MappingType.IDENTITY},
        StatelessAssignment.ASSIGNED: {MappingType.RESCALING},
        StatelessAssignment.REPARTITIONED: {MappingType.RESCALING},
    }


def _old_subtask_counts(
    taken: Checkpoint, parallelism: dict[str, int], rule: StatelessAssignment
) -> tuple[int, int]:
    """What Flink's checkMappings sums: the old subtasks of partition 0 of every new upstream
    subtask and of gate 0 of every new downstream subtask."""
    assignment = assign_state(taken, parallelism, stateless_assignment=rule)
    shares = assignment.subtasks.values()
    return (
        sum(len(s.partitions[0].descriptor.old_subtask_indexes) for s in shares if s.partitions),
        sum(len(s.gates[0].descriptor.old_subtask_indexes) for s in shares if s.gates),
    )


@pytest.mark.parametrize(
    ("rule", "counts"),
    [
        (StatelessAssignment.REPARTITIONED, (5, 7)),
        # before FLINK-31963 neither side computed a mapping: no descriptor, no old subtasks
        # (Flink's assertion that each has some fails there)
        (StatelessAssignment.ASSIGNED, (0, 0)),
        (StatelessAssignment.NOT_ASSIGNED, (0, 0)),
    ],
)
def test_only_upstream_channel_rescale_state_assignment(
    rule: StatelessAssignment, counts: tuple[int, int]
) -> None:
    """StateAssignmentOperationTest.testOnlyUpstreamChannelRescaleStateAssignment
    (FLINK-31963): both at 5, only old upstream subtask 0 has (two handles of) output state,
    the stateless downstream goes 5 -> 3 over RANGE / ROUND_ROBIN: the upstream's
    descriptors name 5 old subtasks in all, the downstream's 7 ([0, 1], [1, 2, 3], [3, 4])."""
    taken = handmade(
        {"up": (5, SOURCE), "down": (5, MAP)},
        (Exchange("up", "down", Partitioner.HASH),),
        {},
        {"up[0]": ((0, 0), (0, 1))},
    )
    assert _old_subtask_counts(taken, {"down": 3}, rule) == counts


@pytest.mark.parametrize(
    ("rule", "counts"),
    [
        (StatelessAssignment.REPARTITIONED, (5, 5)),
        (StatelessAssignment.ASSIGNED, (0, 0)),
    ],
)
def test_only_downstream_channel_rescale_state_assignment(
    rule: StatelessAssignment, counts: tuple[int, int]
) -> None:
    """StateAssignmentOperationTest.testOnlyDownstreamChannelRescaleStateAssignment
    (FLINK-31963): both at 5, only old downstream subtask 0 has (two handles of) input state,
    the stateless upstream goes 5 -> 3: 5 old subtasks on each side ([0, 3], [1, 4], [2] and
    one each)."""
    taken = handmade(
        {"up": (5, SOURCE), "down": (5, MAP)},
        (Exchange("up", "down", Partitioner.HASH),),
        {"down[0]": ((0, 0), (0, 1))},
        {},
    )
    assert _old_subtask_counts(taken, {"up": 3}, rule) == counts


def test_before_flink_31963_a_channel_the_new_job_lacks_fails_the_restore() -> None:
    """The downstream case restored before FLINK-31963: no descriptor on the downstream's
    gate, so old channel 4 (old upstream subtask 4) is looked up in a gate of 3 channels."""
    taken = handmade(
        {"up": (5, SOURCE), "down": (5, MAP)},
        (Exchange("up", "down", Partitioner.HASH),),
        {"down[0]": ((0, 4),)},
        {},
    )
    with pytest.raises(InvalidParameterError, match="Index 4 out of bounds for length 3"):
        assign_state(taken, {"up": 3}, stateless_assignment=StatelessAssignment.ASSIGNED)
    assert assign_state(taken, {"up": 3}).subtasks["down[0]"].input_state[0].targets == (1,)


def test_mixed_exchanges_forward_and_hash_no_state_on_forward() -> None:
    """StateAssignmentOperationTest.testMixedExchangesForwardAndHashNoStateOnForward
    (FLINK-38267): a source (2) forwards to map1 (2) and hashes to map2 (2 -> 3); only the hash
    edge has state (the source's partition 1, map2's gate 0). Assigning does not fail."""
    taken = handmade(
        {"source": (2, SOURCE), "map1": (2, MAP), "map2": (2, MAP)},
        (
            Exchange("source", "map1", Partitioner.FORWARD),
            Exchange("source", "map2", Partitioner.HASH),
        ),
        {f"map2[{i}]": ((0, 0),) for i in range(2)},
        {f"source[{i}]": ((1, i),) for i in range(2)},
    )
    assignment = assign_state(taken, {"map2": 3})
    assert "map2[0]" in assignment.subtasks
    assert assignment.subtasks["map2[0]"].input_state
    assert {
        c.index for s in range(2) for c in assignment.subtasks[f"source[{s}]"].output_state
    } == {1}


def test_mixed_exchanges_multiple_gates_with_partial_state() -> None:
    """StateAssignmentOperationTest.testMixedExchangesMultipleGatesWithPartialState
    (FLINK-38267): three upstreams (3 -> 2) into one downstream (3 -> 2), over RANGE, keyBy and
    ROUND_ROBIN edges; only the second edge has state. New downstream subtask 0 gets input
    state. (No partitioner has RANGE upstream; the first edge is a keyBy here.)"""
    taken = handmade(
        {"up1": (3, SOURCE), "up2": (3, SOURCE), "up3": (3, SOURCE), "down": (3, MAP)},
        (
            Exchange("up1", "down", Partitioner.HASH),
            Exchange("up2", "down", Partitioner.HASH),
            Exchange("up3", "down", Partitioner.REBALANCE),
        ),
        {f"down[{i}]": ((1, 0),) for i in range(3)},
        {f"up2[{i}]": ((0, 0),) for i in range(3)},
    )
    assignment = assign_state(taken, {"up1": 2, "up2": 2, "up3": 2, "down": 2})
    assert assignment.subtasks["down[0]"].input_state


def test_mixed_exchanges_rescale_and_rebalance_no_state_on_rescale() -> None:
    """StateAssignmentOperationTest.testMixedExchangesRescaleAndRebalanceNoStateOnRescale
    (FLINK-38267): a source (4) into a sink (4 -> 2) over ROUND_ROBIN both ways, state on both
    sides: assigning succeeds (new sink 0 reads old sinks 0 and 2)."""
    taken = handmade(
        {"source": (4, SOURCE), "sink": (4, OperatorKind.SINK)},
        (Exchange("source", "sink", Partitioner.REBALANCE),),
        {f"sink[{i}]": ((0, 0),) for i in range(4)},
        {f"source[{i}]": ((0, 0),) for i in range(4)},
    )
    assignment = assign_state(taken, {"sink": 2})
    assert {c.old_subtask for c in assignment.subtasks["sink[0]"].input_state} == {0, 2}
