"""The explorer's breadth-first search on Spark: the model's side of
:mod:`flinkstate.spark.exploration`, and its answer as the explorer's own result.

The executors get no model objects, only what names the start (:class:`SubjectSpec`: the
topology or scenario, its overrides, seed, phase and faults, as ``exploration_subject`` takes
them) and paths of action indices. Each Python worker builds the start once, checks that its
digest is the driver's (a worker that builds another start, an older flinkstate, fails the
job in one line rather than exploring something else), and replays the paths of its partition
in order, keeping the states along the last path (:class:`Replay`): a path that shares a prefix
with the one before costs only its own steps. A state is checked exactly as the single-process
explorer checks one (an invariant broken, or no action enabled: finished or deadlocked) and
its children are named by :mod:`flinkstate.lab.state_digest`'s digests.

The search follows every transition (no partial-order reduction; sleep sets leave the distinct
states and findings as they are). Its distinct states, depth, findings and their traces (the
least path among the shallowest, which is the one the single-process breadth-first search
reaches first) are the single-process search's; the driver replays each finding's path to make
its trace of actions, its violation and its deadlock report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, cast

from flinkstate.collector import collector_paused
from flinkstate.lab.counterexample import ExplorationSubject, exploration_subject
from flinkstate.lab.state_digest import StateDigester
from flinkstate.runtime.options import Fault
from flinkstate.sim import Action, DeadlockReport, Model, RunStatus, Violation, end_of_run
from flinkstate.sim.explore import (
    Bounds,
    ExplorationResult,
    Finding,
    FindingKind,
    PartialCopy,
    StopReason,
    Strategy,
    copies_partially,
)
from flinkstate.spark.exploration import (
    Expansion,
    FoundPath,
    LevelProgress,
    Outcome,
    breadth_first,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class SubjectSpec:
    """What names an exploration's start, small and picklable: an executor builds the start
    from it with ``exploration_subject``."""

    name: str
    overrides: tuple[tuple[str, object], ...]
    seed: int
    phase: str | None
    faults: tuple[str, ...]

    @classmethod
    def of(cls, subject: ExplorationSubject) -> SubjectSpec:
        """The spec of a subject built on the driver.

        Examples
        --------
        >>> spec = SubjectSpec.of(exploration_subject("keyed", overrides={"records": 1}))
        >>> spec.name, spec.overrides, spec.phase
        ('keyed', (('records', 1),), None)
        """
        return cls(
            subject.name,
            tuple(sorted(subject.overrides.items())),
            subject.seed,
            subject.phase,
            tuple(sorted(subject.faults)),
        )

    def start(self) -> Model:
        """The start it names, built in this process once (a copy of it each call)."""
        built = _STARTS.get(self)
        if built is None:
            subject = exploration_subject(
                self.name,
                overrides=dict(self.overrides),
                seed=self.seed,
                phase=self.phase,
                faults=frozenset(Fault(f) for f in self.faults),
            )
            built = _STARTS[self] = cast(Model, subject.initial)
        return built.clone()

    def checked_start(self, root: bytes, digester: StateDigester) -> Model:
        """:meth:`start`, refused unless its digest is ``root`` (the driver's start's): an
        executor whose flinkstate builds another start would explore another space."""
        start = self.start()
        if digester.digest(start.fingerprint()) != root:
            raise RuntimeError(
                f"an executor built another start for {self.name} than the driver's "
                "(is its flinkstate the driver's?)"
            )
        return start


#: the starts this process built, by spec (a Python worker explores one start, level by level)
_STARTS: dict[SubjectSpec, Model] = {}


class Verdict(NamedTuple):
    """A state checked as a run would: its outcome, its enabled actions (open states), the
    invariants it breaks, its deadlock report."""

    outcome: Outcome
    enabled: Sequence[Action] = ()
    violations: Sequence[Violation] = ()
    deadlock: DeadlockReport | None = None

    def findings(self) -> tuple[tuple[str, str], ...]:
        """Its findings as (kind, name): each broken invariant, or its deadlock.

        Examples
        --------
        >>> Verdict(Outcome.BROKEN, violations=[Violation("exactly-once", 3, "twice")]).findings()
        (('violation', 'exactly-once'),)
        """
        if self.deadlock is not None:
            return ((FindingKind.DEADLOCK.value, deadlock_name(self.deadlock)),)
        return tuple((FindingKind.VIOLATION.value, v.invariant) for v in self.violations)


def verdict(model: Model, depth: int) -> Verdict:
    """The single-process explorer's check of a state ``depth`` steps deep (its ``check``)."""
    if model.violations:
        return Verdict(Outcome.BROKEN, violations=tuple(model.violations))
    enabled = model.enabled_actions()
    if enabled:
        return Verdict(Outcome.OPEN, enabled)
    ending = end_of_run(model, depth)
    if ending.status is RunStatus.VIOLATION:
        return Verdict(Outcome.BROKEN, violations=ending.violations)
    if ending.status is RunStatus.DEADLOCK:
        return Verdict(Outcome.DEADLOCK, deadlock=ending.deadlock)
    return Verdict(Outcome.FINISHED)


def deadlock_name(report: DeadlockReport) -> str:
    """A deadlock's name as the explorer gives it: its waits-for cycle, or who waits."""
    return report.cycle_path or "no waits-for cycle: " + ", ".join(
        sorted({str(w.actor) for w in report.waits})
    )


def child_of(model: Model, action: Action) -> Model:
    """``model`` after ``action``, ``model`` left as it is (a copy of what it may change,
    where the model can)."""
    if copies_partially(model):
        partial = cast(PartialCopy, model)
        child = cast(Model, partial.clone_within(partial.footprint(action)))
    else:
        child = model.clone()
    child.apply(action)
    return child


class Replay:
    """The states along the last path replayed, from the start: the next path starts from
    the longest prefix it shares with it."""

    def __init__(self, start: Model) -> None:
        self.models = [start]
        self.path: list[int] = []

    def state(self, path: Sequence[int]) -> Model:
        """The state ``path`` reaches (each step the index of an enabled action)."""
        shared = 0
        limit = min(len(path), len(self.path))
        while shared < limit and path[shared] == self.path[shared]:
            shared += 1
        del self.models[shared + 1 :], self.path[shared:]
        for index in path[shared:]:
            model = self.models[-1]
            self.models.append(child_of(model, model.enabled_actions()[index]))
            self.path.append(index)
        return self.models[-1]


@dataclass(frozen=True)
class ModelExpander:
    """The :class:`~flinkstate.spark.exploration.Expander` of a subject: what the executors
    run. ``root``: the start's digest on the driver, which each worker's start must have."""

    spec: SubjectSpec
    root: bytes

    def expand(
        self, paths: Iterable[list[int]], follow: bool
    ) -> Iterator[tuple[list[int], Expansion]]:
        digester = StateDigester()
        replay = Replay(self.spec.checked_start(self.root, digester))
        with collector_paused(float("inf")):  # a worker's models die with its partition
            for path in paths:
                yield path, expansion(replay.state(path), len(path), follow, digester)


def expansion(model: Model, depth: int, follow: bool, digester: StateDigester) -> Expansion:
    """A state's verdict and, when it goes on and ``follow``, its children's digests."""
    found = verdict(model, depth)
    if found.outcome is not Outcome.OPEN or not follow:
        return Expansion(found.outcome, found.findings())
    children = tuple(
        (digester.digest(child_of(model, action).fingerprint()), index)
        for index, action in enumerate(found.enabled)
    )
    return Expansion(found.outcome, (), children)


def explore_on_spark(
    spark: SparkSession,
    subject: ExplorationSubject,
    bounds: Bounds,
    progress: Callable[[LevelProgress], None] | None = None,
) -> ExplorationResult:
    """Breadth-first search of every interleaving from ``subject``'s start on ``spark``,
    within ``bounds`` (states, depth, time: read between levels; the memory budget is the
    single process's and is not used), as the explorer's result."""
    root = StateDigester().digest(subject.initial.clone().fingerprint())
    answer = breadth_first(
        spark,
        ModelExpander(SubjectSpec.of(subject), root),
        root,
        max_depth=bounds.max_depth,
        max_states=bounds.max_states,
        time_budget=bounds.time,
        progress=progress,
    )
    findings = [finding_of(cast(Model, subject.initial), found) for found in answer.findings]
    findings.sort(key=lambda f: (f.depth, f.kind.value, f.name))
    return ExplorationResult(
        Strategy.BFS,
        Bounds(max_states=bounds.max_states, max_depth=bounds.max_depth, time=bounds.time),
        answer.states,
        answer.distinct,
        answer.depth,
        answer.elapsed,
        StopReason(answer.stopped_by.value),
        tuple(findings),
        answer.finished,
        answer.broken,
    )


def finding_of(initial: Model, found: FoundPath) -> Finding:
    """A finding the search reported by its path, replayed from the start on the driver: its
    trace of actions, and its violation or deadlock report."""
    model = initial.clone()
    trace: list[Action] = []
    for index in found.path:
        action = model.enabled_actions()[index]
        trace.append(action)
        model.apply(action)
    checked = verdict(model, len(trace))
    if found.kind == FindingKind.DEADLOCK.value:
        return Finding(
            FindingKind.DEADLOCK,
            found.name,
            tuple(trace),
            deadlock=checked.deadlock,
            found_after=found.found_after,
        )
    violation = next(v for v in checked.violations if v.invariant == found.name)
    return Finding(
        FindingKind.VIOLATION,
        found.name,
        tuple(trace),
        violation=violation,
        found_after=found.found_after,
    )
