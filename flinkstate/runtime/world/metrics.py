"""Buffers per owner kind over a run, derived from the events' segment moves.

Each owner carries its kind (:class:`~flinkstate.runtime.buffer.owners.Owner`), so counting per kind
needs no access to the world: :class:`BufferCounts` starts from the initial owners and replays
moves. It is the one replay: the CLI prints its end and peak counts, the stepper's timelines
and the restart's owner figure plot its counts step by step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

from flinkstate.runtime.buffer.owners import Owner, OwnerKind, OwnerPlace, kinds_at
from flinkstate.sim.core import Event

#: every owner kind, in the order tables and legends list them
OWNER_KINDS = tuple(OwnerKind)
#: the pools hold most segments most of the time; plotted beside the others they flatten them
POOL_KINDS = tuple(sorted(kinds_at(OwnerPlace.POOLS), key=OWNER_KINDS.index))
#: owners that exist only while a restored job recovers its in-flight data
RECOVERY_KINDS = frozenset(k for k in OwnerKind if k.recovery)


@dataclass
class BufferCounts:
    """Segments held per owner kind, now and at peak.

    Examples
    --------
    A remote channel with Flink's 2 exclusive buffers receives data into one of them:

    >>> from flinkstate.runtime.buffer.owners import ChannelOwners
    >>> from flinkstate.sim import Action, Move
    >>> channel = ChannelOwners.of("keyed[0]<source[1]")
    >>> counts = BufferCounts.start([channel.exclusive] * 2)
    >>> move = Move(3, channel.exclusive, channel.received)
    >>> send = Event(0, Action("netty keyed[0]<source[1]", "send"), (move,))
    >>> sorted(kind.value for kind in counts.apply(send))
    ['exclusive', 'received']
    >>> counts.current[OwnerKind.EXCLUSIVE], counts.peak[OwnerKind.EXCLUSIVE]
    (1, 2)
    """

    current: Counter[OwnerKind] = field(default_factory=Counter)
    peak: Counter[OwnerKind] = field(default_factory=Counter)

    @classmethod
    def start(cls, owners: Sequence[Owner]) -> BufferCounts:
        counts = cls(Counter(o.kind for o in owners))
        counts.peak = Counter(counts.current)
        return counts

    def apply(self, event: Event) -> set[OwnerKind]:
        """Replay the step's moves (a network model's, whose owners are :class:`Owner`
        values); the kinds whose count changed."""
        changed: set[OwnerKind] = set()
        for move in event.moves:
            source = cast(Owner, move.source).kind
            target = cast(Owner, move.target).kind
            if source is target:
                continue
            self.current[source] -= 1
            self.current[target] += 1
            changed.update((source, target))
            if self.current[target] > self.peak[target]:
                self.peak[target] = self.current[target]
        return changed

    def apply_all(self, events: Iterable[Event]) -> BufferCounts:
        for event in events:
            self.apply(event)
        return self
