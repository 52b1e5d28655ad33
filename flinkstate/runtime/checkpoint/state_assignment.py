"""Which part of a checkpoint each subtask of the restored job gets (``TaskStateAssignment``).

On restore, Flink's JobManager splits a checkpoint among the new subtasks: keyed state by key
group, input channel state by the consumer's ``SubtaskStateMapper``, output (subpartition) state
by the producer's, or, with recover-output-on-downstream, output state handed to the consumers
as if it were theirs. Each persisted buffer becomes a :class:`RecoveredChunk` that knows its
``SubtaskConnectionDescriptor`` (the virtual channel its bytes belong to) and where it goes. The
subtask expected to process every recovered record (the one the partitioner selects) is derived
here from the partitioner alone, so the simulator's recovery can be checked against it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError
from flinkstate.keygroups import (
    KeyGroupRange,
    assign_to_key_group,
    compute_key_group_range_for_operator_index,
)
from flinkstate.rescale.channel_selection import ChannelSelection
from flinkstate.rescale.descriptor import NO_RESCALE
from flinkstate.rescale.exchange import (
    DownstreamSubtaskRescale,
    ExchangeRescale,
    UpstreamSubtaskRescale,
    rescale_exchange,
)
from flinkstate.rescale.reassignment import (
    ConsumerInputs,
    InputReassignment,
    MappingScope,
    StatelessAssignment,
    VertexState,
    check_subtask_mappings,
    input_state_redistributed,
    output_state_redistributed,
)
from flinkstate.runtime.buffer.records import Fragment, Record
from flinkstate.runtime.checkpoint.checkpoint import (
    ChannelState,
    Checkpoint,
    InputChannelInfo,
    ResultSubpartitionInfo,
)
from flinkstate.runtime.checkpoint.task_state_assignment import (
    rescaling_as_computed,
    vertex_states,
)
from flinkstate.runtime.jobgraph import Exchange, JobGraph, Operator, OperatorKind
from flinkstate.runtime.options import ConnectedMappingLookup


@dataclass(frozen=True)
class RecoveredChunk:
    """One persisted buffer and where recovery puts it.

    ``old_subtask`` and ``old_channel`` are the ``SubtaskConnectionDescriptor`` sent before it:
    the old downstream subtask and the old upstream subtask of the logical channel. For input
    state ``targets`` is the one new input channel of gate ``index``; for output state it is
    every new subpartition of partition ``index`` that receives a copy.
    """

    index: int
    old_subtask: int
    old_channel: int
    targets: tuple[int, ...]
    fragments: tuple[Fragment, ...]
    upstream_output: bool = False

    @property
    def size(self) -> int:
        return sum(f.length for f in self.fragments)


@dataclass(frozen=True)
class TaskRestore:
    """What one new subtask restores."""

    subtask: str
    operator: str
    index: int
    key_groups: KeyGroupRange | None
    keyed_state: tuple[tuple[int, int], ...]
    #: for a source: the splits it reads on, with the seq of each one's next record
    source_splits: tuple[tuple[str, int], ...]
    #: read by the task itself into its result partitions, before anything else
    output_state: tuple[RecoveredChunk, ...]
    #: read by the channel-state reader into the recovered input channels
    input_state: tuple[RecoveredChunk, ...]
    gates: tuple[DownstreamSubtaskRescale, ...]
    partitions: tuple[UpstreamSubtaskRescale, ...]

    @property
    def rescaled(self) -> bool:
        return any(g.descriptor is not NO_RESCALE for g in self.gates) or any(
            p.descriptor is not NO_RESCALE for p in self.partitions
        )


@dataclass(frozen=True)
class StateAssignment:
    """A checkpoint split among the subtasks of the job restored from it."""

    checkpoint: Checkpoint
    graph: JobGraph
    recover_output_on_downstream: bool
    exchanges: Mapping[str, ExchangeRescale]
    subtasks: Mapping[str, TaskRestore]
    records: Mapping[int, Record]
    #: (record, exchange) -> the new downstream subtask that must process it
    expected_subtask: Mapping[tuple[int, str], int]
    #: how each descriptor's channel mapping was found (before or since FLINK-40269)
    connected_mapping: ConnectedMappingLookup = ConnectedMappingLookup.DATA_SET
    #: which Flink's rule decided whether input state is split anew (before or since
    #: FLINK-35351)
    input_reassignment: InputReassignment = InputReassignment.FULL_MAPPER
    #: which Flink's rule assigned state to a vertex with none of its own (before FLINK-27031,
    #: before FLINK-31963, or since)
    stateless_assignment: StatelessAssignment = StatelessAssignment.REPARTITIONED
    #: whether Flink kept one subtask mapping per vertex or per gate (before or since
    #: FLINK-22686)
    mapping_scope: MappingScope = MappingScope.GATE

    @property
    def recovered_bytes(self) -> int:
        return sum(
            c.size for t in self.subtasks.values() for c in (*t.output_state, *t.input_state)
        )


def assign_state(
    checkpoint: Checkpoint,
    parallelism: Mapping[str, int] | None = None,
    *,
    recover_output_on_downstream: bool = False,
    connected_mapping: ConnectedMappingLookup | str = ConnectedMappingLookup.DATA_SET,
    input_reassignment: InputReassignment | str = InputReassignment.FULL_MAPPER,
    stateless_assignment: StatelessAssignment | str = StatelessAssignment.REPARTITIONED,
    mapping_scope: MappingScope | str = MappingScope.GATE,
) -> StateAssignment:
    """Split ``checkpoint`` for the same job at new parallelism (operator name -> parallelism;
    operators not named keep theirs). ``connected_mapping`` says how each gate's and
    partition's descriptor finds the other side's mapping: by its own edge's data set (Flink
    since FLINK-40269) or by the first edge between the two operators (before).
    ``input_reassignment``: the version of Flink's rule that decides, per consuming operator
    over all its inputs, whether its input state is split anew (FLINK-35351 changed it).
    ``stateless_assignment``: the version of Flink's rule for a vertex with no state of its
    own, which before FLINK-27031 and FLINK-31963 left descriptors uncomputed.
    ``mapping_scope``: one subtask mapping per vertex (before FLINK-22686, when gates with
    different mappings fail the restore) or per gate and partition."""
    lookup = ConnectedMappingLookup.parse(connected_mapping)
    rule = InputReassignment.parse(input_reassignment)
    stateless = StatelessAssignment.parse(stateless_assignment)
    old_graph = checkpoint.graph
    if old_graph is None:
        raise InvalidParameterError(f"checkpoint {checkpoint.id} does not record its job graph")
    graph = _rescaled_graph(old_graph, dict(parallelism or {}))
    consumers = {op.name: _consumer_inputs(graph, op.name) for op in graph.operators}
    exchanges = {
        e.name: rescale_exchange(
            e.partitioner,
            (old_graph.operator(e.upstream).parallelism, graph.operator(e.upstream).parallelism),
            (
                old_graph.operator(e.downstream).parallelism,
                graph.operator(e.downstream).parallelism,
            ),
            recover_output_on_downstream=recover_output_on_downstream,
            aligned_by_graph=not graph.checkpoints_unaligned(e),
            connected=_connected(graph, e, lookup).partitioner,
            consumer_inputs=consumers[e.downstream],
            reassignment=rule,
        )
        for e in graph.exchanges
    }
    vertices = vertex_states(checkpoint, old_graph)
    redistributed = {
        op.name: input_state_redistributed(
            (old_graph.operator(op.name).parallelism, op.parallelism), consumers[op.name], rule
        )
        for op in graph.operators
    }
    exchanges = rescaling_as_computed(exchanges, graph, vertices, redistributed, stateless)
    _check_mappings(old_graph, graph, exchanges, vertices, redistributed, mapping_scope)
    inputs = _by_owner(checkpoint.input_channel_state)
    outputs = _by_owner(checkpoint.result_subpartition_state)
    subtasks: dict[str, TaskRestore] = {}
    for op in graph.operators:
        old_op = old_graph.operator(op.name)
        for index in range(op.parallelism):
            subtasks[op.subtask_name(index)] = _restore_subtask(
                checkpoint, old_graph, graph, op, old_op, index, exchanges, inputs, outputs
            )
    records = {r.id: r for r in checkpoint.records}
    return StateAssignment(
        checkpoint,
        graph,
        recover_output_on_downstream,
        exchanges,
        subtasks,
        records,
        _expected_subtasks(graph, exchanges, subtasks, records),
        lookup,
        rule,
        stateless,
        MappingScope.parse(mapping_scope),
    )


def _check_mappings(
    old_graph: JobGraph,
    graph: JobGraph,
    exchanges: Mapping[str, ExchangeRescale],
    vertices: Mapping[str, VertexState],
    redistributed: Mapping[str, bool],
    scope: MappingScope | str,
) -> None:
    """The mappings Flink computes while splitting channel state anew, held to ``scope``:
    of a vertex with input state split anew, every gate's with channel state; of one with
    output state whose parallelism changed, every partition's."""
    for op in graph.operators:
        if vertices[op.name].input and redistributed[op.name]:
            gates = [exchanges[e.name].input_mapping for e in graph.inputs_of(op.name)]
            check_subtask_mappings([m for m in gates if m is not None], scope)
        old = old_graph.operator(op.name).parallelism
        if vertices[op.name].output and output_state_redistributed((old, op.parallelism)):
            partitions = [exchanges[e.name].output_mapping for e in graph.outputs_of(op.name)]
            check_subtask_mappings([m for m in partitions if m is not None], scope)


def _consumer_inputs(graph: JobGraph, consumer: str) -> ConsumerInputs:
    """Every input of ``consumer`` in the restored job, as Flink's rule for its input state
    reads them: each edge's partitioner and its producer's new parallelism."""
    return ConsumerInputs.of(
        (e.partitioner, graph.operator(e.upstream).parallelism)
        for e in graph.exchanges
        if e.downstream == consumer
    )


def _connected(graph: JobGraph, exchange: Exchange, lookup: ConnectedMappingLookup) -> Exchange:
    """The edge whose mappings ``exchange``'s descriptors take for the other side's channels.

    Since FLINK-40269 Flink finds it by the intermediate data set: the exchange itself. Before,
    it looked for the connected job vertex among the upstream's consumers (for a gate) or the
    downstream's producers (for a partition) and took the first match. An operator's gates and
    partitions follow the job's exchanges in order here, so both searches find the same edge:
    the first between the two operators."""
    if lookup is ConnectedMappingLookup.DATA_SET:
        return exchange
    return next(
        e
        for e in graph.exchanges
        if (e.upstream, e.downstream) == (exchange.upstream, exchange.downstream)
    )


def _rescaled_graph(old: JobGraph, parallelism: dict[str, int]) -> JobGraph:
    unknown = set(parallelism) - {op.name for op in old.operators}
    if unknown:
        raise InvalidParameterError(
            f"unknown operator(s) {sorted(unknown)}; the job has "
            + ", ".join(op.name for op in old.operators)
        )
    operators = []
    for op in old.operators:
        new = parallelism.get(op.name, op.parallelism)
        max_parallelism = op.effective_max_parallelism
        if new > max_parallelism:
            raise InvalidParameterError(
                f"The state for task {op.name} can not be restored. The maximum parallelism "
                f"({max_parallelism}) of the restored state is lower than the configured "
                f"parallelism ({new}). Please reduce the parallelism of the task to be lower or "
                "equal to the maximum parallelism."
            )
        # every other property of the operator (cost, records, input selection) is kept
        operators.append(dataclasses.replace(op, parallelism=new, max_parallelism=max_parallelism))
    return JobGraph(tuple(operators), old.exchanges)


def _by_owner(states: tuple[ChannelState, ...]) -> dict[str, list[ChannelState]]:
    grouped: dict[str, list[ChannelState]] = {}
    for state in states:
        grouped.setdefault(state.owner, []).append(state)
    for group in grouped.values():
        group.sort(key=lambda s: (s.info.__class__.__name__, _info_key(s.info)))
    return grouped


def _info_key(info: InputChannelInfo | ResultSubpartitionInfo) -> tuple[int, int]:
    if isinstance(info, InputChannelInfo):
        return (info.gate, info.channel)
    return (info.partition, info.subpartition)


def _restore_subtask(
    checkpoint: Checkpoint,
    old_graph: JobGraph,
    graph: JobGraph,
    op: Operator,
    old_op: Operator,
    index: int,
    exchanges: Mapping[str, ExchangeRescale],
    inputs: Mapping[str, list[ChannelState]],
    outputs: Mapping[str, list[ChannelState]],
) -> TaskRestore:
    """Everything one new subtask restores: keyed state, splits, input and output channel
    state, each gathered by its own step from the old subtasks it maps to."""
    key_groups: KeyGroupRange | None = None
    keyed: tuple[tuple[int, int], ...] = ()
    if op.kind is OperatorKind.KEYED:
        key_groups, keyed = _keyed_state(checkpoint, op, index)
    splits: tuple[tuple[str, int], ...] = ()
    if op.kind is OperatorKind.SOURCE:
        splits = _splits_of(checkpoint, old_op, op.parallelism, index)
    gates = []
    input_state: list[RecoveredChunk] = []
    for gate_index, exchange in enumerate(graph.inputs_of(op.name)):
        plan = exchanges[exchange.name].downstream[index]
        gates.append(plan)
        channels = graph.operator(exchange.upstream).parallelism
        input_state += _input_chunks(gate_index, plan, old_op, inputs, channels)
        input_state += _upstream_output_chunks(
            gate_index, plan, old_graph, exchange, outputs, channels
        )
    # Flink reads input handles before the upstream-output ones (readInputData)
    input_state.sort(key=lambda c: c.upstream_output)
    partitions = []
    output_state: list[RecoveredChunk] = []
    for partition_index, exchange in enumerate(graph.outputs_of(op.name)):
        up_plan = exchanges[exchange.name].upstream[index]
        partitions.append(up_plan)
        subpartitions = graph.operator(exchange.downstream).parallelism
        output_state += _output_chunks(partition_index, up_plan, old_op, outputs, subpartitions)
    return TaskRestore(
        op.subtask_name(index),
        op.name,
        index,
        key_groups,
        keyed,
        splits,
        tuple(output_state),
        tuple(input_state),
        tuple(gates),
        tuple(partitions),
    )


def _keyed_state(
    checkpoint: Checkpoint, op: Operator, index: int
) -> tuple[KeyGroupRange, tuple[tuple[int, int], ...]]:
    """The subtask's key groups and the counts of every key in them, merged from whichever old
    subtasks held them (keyed state moves by key group)."""
    max_p = op.effective_max_parallelism
    key_groups = compute_key_group_range_for_operator_index(max_p, op.parallelism, index)
    merged: dict[int, int] = {}
    for snapshot in checkpoint.subtasks:
        if snapshot.operator == op.name:
            for key, count in snapshot.keyed_state:
                if assign_to_key_group(key, max_p, "long") in key_groups:
                    merged[key] = merged.get(key, 0) + count
    return key_groups, tuple(sorted(merged.items()))


def _input_chunks(
    gate_index: int,
    plan: DownstreamSubtaskRescale,
    old_op: Operator,
    inputs: Mapping[str, list[ChannelState]],
    channels: int,
) -> list[RecoveredChunk]:
    """The input channel state of gate ``gate_index`` from the old subtasks the consumer's
    mapper names, each buffer to the new channel its old channel maps to (of ``channels``)."""
    chunks = []
    channel_of = plan.new_channel
    for old in plan.input_state_from:
        for state in inputs.get(old_op.subtask_name(old), ()):
            info = state.info
            if isinstance(info, InputChannelInfo) and info.gate == gate_index:
                target = channel_of(info.channel)
                _check_index(target, channels, f"input channel {info.channel} of gate {gate_index}")
                for buffer in state.buffers:
                    chunks.append(
                        RecoveredChunk(gate_index, old, info.channel, (target,), buffer.fragments)
                    )
    return chunks


def _upstream_output_chunks(
    gate_index: int,
    plan: DownstreamSubtaskRescale,
    old_graph: JobGraph,
    exchange: Exchange,
    outputs: Mapping[str, list[ChannelState]],
    channels: int,
) -> list[RecoveredChunk]:
    """Upstream output state handed to this consumer (recover output on downstream): the old
    producers' subpartitions it reads, each on the channel of the producer that wrote it (of
    ``channels``)."""
    chunks = []
    channel_of = plan.new_channel
    upstream_op = old_graph.operator(exchange.upstream)
    partition_index = old_graph.partition_index(exchange.data_set)
    for old_upstream, old_subpartition in plan.upstream_output_state_from:
        for state in outputs.get(upstream_op.subtask_name(old_upstream), ()):
            info = state.info
            if (
                isinstance(info, ResultSubpartitionInfo)
                and info.partition == partition_index
                and info.subpartition == old_subpartition
            ):
                target = channel_of(old_upstream)
                _check_index(target, channels, f"input channel {old_upstream} of gate {gate_index}")
                for buffer in state.buffers:
                    chunks.append(
                        RecoveredChunk(
                            gate_index,
                            old_subpartition,
                            old_upstream,
                            (target,),
                            buffer.fragments,
                            upstream_output=True,
                        )
                    )
    return chunks


def _output_chunks(
    partition_index: int,
    up_plan: UpstreamSubtaskRescale,
    old_op: Operator,
    outputs: Mapping[str, list[ChannelState]],
    subpartitions: int,
) -> list[RecoveredChunk]:
    """The output state of partition ``partition_index`` from the old producers the mapper
    names, each buffer copied to every new subpartition its old one maps to (of
    ``subpartitions``)."""
    chunks = []
    for old in up_plan.output_state_from:
        for state in outputs.get(old_op.subtask_name(old), ()):
            info = state.info
            if isinstance(info, ResultSubpartitionInfo) and info.partition == partition_index:
                if up_plan.descriptor is NO_RESCALE:
                    targets: tuple[int, ...] = (info.subpartition,)
                    where = f"subpartition {info.subpartition} of partition {partition_index}"
                    _check_index(info.subpartition, subpartitions, where)
                else:
                    targets = up_plan.new_subpartitions(info.subpartition)
                for buffer in state.buffers:
                    chunks.append(
                        RecoveredChunk(
                            partition_index,
                            info.subpartition,
                            old,
                            targets,
                            buffer.fragments,
                        )
                    )
    return chunks


def _check_index(index: int, length: int, what: str) -> None:
    """Refuse a buffer restored without a descriptor into a channel the new job lacks, as
    Flink fails looking it up in the partition's or gate's array."""
    if index >= length:
        raise InvalidParameterError(
            f"java.lang.ArrayIndexOutOfBoundsException: Index {index} out of bounds for length "
            f"{length} (old {what} restored without a rescaling descriptor into a job that "
            f"has {length})"
        )


def _splits_of(
    checkpoint: Checkpoint, old_op: Operator, parallelism: int, index: int
) -> tuple[tuple[str, int], ...]:
    """Every split the old source subtasks read, dealt out round robin over the new subtasks
    (the model's stand-in for the split enumerator re-assigning the splits it got back)."""
    splits = [
        split
        for old in range(old_op.parallelism)
        for split in checkpoint.subtask(old_op.subtask_name(old)).source_splits
    ]
    return tuple(split for position, split in enumerate(splits) if position % parallelism == index)


def _expected_subtasks(
    graph: JobGraph,
    exchanges: Mapping[str, ExchangeRescale],
    subtasks: Mapping[str, TaskRestore],
    records: Mapping[int, Record],
) -> dict[tuple[int, str], int]:
    """The new subtask that must process each recovered record, from the partitioner alone:
    the subtask the partitioner selects (the key group's for keyBy, ``key % n`` for the custom
    partitioner), and otherwise the one subtask the mappings send it to."""
    receivers: dict[tuple[int, str], set[int]] = {}
    for exchange in graph.exchanges:
        downstream = graph.operator(exchange.downstream)
        upstream = graph.operator(exchange.upstream)
        for index in range(downstream.parallelism):
            restore = subtasks[downstream.subtask_name(index)]
            gate_index = graph.gate_index(exchange.data_set)
            for chunk in restore.input_state:
                if chunk.index == gate_index:
                    _note_receiver(receivers, chunk, exchange, index)
        partition_index = graph.partition_index(exchange.data_set)
        for index in range(upstream.parallelism):
            for chunk in subtasks[upstream.subtask_name(index)].output_state:
                if chunk.index == partition_index:
                    for target in chunk.targets:
                        _note_receiver(receivers, chunk, exchange, target)
    expected = {}
    for (record, name), candidates in receivers.items():
        if not records[record].is_record:
            continue  # a watermark or status reaches every receiver: no one subtask is expected
        exchange = next(e for e in graph.exchanges if e.name == name)
        downstream = graph.operator(exchange.downstream)
        selection = ChannelSelection.of(exchange.partitioner)
        if selection is not ChannelSelection.NONE:
            subtask = selection.select(
                records[record].key, downstream.effective_max_parallelism, downstream.parallelism
            )
        elif len(candidates) == 1:
            (subtask,) = candidates
        else:
            raise InvalidParameterError(
                f"record {record} of {name} reaches new subtasks {sorted(candidates)} "
                f"without a filter ({exchange.partitioner.datastream_call})"
            )
        expected[(record, name)] = subtask
    return expected


def _note_receiver(
    receivers: dict[tuple[int, str], set[int]],
    chunk: RecoveredChunk,
    exchange: Exchange,
    subtask: int,
) -> None:
    for fragment in chunk.fragments:
        if fragment.is_first:
            receivers.setdefault((fragment.record, exchange.name), set()).add(subtask)
