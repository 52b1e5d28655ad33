"""What the JobManager knows of each job vertex's old state, and which rescaling descriptors
it therefore computes (Flink's ``TaskStateAssignment``).

A new subtask reads its rescaling descriptors from its restore. Flink builds a gate's or a
partition's descriptor only from channel mappings it computed while repartitioning: the
vertex's own, or the connected vertex's on the other side of the edge. Where neither side
computed one, or the vertex got no restore at all, the subtask starts with
``NO_RESCALE``: it neither demultiplexes nor filters, and a producer writes each old
subpartition's buffers back into the subpartition of the same index.

Before FLINK-27031 and FLINK-31963 a vertex with no state of its own was skipped
(:class:`~flinkstate.rescale.reassignment.StatelessAssignment`), though a neighbour had
channel state meant for it. :func:`rescaling_as_computed` drops the descriptors that Flink
did not compute under such an old rule; under master's rule it leaves the model's plan, which
is master's, untouched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from flinkstate.rescale.descriptor import NO_RESCALE
from flinkstate.rescale.exchange import DownstreamSubtaskRescale, ExchangeRescale
from flinkstate.rescale.reassignment import (
    StatelessAssignment,
    VertexState,
    input_mapping_computed,
    output_mapping_computed,
    state_assigned,
)
from flinkstate.rescale.virtual_channels import VirtualChannel
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint
from flinkstate.runtime.jobgraph import JobGraph


def vertex_states(checkpoint: Checkpoint, graph: JobGraph) -> dict[str, VertexState]:
    """Each operator's :class:`VertexState` in ``checkpoint`` of the job ``graph``: its own
    state (keyed state, source splits, channel state of any old subtask) and its neighbours'
    channel state.

    Examples
    --------
    A checkpoint with nothing in it leaves every operator stateless:

    >>> from flinkstate.runtime.jobgraph import Exchange, Operator, OperatorKind
    >>> graph = JobGraph(
    ...     (Operator("source", 2, OperatorKind.SOURCE), Operator("sink", 2, OperatorKind.SINK)),
    ...     (Exchange("source", "sink", "keyBy"),),
    ... )
    >>> vertex_states(Checkpoint(1, True, 0, 1, (), (), ()), graph)["sink"]
    VertexState(own=False, input=False, output=False, upstream_output=False, downstream_input=False)
    """
    inputs = {state.owner for state in checkpoint.input_channel_state}
    outputs = {state.owner for state in checkpoint.result_subpartition_state}
    held = {s.subtask for s in checkpoint.subtasks if s.keyed_state or s.source_splits}
    has_input, has_output, has_own = {}, {}, {}
    for op in graph.operators:
        names = {op.subtask_name(index) for index in range(op.parallelism)}
        has_input[op.name] = bool(names & inputs)
        has_output[op.name] = bool(names & outputs)
        has_own[op.name] = bool(names & (inputs | outputs | held))
    return {
        op.name: VertexState(
            has_own[op.name],
            has_input[op.name],
            has_output[op.name],
            any(has_output[e.upstream] for e in graph.inputs_of(op.name)),
            any(has_input[e.downstream] for e in graph.outputs_of(op.name)),
        )
        for op in graph.operators
    }


def rescaling_as_computed(
    exchanges: Mapping[str, ExchangeRescale],
    graph: JobGraph,
    vertices: Mapping[str, VertexState],
    input_redistributed: Mapping[str, bool],
    rule: StatelessAssignment | str = StatelessAssignment.REPARTITIONED,
) -> dict[str, ExchangeRescale]:
    """``exchanges`` (the restored job ``graph``'s plans) with every descriptor Flink did not
    compute under ``rule`` set to ``NO_RESCALE``; ``input_redistributed``: whether each
    operator's input state is split anew. Flink decides per subtask, for all of its gates
    together and all of its partitions together: a descriptor exists where the vertex got a
    restore and it or a connected vertex computed a mapping.

    Examples
    --------
    A stateless sink downscaled 3 -> 2 behind a source with output state, the source also
    3 -> 2: before FLINK-27031 the sink gets no restore, so its gates keep no descriptor and
    do not filter; the source's partition keeps its own:

    >>> from flinkstate.rescale.exchange import rescale_exchange
    >>> from flinkstate.runtime.jobgraph import Exchange, Operator, OperatorKind
    >>> graph = JobGraph(
    ...     (Operator("source", 2, OperatorKind.SOURCE), Operator("sink", 2, OperatorKind.SINK)),
    ...     (Exchange("source", "sink", "keyBy"),),
    ... )
    >>> plans = {"source->sink": rescale_exchange("keyBy", (3, 2), (3, 2))}
    >>> vertices = {
    ...     "source": VertexState(True, False, True, False, False),
    ...     "sink": VertexState.stateless(upstream_output=True),
    ... }
    >>> redistributed = {"source": False, "sink": True}
    >>> old = rescaling_as_computed(plans, graph, vertices, redistributed, "flink-1.15.0")
    >>> old["source->sink"].filters, old["source->sink"].upstream[0].descriptor is NO_RESCALE
    (False, False)
    >>> rescaling_as_computed(plans, graph, vertices, redistributed)["source->sink"].filters
    True
    """
    rule = StatelessAssignment.parse(rule)
    if rule is StatelessAssignment.REPARTITIONED:
        return dict(exchanges)
    old_parallelism = {e.name: exchanges[e.name].upstream_parallelism for e in graph.exchanges}
    output_computed = {
        e.upstream: output_mapping_computed(
            vertices[e.upstream],
            old_parallelism[e.name][0] != old_parallelism[e.name][1],
            rule,
        )
        for e in graph.exchanges
    }
    input_computed = {
        op.name: input_mapping_computed(vertices[op.name], input_redistributed[op.name], rule)
        for op in graph.operators
    }
    gates_kept = {
        op.name: state_assigned(vertices[op.name], rule)
        and (
            input_computed[op.name]
            or any(output_computed.get(e.upstream, False) for e in graph.inputs_of(op.name))
        )
        for op in graph.operators
    }
    partitions_kept = {
        op.name: state_assigned(vertices[op.name], rule)
        and (
            output_computed.get(op.name, False)
            or any(input_computed[e.downstream] for e in graph.outputs_of(op.name))
        )
        for op in graph.operators
    }
    planned = {}
    for e in graph.exchanges:
        plan = exchanges[e.name]
        if not gates_kept[e.downstream]:
            plan = dataclasses.replace(plan, downstream=_gates_without_descriptor(plan))
        if not partitions_kept[e.upstream]:
            plan = dataclasses.replace(
                plan,
                upstream=tuple(
                    dataclasses.replace(u, descriptor=NO_RESCALE) for u in plan.upstream
                ),
            )
        planned[e.name] = plan
    return planned


def _gates_without_descriptor(plan: ExchangeRescale) -> tuple[DownstreamSubtaskRescale, ...]:
    """The consumer's gate plans as a subtask without a descriptor reads them: each new
    channel carries the old channel of its index, nothing demultiplexed or filtered."""
    up_old, up_new = plan.upstream_parallelism
    return tuple(
        dataclasses.replace(
            gate,
            descriptor=NO_RESCALE,
            virtual_channels=tuple(
                tuple(
                    VirtualChannel(old, channel)
                    for old in gate.input_state_from
                    if channel < up_old
                )
                for channel in range(up_new)
            ),
        )
        for gate in plan.downstream
    )
