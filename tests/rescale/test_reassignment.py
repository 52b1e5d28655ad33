"""Flink's rule for splitting a consumer's input channel state anew, before and since
FLINK-35351, decided once per consuming operator over all its inputs."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.rescale import Partitioner, rescale_exchange, summarise_exchange
from flinkstate.rescale.reassignment import (
    ConsumerInputs,
    InputReassignment,
    MappingScope,
    StatelessAssignment,
    VertexState,
    check_subtask_mappings,
    input_mapping_computed,
    input_state_redistributed,
    output_mapping_computed,
    output_state_redistributed,
    state_assigned,
)

BEFORE, SINCE = InputReassignment.OWN_PARALLELISM, InputReassignment.FULL_MAPPER


def test_two_gates_partially_downscaling() -> None:
    """StateAssignmentOperationTest#testChannelStateAssignmentTwoGatesPartiallyDownscaling:
    every operator was at 3; both upstreams go to 2, one into the consumer over a custom
    partitioner (ARBITRARY / FULL), one over a rebalance (ROUND_ROBIN); the consumer stays
    at 3. Before the fix its input state stayed where it was; since, it is split anew."""
    inputs = ConsumerInputs.of([(Partitioner.CUSTOM, 2), (Partitioner.REBALANCE, 2)])
    assert inputs == ConsumerInputs(True, (2, 2))
    assert not input_state_redistributed((3, 3), inputs, BEFORE)
    assert input_state_redistributed((3, 3), inputs, SINCE)


@pytest.mark.parametrize(
    ("producer", "consumer", "split"),
    [
        # the producer is rescaled to the consumer's parallelism: Flink compares the
        # producer's new parallelism with the consumer's old one, equal, so nothing is split
        ((3, 2), (2, 2), False),
        # nothing is rescaled, but the producer's parallelism differs from the consumer's
        ((2, 2), (3, 3), True),
        # the ITCase's CUSTOM_PARTITIONER row: source 3 -> 2, sink kept at 3
        ((3, 2), (3, 3), True),
        ((2, 2), (2, 2), False),
        # a change of the consumer's own parallelism splits it under either rule
        ((2, 2), (2, 3), True),
    ],
)
def test_flink_compares_the_producers_new_with_the_consumers_old_parallelism(
    producer: tuple[int, int], consumer: tuple[int, int], split: bool
) -> None:
    inputs = ConsumerInputs.of([("partitionCustom", producer[1])])
    assert input_state_redistributed(consumer, inputs) is split
    assert input_state_redistributed(consumer, inputs, BEFORE) is (consumer[0] != consumer[1])
    assert output_state_redistributed(producer) is (producer[0] != producer[1])


def test_without_a_full_mapper_only_the_consumers_own_parallelism_counts() -> None:
    inputs = ConsumerInputs.of([("keyBy", 5), ("rebalance", 7)])
    for rule in InputReassignment:
        assert not input_state_redistributed((3, 3), inputs, rule)
        assert input_state_redistributed((3, 4), inputs, rule)


def test_an_aligned_input_counts_too() -> None:
    """Flink looks at every input of the vertex: a forward producer counts among the
    producers, and a custom partitioner anywhere among the inputs decides for all."""
    inputs = ConsumerInputs.of([("forward", 3), ("rebalance", 2), ("partitionCustom", 3)])
    assert input_state_redistributed((3, 3), inputs)
    plan = rescale_exchange("rebalance", (2, 2), (3, 3), consumer_inputs=inputs)
    # the rebalance gate is split by its own mapper, ROUND_ROBIN, which at 3 -> 3 keeps
    # each subtask's state where it was
    assert [d.input_state_from for d in plan.downstream] == [(0,), (1,), (2,)]


@pytest.mark.parametrize(
    ("producer", "consumer", "before", "since"),
    [
        # the two configurations where Flink's per-vertex rule and the per-exchange
        # "did the upstream change" differ
        ((3, 2), (2, 2), [(0,), (1,)], [(0,), (1,)]),
        ((2, 2), (3, 3), [(0,), (1,), (2,)], [(0, 1, 2)] * 3),
        ((3, 2), (3, 3), [(0,), (1,), (2,)], [(0, 1, 2)] * 3),
    ],
)
def test_custom_partitioned_exchange_input_state(
    producer: tuple[int, int],
    consumer: tuple[int, int],
    before: list[tuple[int, ...]],
    since: list[tuple[int, ...]],
) -> None:
    for rule, expected in ((BEFORE, before), (SINCE, since)):
        plan = rescale_exchange("partitionCustom", producer, consumer, reassignment=rule)
        assert [d.input_state_from for d in plan.downstream] == expected
        summary = summarise_exchange("partitionCustom", producer, consumer, reassignment=rule)
        assert [tuple(d.input_state_from) for d in summary.downstream] == expected


def test_producer_rescaled_to_the_consumers_parallelism_still_copies_every_subpartition() -> None:
    """Producer 3 -> 2 into a consumer kept at 2 (Flink master's rule keeps the input state in
    place): the producer's output state is split, and FULL sends a copy of every old
    subpartition to every consumer, whose gates demultiplex and filter them."""
    plan = rescale_exchange("partitionCustom", (3, 2), (2, 2))
    assert [u.new_subpartitions(s) for u in plan.upstream for s in range(2)] == [(0, 1)] * 4
    assert all(d.demultiplexes and d.filters for d in plan.downstream)


def test_unknown_rule_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match=r"flink-1\.19\.0, flink-1\.19\.1"):
        input_state_redistributed((2, 2), ConsumerInputs(True, (3,)), "1.20")


# --- a vertex with no state of its own (FLINK-27031, FLINK-31963) ---------------------------

OLD, ASSIGNED, MASTER = (
    StatelessAssignment.NOT_ASSIGNED,
    StatelessAssignment.ASSIGNED,
    StatelessAssignment.REPARTITIONED,
)


def test_a_vertex_with_state_of_its_own_is_assigned_and_repartitioned_in_every_version() -> None:
    vertex = VertexState(True, True, True, False, False)
    for rule in StatelessAssignment:
        assert state_assigned(vertex, rule)
        assert input_mapping_computed(vertex, True, rule)
        assert output_mapping_computed(vertex, True, rule)
        # a mapping is computed only where the state is split anew
        assert not input_mapping_computed(vertex, False, rule)
        assert not output_mapping_computed(vertex, False, rule)


@pytest.mark.parametrize(
    ("vertex", "assigned"),
    [
        # testOnlyUpstreamChannelStateAssignment: the upstream has output state
        (VertexState.stateless(upstream_output=True), {OLD: False, ASSIGNED: True, MASTER: True}),
        # testOnlyDownstreamChannelRescaleStateAssignment: the downstream has input state
        (
            VertexState.stateless(downstream_input=True),
            {OLD: False, ASSIGNED: False, MASTER: True},
        ),
        # no channel state beside it: nothing to assign in any version
        (VertexState.stateless(), {OLD: False, ASSIGNED: False, MASTER: False}),
    ],
)
def test_which_version_assigns_a_stateless_vertex(
    vertex: VertexState, assigned: dict[StatelessAssignment, bool]
) -> None:
    assert {rule: state_assigned(vertex, rule) for rule in StatelessAssignment} == assigned


def test_a_stateless_vertex_computes_its_mappings_since_flink_31963_only() -> None:
    consumer = VertexState.stateless(upstream_output=True)
    producer = VertexState.stateless(downstream_input=True)
    assert [input_mapping_computed(consumer, True, rule) for rule in (OLD, ASSIGNED)] == [
        False,
        False,
    ]
    assert input_mapping_computed(consumer, True, MASTER)
    assert not output_mapping_computed(consumer, True, MASTER)  # nothing downstream of it
    assert output_mapping_computed(producer, True, MASTER)
    assert not input_mapping_computed(producer, True, MASTER)


def test_a_stateless_rule_flink_does_not_have_is_named() -> None:
    with pytest.raises(InvalidParameterError, match=r"flink-1\.17\.1"):
        state_assigned(VertexState.stateless(), "flink-1.16.0")


# --- one subtask mapping per vertex or per gate (FLINK-22686) --------------------------------


def test_gates_with_different_mappings_fail_only_with_one_mapping_per_vertex() -> None:
    """testChannelStateAssignmentDownscalingTwoDifferentGates' consumer, 3 -> 2: its keyBy
    gate reads old subtasks [[0, 1], [1, 2]], its rebalance gate [[0, 2], [1]]."""
    keyed = rescale_exchange("keyBy", (3, 2), (3, 2)).input_mapping
    rebalanced = rescale_exchange("rebalance", (3, 2), (3, 2)).input_mapping
    assert keyed is not None
    assert rebalanced is not None
    assert (str(keyed), str(rebalanced)) == ("[[0, 1], [1, 2]]", "[[0, 2], [1]]")
    check_subtask_mappings([keyed, rebalanced], MappingScope.GATE)
    check_subtask_mappings([keyed, keyed], MappingScope.VERTEX)
    check_subtask_mappings([], MappingScope.VERTEX)
    with pytest.raises(InvalidParameterError, match="Incompatible subtask mappings"):
        check_subtask_mappings([keyed, rebalanced], MappingScope.VERTEX)
