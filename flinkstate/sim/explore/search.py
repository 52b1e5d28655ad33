"""The search: breadth first, depth first or random walks over a model's states, within bounds,
checking every state reached as a run would."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple, cast

from flinkstate.collector import collector_paused
from flinkstate.sim.action import Action
from flinkstate.sim.core import Model, RunStatus, Violation, end_of_run
from flinkstate.sim.explore.budget import ExplorationMemoryError, mebibytes, resident_bytes
from flinkstate.sim.explore.reduction import (
    AWAKE,
    NO_REDUCTION,
    NoReduction,
    PartialCopy,
    Reduction,
    SleepSets,
    copies_partially,
)
from flinkstate.sim.explore.result import (
    Bounds,
    ExplorationResult,
    Finding,
    FindingKind,
    Progress,
    StopReason,
    Strategy,
)
from flinkstate.sim.explore.store import Numbered, StateStore

#: how often (in states reached) the clock is read for the time budget and the progress report
CLOCK_EVERY = 64
#: how often (in seconds) progress is reported at most
PROGRESS_EVERY = 0.2
#: depth first keeps the world of every this many states along its path (and those above the
#: highest of them), and takes the worlds of a stretch between two again from the one below
#: when it comes back into it: its path costs depth / SNAPSHOT_EVERY + SNAPSHOT_EVERY worlds,
#: not one per step
SNAPSHOT_EVERY = 16


def explore(
    initial: Model,
    *,
    strategy: Strategy | str = Strategy.BFS,
    bounds: Bounds | None = None,
    seed: int = 0,
    reduction: Reduction = NO_REDUCTION,
    progress: Callable[[Progress], None] | None = None,
    stop: Callable[[], bool] | None = None,
    partial: bool = True,
    resident: Callable[[], int] = resident_bytes,
) -> ExplorationResult:
    """Explore every interleaving from ``initial`` (left unchanged: it is copied first).

    ``seed`` chooses the random walks; ``progress`` is told how far the exploration got a few
    times a second and once at the end; ``stop`` is asked as often whether to stop, and when it
    says so the exploration ends as a bound ends it, with what it found so far (a widget's stop
    button). ``partial``: copy for each transition only what its action may change, where the
    model can (:class:`PartialCopy`); False copies whole states, which finds the same (for
    comparison). ``resident`` reads the process's resident memory for the memory budget
    (``Bounds.max_memory``), as often as the clock. Ctrl-C (``KeyboardInterrupt``) ends it
    with nothing returned; running out of memory before the budget stops it, with one
    :class:`ExplorationMemoryError` that says what was explored."""
    chosen = Strategy.parse(strategy)
    run = _Exploration(
        initial,
        chosen,
        bounds or Bounds(),
        seed,
        reduction,
        progress,
        stop,
        partial=partial,
        resident=resident,
    )
    failed = False
    with collector_paused():  # models free their garbage by reference counting
        try:
            run.search()
        except MemoryError:
            failed = True  # the search's frames (its frontier) are freed past this block
    if failed:
        raise run.out_of_memory() from None
    return run.result()


class _Expansion(NamedTuple):
    """What to follow from a state: ``todo``, the actions its reduction chose, less its sleep
    set when it is expanded; or, with ``done``, only the actions of ``todo`` (woken from a
    sleep set), ``done`` counting as followed already. ``numbered``: the state's key, numbered,
    for its children's. ``rest``: the enabled actions a persistent set left out, followed too
    where one of its successors closes a cycle (the proviso)."""

    todo: Sequence[Action]
    done: frozenset[Action] | None
    numbered: Numbered | None = None
    rest: Sequence[Action] = ()


class _Stop(Exception):
    """A bound was reached (its reason)."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason.value)
        self.reason = reason


class _Findings:
    """Each distinct violation (by invariant) and deadlock (by its cycle), the shallowest
    seen."""

    def __init__(self) -> None:
        self.by_name: dict[tuple[FindingKind, str], Finding] = {}

    def note(self, finding: Finding) -> None:
        key = (finding.kind, finding.name)
        known = self.by_name.get(key)
        if known is None or finding.depth < known.depth:
            self.by_name[key] = finding


class _Exploration:
    def __init__(
        self,
        initial: Model,
        strategy: Strategy,
        bounds: Bounds,
        seed: int,
        reduction: Reduction,
        progress: Callable[[Progress], None] | None,
        stop: Callable[[], bool] | None = None,
        *,
        partial: bool = True,
        resident: Callable[[], int] = resident_bytes,
    ) -> None:
        self.initial = initial
        self.stop = stop
        self.strategy = strategy
        self.bounds = bounds
        self.seed = seed
        self.reduction = reduction
        self.report = progress
        self.store = StateStore()
        self.findings = _Findings()
        self.states = 0
        self.deepest = 0
        self.finished: set[int] = set()
        self.broken = 0
        #: states a persistent set left actions out of, and those of them the proviso
        #: expanded fully
        self.persistent = 0
        self.fully_expanded = 0
        #: per state reached, whether it was expanded (followed from) yet
        self.expanded = bytearray()
        #: each state's sleep set, where not empty: the intersection of those it was reached with
        self.slept: dict[int, frozenset[Action]] = {}
        #: depth first under a depth bound: a state reached in fewer steps is explored again
        self.again = strategy is Strategy.DFS and bounds.max_depth is not None
        #: whether the reduction may put anything to sleep (without, no sleep set is kept)
        self.sleeping = type(reduction) is not NoReduction
        #: whether each transition copies only what its action may change
        self.partial = partial and copies_partially(initial)
        self.stopped_by = StopReason.EXHAUSTED
        self.measure = resident
        #: the resident memory last read against the budget (None: no budget)
        self.resident: int | None = None
        self.deadline = None if bounds.time is None else time.monotonic() + bounds.time
        self.started = time.monotonic()
        self.last_report = self.started

    # -- what every strategy does with a state it reaches

    def reach(
        self,
        model: Model,
        parent: int,
        action: Action | None,
        depth: int,
        asleep: frozenset[Action] = AWAKE,
        like: Numbered | None = None,
    ) -> tuple[int, _Expansion | None, bool]:
        """Count and store a state reached with the sleep set ``asleep`` (from the state whose
        numbered key is ``like``); check it as a run would. Returns its index; what to follow
        from it (None: nothing, or nothing more than a state seen before already follows); and
        whether it was never seen before."""
        self.states += 1
        if self.states % CLOCK_EVERY == 0:
            self.tick()
        store = self.store
        numbered = store.number(self.reduction.key(model), like)
        packed = numbered.numbers.tobytes()
        bound = self.bounds.max_states
        if bound is not None and len(store) >= bound and not store.known(packed):
            raise _Stop(StopReason.MAX_STATES)
        known = len(store)
        index, shorter = store.visit_packed(packed, parent, action, depth)
        if not shorter:
            return index, self.wake(model, index, asleep, numbered), False
        self.deepest = max(self.deepest, depth)
        if index == known:
            self.expanded.append(0)
        self.expanded[index] = 0
        if asleep:
            self.slept[index] = asleep
        else:
            self.slept.pop(index, None)
        todo, rest = self.check(model, index)
        found = _Expansion(todo, None, numbered, rest) if todo else None
        return index, found, index == known

    def wake(
        self, model: Model, index: int, asleep: frozenset[Action], numbered: Numbered
    ) -> _Expansion | None:
        """A state seen before, reached again with the sleep set ``asleep``: what it slept on
        before but not now must be followed too (Godefroid's rule for sleep sets with states
        stored). Before its expansion that is its sleep set shrinking; after it, an expansion
        of those actions only, the others counting as followed."""
        before = self.slept.get(index)
        if not before:
            return None
        now = before & asleep
        if now == before:
            return None
        if now:
            self.slept[index] = now
        else:
            del self.slept[index]
        if not self.expanded[index] or model.violations:
            return None
        enabled = model.enabled_actions()
        woken = before - now
        todo = [a for a in enabled if a in woken]
        return _Expansion(todo, frozenset(a for a in enabled if a not in woken), numbered)

    def expansion(self, index: int, found: _Expansion) -> tuple[list[Action], set[Action]]:
        """The actions to follow from a state now and the sleep set its children start from
        (those of its sleep set and, one by one, those followed)."""
        self.expanded[index] = 1
        if found.done is not None:
            return list(found.todo), set(found.done)
        asleep = self.slept.get(index)
        if not asleep:
            return list(found.todo), set()
        return [a for a in found.todo if a not in asleep], set(asleep)

    def take(
        self,
        model: Model,
        index: int,
        depth: int,
        action: Action,
        done: set[Action],
        numbered: Numbered | None,
        *,
        last: bool,
    ) -> tuple[Model, int, _Expansion | None]:
        """Apply ``action`` to a copy of ``model`` (the state ``index``, its key ``numbered``;
        to ``model`` itself when it is the ``last`` action taken from it) and reach the child,
        its key numbered against its parent's: its sleep set is
        what its parent slept on or followed before it that is independent of ``action``;
        ``action`` then counts as followed for the siblings after it."""
        reduction = self.reduction
        if not done:
            asleep = AWAKE
        elif isinstance(reduction, SleepSets):
            asleep = reduction.independent_of(model, action, done)
        else:
            asleep = frozenset([a for a in done if reduction.independent(model, a, action)])
        if self.sleeping:
            done.add(action)
        child = self.copy_for(model, action, last=last)
        child.apply(action)
        child_index, more, new = self.reach(child, index, action, depth + 1, asleep, numbered)
        if more is not None and not new and more.done is None and not self.again:
            more = None  # reached again in fewer steps: only a depth bound explores it again
        return child, child_index, more

    def copy_for(self, model: Model, action: Action, *, last: bool) -> Model:
        """A model to apply ``action`` to: a copy of just what it may change, sharing the rest
        with ``model`` (a :class:`PartialCopy`); otherwise a whole copy. For the ``last``
        action taken from it, ``model`` itself (nothing reads the parent once its children are
        made; a :class:`PartialCopy` first copies what it shares with its siblings and the
        action may change)."""
        if self.partial:
            reduction = self.reduction
            touched = (
                reduction.footprint(model, action)
                if isinstance(reduction, SleepSets)
                else cast(PartialCopy, model).footprint(action)
            )
            partial = cast(PartialCopy, model)
            ready = partial.ready_within if last else partial.clone_within
            return cast(Model, ready(touched))
        return model if last else model.clone()

    def check(self, model: Model, index: int) -> tuple[Sequence[Action], Sequence[Action]]:
        """``Simulation.run``'s verdict on a state: an invariant broken, or the end of a run
        where nothing is enabled (finished, or deadlocked); otherwise the actions to follow
        and those the reduction left out (for the proviso)."""
        if model.violations:
            self.broken += 1
            self.violated(model.violations, index)
            return (), ()
        enabled = model.enabled_actions()
        if enabled:
            chosen = self.reduction.actions(model, enabled)
            if len(chosen) == len(enabled):
                return chosen, ()
            self.persistent += 1
            return chosen, [a for a in enabled if a not in chosen]
        ending = end_of_run(model, self.store.depth(index))
        if ending.status is RunStatus.VIOLATION:
            self.broken += 1
            self.violated(ending.violations, index)
        elif ending.status is RunStatus.DEADLOCK:
            report = ending.deadlock
            assert report is not None
            name = report.cycle_path or "no waits-for cycle: " + ", ".join(
                sorted({str(w.actor) for w in report.waits})
            )
            self.findings.note(
                Finding(
                    FindingKind.DEADLOCK,
                    name,
                    self.store.trace(index),
                    deadlock=report,
                    found_after=len(self.store),
                )
            )
        else:
            self.finished.add(index)
        return (), ()

    def violated(self, violations: Sequence[Violation], index: int) -> None:
        trace = self.store.trace(index)
        for violation in violations:
            self.findings.note(
                Finding(
                    FindingKind.VIOLATION,
                    violation.invariant,
                    trace,
                    violation=violation,
                    found_after=len(self.store),
                )
            )

    def tick(self, *, final: bool = False) -> None:
        """Read the clock: the time budget, and progress a few times a second."""
        now = time.monotonic()
        if self.report is not None and (final or now - self.last_report >= PROGRESS_EVERY):
            self.last_report = now
            self.report(Progress(self.states, len(self.store), self.deepest, now - self.started))
        if not final and self.deadline is not None and now >= self.deadline:
            raise _Stop(StopReason.TIME)
        if not final and self.stop is not None and self.stop():
            raise _Stop(StopReason.STOPPED)
        budget = self.bounds.max_memory
        if not final and budget is not None:
            self.resident = self.measure()
            if self.resident >= budget:
                raise _Stop(StopReason.MAX_MEMORY)

    def out_of_memory(self) -> ExplorationMemoryError:
        """The error for a ``MemoryError`` before the budget stopped the search: what was
        explored, and the budget."""
        budget = self.bounds.max_memory
        found = len(self.findings.by_name)
        read = (
            "" if self.resident is None else f", {mebibytes(self.resident)} resident when last read"
        )
        return ExplorationMemoryError(
            f"out of memory after {len(self.store):,} distinct states to depth {self.deepest} "
            f"({found} finding{'' if found == 1 else 's'} so far{read}), before "
            + (
                "any memory budget (none was set)"
                if budget is None
                else f"the memory budget of {mebibytes(budget)} was reached"
            )
            + ": the process may not use that much (a ulimit -v, the machine's memory); "
            "a smaller budget stops it cleanly"
        )

    def expandable(self, depth: int) -> bool:
        """Whether a state at ``depth`` is expanded (the depth bound's states are checked
        only); noting that the bound cut something off."""
        limit = self.bounds.max_depth
        if limit is not None and depth >= limit:
            if self.stopped_by is StopReason.EXHAUSTED:
                self.stopped_by = StopReason.MAX_DEPTH
            return False
        return True

    # -- the strategies

    def search(self) -> None:
        if self.strategy is Strategy.BFS:
            self.breadth_first()
        elif self.strategy is Strategy.DFS:
            self.depth_first()
        else:
            self.random_walks()

    def breadth_first(self) -> None:
        """Level by level: the first time a state is reached is by a shortest trace."""
        try:
            root = self.initial.clone()
            index, found, _ = self.reach(root, -1, None, 0)
            level: list[tuple[Model, int, _Expansion]] = []
            if found is not None:
                level.append((root, index, found))
            depth = 0
            take = self.take
            while level and self.expandable(depth):
                following: list[tuple[Model, int, _Expansion]] = []
                keep = following.append
                for model, parent, found in level:
                    todo, done = self.expansion(parent, found)
                    numbered = found.numbered
                    rest = found.rest
                    last = 0 if rest else len(todo)
                    closes = False
                    for number, action in enumerate(todo, 1):
                        child, index, more = take(
                            model, parent, depth, action, done, numbered, last=number == last
                        )
                        if more is not None:
                            keep((child, index, more))
                        # every cycle goes back to a state as shallow as the one it leaves
                        closes = closes or (bool(rest) and self.store.depth(index) <= depth)
                    if closes:  # the proviso: expanded fully
                        self.fully_expanded += 1
                        more_todo = [a for a in rest if a not in done]
                        last = len(more_todo)
                        for number, action in enumerate(more_todo, 1):
                            child, index, more = take(
                                model, parent, depth, action, done, numbered, last=number == last
                            )
                            if more is not None:
                                keep((child, index, more))
                level = following
                depth += 1
        except _Stop as stop:
            self.stopped_by = stop.reason

    def depth_first(self) -> None:
        """Along one path at a time. Under a depth bound, a state reached again in fewer steps
        is explored again from there, so that the bound cuts off nothing within it.

        What it keeps: the path (per state on it, a :class:`_Frame`: its index, the actions
        still to follow, its sleep set and numbered key, the action into it), the world of
        every ``SNAPSHOT_EVERY``-th state along it (a snapshot), and those of the states above
        the highest snapshot: at most depth / ``SNAPSHOT_EVERY`` + ``SNAPSHOT_EVERY`` worlds.
        Once the path grows past the next snapshot, the stretch below it lets its worlds go;
        coming back into it, the search takes them again from the snapshot (:meth:`rebuild`),
        once for the stretch."""
        try:
            root = self.initial.clone()
            index, found, _ = self.reach(root, -1, None, 0)
            path: list[_Frame] = []
            if found is not None and self.expandable(0):
                todo, done = self.expansion(index, found)
                path.append(_Frame(root, index, todo, done, found.numbered, None, found.rest))
            while path:
                if path[-1].todo:
                    self.follow(path)
                else:
                    path.pop()
        except _Stop as stop:
            self.stopped_by = stop.reason

    def follow(self, path: list[_Frame]) -> None:
        """Take the next action from the state on top of ``path``; its child goes on the path
        when it is to be expanded (the worlds it leaves behind die with this call)."""
        frame = path[-1]
        depth = len(path) - 1
        model = frame.model
        if model is None:
            model = self.rebuild(path)
        action = frame.todo.pop(0)
        # a snapshot is never handed to its last child: the states above it start there
        snapshot = depth % SNAPSHOT_EVERY == 0
        last = not frame.todo and not snapshot and not frame.rest
        child, index, more = self.take(
            model, frame.index, depth, action, frame.done, frame.numbered, last=last
        )
        if last:
            frame.model = None  # its world is its last child's now
        if frame.rest:
            # the proviso: a persistent set closing a cycle (back onto the path) is expanded
            # fully, once its own actions are followed
            if any(f.index == index for f in path):
                frame.closes = True
            if not frame.todo and frame.closes:
                self.fully_expanded += 1
                frame.todo = [a for a in frame.rest if a not in frame.done]
                frame.rest = ()
        if more is not None and self.expandable(depth + 1):
            if (depth + 1) % SNAPSHOT_EVERY == 0:
                # the child starts a stretch: the one below keeps only its snapshot's world
                for below in path[depth + 1 - SNAPSHOT_EVERY + 1 :]:
                    below.model = None
            todo, done = self.expansion(index, more)
            path.append(_Frame(child, index, todo, done, more.numbered, action, more.rest))

    def rebuild(self, path: list[_Frame]) -> Model:
        """The world of the state on top of ``path``, and of each state between it and the
        nearest one below that kept its world (a snapshot at least): taken again from there,
        a copy per step, as they were made the first time."""
        below = len(path) - 2
        while path[below].model is None:
            below -= 1
        model = path[below].model
        assert model is not None
        for frame in path[below + 1 :]:
            action = frame.action
            assert action is not None
            model = self.copy_for(model, action, last=False)
            model.apply(action)
            frame.model = model
        return model

    def random_walks(self) -> None:
        """Seeded walks from the start, each to the end of a run or the depth bound."""
        rng = random.Random(self.seed)
        walks = self.bounds.walks or DEFAULT_WALKS
        try:
            for _ in range(walks):
                model = self.initial.clone()
                parent, found, _ = self.reach(model, -1, None, 0)
                depth = 0
                while True:
                    # a state seen before continues as it did then (its findings are noted)
                    actions = found.todo if found is not None else self.check_again(model)
                    if not actions or not self.expandable(depth):
                        break
                    action = actions[rng.randrange(len(actions))]
                    numbered = None if found is None else found.numbered
                    model.apply(action)
                    depth += 1
                    parent, found, _ = self.reach(model, parent, action, depth, like=numbered)
            self.stopped_by = StopReason.WALKS
        except _Stop as stop:
            self.stopped_by = stop.reason

    def check_again(self, model: Model) -> Sequence[Action]:
        """The actions to follow from a state seen before (its findings are noted already)."""
        if model.violations:
            return ()
        return self.reduction.actions(model, model.enabled_actions())

    def result(self) -> ExplorationResult:
        self.tick(final=True)
        findings = sorted(
            self.findings.by_name.values(), key=lambda f: (f.depth, f.kind.value, f.name)
        )
        return ExplorationResult(
            self.strategy,
            self.bounds,
            self.states,
            len(self.store),
            self.deepest,
            time.monotonic() - self.started,
            self.stopped_by,
            tuple(findings),
            len(self.finished),
            self.broken,
            self.resident,
            self.persistent,
            self.fully_expanded,
        )


#: random walks taken when no bound on them is given
DEFAULT_WALKS = 1000


class _Frame:
    """A state on the depth-first path: its world (None once let go), its index, the actions
    still to follow from it and the sleep set its next child starts from, its numbered key
    (what its children's are numbered against), and the action that reached it from the
    state below (None for the start)."""

    __slots__ = ("action", "closes", "done", "index", "model", "numbered", "rest", "todo")

    def __init__(
        self,
        model: Model | None,
        index: int,
        todo: list[Action],
        done: set[Action],
        numbered: Numbered | None,
        action: Action | None,
        rest: Sequence[Action] = (),
    ) -> None:
        self.model = model
        self.index = index
        self.todo = todo
        self.done = done
        self.numbered = numbered
        self.action = action
        #: what a persistent set left out, and whether one of its successors closed a cycle
        self.rest = rest
        self.closes = False
