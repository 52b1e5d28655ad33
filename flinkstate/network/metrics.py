"""Buffers per owner kind over a run, derived from the events' segment moves.

Owner names start with their kind (:class:`~flinkstate.network.owners.OwnerKind`), so
counting per kind needs no access to the world: :class:`BufferCounts` starts from the initial
owners and replays moves. It is the one replay: the CLI prints its end and peak counts, the
stepper's timelines and the restart's owner figure plot its counts step by step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from flinkstate.network.owners import OwnerKind, OwnerPlace, kinds_at
from flinkstate.sim.core import Event

#: every owner kind, in the order tables and legends list them
OWNER_KINDS = tuple(k.value for k in OwnerKind)
#: the pools hold most segments most of the time; plotted beside the others they flatten them
POOL_KINDS = tuple(sorted(kinds_at(OwnerPlace.POOLS), key=OWNER_KINDS.index))
#: owners that exist only while a restored job recovers its in-flight data
RECOVERY_KINDS = frozenset(k.value for k in OwnerKind if k.recovery)


def owner_kind(owner: str) -> str:
    return owner.split(" ", 1)[0]


@dataclass
class BufferCounts:
    """Segments held per owner kind, now and at peak."""

    current: Counter[str] = field(default_factory=Counter)
    peak: Counter[str] = field(default_factory=Counter)

    @classmethod
    def start(cls, owners: Sequence[str]) -> BufferCounts:
        counts = cls(Counter(owner_kind(o) for o in owners))
        counts.peak = Counter(counts.current)
        return counts

    def apply(self, event: Event) -> set[str]:
        """Replay the step's moves; the kinds whose count changed."""
        changed: set[str] = set()
        for move in event.moves:
            source, target = owner_kind(move.source), owner_kind(move.target)
            if source == target:
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
