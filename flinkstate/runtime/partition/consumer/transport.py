"""The netty transport of a remote channel: credit-based sending and floating buffers.

A remote channel's producer side (``CreditBasedSequenceNumberingViewReader``) sends a buffer
only while the consumer has credit (events need none; an aligned barrier blocks the channel
upstream until consumption resumes); the bytes land in an exclusive or floating buffer of the
consumer. The consumer asks its gate's pool for floating buffers when the announced backlog
needs more than it holds.
"""

from __future__ import annotations

from typing import Protocol

from flinkstate.runtime.action_kind import ActionKind, action
from flinkstate.runtime.actor_ref import transport_name
from flinkstate.runtime.buffer.buffer import Buffer
from flinkstate.runtime.buffer.ledger import ReturnKind, ReturnTo
from flinkstate.runtime.events import (
    BARRIER,
    END_OF_OUTPUT_STATE,
)
from flinkstate.runtime.options import Fault
from flinkstate.runtime.partition.consumer import recycling, result_subpartition_view
from flinkstate.runtime.partition.consumer.input_gate import Channel
from flinkstate.runtime.partition.consumer.recycling import RecyclingWorld
from flinkstate.runtime.partition.consumer.result_subpartition_view import SubpartitionViewWorld
from flinkstate.runtime.partition.happenings import BufferSent, EventSent
from flinkstate.sim.action import Action


class TransportWorld(RecyclingWorld, SubpartitionViewWorld, Protocol):
    """What the network's transport reaches of the world: what recycling (the sent buffer
    leaves the subpartition) and a subpartition's view (the head it sends) reach; it adds
    nothing of its own. The world (``NetworkState``) is one; mypy checks it at every call."""


class PendingCheckpoint(Protocol):
    """The checkpoint in progress as a channel's transport sees it: its id only."""

    @property
    def id(self) -> int: ...


class CheckpointsSeen(Protocol):
    """The coordinator's state as a channel's transport sees it: the pending checkpoint."""

    @property
    def pending(self) -> PendingCheckpoint | None: ...


class SendingWorld(TransportWorld, Protocol):
    """What sending a buffer or event reaches beside: the pending checkpoint (a barrier of it
    arrives), and the channel-state writer a persisting channel hands what it receives to
    (Flink's ``ChannelStatePersister`` calls ``ChannelStateWriter.addInputData``). The world
    (``NetworkWorld``) is one; mypy checks it at every call."""

    @property
    def checkpoints(self) -> CheckpointsSeen: ...
    def add_input_data(self, channel: Channel, buffer: Buffer) -> None: ...


# The hot path's enum members, read once: a member read through its class costs about 45 ns on
# Python 3.11, and a step reads several.
_TO_SUBPARTITION = ReturnKind.SUBPARTITION
_SEND = ActionKind.SEND
_REQUEST_FLOATING = ActionKind.REQUEST_FLOATING
_NO_UPSTREAM_BLOCK = Fault.NO_UPSTREAM_BLOCK


def transport_actions(
    world: TransportWorld, channel: Channel, waiting: bool | None = None
) -> list[Action]:
    """What the channel's transport can do now; ``waiting`` is ``waits_for_floating`` when
    the caller knows it already."""
    if channel.recovered:
        return []  # the subpartition is requested only when the gate is converted
    if channel.recoverable.in_recovery:  # no credit: events only, and no floating buffers asked for
        sub = world.subpartitions[channel.subpartition]
        head = (
            result_subpartition_view.sub_head(world, channel)
            if sub.blocked
            else (sub.queue[0] if sub.queue else None)
        )
        if head is not None and head.is_event:
            return [action(transport_name(channel.name), _SEND)]
        return []
    actions = []
    sub = world.subpartitions[channel.subpartition]
    head = (
        result_subpartition_view.sub_head(world, channel)
        if sub.blocked
        else (sub.queue[0] if sub.queue else None)
    )
    if head is not None and (
        head.is_event or (channel.buffers.available and not channel.upstream_blocked)
    ):
        actions.append(action(transport_name(channel.name), _SEND))
    if waiting is None:
        waiting = waits_for_floating(world, channel)
    if waiting and world.buffer_pools.can_request(world.gate_of(channel).pool, False):
        actions.append(action(transport_name(channel.name), _REQUEST_FLOATING))
    return actions


def waits_for_floating(world: TransportWorld, channel: Channel) -> bool:
    """Whether the channel's announced backlog needs more buffers than it holds, so that it
    asks its gate's pool for floating ones as soon as the pool has one: the only time its
    transport reads the pools (a channel recovering or recovered asks for none)."""
    if channel.recovered or channel.recoverable.in_recovery:
        return False
    buffers = channel.buffers
    return buffers.available < buffers.backlog_seen + world.gate_of(channel).exclusive_per_channel


def send(world: SendingWorld, channel: Channel) -> None:
    sub = world.subpartitions[channel.subpartition]
    buffer = sub.poll_buffer(world.journal.changes)
    if buffer.is_event:
        current = (
            world.checkpoints.pending is not None
            and world.checkpoints.pending.id == buffer.checkpoint
        )
        # the channel sees the barrier on arrival: persisting stops there
        arrived = buffer.event == BARRIER and current
        if not arrived and buffer.event == END_OF_OUTPUT_STATE:
            # PipelinedSubpartition: handing out a recovery-completion event blocks
            sub.blocked = _NO_UPSTREAM_BLOCK not in world.options.faults
        channel.on_event(buffer, arrived, world.journal.changes)
        world.journal.tell(EventSent(str(buffer.event), channel.name))
        return
    received, source = channel.on_buffer(buffer, sub.backlog, world.journal.changes)
    world.ledger.move(received.segment, source, channel.owners.received)
    if channel.persister.persisting:
        world.add_input_data(channel, received)
    recycling.drop(world, buffer.segment, sub.owners.queue, ReturnTo(_TO_SUBPARTITION, sub.name))
    world.journal.tell(BufferSent(buffer.used, channel.buffers.backlog_seen))


def request_floating(world: TransportWorld, channel: Channel) -> None:
    gate = world.gate_of(channel)
    segment = world.buffer_pools.request(gate.pool, channel.owners.floating)
    assert segment is not None
    channel.notify_buffer_available(segment, world.journal.changes)
