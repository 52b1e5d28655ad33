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
    """The region of ``subtask``: in the graph's topological order, by index.

    Examples
    --------
    In a forward pipeline each subtask index is a region of its own, so a failure of
    ``sink[1]`` leaves ``sink[0]`` running; a rebalance joins everything into one region:

    >>> from flinkstate.rescale.partitioner import Partitioner
    >>> from flinkstate.runtime.jobgraph import Exchange, Operator, OperatorKind
    >>> source = Operator("source", 2, OperatorKind.SOURCE)
    >>> sink = Operator("sink", 2, OperatorKind.SINK)
    >>> forward = JobGraph((source, sink), (Exchange("source", "sink", Partitioner.FORWARD),))
    >>> [str(s) for s in pipelined_region(forward, SubtaskId("sink", 1))]
    ['source[1]', 'sink[1]']
    >>> rebalance = JobGraph((source, sink), (Exchange("source", "sink", Partitioner.REBALANCE),))
    >>> len(pipelined_region(rebalance, SubtaskId("sink", 1)))
    4
    """
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
