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

A ``Gate`` is an ``InputGate``: its channels, its floating-buffer pool, and, when restored
after a rescale, its share of the plan.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.rescale.exchange import DownstreamSubtaskRescale
from flinkstate.runtime.buffer.buffer import Buffer, LocalBufferPool
from flinkstate.runtime.buffer.owners import ChannelOwners
from flinkstate.runtime.copying import FIXED, NotState, StateKey
from flinkstate.runtime.jobgraph import Exchange


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
