"""Why an actor cannot proceed, for deadlock reports: who it waits for, and for what.

A task with nothing to do waits for a buffer of its output pool (held by whoever has the
queued or retained buffers) or for input from its channels' producers; a restored task's
conversion waits for state to be consumed or exclusive buffers; a reader or drainer waits for a
buffer of its channel; a transport waits for credit. The engine looks for a cycle in these.
Actors a failover stopped wait for nothing: they are done until their region restarts.
"""

from __future__ import annotations

from flinkstate.runtime.actor_ref import (
    ActorKind,
    ActorRef,
    by_name,
    request_partitions,
    transport_name,
)
from flinkstate.runtime.buffer.ledger import ReturnKind
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.checkpoint.channel import (
    channel_state_filtering,
    classic_recovery,
    fetched_channel_state_drainer,
)
from flinkstate.runtime.checkpoint.channel.channel_state_reader import ChannelStateReader
from flinkstate.runtime.failover import failover
from flinkstate.runtime.partition.consumer import recovered_channel, transport
from flinkstate.runtime.partition.consumer.input_gate import Channel
from flinkstate.runtime.partition.result_partition import ResultPartition
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.tasks import mailbox
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world.state import NetworkState
from flinkstate.sim.deadlock import Wait


def waits(world: NetworkState) -> list[Wait[ActorRef | Owner]]:
    waits = []
    for task in world.tasks.values():
        if task.finished or task.failover is not None:
            continue  # done, or stopped by a failover: it waits for nothing
        if mailbox.task_action(world, task) is not None:
            continue
        if task.pending:
            sub = world.subpartitions[task.pending[0].subpartition]
            partition = world.partition_of(task, sub)
            holders = _holders_of_pool(world, partition)
            waits.append(
                Wait(world.actor(task.name), f"a buffer of {partition.pool.name}", holders)
            )
        else:
            waits += _input_waits(world, task)
        if task.phase is not TaskPhase.RUNNING:
            if task.name in world.drainers:
                waits += fetched_channel_state_drainer.waits(world, task)
            else:
                waits += classic_recovery.conversion_waits(world, task)
    for name, reader in world.readers.items():
        if world.task_named(name).failover is not None:
            continue
        wait = _reader_wait(world, reader)
        if wait is not None:
            waits.append(wait)
    for name, drainer in world.drainers.items():
        if world.task_named(name).failover is not None:
            continue
        wait = fetched_channel_state_drainer.drainer_wait(world, drainer)
        if wait is not None:
            waits.append(wait)
    for channel in world.channels.values():
        if world.failover is not None and failover.channel_stopped(world, channel):
            continue
        sub = world.subpartitions[channel.subpartition]
        if channel.remote and sub.queue and not transport.transport_actions(world, channel):
            if channel.recovered:
                what = f"{channel.name} to be requested (its gate is still recovering)"
                holder = _producer_actor(world, channel)
                if not channel.recovery.state_consumed:
                    # it has recovered state to consume first
                    holder = world.actor(channel.task)
            else:
                what, holder = f"credit of {channel.name}", world.actor(channel.task)
            waits.append(Wait(_transport(world, channel), what, (holder,)))
    return waits


def _input_waits(world: NetworkState, task: Task) -> list[Wait[ActorRef]]:
    """A task with nothing to read waits for data on its unfinished channels, from their
    producers; a recovered channel whose state is consumed waits for its gate's conversion.

    A sequential reader waits on its selected input only, whatever the others hold: that
    is how it can wait for the conversion of input 0 while the conversion (``all-gates``)
    waits for input 1's recovered state, which the reader leaves unread.
    """
    selected = mailbox.selected_input(world, task)
    if selected < 0:
        producers = {
            _producer_actor(world, c)
            for gate in task.gates
            for c in gate.channels
            if not c.finished
        }
        return [Wait(world.actor(task.name), "input data", by_name(producers))]
    gate = task.gates[selected]
    live = {_producer_actor(world, c) for c in gate.channels if not c.finished}
    conversion = {h for h in live if h.kind is ActorKind.REQUEST_PARTITIONS}
    waits = []
    actor = world.actor(task.name)
    if conversion:
        waits.append(
            Wait(
                actor,
                f"the conversion of {gate.name}, whose recovered state it has consumed: "
                f"input {selected} ends only with live data and EndOfPartitionEvent, and "
                "no other input is read until it does (InputSelectable)",
                by_name(conversion),
            )
        )
    if live - conversion:
        waits.append(
            Wait(
                actor,
                f"input data on {gate.name} (input {selected}, the only one read until it "
                "ends: InputSelectable)",
                by_name(live - conversion),
            )
        )
    return waits


def _reader_wait(world: NetworkState, reader: ChannelStateReader) -> Wait[ActorRef] | None:
    """A blocked reader waits for a buffer of the channel it recovers into; the holders are
    whoever has that channel's recovery buffers or the gate's floating ones."""
    task = world.task_named(reader.task)
    if reader.finished or task.phase is TaskPhase.RESTORING_OUTPUT:
        return None
    if classic_recovery.reader_actions(world, reader) is not None:
        return None
    if not reader.pre_channel and not reader.chunks:
        return None
    gate, channel = recovered_channel.reader_target(world, reader)
    actor = world.actor(reader.name)
    if recovered_channel.needs_exclusive(gate, channel):
        return Wait(actor, f"{gate.exclusive_per_channel} exclusive buffers", ())
    holders = recovered_channel.buffer_holders(world, gate)
    if channel_state_filtering.holds_buffers(world, reader, {c.name for c in gate.channels}):
        holders.add(actor)  # its own pre- and post-filter buffers
    return Wait(actor, f"a buffer of recovered channel {channel.name}", by_name(holders))


def _producer_actor(world: NetworkState, channel: Channel) -> ActorRef:
    """Who a channel's data comes from now: its drainer or reader while it recovers (its
    gate's request-partitions mail once its state is consumed), else its transport (or, for
    a local channel, the producing task)."""
    if channel.recoverable.in_recovery and channel.task in world.drainers:
        return world.actor(world.drainers[channel.task].name)
    if channel.recovered:
        if channel.recovery.state_consumed:  # nothing more until the gate is converted
            return request_partitions(world.task_keys[channel.task], channel.gate)
        return world.actor(world.readers[channel.task].name)
    return _transport(world, channel) if channel.remote else world.actor(channel.producer)


def _transport(world: NetworkState, channel: Channel) -> ActorRef:
    """The netty transport of a remote channel."""
    return world.actor(transport_name(channel.name))


def _holders_of_pool(
    world: NetworkState, partition: ResultPartition
) -> tuple[ActorRef | Owner, ...]:
    """Who holds the buffers of a result partition's pool: the holders of shared ones
    that return to it (an actor, or the owner itself when no actor does), and the consumers
    (or transports) of its queued buffers."""
    holders: set[ActorRef | Owner] = set()
    writers = {w.owner: world.actor(w.name) for w in world.writers.values()}
    name = partition.name
    for segment, returns in world.ledger.returns.items():
        kind = returns.kind
        if (kind is ReturnKind.PARTITION and returns.name == name) or (
            kind is ReturnKind.SUBPARTITION and world.subpartitions[returns.name].partition == name
        ):
            # the writer that has yet to write it, or a queue still holding it for its reader
            held_by = world.owner[segment]
            holders.add(writers.get(held_by, held_by))
    owner, home = world.owner, world.home
    global_pool = world.network_pools[partition.pool.global_pool].owner
    for sub in partition.subpartitions:
        queued = sub.owners.queue
        if any(
            owner[b.segment] == queued and home[b.segment] == global_pool
            for b in sub.queue
            if b.event is None
        ):
            channel = world.channels[sub.channel]
            holders.add(
                _producer_actor(world, channel) if channel.remote else world.actor(channel.task)
            )
    return by_name(holders)
