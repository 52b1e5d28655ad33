from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.rescale import Partitioner
from flinkstate.runtime.jobgraph import (
    Exchange,
    IntermediateDataSetId,
    JobGraph,
    Operator,
    OperatorKind,
    pointwise_producers,
)


def test_pointwise_connections_follow_flink() -> None:
    # 4 producers, 2 consumers: consumer i reads producers [2i, 2i+2)
    assert [pointwise_producers(4, 2, c) for c in range(2)] == [(0, 1), (2, 3)]
    # 2 producers, 4 consumers: producer 0 feeds consumers 0 and 1
    assert [pointwise_producers(2, 4, c) for c in range(4)] == [(0,), (0,), (1,), (1,)]
    assert [pointwise_producers(3, 3, c) for c in range(3)] == [(0,), (1,), (2,)]


def job(*exchanges: Exchange, sink_parallelism: int = 2) -> JobGraph:
    return JobGraph(
        (
            Operator("src", 2, OperatorKind.SOURCE, records_per_subtask=1),
            Operator("keyed", 2, OperatorKind.KEYED),
            Operator("sink", sink_parallelism, OperatorKind.SINK),
        ),
        exchanges,
    )


def test_validation_messages() -> None:
    with pytest.raises(InvalidParameterError, match="must be fed by keyBy"):
        job(
            Exchange("src", "keyed", Partitioner.REBALANCE),
            Exchange("keyed", "sink", Partitioner.FORWARD),
        )
    with pytest.raises(InvalidParameterError, match="forward partitioning"):
        job(
            Exchange("src", "keyed", Partitioner.HASH),
            Exchange("keyed", "sink", Partitioner.FORWARD),
            sink_parallelism=3,
        )
    with pytest.raises(InvalidParameterError, match="has no input"):
        job(Exchange("src", "keyed", Partitioner.HASH))
    with pytest.raises(InvalidParameterError, match="cycle"):
        JobGraph(
            (Operator("src", 1, OperatorKind.SOURCE), Operator("a", 1), Operator("b", 1)),
            (
                Exchange("src", "a", Partitioner.REBALANCE),
                Exchange("a", "b", Partitioner.REBALANCE),
                Exchange("b", "a", Partitioner.REBALANCE),
            ),
        )
    with pytest.raises(InvalidParameterError, match="parallelism of x"):
        Operator("x", 0)


def test_channels_of_all_to_all_and_pointwise() -> None:
    graph = job(
        Exchange("src", "keyed", Partitioner.HASH), Exchange("keyed", "sink", Partitioner.FORWARD)
    )
    keyed_in, forward = graph.exchanges
    assert graph.producers(keyed_in, 1) == (0, 1)
    assert graph.producers(forward, 1) == (1,)
    assert graph.consumers(forward, 0) == (0,)


def test_an_operator_reading_a_broadcast_or_pointwise_exchange_is_aligned_on_every_input() -> None:
    """StreamGraphGenerator: one in-edge that cannot be checkpointed unaligned makes all of the
    node's in-edges aligned; other nodes keep theirs."""
    graph = JobGraph(
        (
            Operator("main", 2, OperatorKind.SOURCE),
            Operator("side", 1, OperatorKind.SOURCE),
            Operator("process", 4, OperatorKind.MAP),
            Operator("sink", 1, OperatorKind.SINK),
        ),
        (
            Exchange("main", "process", Partitioner.REBALANCE),
            Exchange("side", "process", Partitioner.BROADCAST),
            Exchange("process", "sink", Partitioner.SHUFFLE),
        ),
    )
    unaligned = {e.name: graph.checkpoints_unaligned(e) for e in graph.exchanges}
    assert unaligned == {"main->process": False, "side->process": False, "process->sink": True}


def test_keyed_broadcast_operator_reads_keyed_and_broadcast_inputs_only() -> None:
    sources = (Operator("main", 2, OperatorKind.SOURCE), Operator("side", 1, OperatorKind.SOURCE))
    keyed = Operator("process", 3, OperatorKind.KEYED)
    JobGraph(
        (*sources, keyed),
        (
            Exchange("main", "process", Partitioner.HASH),
            Exchange("side", "process", Partitioner.BROADCAST),
        ),
    )
    for partitioner in (Partitioner.REBALANCE, Partitioner.BROADCAST):
        with pytest.raises(InvalidParameterError, match="must be fed by keyBy"):
            JobGraph((sources[0], keyed), (Exchange("main", "process", partitioner),))


def twice(*edges: int) -> JobGraph:
    """A source read twice by one operator (rebalance, then keyBy), its edges numbered so."""
    return JobGraph(
        (Operator("src", 2, OperatorKind.SOURCE), Operator("co", 2, OperatorKind.SINK)),
        (
            Exchange("src", "co", Partitioner.REBALANCE, edges[0]),
            Exchange("src", "co", Partitioner.HASH, edges[1]),
        ),
    )


def test_two_edges_between_one_pair_are_told_apart_by_their_data_set() -> None:
    graph = twice(0, 1)
    first, second = graph.exchanges
    assert first.data_set != second.data_set
    assert second.data_set == IntermediateDataSetId("src", "co", 1)
    # the first edge keeps the plain names; the second's carry its number
    assert [e.name for e in graph.exchanges] == ["src->co", "src->co#2"]
    assert first.gate_name("co[1]") == "co[1]<src"
    assert second.gate_name("co[1]") == "co[1]<src#2"
    assert second.channel_name("co[1]", "src[0]") == "co[1]<src[0]#2"
    assert second.subpartition_name("src[0]", "co[1]") == "src[0]>co[1]#2"
    assert second.partition_name("src[0]") == "src[0]>co#2"
    # found by data set, not by the operators they join
    assert graph.gate_index(second.data_set) == graph.partition_index(second.data_set) == 1
    assert graph.gate_index(first.data_set) == graph.partition_index(first.data_set) == 0
    # numbered the other way round, the gates follow the job's order of exchanges
    flipped = twice(1, 0)
    assert flipped.gate_index(IntermediateDataSetId("src", "co", 1)) == 0


def test_edges_between_one_pair_are_numbered_once_each() -> None:
    with pytest.raises(InvalidParameterError, match=r"as edges 0, 1, .* got edges \[0, 0\]"):
        twice(0, 0)
    with pytest.raises(InvalidParameterError, match=r"got edges \[1, 2\]"):
        twice(1, 2)
    with pytest.raises(InvalidParameterError, match="must not be negative"):
        Exchange("src", "co", Partitioner.HASH, -1)
    # a '#' would make an operator's names collide with a second edge's
    with pytest.raises(InvalidParameterError, match=r"without \[ \] < > : #"):
        Operator("src#2", 1, OperatorKind.SOURCE)
    with pytest.raises(InvalidParameterError, match="no input gate of co reads"):
        twice(0, 1).gate_index(IntermediateDataSetId("src", "co", 2))
