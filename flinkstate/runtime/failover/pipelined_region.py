"""Pipelined regions: the subtasks a failover restarts together.

Flink's default failover strategy (``jobmanager.execution.failover-strategy: region``,
``RestartPipelinedRegionFailoverStrategy``) restarts the pipelined region of a failed subtask:
the subtasks connected to it through pipelined results
(``SchedulingPipelinedRegionComputeUtil``). Every exchange of a streaming job is pipelined, so
an all-to-all exchange joins all its producers and consumers into one region, while a pointwise
one (forward, rescale) joins each consumer only to the producers it reads. A job of
independent forward pipelines therefore has one region per pipeline and subtask index, and a
failure in one of them leaves the others running.
"""

from __future__ import annotations

from flinkstate.runtime.jobgraph import JobGraph, SubtaskId


def pipelined_region(graph: JobGraph, subtask: SubtaskId) -> tuple[SubtaskId, ...]:
    """The region of ``subtask``: in the graph's topological order, by index."""
    parent: dict[SubtaskId, SubtaskId] = {}

    def root(node: SubtaskId) -> SubtaskId:
        while parent.get(node, node) != node:
            node = parent[node]
        return node

    for exchange in graph.exchanges:
        for consumer in range(graph.operator(exchange.downstream).parallelism):
            for producer in graph.producers(exchange, consumer):
                a = root(SubtaskId(exchange.upstream, producer))
                b = root(SubtaskId(exchange.downstream, consumer))
                if a != b:
                    parent[a] = b
    mine = root(subtask)
    return tuple(
        SubtaskId(name, index)
        for name in graph.topological_order()
        for index in range(graph.operator(name).parallelism)
        if root(SubtaskId(name, index)) == mine
    )
