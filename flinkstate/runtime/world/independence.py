"""Which actions commute: an enabled action's footprint in the state it is taken in.

An action stays within a few of its actor's resources
(:class:`~flinkstate.runtime.world.exploration.footprint.Footprints`) where it does the everyday
work of a job or of the classic and V1 recovery: a task computing, emitting a record, requesting a
buffer for a subpartition, writing a record into it (its pipe only when that fills the buffer),
restoring or finishing its output, polling a buffer or one of the events that change only its
input channels (the end of a partition, a virtual channel's descriptor, the end of recovered
input or output state), processing a record, converting a gate, a barrier that neither
takes the task's snapshot (which notes its step, kept in the state) nor may complete the
checkpoint; its channel-state reader and V2 drainer (their own state, ``HELPER``: the channel
they work for, its pools, the heap recovery takes, ``HEAP``; the reader's end touches its
task); a transport sending a buffer or such an event, or requesting a floating buffer.
A network pool joins when a local pool would take from it or give back to it; a channel's
``POLLABLE`` joins when something is added to an empty queue its task reads (what is added
behind others changes neither the head nor which channel the task polls next); what draws a
number every actor shares (record ids), ends a source's input or writes the
checkpoint in progress adds that resource. Everything else may touch anything (None):
the other events, channels in V2 recovery, V1's filtering reader, a source's end of event
time, snapshots, the checkpoint coordinator, the channel-state writers, V2's task mails, a
failover. One rule per kind of action says which (``_FOOTPRINTS``, every ``ActionKind``; the
rule ``_anything`` where it may touch anything). Being wrong here would make the explorer
skip interleavings that differ, so ``SleepSets(verify=True)`` and ``verify_along_runs`` check
every independence relied on (tests/runtime/world/test_independence.py along runs of small
jobs and restarts; tools/verify-independence.py over every topology, fault and scenario).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from flinkstate.runtime.action_kind import ActionKind, by_text
from flinkstate.runtime.actor_ref import ActorKind, ActorRef
from flinkstate.runtime.events import (
    BARRIER,
    END_OF_INPUT_STATE,
    END_OF_OUTPUT_STATE,
    END_OF_PARTITION,
    SUBTASK_CONNECTION,
)
from flinkstate.runtime.jobgraph import OperatorKind
from flinkstate.runtime.options import Fault, NoOpTriggerAfter, RecoveryAbort, RecoveryGeneration
from flinkstate.runtime.partition.consumer.input_gate import Channel
from flinkstate.runtime.partition.consumer.recovered_channel import conversion_refusal
from flinkstate.runtime.tasks.mailbox import emits_last_record, next_split, visible_head
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world.exploration.footprint import (
    CHECKPOINT,
    EVENT_TIME,
    HEAP,
    RECORDS,
    SOURCES,
    PoolOf,
    Resource,
    ResourceKind,
    TaskFootprint,
    TransportFootprint,
)
from flinkstate.runtime.world.state import NetworkState
from flinkstate.sim.action import Action

#: events that, polled, change only the task's input channels and the subpartitions they read
_LOCAL_INPUT_EVENTS = frozenset(
    {END_OF_PARTITION, SUBTASK_CONNECTION, END_OF_INPUT_STATE, END_OF_OUTPUT_STATE}
)

# The hot path's enum members, read once: a member read through its class costs about 45 ns on
# Python 3.11, and a step reads several.
_TASK = ActorKind.TASK
_SOURCE = OperatorKind.SOURCE
_LOSE_RECORD = Fault.LOSE_RECORD


def footprint(world: NetworkState, action: Action) -> frozenset[Resource] | None:
    """What ``action``, enabled in ``world``, may read or write; None: anything."""
    if world.failover is not None:
        return None
    ref = world.actions.index.refs.get(action.actor)
    if ref is None:
        return None
    return _FOOTPRINTS[action.kind](world, ref, action)


Rule = Callable[[NetworkState, ActorRef, Action], frozenset[Resource] | None]
TaskRule = Callable[[NetworkState, Task, TaskFootprint, Action], frozenset[Resource] | None]


def _anything(world: NetworkState, ref: ActorRef, action: Action) -> frozenset[Resource] | None:
    """An action that may touch anything: snapshots, V2's channels and task mails, V1's
    filtering, the coordinator, the channel-state writers, failovers."""
    return None


def _of_task(rule: TaskRule) -> Rule:
    """A task's action: ``rule`` on its task and the task's resources. An actor other than a
    task (a channel-state writer's ``write``), or a task a failover stopped, touches anything;
    a source without splits of its own also reads whether any source has records left."""

    def task_rule(world: NetworkState, ref: ActorRef, action: Action) -> frozenset[Resource] | None:
        if ref.kind is not _TASK:
            return None
        task = world.tasks[ref.task]
        if task.failover is not None:
            return None
        touched = rule(world, task, world.footprints.tasks[task.name], action)
        if touched is not None and task.kind is _SOURCE and not task.splits:
            # without splits of its own, a source finishes once no source has records left
            return touched | {SOURCES}
        return touched

    return task_rule


def _compute(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    return frozenset((own.task,))


def _emit(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    touched = {own.task, RECORDS, EVENT_TIME} if world.graph.event_time else {own.task, RECORDS}
    if emits_last_record(world, task):
        if next_split(task, world.graph.operator(task.operator).records_per_subtask) is None:
            return None  # no record left: the source's event time ends or idles
        touched.add(SOURCES)  # the last record: read by sources without splits
    return frozenset(touched)


def _request_buffer(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    target = action.target
    return _with_pools(world, {own.task, own.builders[target]}, (own.output_pools[target],))


def _write(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    out = task.pending[0]
    sub = world.subpartitions[out.subpartition]
    builder = sub.builder
    assert builder is not None
    touched = {own.task, own.builders[sub.name]}
    if world.options.flush_every_record or builder.space <= out.total - out.written:
        touched.add(own.links[sub.name])  # the buffer is full: it joins the queue
        _appending(world, own, (sub.name,), touched)
    return frozenset(touched)


def _finish_output(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    """An event (no segment) into every subpartition; the reader learns the output is
    recovered."""
    touched = {own.task, own.helper, *own.links.values()}
    return frozenset(_appending(world, own, own.links, touched))


def _recover_output(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    """One buffer of the partition's pool into its targets."""
    chunk = task.output_state[0]
    partition = task.partitions[chunk.index]
    names = [partition.subpartitions[target].name for target in chunk.targets]
    touched = _appending(world, own, names, {own.task, *(own.links[n] for n in names)})
    return _with_pools(world, touched, (own.output_pools[names[0]],))


def _finish(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    touched = _appending(world, own, own.links, {own.task, *own.outputs})
    return _with_pools(world, touched, own.output_pool_list)


def _poll(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    channel = world.channels[action.target]
    if channel.recoverable.in_recovery:
        return None
    head = visible_head(world, channel)
    if head is None:
        return None
    # which channel is polled depends on which of them have something to poll; the
    # recovery's events change only the gate's channels and the subpartitions they read
    if head.is_event:
        if head.event not in _LOCAL_INPUT_EVENTS:
            return None
        touched = {own.task, *own.inputs[channel.name], *own.polled}
        if head.event == END_OF_OUTPUT_STATE:  # the last one unblocks every subpartition
            touched.update(own.channels)  # and reads and resets every channel
            touched.update(own.upstream)
        return frozenset(touched)
    touched = {own.task, *own.inputs[channel.name], *own.polled}
    if channel.persister.persisting:
        touched.add(CHECKPOINT)
    if world.graph.event_time:
        touched.add(EVENT_TIME)
    if _LOSE_RECORD in world.options.faults:  # the fault reads how many records exist
        touched.add(RECORDS)
    if channel.recovered:  # a recovered buffer goes back to the global pool
        touched.add(own.network_pool)
    return _with_pools(world, touched, own.input_pools)  # a buffer with no whole record


def _process(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    current = task.current
    if current is None:
        return None
    # the order checks' memory it writes is its own: the path each record took to it (a route,
    # not a number drawn), the last seq per path ending at its channels and per key it owns
    touched = {own.task, *own.inputs[current.name]}
    if world.graph.event_time:
        touched.add(EVENT_TIME)
    return _with_pools(world, touched, own.input_pools)  # the buffer, once read


def _barrier(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    """A barrier taken from the head of its channel: a stale one is dropped; one of the
    pending checkpoint is noted on its channel (an aligned one blocks it), read against the
    task's other channels, and, the last, unblocks them (and the subpartitions they read)
    and acknowledges. A barrier that takes the task's snapshot (its first unaligned one, or
    the last aligned one) notes the step it is taken at, which the state keeps, so it commutes
    with nothing; one whose acknowledgement may complete the checkpoint reads every task."""
    channel = world.channels[action.target]
    head = visible_head(world, channel)
    if head is None or head.event != BARRIER:
        return None
    touched = {own.task, *own.inputs[channel.name], *own.polled, CHECKPOINT}
    checkpoint = world.checkpoints.pending
    if checkpoint is None or head.checkpoint != checkpoint.id:
        return frozenset(touched)  # stale: dropped
    snapshot_taken = task.name in checkpoint.snapshots
    if head.priority and not snapshot_taken:
        return None  # starts the unaligned snapshot
    touched.update(own.channels)  # whether every barrier is in
    last = all(
        c.persister.barrier_seen == checkpoint.id
        for gate in task.gates
        for c in gate.channels
        if c is not channel
    )
    if not last:
        return frozenset(touched)
    if not snapshot_taken or _may_complete(world, task):
        return None
    touched.update(own.upstream)  # the alignment ends: the channels resume
    return frozenset(touched)


def _may_complete(world: NetworkState, task: Task) -> bool:
    """Whether the task's acknowledgement, now, may complete the pending checkpoint (which
    then reads every task and notes the step)."""
    checkpoint = world.checkpoints.pending
    assert checkpoint is not None
    if checkpoint.pending_writes.get(task.name):
        return False
    acknowledged = checkpoint.acknowledged | {task.name}
    waiting = checkpoint.waiting_for
    return len(acknowledged) == len(world.tasks) if waiting is None else waiting <= acknowledged


def _convert(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    """A gate's conversion (classic and V1): its channels become local and remote ones, the
    recovered channels' buffers go back to the network pool and the remote ones take their
    exclusive buffers from it; the task runs once every gate is converted. It reads its other
    gates' channels (all-gates conversion) and its reader (V1). A conversion ``toInputChannel``
    refuses fails the task."""
    if world.effective_generation is RecoveryGeneration.V2:
        return None
    gate = world.gates[action.target]
    if any(conversion_refusal(world, channel) is not None for channel in gate.channels):
        return None
    return frozenset((own.task, own.helper, *own.channels, own.network_pool))


HelperRule = Callable[[NetworkState, Task, TaskFootprint, Action], frozenset[Resource] | None]


def _of_helper(rule: HelperRule) -> Rule:
    """A step of a task's channel-state reader or V2 drainer: ``rule`` on the task it works
    for and the task's resources. It changes its own state (``HELPER``), not the task's,
    except where a rule says so; a helper of a task a failover stopped touches anything."""

    def helper_rule(
        world: NetworkState, ref: ActorRef, action: Action
    ) -> frozenset[Resource] | None:
        task = world.tasks[ref.task]
        if task.failover is not None:
            return None
        return rule(world, task, world.footprints.tasks[task.name], action)

    return helper_rule


def _finish_input(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    """A channel-state reader (classic and V1) at the end of its input state: an end-of-state
    event into each of its task's recovered channels, its pre-filter segment freed (the heap).
    Its task reads whether it finished (conversion, V2's mails), and it reads its task's phase,
    so the two share the task's resource."""
    if world.effective_generation is RecoveryGeneration.V2:
        return None  # V2's reader ends with finish-fetch
    touched = {own.task, own.helper, *own.channels}  # the task's polls read its POLLABLEs
    if world.readers[task.name].heap_segment_allocated:
        touched.add(HEAP)
    return frozenset(touched)


def _recovered_target(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> tuple[Channel, set[Resource]]:
    """The recovered channel a reader's step works on (its target) with the reader and that
    channel's own state."""
    channel = world.channels[action.target]
    return channel, {own.helper, Resource(ResourceKind.CHANNEL, channel.name)}


def _request_exclusive(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    """A recovered channel takes its exclusive buffers from the network pool."""
    _, touched = _recovered_target(world, task, own, action)
    touched.add(own.network_pool)
    return frozenset(touched)


def _recover_input(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    """Classic: a chunk into a buffer of its recovered channel (exclusive, else the gate's)."""
    if world.effective_generation is not RecoveryGeneration.CLASSIC:
        return None  # recover-input is the classic reader's step alone
    if world.options.fail_recovered_hand_over and len(world.readers[task.name].chunks) == 1:
        return None  # the last chunk's recover throws: its task fails (FLINK-22376's hook)
    channel, touched = _recovered_target(world, task, own, action)
    touched.add(Resource(ResourceKind.POLLABLE, channel.name))  # its queue may have been empty
    return _with_pools(world, touched, ((world.gate_of(channel).pool.name, own.network_pool),))


def _spill(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    """V2: a chunk through a buffer of its channel (taken and recycled at once) into the spill
    writer, whose buffered bytes are heap; a gate with virtual channels filters it instead, in
    the heap pre-filter segment, reading its task's key groups, the records and event time."""
    channel, touched = _recovered_target(world, task, own, action)
    touched.add(HEAP)
    gate = world.gate_of(channel)
    if gate.plan is not None and gate.plan.demultiplexes:
        touched.update((own.task, RECORDS))
        if world.graph.event_time:
            touched.add(EVENT_TIME)
        return frozenset(touched)
    return _with_pools(world, touched, ((gate.pool.name, own.network_pool),))


def _finish_fetch(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    """V2: the spill files sealed and handed to the drainer (the same helper), the heap freed;
    the task gets its drainer-installing mail and reads whether the reader finished."""
    if world.options.abort_recovery is RecoveryAbort.FETCH:
        return None  # the fetch fails its task
    return frozenset((own.task, own.helper, HEAP))


def _drain(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    """V2's drainer: one buffer (the channel's exclusive, else the gate's) filled from the
    spill files into the channel's recovered queue; the spill files (the drainer's) released
    at the first."""
    channel = world.channels[action.target]
    touched = {
        own.helper,
        Resource(ResourceKind.CHANNEL, channel.name),
        Resource(ResourceKind.POLLABLE, channel.name),
    }
    return _with_pools(world, touched, ((world.gate_of(channel).pool.name, own.network_pool),))


def _finish_drain(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    """V2's drainer at the end: an end event into every channel of its task, the spill
    files released; resetting the task's trigger (``no_op_trigger_after=drain-done``) touches
    the task."""
    touched = {own.helper, *own.channels, *own.polled}
    if world.options.no_op_trigger_after is NoOpTriggerAfter.DRAIN_DONE:
        touched.add(own.task)
    return frozenset(touched)


def _of_transport(
    rule: Callable[[NetworkState, Channel, TransportFootprint], frozenset[Resource] | None],
) -> Rule:
    """A transport's action: none while its channel is in recovery (V2), else ``rule`` on its
    channel and the transport's resources."""

    def transport_rule(
        world: NetworkState, ref: ActorRef, action: Action
    ) -> frozenset[Resource] | None:
        channel = world.channels[ref.channel]
        if channel.recoverable.in_recovery:
            return None
        return rule(world, channel, world.footprints.transports[channel.name])

    return transport_rule


def _request_floating(
    world: NetworkState, channel: Channel, own: TransportFootprint
) -> frozenset[Resource] | None:
    """For the backlog the channel saw."""
    return _with_pools(world, {own.channel}, (own.gate_pool,))


def _send(
    world: NetworkState, channel: Channel, own: TransportFootprint
) -> frozenset[Resource] | None:
    sub = world.subpartitions[channel.subpartition]
    if sub.blocked or not sub.queue:
        return None
    head = sub.queue[0]
    if head.is_event:  # other than a barrier, an event only joins what the channel received
        if head.event not in _LOCAL_INPUT_EVENTS:
            return None
        if channel.received:
            return frozenset((own.link, own.channel))
        return frozenset((own.link, own.channel, own.pollable))
    touched = {own.link, own.channel}
    if not channel.received:  # the channel gets something to poll
        touched.add(own.pollable)
    if channel.persister.persisting:
        touched.add(CHECKPOINT)
    return _with_pools(world, touched, (own.producer_pool,))  # the sent buffer goes back


#: what an action of each kind, enabled now, may read or write, by its kind; None: anything
_FOOTPRINTS: Mapping[str, Rule] = by_text(
    {
        # a task's mailbox thread
        ActionKind.COMPUTE: _of_task(_compute),
        ActionKind.EMIT: _of_task(_emit),
        ActionKind.REQUEST_BUFFER: _of_task(_request_buffer),
        ActionKind.WRITE: _of_task(_write),  # a channel-state writer's: anything
        ActionKind.FINISH: _of_task(_finish),
        ActionKind.POLL: _of_task(_poll),
        ActionKind.PROCESS: _of_task(_process),
        ActionKind.CHECKPOINT: _anything,
        ActionKind.BARRIER: _of_task(_barrier),
        ActionKind.ALIGNMENT_TIMEOUT: _anything,
        ActionKind.RECOVER_OUTPUT: _of_task(_recover_output),
        ActionKind.FINISH_OUTPUT: _of_task(_finish_output),
        ActionKind.CONVERT: _of_task(_convert),
        ActionKind.REQUEST_PARTITIONS: _anything,
        ActionKind.INSTALL_DRAINER: _anything,
        ActionKind.FAIL: _anything,
        ActionKind.CANCEL: _anything,
        # a remote channel's transport
        ActionKind.SEND: _of_transport(_send),
        ActionKind.REQUEST_FLOATING: _of_transport(_request_floating),
        # the coordinator and the scheduler
        ActionKind.TRIGGER: _anything,
        ActionKind.EXPIRE: _anything,
        ActionKind.MANUAL_CHECKPOINT: _anything,
        ActionKind.RESTART: _anything,
        # a channel-state reader: only its end of the input state stays within its task
        ActionKind.RECOVER_INPUT: _of_helper(_recover_input),
        ActionKind.REQUEST_EXCLUSIVE: _of_helper(_request_exclusive),
        ActionKind.FINISH_INPUT: _of_helper(_finish_input),
        # V1's filtering reassembles and filters records across its pre-filter buffers, heap
        # or pooled, with fallbacks: not yet made precise
        ActionKind.FILTER: _anything,
        ActionKind.REWRITE: _anything,
        ActionKind.SPILL: _of_helper(_spill),
        ActionKind.FINISH_FETCH: _of_helper(_finish_fetch),
        # a V2 drainer
        ActionKind.DRAIN: _of_helper(_drain),
        ActionKind.FINISH_DRAIN: _of_helper(_finish_drain),
    }
)


def _appending(
    world: NetworkState, own: TaskFootprint, subpartitions: Iterable[str], touched: set[Resource]
) -> set[Resource]:
    """``touched`` with, for each of ``subpartitions`` a local channel reads whose queue is
    empty, that channel's ``POLLABLE``: a buffer or event added behind others leaves what the
    consumer sees at the head, and so which channel it polls, as it was."""
    local = own.local_pollable
    subs = world.subpartitions
    for name in subpartitions:
        pollable = local.get(name)
        if pollable is not None and not subs[name].queue:
            touched.add(pollable)
    return touched


def _with_pools(
    world: NetworkState, touched: set[Resource], pools: Iterable[PoolOf]
) -> frozenset[Resource]:
    """``touched`` with the local pools an action takes from or gives back to, and the
    network pool of each that would take from it (no free segment: whether a request gets
    one depends on the others' requests) or give back to it (above its size, or destroyed)."""
    local = world.buffer_pools.local
    for name, network_pool in pools:
        touched.add(Resource(ResourceKind.POOL, name))
        pool = local[name]
        if not pool.free or pool.over_size:
            touched.add(network_pool)
    return frozenset(touched)
