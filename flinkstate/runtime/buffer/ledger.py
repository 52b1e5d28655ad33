"""The segment ledger and the step journal: the two records every mechanism writes into.

Flink keeps no ledger: a ``MemorySegment`` is simply referenced by whoever holds it, and a bug
shows up as a leak or a buffer recycled twice, long after it happened. The model instead names
the one owner of every network segment in an array and checks each move against it, so that the
step that breaks ownership is the step that reports it. Reference counting
(``Buffer.retainBuffer``) is the list of a segment's further holders; the last one to let go
says where the segment returns.

The journal is what the step in progress did: the moves the ledger checked, the records emitted,
delivered and persisted, its happenings (values, ``flinkstate.runtime.happening``, which the
world's narration puts into words), and (for the whole run) every violation found. ``apply``
turns it into the step's :class:`~flinkstate.sim.core.Event`. Its :class:`Changes` are where a
step names the containers it changed; the action cache attaches who reads each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, NamedTuple

from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.copying import NotState, StateKey
from flinkstate.runtime.happening import Happening
from flinkstate.sim.action import Action
from flinkstate.sim.core import Event, Move, Violation

#: a container's name to the slots of the actors that read it
Readers = dict[str, tuple[int, ...]]
#: a pool's name to the slots of the actors that read it only for now (while they wait on it)
Waiting = dict[str, frozenset[int]]
#: a global pool's name to the local pools behind it that such actors wait on
WaitingBehind = dict[str, frozenset[str]]


class ReadersOf(NamedTuple):
    """Per kind of container, who reads each: what a change of it marks stale."""

    tasks: Readers
    channels: Readers
    subpartitions: Readers
    pools: Readers
    network_pools: Readers
    writers: Readers
    readers: Readers
    drainers: Readers
    #: each subpartition's channel: a change of either may change what the consumer sees
    channel_of: dict[str, str]


class Marks(NamedTuple):
    """Where the changes a step notes are marked, in place: the action cache's stale slots,
    the channels whose head a consumer sees may have changed, the local pools that transports
    wait on for floating buffers by their name and by the global pool behind them (kept up to
    date by the cache, read at each change), and those of them changed since (``recheck``:
    their waiting transports are stale only where the pool's availability changed)."""

    stale: set[int]
    touched: set[str]
    waiting_local: Waiting
    waiting_global: WaitingBehind
    recheck: set[str]


@dataclass(slots=True)
class Changes:
    """Where a step notes the containers it changed, so that the actors reading them compute
    their actions again.

    Components name what they changed (a channel, a subpartition, a pool); which actors read
    it is the action cache's knowledge, given with :meth:`attach`, so no component knows its
    readers, and a change costs one lookup. A change is noted only once they are attached: a
    world is built before its actors exist, and starts with every actor due.
    """

    #: the action cache's stale slots, marked in place
    stale: set[int] = field(default_factory=set)
    #: the channels (by name) a noted change may have given another head
    touched: set[str] = field(default_factory=set)
    tasks: Readers = field(default_factory=dict)
    channels: Readers = field(default_factory=dict)
    subpartitions: Readers = field(default_factory=dict)
    pools: Readers = field(default_factory=dict)
    network_pools: Readers = field(default_factory=dict)
    writers: Readers = field(default_factory=dict)
    readers: Readers = field(default_factory=dict)
    drainers: Readers = field(default_factory=dict)
    channel_of: dict[str, str] = field(default_factory=dict)
    waiting_local: Waiting = field(default_factory=dict)
    waiting_global: WaitingBehind = field(default_factory=dict)
    #: the local pools with waiting transports changed since the actions were computed
    recheck: set[str] = field(default_factory=set)

    @classmethod
    def attached(cls, marks: Marks, readers_of: ReadersOf) -> Changes:
        """Changes attached from the start: :meth:`attach`, which sets every field, on one
        made without the empty containers it would replace (a model checker's copies each
        make one)."""
        changes = object.__new__(cls)
        changes.attach(marks, readers_of)
        return changes

    def attach(self, marks: Marks, readers_of: ReadersOf) -> None:
        """Mark into ``marks`` the actors ``readers_of`` names (for a pool, also those waiting
        on it now) and the channels touched."""
        self.stale = marks.stale
        self.touched = marks.touched
        self.waiting_local = marks.waiting_local
        self.waiting_global = marks.waiting_global
        self.recheck = marks.recheck
        self.tasks = readers_of.tasks
        self.channels = readers_of.channels
        self.subpartitions = readers_of.subpartitions
        self.pools = readers_of.pools
        self.network_pools = readers_of.network_pools
        self.writers = readers_of.writers
        self.readers = readers_of.readers
        self.drainers = readers_of.drainers
        self.channel_of = readers_of.channel_of

    def task(self, name: str) -> None:
        """A task changed (by its name, ``task X[i]``)."""
        self.stale.update(self.tasks[name])

    def channel(self, name: str) -> None:
        self.stale.update(self.channels[name])
        self.touched.add(name)

    def subpartition(self, name: str) -> None:
        self.stale.update(self.subpartitions[name])
        self.touched.add(self.channel_of[name])

    def pool(self, name: str) -> None:
        """A local buffer pool changed: its readers are stale, its waiting transports only if
        its availability changed (seen when the actions are next computed)."""
        self.stale.update(self.pools[name])
        if self.waiting_local.get(name):
            self.recheck.add(name)

    def network_pool(self, name: str) -> None:
        """A TaskManager's global pool changed: so may have the availability of each local
        pool behind it that transports wait on."""
        self.stale.update(self.network_pools[name])
        behind = self.waiting_global.get(name)
        if behind:
            self.recheck.update(behind)

    def writer(self, name: str) -> None:
        self.stale.update(self.writers[name])

    def reader(self, name: str) -> None:
        self.stale.update(self.readers[name])

    def drainer(self, name: str) -> None:
        self.stale.update(self.drainers[name])


@dataclass(slots=True)
class StepJournal:
    """The step being taken (its number, what it did, what happened), what changed since the
    actions were last computed, and the run's violations."""

    step: int = 0
    violations: list[Violation] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    emitted: list[int] = field(default_factory=list)
    delivered: list[int] = field(default_factory=list)
    persisted: list[int] = field(default_factory=list)
    #: what the step did, as values (a tuple: most steps tell one happening, many none)
    happenings: tuple[Happening, ...] = ()
    #: where the step notes what it changed, for the action cache
    changes: Changes = field(default_factory=Changes)

    #: the step in progress is empty between steps, when states are compared
    NOT_STATE: ClassVar[NotState] = {
        "moves": "the step in progress (history once it is the step's event)",
        "emitted": "the step in progress (history once it is the step's event)",
        "delivered": "the step in progress (history once it is the step's event)",
        "persisted": "the step in progress (history once it is the step's event)",
        "happenings": "the step in progress (history once it is the step's event)",
        "changes": "the action cache's bookkeeping: which actors to ask again",
    }

    def state_key(self) -> StateKey:
        """The step count (the coordinator's timers and the periodic checks read it) and the
        violations found so far."""
        return (self.step, tuple(self.violations))

    def violate(self, invariant: str, message: str) -> None:
        self.violations.append(Violation(invariant, self.step, message))

    def tell(self, happening: Happening) -> None:
        """What the step did, told by the mechanism that decides it: it replaces what an
        earlier part of the same step told (a barrier that completes a checkpoint is told as
        the barrier received)."""
        self.happenings = (happening,)

    def tell_also(self, happening: Happening) -> None:
        """Something more the step did, after what it told so far."""
        self.happenings += (happening,)

    def event(self, action: Action, note: str = "") -> Event:
        """The step as the simulator records it, with ``note``, its happenings in words (the
        world's narration). The step count moves on and the journal is empty again for the
        next step (one call per step: this is the engine's hot path; the event keeps tuples,
        so the lists are emptied rather than made anew)."""
        moves = self.moves
        emitted = self.emitted
        delivered = self.delivered
        persisted = self.persisted
        event = Event(
            self.step,
            action,
            tuple(moves),
            tuple(emitted),
            tuple(delivered),
            tuple(persisted),
            note,
            self.happenings,
        )
        self.step += 1
        moves.clear()
        emitted.clear()
        delivered.clear()
        persisted.clear()
        self.happenings = ()
        return event

    def copy(self, changes: Changes | None = None) -> StepJournal:
        """A copy between steps: the run's violations, nothing of a step. Its ``changes``
        (the copy's action cache's: ``ActionCache.changes``); without, attached to nothing
        until the copy's action cache is (``Changes.attach``)."""
        return StepJournal(
            self.step, list(self.violations), changes=Changes() if changes is None else changes
        )


class ReturnKind(StrEnum):
    """Where a shared segment goes once its last holder lets go of it."""

    #: to the producer's pool, counted against that subpartition's share
    SUBPARTITION = "subpartition"
    #: to the result partition's pool, counted against no subpartition (recovered output
    #: state that several subpartitions shared)
    PARTITION = "partition"
    #: back to a consumer channel's buffers
    CHANNEL = "channel"


class ReturnTo(NamedTuple):
    """The place a segment returns to: a subpartition, result partition or channel, by name.
    (A named tuple: one is made for nearly every buffer a consumer recycles.)"""

    kind: ReturnKind
    name: str


#: segments per part of the ledger's key (``SegmentLedger.chunk_keys``)
KEY_CHUNK = 256


def _chunks(
    values: list[Owner], known: list[tuple[Owner, ...]] | None, changed: set[int]
) -> list[tuple[Owner, ...]]:
    """``values`` as tuples of :data:`KEY_CHUNK`: those of ``known`` (the chunks as last made)
    that are not ``changed`` or are equal again, the others made anew."""
    if type(known) is not list or type(changed) is not set:
        return [tuple(values[i : i + KEY_CHUNK]) for i in range(0, len(values), KEY_CHUNK)]
    for chunk in changed:
        start = chunk * KEY_CHUNK
        made = tuple(values[start : start + KEY_CHUNK])
        if made != known[chunk]:
            known[chunk] = made
    return known


@dataclass(slots=True)
class SegmentLedger:
    """Every network segment's owner and home, its further holders, and the heap recovery
    takes outside the network pools."""

    journal: StepJournal
    #: who holds each segment now, and the container it belongs to when idle
    owner: list[Owner] = field(default_factory=list)
    home: list[Owner] = field(default_factory=list)
    #: holders of a segment besides its owner (a buffer retained by the channel-state writer,
    #: one recovered buffer in several subpartitions): the last one to let go recycles it
    shares: dict[int, list[Owner]] = field(default_factory=dict)
    returns: dict[int, ReturnTo] = field(default_factory=dict)
    #: heap taken by recovery buffers outside the network pools (the 2.3 fallback, the
    #: pre-filter segment, spill-file write buffers), now and at most
    heap_bytes: int = 0
    heap_peak: int = 0
    #: ``home`` is shared with a copy until one of them changes it (only a gate's conversion
    #: does, so most copies never pay for it); bookkeeping of the copy, not state
    home_shared: bool = field(default=False, compare=False)
    #: the keys of ``owner`` and ``home`` by chunks of :data:`KEY_CHUNK` segments, as last
    #: made (None: none yet), and the chunks changed since (``chunk_keys``)
    owner_chunks: list[tuple[Owner, ...]] | None = field(default=None, compare=False)
    owner_changed: set[int] = field(default_factory=set, compare=False)
    home_chunks: list[tuple[Owner, ...]] | None = field(default=None, compare=False)
    home_changed: set[int] = field(default_factory=set, compare=False)

    NOT_STATE: ClassVar[NotState] = {
        "journal": "a link: the journal is keyed in the world's",
        "heap_peak": "a running maximum for reports: nothing the run does or checks reads it",
        "home_shared": "bookkeeping of a copy: whether ``home`` is shared with another",
        "owner_chunks": "a cache of the key of ``owner`` (``chunk_keys``)",
        "owner_changed": "a cache of the key of ``owner`` (``chunk_keys``)",
        "home_chunks": "a cache of the key of ``home`` (``chunk_keys``)",
        "home_changed": "a cache of the key of ``home`` (``chunk_keys``)",
    }

    def state_key(self) -> StateKey:
        """Made afresh: what :meth:`chunk_keys` keeps is checked against it."""
        return (*self.chunk_keys(fresh=True), *self.other_keys())

    def chunk_keys(self, *, fresh: bool = False) -> tuple[tuple[Owner, ...], ...]:
        """Each segment's owner and home, as tuples of :data:`KEY_CHUNK` segments (the first
        parts of :meth:`state_key`). A chunk no move touched since the last key is the very
        object it was (kept through copies), and so is one that changed back: a model checker
        hashes and stores only the chunks a step changed, whatever the number of network
        buffers. ``fresh``: made anew, nothing kept read or changed."""
        if fresh:
            return (*_chunks(self.owner, None, set()), *_chunks(self.home, None, set()))
        self.owner_chunks = owners = _chunks(self.owner, self.owner_chunks, self.owner_changed)
        self.home_chunks = homes = _chunks(self.home, self.home_chunks, self.home_changed)
        self.owner_changed = set()
        self.home_changed = set()
        return (*owners, *homes)

    def other_keys(self) -> StateKey:
        """The rest of the ledger's key: shared segments, where they return, the heap."""
        return (
            # lookups by segment (a segment's holders in the order they let go)
            frozenset([(segment, tuple(h)) for segment, h in self.shares.items()]),
            frozenset(self.returns.items()),
            self.heap_bytes,
        )

    def new_segments(self, count: int, owner: Owner) -> list[int]:
        """``count`` new segments owned by (and at home in) ``owner``."""
        start = len(self.owner)
        if self.home_shared:
            self.home = list(self.home)
            self.home_shared = False
        self.owner.extend([owner] * count)
        self.home.extend([owner] * count)
        self.owner_chunks = self.home_chunks = None
        return list(range(start, start + count))

    def place(self, segment: int, owner: Owner) -> None:
        """While building: the segment belongs to ``owner`` from now on (no move recorded)."""
        self.owner[segment] = owner
        if self.owner_chunks is not None:  # marked only where a key was made
            self.owner_changed.add(segment // KEY_CHUNK)
        self.rehome(segment, owner)

    def move(self, segment: int, source: Owner, target: Owner) -> None:
        """The segment passes from ``source`` to ``target``; a wrong source is a violation:
        a recycle of a segment already at its target is a double recycle."""
        current = self.owner[segment]
        if current != source:
            invariant = "double-recycle" if current == target else "segment-ownership"
            self.journal.violate(
                invariant, f"segment {segment} expected at {source} but owned by {current}"
            )
        self.owner[segment] = target
        if self.owner_chunks is not None:  # marked only where a key was made
            self.owner_changed.add(segment // KEY_CHUNK)
        self.journal.moves.append(Move(segment, source, target))

    def rehome(self, segment: int, home: Owner) -> None:
        """The segment's idle place changes (a channel takes it as an exclusive buffer)."""
        if self.home_shared:
            self.home = list(self.home)
            self.home_shared = False
        self.home[segment] = home
        if self.home_chunks is not None:
            self.home_changed.add(segment // KEY_CHUNK)

    def hand_over(self, segment: int, source: Owner, target: Owner) -> None:
        """Pass one reference on: an ownership move, or, for a holder that shares a segment
        it does not own, the shared reference changing hands."""
        others = self.shares.get(segment)
        if others and self.owner[segment] != source and source in others:
            others[others.index(source)] = target
            return
        self.move(segment, source, target)

    def share(self, segment: int, holder: Owner, returns: ReturnTo | None = None) -> None:
        """Another reference to a segment (``Buffer.retainBuffer``)."""
        self.shares.setdefault(segment, []).append(holder)
        if returns is not None:
            self.returns.setdefault(segment, returns)

    def will_return(self, segment: int, returns: ReturnTo) -> None:
        """Where the segment goes when its last holder lets go, unless already known."""
        self.returns.setdefault(segment, returns)

    def let_go(self, segment: int, holder: Owner, returns: ReturnTo | None) -> ReturnTo | None:
        """``holder`` is done with a segment. If others still reference it, the next one
        becomes its owner and None is returned; from the last one, where it must go now."""
        others = self.shares.get(segment)
        if others:
            if self.owner[segment] == holder:
                self.move(segment, holder, others.pop(0))
            else:
                others.remove(holder)
            if not others:
                del self.shares[segment]
            if returns is not None:
                self.returns.setdefault(segment, returns)
            return None
        destination = self.returns.pop(segment, returns)
        assert destination is not None, f"segment {segment} has nowhere to go"
        return destination

    def heap(self, delta: int) -> None:
        """Heap taken (or, negative, freed) by recovery outside the network pools."""
        self.heap_bytes += delta
        self.heap_peak = max(self.heap_peak, self.heap_bytes)

    def copy(self, journal: StepJournal) -> SegmentLedger:
        """A copy writing into ``journal``. Homes change only when a gate converts, so the
        two share them until one of them does."""
        self.home_shared = True
        return SegmentLedger(
            journal,
            list(self.owner),
            self.home,
            {segment: list(h) for segment, h in self.shares.items()},
            dict(self.returns),
            self.heap_bytes,
            self.heap_peak,
            home_shared=True,
            owner_chunks=None if self.owner_chunks is None else list(self.owner_chunks),
            owner_changed=set(self.owner_changed),
            home_chunks=None if self.home_chunks is None else list(self.home_chunks),
            home_changed=set(self.home_changed),
        )
