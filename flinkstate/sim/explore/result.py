"""What an exploration is asked and what it answers: the strategy and the bounds, what it
found (each violation or deadlock with its trace) and why it stopped."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from flinkstate.choice import Choice
from flinkstate.errors import InvalidParameterError
from flinkstate.sim.action import Action
from flinkstate.sim.core import Violation
from flinkstate.sim.deadlock import DeadlockReport
from flinkstate.sim.explore.budget import mebibytes
from flinkstate.sim.explore.reduction import NO_REDUCTION, PersistentSets, Reduction, SleepSets


class Strategy(Choice):
    """The order the explorer visits states in."""

    BFS = "bfs"
    DFS = "dfs"
    RANDOM_WALK = "random-walk"


class PartialOrder(Choice):
    """The partial-order reduction an exploration uses: sleep sets from the model's
    footprints, persistent sets with sleep sets on top, or none (every transition
    followed)."""

    SLEEP_SETS = "sleep-sets"
    PERSISTENT_SETS = "persistent-sets"
    NONE = "none"

    def reduction(self) -> Reduction:
        if self is PartialOrder.PERSISTENT_SETS:
            return PersistentSets()
        return SleepSets() if self is PartialOrder.SLEEP_SETS else NO_REDUCTION


class StopReason(StrEnum):
    """Why an exploration ended."""

    #: every state reachable within the bounds was explored (and none deeper exists)
    EXHAUSTED = "exhausted"
    #: every state up to the depth bound was explored; some go deeper
    MAX_DEPTH = "max-depth"
    MAX_STATES = "max-states"
    TIME = "time"
    #: the random walks asked for were taken (sampling never exhausts a space)
    WALKS = "walks"
    #: the caller asked it to stop (``explore``'s ``stop``)
    STOPPED = "stopped"
    #: the process's resident memory reached the budget (``Bounds.max_memory``)
    MAX_MEMORY = "max-memory"


class FindingKind(StrEnum):
    VIOLATION = "violation"
    DEADLOCK = "deadlock"


@dataclass(frozen=True)
class Bounds:
    """Where an exploration stops: ``max_states`` distinct states stored, ``max_depth``
    steps from the start (states at that depth are checked, not expanded), ``time`` seconds,
    ``walks`` random walks (random-walk only; default 1000), ``max_memory`` bytes of the
    process's resident memory (read every few dozen states). None: no bound."""

    max_states: int | None = None
    max_depth: int | None = None
    time: float | None = None
    walks: int | None = None
    max_memory: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_states", "max_depth", "walks", "max_memory"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise InvalidParameterError(
                    f"{name} must be a whole number of at least 1, got {value!r}"
                )
        if self.time is not None and not self.time > 0:
            raise InvalidParameterError(
                f"time must be a positive number of seconds, got {self.time!r}"
            )


@dataclass(frozen=True)
class Finding:
    """A broken invariant (``name`` is the invariant's) or a deadlock (``name`` is its
    waits-for cycle, or the waiting actors where there is none), with the trace that reaches
    it: the shortest there is under breadth first search."""

    kind: FindingKind
    name: str
    trace: tuple[Action, ...]
    violation: Violation | None = None
    deadlock: DeadlockReport | None = None
    #: distinct states stored when it was first found
    found_after: int = 0

    @property
    def depth(self) -> int:
        return len(self.trace)

    def describe(self) -> str:
        """What it is, how deep and how soon it was found, in one line."""
        where = f"at depth {self.depth} (found after {self.found_after} states)"
        if self.violation is not None:
            return f"violation of {self.name} {where}: {self.violation.message}"
        return f"deadlock {where}: {self.name}"


@dataclass(frozen=True)
class Progress:
    """How far an exploration got: states reached (with repeats), distinct states stored,
    the deepest depth reached, seconds spent."""

    states: int
    distinct: int
    depth: int
    elapsed: float

    @property
    def per_second(self) -> float:
        """Distinct states per second."""
        return self.distinct / self.elapsed if self.elapsed > 0 else 0.0


@dataclass(frozen=True)
class ExplorationResult:
    strategy: Strategy
    bounds: Bounds
    #: states reached, counting each arrival (a transition, plus the start)
    states: int
    distinct: int
    #: the deepest depth reached
    depth: int
    elapsed: float
    stopped_by: StopReason
    findings: tuple[Finding, ...]
    #: distinct states where the run ended finished, every invariant holding
    finished: int
    #: distinct states where an invariant was broken (each ends its path). Sleep sets reach
    #: every other state, and every finding as early, but not each further state that breaks
    #: an invariant again after another action
    broken: int = 0
    #: the process's resident memory (bytes) when it was last read against the memory budget;
    #: None without a budget
    resident: int | None = None
    #: distinct states from which a persistent set was followed, fewer actions than were
    #: enabled (0 without persistent sets), and those of them the proviso expanded fully
    persistent: int = 0
    proviso: int = 0

    @property
    def exhausted(self) -> bool:
        """Whether every state reachable from the start was explored."""
        return self.stopped_by is StopReason.EXHAUSTED

    @property
    def violations(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.kind is FindingKind.VIOLATION)

    @property
    def deadlocks(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.kind is FindingKind.DEADLOCK)

    def summary(self) -> str:
        """The verdict in one sentence: what was explored, what was found, and, unless the
        space was exhausted, which bound stopped the exploration."""
        explored = f"explored {self.distinct} distinct states to depth {self.depth}"
        if self.findings:
            found = ", ".join(
                f"{count} {what}{'' if count == 1 else 's'}"
                for count, what in (
                    (len(self.violations), "invariant violation"),
                    (len(self.deadlocks), "deadlock"),
                )
                if count
            )
        else:
            found = "no deadlock, every invariant holds"
        if self.persistent:
            explored += (
                f" ({self.persistent} of them followed by one actor's actions alone, "
                "a persistent set)"
            )
        if self.exhausted:
            return f"{explored}: {found}"
        if self.stopped_by is StopReason.MAX_MEMORY:
            budget, resident = self.bounds.max_memory or 0, self.resident or 0
            return (
                f"{explored}: {found} so far; stopped by the memory budget "
                f"({mebibytes(resident)} resident of {mebibytes(budget)})"
            )
        return f"{explored}: {found} so far; stopped by {_STOPPED[self.stopped_by]}"


_STOPPED = {
    StopReason.MAX_DEPTH: "the depth bound (every state up to it explored)",
    StopReason.MAX_STATES: "the bound on distinct states",
    StopReason.TIME: "the time budget",
    StopReason.WALKS: "the number of random walks (sampling never exhausts a space)",
    StopReason.STOPPED: "request",
}
