"""Building a run: the job's network as Flink deploys it, and a restored job's starting state.

Every TaskManager gets its network buffer pool; every subtask its result partitions (a local
pool sized from its subpartitions, one subpartition per consumer) and its input gates (a pool of
floating buffers, one channel per producer, remote channels taking their exclusive buffers
now), each reservation refused as Flink refuses it; the pools' sizes are then redistributed.
A restored job's subtasks start in the restoring phase with their share of the checkpoint:
keyed state, source splits, output state to write back, and a channel-state reader (and with
V2 a drainer) for their input state.
"""

from __future__ import annotations

from collections import deque

from flinkstate.errors import InvalidParameterError
from flinkstate.keygroups import compute_key_group_range_for_operator_index
from flinkstate.runtime.buffer.buffer import local_pool, network_pool_name
from flinkstate.runtime.buffer.ledger import SegmentLedger
from flinkstate.runtime.buffer.owners import ChannelOwners, Owner, OwnerKind, SubpartitionOwners
from flinkstate.runtime.buffer.pools import BufferPools
from flinkstate.runtime.checkpoint.channel.channel_state_reader import (
    ChannelStateReader,
    split_chunk,
)
from flinkstate.runtime.checkpoint.channel.channel_state_writer import assign_writers
from flinkstate.runtime.checkpoint.channel.fetched_channel_state import (
    FetchedChannelStateDrainer,
    drainer_name,
)
from flinkstate.runtime.checkpoint.state_assignment import StateAssignment
from flinkstate.runtime.jobgraph import Exchange, Operator, OperatorKind
from flinkstate.runtime.options import (
    Fault,
    RecoveryCheckpointTrigger,
    RecoveryGeneration,
    RecoveryOptions,
    TaskFailure,
)
from flinkstate.runtime.partition.consumer.input_gate import Channel, Gate
from flinkstate.runtime.partition.record_writer import IN_FLIGHT
from flinkstate.runtime.partition.result_partition import ResultPartition, Subpartition
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world.actors import ActionCache, ActorIndex
from flinkstate.runtime.world.exploration.footprint import Footprints
from flinkstate.runtime.world.exploration.interference import Interference
from flinkstate.runtime.world.exploration.partial_copy import PartialCopies
from flinkstate.runtime.world.invariants import audit_interval
from flinkstate.runtime.world.state import NetworkState, configuration_of


def build(state: NetworkState) -> None:
    """Check that the run's options suit its job, then build the job's network (and,
    restored, each subtask's share of the checkpoint), the channel-state writers and the actor
    index."""
    options = state.options
    state.sequential = frozenset(op.name for op in state.graph.operators if op.sequential_inputs)
    if state.sequential and options.checkpoint_interval and not options.unaligned:
        raise InvalidParameterError(
            f"aligned checkpoints of {', '.join(sorted(state.sequential))}, which reads its "
            "inputs sequentially, would never complete: an aligned barrier on an input not "
            "selected is never read (Flink refuses any checkpointing of an InputSelectable "
            "operator); set unaligned=true or checkpoint_interval=0"
        )
    state.configuration = configuration_of(state)
    state.ledger = SegmentLedger(state.journal)
    state.violations = state.journal.violations
    state.buffer_pools = BufferPools(state.ledger)
    if not state.tasks:
        _build_job(state)
        if state.restore is not None:
            _restore(state, state.restore)
        if options.task_failure is not None:
            _arm_failure(state, options.task_failure)
    if not state.writers:
        writers = assign_writers(
            ((t.name, t.task_manager) for t in state.tasks.values()),
            state.config.subtasks_per_state_file,
        )
        state.writers = {w.name: w for w in writers}
        state.writer_of = {t: w.name for w in writers for t in w.subtasks}
    state.key_ordered = state.graph.key_ordered()
    state.task_keys = {task.name: task.key for task in state.tasks.values()}
    state.source_keys = tuple(
        key for key, task in state.tasks.items() if task.kind is OperatorKind.SOURCE
    )
    state.footprints = Footprints.of(state.tasks.values())
    state.partial_copies = PartialCopies()
    state.actions = ActionCache.of(
        ActorIndex.of(
            state.tasks,
            state.channels,
            state.subpartitions,
            state.pools,
            state.network_pools,
            state.writers,
            state.readers,
            state.drainers,
        )
    )
    state.actions.listen(state.journal.changes)  # every action is due: the cache starts stale
    state.interference = Interference.of(
        state.tasks.values(),
        state.footprints,
        lose_record=Fault.LOSE_RECORD in state.options.faults,
    )
    state.audit_every = audit_interval(
        options.full_check_every, state.component_count, scale=options.scale_audits
    )


def _arm_failure(state: NetworkState, failure: TaskFailure) -> None:
    """The subtask made to fail must exist in the job as built (restored: at its new
    parallelism)."""
    op = state.graph.operator(failure.subtask.operator)
    if failure.subtask.index >= op.parallelism:
        raise InvalidParameterError(
            f"task failure of {failure.subtask}: {op.name} has {op.parallelism} subtask(s), "
            f"0 to {op.parallelism - 1}"
        )
    state.tasks[failure.subtask.name].fail_after = failure.after_records


def _build_job(state: NetworkState) -> None:
    """The TaskManagers' pools, every subtask with its result partitions, then every gate."""
    cfg = state.config
    graph = state.graph
    task_managers = {
        cfg.task_manager_of(i) for op in graph.operators for i in range(op.parallelism)
    }
    for tm in sorted(task_managers):
        state.buffer_pools.add_network_pool(tm, cfg.network_buffers)
    for op in graph.operators:
        for index in range(op.parallelism):
            _build_task(state, op, index)
    for op in graph.operators:
        for exchange in graph.inputs_of(op.name):
            for index in range(op.parallelism):
                name = op.subtask_name(index)
                _build_gate(state, name, state.tasks[name], exchange)
    for pool in state.network_pools.values():
        state.buffer_pools.redistribute(pool)


def _build_task(state: NetworkState, op: Operator, index: int) -> None:
    name = op.subtask_name(index)
    tm = state.config.task_manager_of(index)
    key_groups = None
    if op.kind is OperatorKind.KEYED:
        r = compute_key_group_range_for_operator_index(
            op.effective_max_parallelism, op.parallelism, index
        )
        key_groups = (r.start, r.end)
    task_name = f"task {name}"
    deserializer = Owner(OwnerKind.DESERIALIZER, task_name)
    task = Task(task_name, name, op.name, op.kind, index, tm, [], [], key_groups, deserializer)
    if op.kind is OperatorKind.SOURCE:
        task.splits = {task.name: 0}  # a fresh job: each subtask reads its own split
    state.tasks[name] = task
    for exchange in state.graph.outputs_of(op.name):
        consumers = state.graph.consumers(exchange, index)
        downstream = state.graph.operator(exchange.downstream)
        minimum, maximum = state.config.result_partition_pool_bounds(len(consumers))
        partition_name = exchange.partition_name(name)
        global_name = network_pool_name(tm)
        state.buffer_pools.reserve(global_name, minimum, state.config.segment_size)
        pool = local_pool(
            partition_name,
            global_name,
            minimum,
            maximum,
            subpartitions=len(consumers),
            max_per_subpartition=state.config.max_buffers_per_channel,
        )
        state.buffer_pools.add_local_pool(pool)
        subs = []
        for position, consumer in enumerate(consumers):
            consumer_name = downstream.subtask_name(consumer)
            sub_name = exchange.subpartition_name(name, consumer_name)
            sub = Subpartition(
                sub_name,
                partition_name,
                name,
                consumer_name,
                exchange.channel_name(consumer_name, name),
                position,
                SubpartitionOwners.of(sub_name),
            )
            subs.append(sub)
            state.subpartitions[sub.name] = sub
        task.partitions.append(ResultPartition(partition_name, exchange, name, subs, pool))


def _build_gate(state: NetworkState, consumer: str, task: Task, exchange: Exchange) -> None:
    upstream = state.graph.operator(exchange.upstream)
    producers = state.graph.producers(exchange, task.index)
    exclusive, floating_min, floating_max = state.config.gate_buffers(len(producers))
    global_name = network_pool_name(task.task_manager)
    gate_name = exchange.gate_name(consumer)
    state.buffer_pools.reserve(global_name, floating_min, state.config.segment_size)
    pool = local_pool(gate_name, global_name, floating_min, floating_max)
    state.buffer_pools.add_local_pool(pool)
    channels = []
    for position, producer in enumerate(producers):
        producer_name = upstream.subtask_name(producer)
        remote = state.config.task_manager_of(producer) != task.task_manager
        channel_name = exchange.channel_name(consumer, producer_name)
        channel = Channel(
            channel_name,
            gate_name,
            task.name,
            f"task {producer_name}",
            exchange.subpartition_name(producer_name, consumer),
            remote,
            position,
            ChannelOwners.of(channel_name),
        )
        if remote and exclusive:
            state.buffer_pools.reserve(global_name, exclusive, state.config.segment_size)
            taken = state.buffer_pools.assign(global_name, exclusive, channel.owners.exclusive)
            channel.buffers.exclusive_segments = frozenset(taken)
            channel.buffers.exclusive = taken
        channels.append(channel)
        state.channels[channel.name] = channel
    gate = Gate(gate_name, exchange, task.name, channels, pool, exclusive)
    task.gates.append(gate)
    state.gates[gate_name] = gate


def _restore(state: NetworkState, restore: StateAssignment) -> None:
    """Start every subtask from its share of the checkpoint, in the restoring phase."""
    if restore.graph != state.graph:
        raise InvalidParameterError("a restored world must be built from the restore's graph")
    recovery = RecoveryOptions(
        state.options.generation,
        restore.recover_output_on_downstream,
        state.options.checkpointing_during_recovery,
        state.options.unaligned,
        state.options.during_recovery_gate,
    )
    state.recovery = recovery
    v2 = state.effective_generation is RecoveryGeneration.V2
    classic = state.effective_generation is RecoveryGeneration.CLASSIC
    capacity = state.config.segment_size
    for name, task in state.tasks.items():
        share = restore.subtasks[name]
        task.keyed_state = dict(share.keyed_state)
        if task.kind is OperatorKind.SOURCE:
            task.splits = dict(share.source_splits)
        task.output_state = deque(
            piece for chunk in share.output_state for piece in split_chunk(chunk, capacity)
        )
        task.phase = TaskPhase.RESTORING_OUTPUT
        for gate, plan in zip(task.gates, share.gates, strict=True):
            gate.plan = plan
            gate.converted = False
            gate.demultiplexing = plan.demultiplexes and classic
            for channel in gate.channels:
                channel.recovered = True
                if channel.buffers.exclusive:
                    # a recovered channel has no credit-based buffers: the physical
                    # channel takes its exclusive buffers only at conversion
                    state.buffer_pools.unassign(gate.pool.global_pool, channel.buffers.exclusive)
                    channel.buffers.exclusive = []
                    channel.buffers.exclusive_segments = frozenset()
        if task.gates:
            state.readers[task.name] = ChannelStateReader(
                f"channel-state-reader {name}",
                task.name,
                deque(
                    piece for chunk in share.input_state for piece in split_chunk(chunk, capacity)
                ),
            )
            if v2:
                state.drainers[task.name] = FetchedChannelStateDrainer(
                    drainer_name(name), task.name
                )
                task.recovery_trigger = RecoveryCheckpointTrigger.NOT_READY
    state.records = dict(restore.records)
    # watermarks and statuses in the state are elements, not records: never owned or counted
    state.recovered_records = frozenset(i for i, r in restore.records.items() if r.is_record)
    state.next_record = max(state.records, default=-1) + 1
    for (record, exchange_name), subtask in restore.expected_subtask.items():
        exchange = next(e for e in state.graph.exchanges if e.name == exchange_name)
        consumer = state.graph.operator(exchange.downstream).subtask_name(subtask)
        state.deliveries[(record, exchange.gate_name(consumer))] = IN_FLIGHT
