"""The segment ledger and the step journal: the two records every mechanism writes into.

Flink keeps no ledger: a ``MemorySegment`` is simply referenced by whoever holds it, and a bug
shows up as a leak or a buffer recycled twice, long after it happened. The model instead names
the one owner of every network segment in an array and checks each move against it, so that the
step that breaks ownership is the step that reports it. Reference counting
(``Buffer.retainBuffer``) is the list of a segment's further holders; the last one to let go
says where the segment returns.

The journal is what the step in progress did: the moves the ledger checked, the records emitted,
delivered and persisted, a sentence, and (for the whole run) every violation found. ``apply``
turns it into the step's :class:`~flinkstate.sim.core.Event`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from flinkstate.sim.action import Action
from flinkstate.sim.core import Event, Move, Violation


@dataclass(slots=True)
class Changes:
    """The containers changed since the action cache last looked, by name."""

    tasks: set[str] = field(default_factory=set)
    channels: set[str] = field(default_factory=set)
    subpartitions: set[str] = field(default_factory=set)
    pools: set[str] = field(default_factory=set)
    network_pools: set[str] = field(default_factory=set)
    writers: set[str] = field(default_factory=set)
    readers: set[str] = field(default_factory=set)
    drainers: set[str] = field(default_factory=set)
    #: state changed in a way no container names (a checkpoint aborted, the job failed)
    everything: bool = False

    def copy(self) -> Changes:
        return Changes(
            set(self.tasks),
            set(self.channels),
            set(self.subpartitions),
            set(self.pools),
            set(self.network_pools),
            set(self.writers),
            set(self.readers),
            set(self.drainers),
            self.everything,
        )


@dataclass(slots=True)
class StepJournal:
    """The step being taken (its number, what it did, its note), what changed since the
    actions were last computed, and the run's violations."""

    step: int = 0
    violations: list[Violation] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    emitted: list[int] = field(default_factory=list)
    delivered: list[int] = field(default_factory=list)
    persisted: list[int] = field(default_factory=list)
    note: str = ""
    #: what changed since the action cache last looked (kept across steps until it does)
    changes: Changes = field(default_factory=Changes)

    def begin(self) -> None:
        """Start a step: nothing done yet."""
        self.moves = []
        self.emitted = []
        self.delivered = []
        self.persisted = []
        self.note = ""

    def violate(self, invariant: str, message: str) -> None:
        self.violations.append(Violation(invariant, self.step, message))

    def event(self, action: Action) -> Event:
        """The step as the simulator records it; the step count moves on."""
        event = Event(
            self.step,
            action,
            tuple(self.moves),
            tuple(self.emitted),
            tuple(self.delivered),
            tuple(self.persisted),
            self.note,
        )
        self.step += 1
        return event

    def copy(self) -> StepJournal:
        """A copy between steps: the run's violations, no step in progress."""
        return StepJournal(
            self.step, list(self.violations), note=self.note, changes=self.changes.copy()
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


@dataclass(frozen=True, slots=True)
class ReturnTo:
    """The place a segment returns to: a subpartition, result partition or channel, by name."""

    kind: ReturnKind
    name: str


@dataclass(slots=True)
class SegmentLedger:
    """Every network segment's owner and home, its further holders, and the heap recovery
    takes outside the network pools."""

    journal: StepJournal
    #: who holds each segment now, and the container it belongs to when idle
    owner: list[str] = field(default_factory=list)
    home: list[str] = field(default_factory=list)
    #: holders of a segment besides its owner (a buffer retained by the channel-state writer,
    #: one recovered buffer in several subpartitions): the last one to let go recycles it
    shares: dict[int, list[str]] = field(default_factory=dict)
    returns: dict[int, ReturnTo] = field(default_factory=dict)
    #: heap taken by recovery buffers outside the network pools (the 2.3 fallback, the
    #: pre-filter segment, spill-file write buffers), now and at most
    heap_bytes: int = 0
    heap_peak: int = 0

    def new_segments(self, count: int, owner: str) -> list[int]:
        """``count`` new segments owned by (and at home in) ``owner``."""
        start = len(self.owner)
        self.owner.extend([owner] * count)
        self.home.extend([owner] * count)
        return list(range(start, start + count))

    def place(self, segment: int, owner: str) -> None:
        """While building: the segment belongs to ``owner`` from now on (no move recorded)."""
        self.owner[segment] = owner
        self.home[segment] = owner

    def move(self, segment: int, source: str, target: str) -> None:
        """The segment passes from ``source`` to ``target``; a wrong source is a violation:
        a recycle of a segment already at its target is a double recycle."""
        current = self.owner[segment]
        if current != source:
            invariant = "double-recycle" if current == target else "segment-ownership"
            self.journal.violate(
                invariant, f"segment {segment} expected at {source} but owned by {current}"
            )
        self.owner[segment] = target
        self.journal.moves.append(Move(segment, source, target))

    def rehome(self, segment: int, home: str) -> None:
        """The segment's idle place changes (a channel takes it as an exclusive buffer)."""
        self.home[segment] = home

    def hand_over(self, segment: int, source: str, target: str) -> None:
        """Pass one reference on: an ownership move, or, for a holder that shares a segment
        it does not own, the shared reference changing hands."""
        others = self.shares.get(segment)
        if others and self.owner[segment] != source and source in others:
            others[others.index(source)] = target
            return
        self.move(segment, source, target)

    def share(self, segment: int, holder: str, returns: ReturnTo | None = None) -> None:
        """Another reference to a segment (``Buffer.retainBuffer``)."""
        self.shares.setdefault(segment, []).append(holder)
        if returns is not None:
            self.returns.setdefault(segment, returns)

    def will_return(self, segment: int, returns: ReturnTo) -> None:
        """Where the segment goes when its last holder lets go, unless already known."""
        self.returns.setdefault(segment, returns)

    def let_go(self, segment: int, holder: str, returns: ReturnTo | None) -> ReturnTo | None:
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
        """A copy writing into ``journal``; homes never change once a run is under way but
        for a conversion's exclusive buffers, so they are copied too."""
        return SegmentLedger(
            journal,
            list(self.owner),
            list(self.home),
            {segment: list(h) for segment, h in self.shares.items()},
            dict(self.returns),
            self.heap_bytes,
            self.heap_peak,
        )
