"""Input gates and their channels: the consumer side of an exchange.

A ``Channel`` is an input channel: local or remote, and while restoring a
``RecoveredInputChannel`` until its gate is converted. What Flink keeps in separate objects
beside the channel is a part of it here, each a small value that copies on its own:

- ``BufferManager``: the channel's exclusive and floating buffers and the backlog it last saw
  (credit-based flow control);
- ``ChannelStatePersister``: which checkpoint's barrier it saw last, which checkpoint it
  persists received data for, and how many buffers came before a priority barrier;
- ``RecoveredChannelState``: while recovered, the recovered buffers queued for the task and
  the channel's own exclusive recovery buffers;
- ``Demultiplexer``: after a rescale, the virtual channel the last descriptor selected and
  the partial record of each virtual channel (Flink's ``DemultiplexingRecordDeserializer``);
- ``RecoverableChannelState``: V2's push-based recovery (``RecoverableInputChannel``): the
  channel is in recovery until the drainer's end event is consumed, and stashes upstream
  events meanwhile.

Every change to a channel's state a step makes goes through a method of the channel named as
Flink names the operation (``on_buffer``, ``on_recovered_state_buffer``, ``resume_consumption``,
...), which notes the change itself in the ``Changes`` it is given: the action cache asks the
channel's readers again, and no caller can forget to say so. The channel keeps no link to them:
the caller hands over its own world's, so a copied world's channels note into the copy's.

A ``Gate`` is an ``InputGate``: its channels, its floating-buffer pool, and, when restored
after a rescale, its share of the plan.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import ClassVar, NamedTuple

from flinkstate.rescale.exchange import DownstreamSubtaskRescale
from flinkstate.runtime.buffer.buffer import Buffer, LocalBufferPool
from flinkstate.runtime.buffer.ledger import Changes
from flinkstate.runtime.buffer.owners import ChannelOwners, Owner
from flinkstate.runtime.copying import FIXED, NotState, StateKey
from flinkstate.runtime.events import RECOVERY_BARRIER
from flinkstate.runtime.jobgraph import Exchange
from flinkstate.runtime.partition.result_partition import Subpartition


@dataclass(slots=True)
class BufferManager:
    """A channel's credit-based buffers: its exclusive segments (fixed once taken), the ones
    of them idle now, the floating buffers it borrowed from its gate's pool, and the backlog
    the producer last announced (what it asks floating buffers for)."""

    exclusive_segments: frozenset[int] = frozenset()
    exclusive: list[int] = field(default_factory=list)
    floating: list[int] = field(default_factory=list)
    backlog_seen: int = 0

    NOT_STATE: ClassVar[NotState] = {}

    def state_key(self) -> StateKey:
        return (
            self.exclusive_segments,
            tuple(self.exclusive),
            tuple(self.floating),
            self.backlog_seen,
        )

    @property
    def available(self) -> int:
        """Buffers the channel can receive into now: its credit."""
        return len(self.exclusive) + len(self.floating)

    def copy(self) -> BufferManager:
        return BufferManager(
            self.exclusive_segments, list(self.exclusive), list(self.floating), self.backlog_seen
        )


@dataclass(slots=True)
class ChannelStatePersister:
    """What an unaligned checkpoint needs from a channel: the checkpoint whose barrier it
    delivered last, the checkpoint it persists received data for (0: none), and the
    checkpoint whose barrier reached it with the number of data buffers received before it
    (a priority barrier overtakes them in the queue)."""

    barrier_seen: int = 0
    persisting: int = 0
    barrier_arrived: int = 0
    pre_barrier: int = 0

    NOT_STATE: ClassVar[NotState] = {}

    def state_key(self) -> StateKey:
        return (self.barrier_seen, self.persisting, self.barrier_arrived, self.pre_barrier)

    def copy(self) -> ChannelStatePersister:
        return ChannelStatePersister(
            self.barrier_seen, self.persisting, self.barrier_arrived, self.pre_barrier
        )

    def stop_persisting(self, checkpoint: int) -> None:
        """Stop persisting received data for an aborted checkpoint, if this one is it
        (``ChannelStatePersister.stopPersisting``).

        Examples
        --------
        >>> persister = ChannelStatePersister(persisting=3)
        >>> persister.stop_persisting(2); persister.persisting
        3
        >>> persister.stop_persisting(3); persister.persisting
        0
        """
        if self.persisting == checkpoint:
            self.persisting = 0


@dataclass(slots=True)
class RecoveredChannelState:
    """A ``RecoveredInputChannel``'s own state: the recovered buffers queued for the task,
    its exclusive recovery buffers (requested lazily from the global pool; ``segments`` all
    of them, ``exclusive`` the idle ones), whether its recovered state is consumed, and
    whether the upstream's ``EndOfOutputChannelStateEvent`` arrived."""

    queue: deque[Buffer] = field(default_factory=deque)
    segments: frozenset[int] = frozenset()
    exclusive: list[int] = field(default_factory=list)
    state_consumed: bool = False
    end_of_output: bool = False

    NOT_STATE: ClassVar[NotState] = {}

    def state_key(self) -> StateKey:
        return (
            tuple([b.state_key() for b in self.queue]),
            self.segments,
            tuple(self.exclusive),
            self.state_consumed,
            self.end_of_output,
        )

    def copy(self) -> RecoveredChannelState:
        return RecoveredChannelState(
            deque(self.queue),
            self.segments,
            list(self.exclusive),
            self.state_consumed,
            self.end_of_output,
        )


@dataclass(slots=True)
class Demultiplexer:
    """Reading rescaled recovered data per virtual channel: the virtual channel (old subtask,
    old channel) the last descriptor selected, and each virtual channel's partial record
    (record id, bytes received)."""

    selected: tuple[int, int] | None = None
    partials: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)

    NOT_STATE: ClassVar[NotState] = {}

    def state_key(self) -> StateKey:
        # a lookup by virtual channel: the order entries were added in is no state
        return (self.selected, frozenset(self.partials.items()))

    def copy(self) -> Demultiplexer:
        return Demultiplexer(self.selected, dict(self.partials))


@dataclass(slots=True)
class RecoverableChannelState:
    """V2: a physical channel built with ``needsRecovery`` is fed by the drainer until it
    consumes the ``EndOfFetchedChannelStateEvent``; upstream events received meanwhile wait
    in ``stash``."""

    in_recovery: bool = False
    stash: deque[Buffer] = field(default_factory=deque)

    NOT_STATE: ClassVar[NotState] = {}

    def state_key(self) -> StateKey:
        return (self.in_recovery, tuple([b.state_key() for b in self.stash]))

    def copy(self) -> RecoverableChannelState:
        return RecoverableChannelState(self.in_recovery, deque(self.stash))


@dataclass(slots=True)
class Channel:
    name: str
    gate: str
    task: str
    producer: str
    subpartition: str
    remote: bool
    index: int
    #: who holds its segments, made once (``ChannelOwners.of(name)``)
    owners: ChannelOwners
    buffers: BufferManager = field(default_factory=BufferManager)
    received: deque[Buffer] = field(default_factory=deque)
    finished: bool = False
    #: (record id, bytes received) of a record spanning buffers
    partial: tuple[int, int] | None = None
    persister: ChannelStatePersister = field(default_factory=ChannelStatePersister)
    #: an aligned barrier arrived: no data is read until the task has every barrier
    blocked: bool = False
    #: the transport sent an aligned barrier: no data is sent until consumption resumes
    upstream_blocked: bool = False
    #: a ``RecoveredInputChannel`` until its gate is converted to local/remote channels
    recovered: bool = False
    recovery: RecoveredChannelState = field(default_factory=RecoveredChannelState)
    demultiplexer: Demultiplexer = field(default_factory=Demultiplexer)
    recoverable: RecoverableChannelState = field(default_factory=RecoverableChannelState)

    NOT_STATE: ClassVar[NotState] = {
        "name": FIXED,
        "gate": FIXED,
        "task": FIXED,
        "producer": FIXED,
        "subpartition": FIXED,
        "remote": FIXED,
        "index": FIXED,
        "owners": FIXED,
    }

    def state_key(self) -> StateKey:
        return (
            self.buffers.state_key(),
            tuple([b.state_key() for b in self.received]),
            self.finished,
            self.partial,
            self.persister.state_key(),
            self.blocked,
            self.upstream_blocked,
            self.recovered,
            self.recovery.state_key(),
            self.demultiplexer.state_key(),
            self.recoverable.state_key(),
        )

    def copy(self) -> Channel:
        """A copy with its own queues and parts (one constructor call: snapshots copy every
        channel)."""
        return Channel(
            self.name,
            self.gate,
            self.task,
            self.producer,
            self.subpartition,
            self.remote,
            self.index,
            self.owners,
            self.buffers.copy(),
            deque(self.received),
            self.finished,
            self.partial,
            self.persister.copy(),
            self.blocked,
            self.upstream_blocked,
            self.recovered,
            self.recovery.copy(),
            self.demultiplexer.copy(),
            self.recoverable.copy(),
        )

    def abort_checkpoint(self, checkpoint: int) -> None:
        """The checkpoint is aborted: stop persisting for it and resume consumption, here and
        upstream (``InputChannel.resumeConsumption`` after an aborted alignment)."""
        self.persister.stop_persisting(checkpoint)
        self.blocked = False
        self.upstream_blocked = False

    # -- what the network delivers (``RemoteInputChannel``)

    def on_event(self, event: Buffer, barrier_arrived: bool, changes: Changes) -> None:
        """An event arrives (``RemoteInputChannel.onBuffer``): a priority one overtakes the
        received data, one sent while the channel recovers waits in the stash.
        ``barrier_arrived``: it is the pending checkpoint's barrier, which ends persisting and,
        aligned, blocks the upstream until consumption resumes."""
        changes.channel(self.name)
        if barrier_arrived:
            persister = self.persister
            persister.barrier_arrived = event.checkpoint
            persister.pre_barrier = sum(1 for b in self.received if not b.is_event)
            if persister.persisting == event.checkpoint:
                persister.persisting = 0
            if not event.priority:
                self.upstream_blocked = True
        if event.priority:
            self.received.appendleft(event)
        elif self.recoverable.in_recovery:
            self.recoverable.stash.append(event)
        else:
            self.received.append(event)

    def on_buffer(self, buffer: Buffer, backlog: int, changes: Changes) -> tuple[Buffer, Owner]:
        """A data buffer arrives (``RemoteInputChannel.onBuffer``) into one of the channel's
        buffers, exclusive first, with the producer's ``backlog``: the buffer as received and
        who held its segment (the caller moves it in the ledger).

        Examples
        --------
        >>> from flinkstate.runtime.buffer.owners import ChannelOwners
        >>> channel = Channel("c", "g", "t", "p", "s", True, 0, ChannelOwners.of("c"))
        >>> changes = Changes(channels={"c": (7,)})  # the consumer's actor is slot 7
        >>> channel.buffers.exclusive.append(41)
        >>> received, source = channel.on_buffer(Buffer(3, 32, 20, []), 2, changes)
        >>> received.segment, str(source), channel.buffers.backlog_seen, changes.touched
        (41, 'exclusive c', 2, {'c'})
        """
        changes.channel(self.name)
        buffers = self.buffers
        if buffers.exclusive:
            target = buffers.exclusive.pop()
            source = self.owners.exclusive
        else:
            target = buffers.floating.pop()
            source = self.owners.floating
        # the same buffer, travelled: netty copies its bytes into the receiver's segment
        received = Buffer(
            target,
            buffer.capacity,
            buffer.used,
            list(buffer.fragments),
            uid=buffer.uid,
            recovered=buffer.recovered,
        )
        self.received.append(received)
        buffers.backlog_seen = backlog
        return received, source

    def notify_buffer_available(self, segment: int, changes: Changes) -> None:
        """A floating buffer of the gate's pool is the channel's now
        (``BufferManager.notifyBufferAvailable``).

        Examples
        --------
        >>> from flinkstate.runtime.buffer.owners import ChannelOwners
        >>> channel = Channel("c", "g", "t", "p", "s", True, 0, ChannelOwners.of("c"))
        >>> changes = Changes(channels={"c": (7,)})  # the consumer's actor is slot 7
        >>> channel.notify_buffer_available(5, changes)
        >>> channel.buffers.floating, changes.stale
        ([5], {7})
        """
        changes.channel(self.name)
        self.buffers.floating.append(segment)

    # -- what the task takes

    def poll_received(self, changes: Changes) -> Buffer:
        """The next buffer a remote channel received (``RemoteInputChannel.getNextBuffer``).
        Its subpartition is noted too: what the task takes may let the producer's side move
        on (as for :meth:`poll_recovered`)."""
        changes.channel(self.name)
        changes.subpartition(self.subpartition)
        return self.received.popleft()

    def poll_local(self, sub: Subpartition, changes: Changes) -> Buffer:
        """The next buffer of ``sub``, the producer's subpartition a local channel reads
        (``LocalInputChannel.getNextBuffer``: the subpartition view's ``pollBuffer``)."""
        changes.channel(self.name)
        return sub.poll_buffer(changes)

    def poll_recovered(self, changes: Changes) -> Buffer:
        """The next recovered buffer or event, while the channel is recovered or recovers
        (``RecoveredInputChannel.getNextBuffer``)."""
        changes.channel(self.name)
        changes.subpartition(self.subpartition)
        return self.recovery.queue.popleft()

    def buffer_consumed(self, changes: Changes) -> None:
        """The task let go of a buffer it read from the channel (a heap one freed, another
        recycled to where it belongs): what the task may take from it next changed."""
        changes.channel(self.name)

    def recycle(self, segment: int, exclusive_per_channel: int, changes: Changes) -> Recycled:
        """A segment of the channel's comes back (``BufferManager.recycle``): kept as an
        exclusive or floating buffer, or where it goes instead, with a floating buffer beyond
        the backlog's need that goes back to the gate's pool (the channel is no recovered one:
        :meth:`recycle_recovered`)."""
        changes.channel(self.name)
        buffers = self.buffers
        if segment in self.recovery.segments:  # V1: a migrated buffer of the recovered
            self.recovery.segments -= {segment}  # channel, whose manager is gone
            return _RECYCLED_GLOBAL
        if self.recoverable.in_recovery:  # no credit is announced: where the drainer takes it
            if segment in buffers.exclusive_segments:
                buffers.exclusive.append(segment)
                return _RECYCLED_EXCLUSIVE
            return _RECYCLED_POOL
        if segment in buffers.exclusive_segments:
            buffers.exclusive.append(segment)
            required = buffers.backlog_seen + exclusive_per_channel
            if buffers.floating and buffers.available > required:
                return Recycled(RecycledTo.EXCLUSIVE, buffers.floating.pop())
            return _RECYCLED_EXCLUSIVE
        if not self.remote or buffers.available >= buffers.backlog_seen + exclusive_per_channel:
            return _RECYCLED_POOL  # a local channel keeps no floating buffers
        buffers.floating.append(segment)
        return _RECYCLED_FLOATING

    def resume_consumption(self, changes: Changes) -> None:
        """The alignment ends: data is read and sent again (``resumeConsumption``).

        Examples
        --------
        >>> from flinkstate.runtime.buffer.owners import ChannelOwners
        >>> channel = Channel("c", "g", "t", "p", "s", True, 0, ChannelOwners.of("c"))
        >>> changes = Changes(channels={"c": (7,)})  # the consumer's actor is slot 7
        >>> channel.blocked = channel.upstream_blocked = True
        >>> channel.resume_consumption(changes)
        >>> channel.blocked, channel.upstream_blocked, changes.touched, changes.stale
        (False, False, {'c'}, {7})
        """
        changes.channel(self.name)
        self.blocked = False
        self.upstream_blocked = False

    # -- recovery (``RecoveredInputChannel``, ``RecoverableInputChannel``)

    def on_recovery_exclusive_buffers(self, taken: list[int], changes: Changes) -> None:
        """The recovered channel's exclusive buffers, taken from the global pool."""
        changes.channel(self.name)
        self.recovery.segments = frozenset(taken)
        self.recovery.exclusive = taken

    def request_recovery_buffer(self, changes: Changes) -> int | None:
        """An idle exclusive buffer of the recovered channel, or None
        (``RecoveredInputChannel.requestBufferBlocking`` before the gate's floating ones)."""
        exclusive = self.recovery.exclusive
        if not exclusive:
            return None
        changes.channel(self.name)
        return exclusive.pop()

    def request_exclusive_buffer(self, changes: Changes) -> int | None:
        """An idle exclusive buffer of the (physical) channel, or None: a V2 drainer's."""
        exclusive = self.buffers.exclusive
        if not exclusive:
            return None
        changes.channel(self.name)
        return exclusive.pop()

    def recycle_recovered(self, segment: int, changes: Changes) -> bool:
        """A buffer of the recovered channel comes back: True if it is one of its exclusive
        ones (idle again), False if it goes back to the gate's pool.

        Examples
        --------
        >>> from flinkstate.runtime.buffer.owners import ChannelOwners
        >>> channel = Channel("c", "g", "t", "p", "s", True, 0, ChannelOwners.of("c"))
        >>> changes = Changes(channels={"c": (7,)})  # the consumer's actor is slot 7
        >>> channel.on_recovery_exclusive_buffers([4, 5], changes)
        >>> channel.recycle_recovered(9, changes), channel.recovery.exclusive
        (False, [4, 5])
        >>> channel.request_recovery_buffer(changes), channel.recycle_recovered(5, changes)
        (5, True)
        """
        changes.channel(self.name)
        if segment in self.recovery.segments:
            self.recovery.exclusive.append(segment)
            return True
        return False

    def on_recovered_state_buffer(self, buffer: Buffer, changes: Changes) -> None:
        """Recovered state (a buffer or an event) queued for the task
        (``RecoveredInputChannel.onRecoveredStateBuffer``).

        Examples
        --------
        >>> from flinkstate.runtime.buffer.owners import ChannelOwners
        >>> channel = Channel("c", "g", "t", "p", "s", True, 0, ChannelOwners.of("c"))
        >>> changes = Changes(channels={"c": (7,)})  # the consumer's actor is slot 7
        >>> channel.on_recovered_state_buffer(Buffer(-1, 0, 0, [], event="End"), changes)
        >>> len(channel.recovery.queue), changes.touched
        (1, {'c'})
        """
        changes.channel(self.name)
        self.recovery.queue.append(buffer)

    def on_recovered_state_buffers(self, buffers: Iterable[Buffer], changes: Changes) -> None:
        """:meth:`on_recovered_state_buffer` for each of ``buffers``, in order (none: a
        delivery that ended, still a change to what the channel's readers see)."""
        changes.channel(self.name)
        self.recovery.queue.extend(buffers)

    def on_recovered_state_spilled(self, changes: Changes) -> None:
        """A chunk of the channel's recovered state went to a spill file (V2): the channel's
        recovered state, fetched later, grew."""
        changes.channel(self.name)

    def on_recovered_state_consumed(self, changes: Changes) -> None:
        """``onRecoveredStateConsumed``: out of recovery, the stashed events released (and the
        subpartition's credit open again)."""
        changes.channel(self.name)
        changes.subpartition(self.subpartition)
        self.recoverable.in_recovery = False
        self.recovery.state_consumed = True
        self.received.extend(self.recoverable.stash)
        self.recoverable.stash.clear()

    def cut_recovered_queue(
        self, checkpoint: int, fetched: bool, changes: Changes
    ) -> list[Buffer] | None:
        """The recovered data buffers an unaligned snapshot of a channel in recovery persists:
        V1 every one queued; V2 (``fetched``) those before the checkpoint's recovery barrier,
        which is removed (:meth:`collect_pre_recovery_barrier`)."""
        changes.channel(self.name)
        if not fetched:
            return [b for b in self.recovery.queue if not b.is_event]
        return self.collect_pre_recovery_barrier(checkpoint)

    def collect_pre_recovery_barrier(self, checkpoint: int) -> list[Buffer] | None:
        """``collectPreRecoveryBarrier``: the recovered data buffers queued before this
        checkpoint's recovery barrier, which is removed; barriers of older checkpoints are
        dropped (subsumed), events are skipped. None when the barrier is missing or a later one
        comes first: the checkpoint is declined. (Only through :meth:`cut_recovered_queue`,
        which notes the change.)"""
        kept: list[Buffer] = []
        rest: list[Buffer] = []
        found = False
        for buffer in self.recovery.queue:
            if found:
                rest.append(buffer)
            elif buffer.event == RECOVERY_BARRIER:
                if buffer.checkpoint == checkpoint:
                    found = True
                elif buffer.checkpoint > checkpoint:
                    return None
            else:
                rest.append(buffer)
                if not buffer.is_event:
                    kept.append(buffer)
        if not found:
            return None
        self.recovery.queue.clear()
        self.recovery.queue.extend(rest)
        return kept

    def release_recovery_buffers(self, keep_segments: bool, changes: Changes) -> list[int]:
        """The recovered channel's idle exclusive buffers, no longer its own (for the global
        pool); ``keep_segments``: it still knows the others as its recovery buffers (V1's
        migrated buffers in use)."""
        changes.channel(self.name)
        recovery = self.recovery
        idle = recovery.exclusive
        recovery.exclusive = []
        recovery.segments = recovery.segments - frozenset(idle) if keep_segments else frozenset()
        return idle

    def to_input_channel(self, exclusive: list[int] | None, changes: Changes) -> None:
        """The recovered channel becomes a local or remote one
        (``RecoveredInputChannel.toInputChannel``), with ``exclusive`` as its exclusive buffers
        if it takes any."""
        changes.channel(self.name)
        changes.subpartition(self.subpartition)  # read by a local or remote channel now
        if exclusive is not None:
            self.buffers.exclusive_segments = frozenset(exclusive)
            self.buffers.exclusive = exclusive
        self.recovered = False

    def release_all_resources(self, changes: Changes) -> list[Buffer]:
        """The recovered buffers and events still queued, no longer the channel's
        (``RecoveredInputChannel.releaseAllResources``): the caller recycles them."""
        changes.channel(self.name)
        released = list(self.recovery.queue)
        self.recovery.queue.clear()
        return released


class RecycledTo(Enum):
    """Where a segment recycled to a channel goes (:meth:`Channel.recycle`)."""

    #: one of its exclusive buffers again
    EXCLUSIVE = 1
    #: one of its floating buffers
    FLOATING = 2
    #: to its gate's pool
    POOL = 3
    #: to the global pool (a migrated buffer of a recovered channel, V1)
    GLOBAL = 4


class Recycled(NamedTuple):
    """Where a recycled segment goes, and a floating buffer the channel gives back to its
    gate's pool with it (-1: none). (A named tuple: one is made for every recycle.)"""

    to: RecycledTo
    extra: int = -1


_RECYCLED_EXCLUSIVE = Recycled(RecycledTo.EXCLUSIVE)
_RECYCLED_FLOATING = Recycled(RecycledTo.FLOATING)
_RECYCLED_POOL = Recycled(RecycledTo.POOL)
_RECYCLED_GLOBAL = Recycled(RecycledTo.GLOBAL)

#: a task's channels whose head is data, per gate (its gates' ``inputChannelsWithData``): their
#: indices in the gate, ascending
DataHeads = tuple[tuple[int, ...], ...]


@dataclass(slots=True)
class Gate:
    name: str
    exchange: Exchange
    task: str
    channels: list[Channel]
    pool: LocalBufferPool
    exclusive_per_channel: int
    next_channel: int = 0
    #: false while its channels are recovered input channels
    converted: bool = True
    #: reading rescaled recovered data per virtual channel (until upstream recovery is through)
    demultiplexing: bool = False
    #: the gate's share of a rescale (None when not restored)
    plan: DownstreamSubtaskRescale | None = None

    NOT_STATE: ClassVar[NotState] = {
        "name": FIXED,
        "exchange": FIXED,
        "task": FIXED,
        "channels": "links: each channel is keyed in the world's channels",
        "pool": "a link: the pool is keyed in the world's buffer pools",
        "exclusive_per_channel": FIXED,
        "plan": FIXED,
    }

    def state_key(self) -> StateKey:
        return (self.next_channel, self.converted, self.demultiplexing)
