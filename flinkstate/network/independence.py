"""Which actions commute: an enabled action's footprint in the state it is taken in.

An action stays within a few of its actor's resources
(:class:`~flinkstate.network.footprint.Footprints`) only where it does the everyday work of a
running job: a task computing, emitting a record, requesting a buffer for a subpartition,
writing a record into it (its pipe only when that fills the buffer), polling a buffer (recovered
or not) or one of the events that change only its input channels (the end of a partition, a
virtual channel's descriptor, the end of recovered input or output state), processing a record,
finishing its output or restoring it; a transport sending a buffer or such an event, or
requesting a floating buffer. A network pool joins when a local pool would take from it or give
back to it; what draws a number every actor shares (record ids, record paths) or writes the
checkpoint in progress adds that resource. Everything else may touch anything (None): barriers
and the other events, channels still in V1/V2 recovery, a source's last emit (other sources
read it), conversions, the checkpoint coordinator, the channel-state writers, readers and
drainers, a failover. Being wrong here would make the explorer skip interleavings that differ,
so ``SleepSets(verify=True)`` checks every independence it relies on
(tests/network/test_independence.py does so along runs of small jobs and restarts).
"""

from __future__ import annotations

from collections.abc import Iterable

from flinkstate.network.actors import ActorKind
from flinkstate.network.consumer import Channel
from flinkstate.network.events import (
    END_OF_INPUT_STATE,
    END_OF_OUTPUT_STATE,
    END_OF_PARTITION,
    SUBTASK_CONNECTION,
)
from flinkstate.network.footprint import (
    CHECKPOINT,
    EVENT_TIME,
    PATHS,
    RECORDS,
    PoolOf,
    Resource,
    ResourceKind,
    TaskFootprint,
)
from flinkstate.network.mailbox import emits_last_record, visible_head
from flinkstate.network.state import NetworkState
from flinkstate.network.task import Task
from flinkstate.sim.action import Action

#: task actions that write every output subpartition (and may take from their pools)
_OUTPUT_WIDE = frozenset({"finish", "finish-output", "recover-output"})
#: events that, polled, change only the task's input channels and the subpartitions they read
_LOCAL_INPUT_EVENTS = frozenset(
    {END_OF_PARTITION, SUBTASK_CONNECTION, END_OF_INPUT_STATE, END_OF_OUTPUT_STATE}
)


def footprint(world: NetworkState, action: Action) -> frozenset[Resource] | None:
    """What ``action``, enabled in ``world``, may read or write; None: anything."""
    if world.failover is not None:
        return None
    ref = world.actions.index.refs.get(action.actor)
    if ref is None:
        return None
    if ref.kind is ActorKind.NETTY:
        return _transport(world, world.channels[ref.channel], action)
    if ref.kind is not ActorKind.TASK:
        return None
    task = world.tasks[ref.task]
    if task.failover is not None:
        return None
    return _task(world, task, world.footprints.tasks[task.name], action)


def _task(
    world: NetworkState, task: Task, own: TaskFootprint, action: Action
) -> frozenset[Resource] | None:
    kind = action.kind
    watermarks = world.graph.event_time
    if kind == "compute":
        return frozenset((own.task,))
    if kind == "emit":
        if emits_last_record(world, task):
            return None
        return frozenset((own.task, RECORDS, EVENT_TIME) if watermarks else (own.task, RECORDS))
    if kind == "request-buffer":
        target = action.target
        return _with_pools(world, {own.task, own.builders[target]}, (own.output_pools[target],))
    if kind == "write":
        out = task.pending[0]
        sub = world.subpartitions[out.subpartition]
        builder = sub.builder
        assert builder is not None
        touched = {own.task, own.builders[sub.name]}
        if world.options.flush_every_record or builder.space <= out.total - out.written:
            touched.add(own.links[sub.name])  # the buffer is full: it joins the queue
        return frozenset(touched)
    if kind in _OUTPUT_WIDE:
        return _with_pools(world, {own.task, *own.outputs}, own.output_pool_list)
    if kind == "poll":
        channel = world.channels[action.target]
        if channel.recoverable.in_recovery:
            return None
        head = visible_head(world, channel)
        if head is None:
            return None
        # which channel is polled depends on which of them have data; the recovery's events
        # change only the gate's channels and the subpartitions they read
        touched = {own.task, *own.inputs.values()}
        if head.is_event:
            return frozenset(touched) if head.event in _LOCAL_INPUT_EVENTS else None
        if channel.persister.persisting:
            touched.add(CHECKPOINT)
        if watermarks:
            touched.add(EVENT_TIME)
        if "lose-record" in world.options.faults:  # the fault reads how many records exist
            touched.add(RECORDS)
        if channel.recovered:  # a recovered buffer goes back to the global pool
            touched.add(own.network_pool)
        return _with_pools(world, touched, own.input_pools)  # a buffer with no whole record
    if kind == "process":
        current = task.current
        if current is None:
            return None
        touched = {own.task, own.inputs[current.name], PATHS}
        if watermarks:
            touched.add(EVENT_TIME)
        return _with_pools(world, touched, own.input_pools)  # the buffer, once read
    return None


def _transport(world: NetworkState, channel: Channel, action: Action) -> frozenset[Resource] | None:
    own = world.footprints.transports[channel.name]
    if channel.recoverable.in_recovery:
        return None
    if action.kind == "request-floating":
        return _with_pools(world, {own.link}, (own.gate_pool,))
    sub = world.subpartitions[channel.subpartition]
    if sub.blocked or not sub.queue:
        return None
    head = sub.queue[0]
    if head.is_event:  # other than a barrier, an event only joins what the channel received
        return frozenset((own.link,)) if head.event in _LOCAL_INPUT_EVENTS else None
    touched = {own.link}
    if channel.persister.persisting:
        touched.add(CHECKPOINT)
    return _with_pools(world, touched, (own.producer_pool,))  # the sent buffer goes back


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
        if not pool.free or pool.requested > pool.size or pool.destroyed:
            touched.add(network_pool)
    return frozenset(touched)
