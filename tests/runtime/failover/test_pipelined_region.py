"""Pipelined regions: what a failover restarts together."""

from __future__ import annotations

from flinkstate.catalogue.topologies import topology
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.runtime.failover.pipelined_region import pipelined_region
from flinkstate.runtime.jobgraph import Exchange, JobGraph, Operator, OperatorKind, SubtaskId


def test_forward_pipelines_are_a_region_per_subtask_index() -> None:
    graph = topology("pipelined-regions").build({"parallelism": 3}).graph
    assert pipelined_region(graph, SubtaskId("sink", 1)) == (
        SubtaskId("source", 1),
        SubtaskId("sink", 1),
    )
    assert pipelined_region(graph, SubtaskId("bounded", 0)) == (
        SubtaskId("bounded", 0),
        SubtaskId("bounded-sink", 0),
    )


def test_an_all_to_all_exchange_joins_every_subtask() -> None:
    graph = topology("keyed").build({"parallelism": 2, "source_parallelism": 3}).graph
    region = pipelined_region(graph, SubtaskId("sink", 0))
    assert len(region) == 3 + 2 + 2
    assert region[0] == SubtaskId("source", 0)


def test_a_rescale_exchange_joins_each_consumer_to_the_producers_it_reads() -> None:
    """4 -> 2 over rescale: consumer 0 reads producers 0 and 1, consumer 1 reads 2 and 3."""
    graph = JobGraph(
        (
            Operator("up", 4, OperatorKind.SOURCE, records_per_subtask=1),
            Operator("down", 2, OperatorKind.SINK),
        ),
        (Exchange("up", "down", Partitioner.RESCALE),),
    )
    assert pipelined_region(graph, SubtaskId("up", 3)) == (
        SubtaskId("up", 2),
        SubtaskId("up", 3),
        SubtaskId("down", 1),
    )
