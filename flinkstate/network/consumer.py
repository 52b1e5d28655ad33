"""Input gates and their channels: the consumer side of an exchange.

A ``Channel`` stands for what Flink splits across several classes: the input channel itself
(local or remote, and while restoring a ``RecoveredInputChannel``), its buffer manager
(exclusive and floating buffers, the backlog it last saw), its channel-state persister (the
checkpoint it persists for, barriers seen) and the demultiplexer's per-virtual-channel partial
records. A ``Gate`` is an ``InputGate``: its channels, its floating-buffer pool, and, when
restored after a rescale, its share of the plan.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from flinkstate.network.buffer import Buffer, LocalBufferPool
from flinkstate.network.copying import shallow_copier
from flinkstate.network.graph import Exchange
from flinkstate.network.owners import ChannelOwners
from flinkstate.rescale.exchange import DownstreamSubtaskRescale


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
    exclusive_segments: frozenset[int] = frozenset()
    exclusive: list[int] = field(default_factory=list)
    floating: list[int] = field(default_factory=list)
    received: deque[Buffer] = field(default_factory=deque)
    backlog_seen: int = 0
    finished: bool = False
    partial: tuple[int, int] | None = None  # (record id, bytes received) of a spanning record
    #: checkpoint whose barrier this channel delivered last; checkpoint it persists data for
    barrier_seen: int = 0
    persisting: int = 0
    #: an aligned barrier arrived: no data is read until the task has every barrier
    blocked: bool = False
    #: the transport sent an aligned barrier: no data is sent until consumption resumes
    upstream_blocked: bool = False
    #: checkpoint whose barrier reached this channel, and how many data buffers were
    #: received before it (a priority barrier overtakes them in the queue)
    barrier_arrived: int = 0
    pre_barrier: int = 0
    #: a ``RecoveredInputChannel`` until its gate is converted to local/remote channels
    recovered: bool = False
    recovered_queue: deque[Buffer] = field(default_factory=deque)
    #: the recovered channel's own exclusive buffers (requested lazily from the global pool)
    recovery_segments: frozenset[int] = frozenset()
    recovery_exclusive: list[int] = field(default_factory=list)
    state_consumed: bool = False
    #: ``EndOfOutputChannelStateEvent`` received: the upstream's recovered output is through
    end_of_output: bool = False
    #: the virtual channel (old subtask, old channel) the last descriptor selected, and the
    #: partial record of each virtual channel
    selected: tuple[int, int] | None = None
    partials: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    #: V2: a physical channel built ``needsRecovery``, fed by the drainer until its
    #: ``EndOfFetchedChannelStateEvent`` is consumed; ordinary events received meanwhile wait
    #: in ``stash``
    in_recovery: bool = False
    stash: deque[Buffer] = field(default_factory=deque)

    @property
    def available(self) -> int:
        return len(self.exclusive) + len(self.floating)

    def copy(self) -> Channel:
        twin = _copy_channel(self)
        twin.exclusive = list(self.exclusive)
        twin.floating = list(self.floating)
        twin.received = deque(self.received)
        twin.recovered_queue = deque(self.recovered_queue)
        twin.recovery_exclusive = list(self.recovery_exclusive)
        twin.partials = dict(self.partials)
        twin.stash = deque(self.stash)
        return twin


_copy_channel = shallow_copier(Channel)


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
