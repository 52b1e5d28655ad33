"""The explorer on toy models: every interleaving, each distinct violation and deadlock with its
shortest trace, the bounds, and the verdict when the space is exhausted."""

from __future__ import annotations

import copy
import gc
import itertools
import weakref
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.sim import Action, Event, RunStatus, Simulation, Violation, Wait
from flinkstate.sim.core import Model
from flinkstate.sim.explore import (
    NO_REDUCTION,
    Bounds,
    ExplorationResult,
    FindingKind,
    IndependenceError,
    Progress,
    SleepSets,
    StateStore,
    StopReason,
    Strategy,
    explore,
    search,
    verify_along_runs,
)
from flinkstate.sim.scheduler import SeededRandom


@dataclass
class Increments:
    """``workers`` workers each add one to a shared counter, ``rounds`` times: by reading it
    and writing back what they read plus one (two steps: a lost update when another worker
    writes in between), or, ``atomic``, in one step. At the end the counter must count every
    increment. ``locks``: worker w1 first takes lock B then A, w0 A then B, before they start
    (the crossed locks deadlock)."""

    workers: int = 2
    rounds: int = 1
    atomic: bool = False
    locks: bool = False
    step: int = 0
    counter: int = 0
    violations: list[Violation] = field(default_factory=list)
    #: per worker: increments done, the value read (None: not reading), locks held
    done: list[int] = field(default_factory=list)
    read: list[int | None] = field(default_factory=list)
    held: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.done = self.done or [0] * self.workers
        self.read = self.read or [None] * self.workers

    def _next_lock(self, worker: int) -> str | None:
        order = ("B", "A") if worker == 1 else ("A", "B")
        for lock in order:
            if self.held.get(lock) != worker:
                return lock
        return None

    def enabled_actions(self) -> Sequence[Action]:
        actions = []
        for w in range(self.workers):
            if self.done[w] >= self.rounds:
                continue
            name = f"w{w}"
            if self.locks:
                lock = self._next_lock(w)
                if lock is not None:
                    if lock not in self.held:
                        actions.append(Action(name, "take", lock))
                    continue
            if self.atomic:
                actions.append(Action(name, "increment"))
            elif self.read[w] is None:
                actions.append(Action(name, "read"))
            else:
                actions.append(Action(name, "write"))
        return actions

    def apply(self, action: Action) -> Event:
        w = int(action.actor[1:])
        if action.kind == "take":
            self.held[action.target] = w
        elif action.kind == "increment":
            self.counter += 1
            self.done[w] += 1
        elif action.kind == "read":
            self.read[w] = self.counter
        else:
            value = self.read[w]
            assert value is not None
            self.counter = value + 1
            self.read[w] = None
            self.done[w] += 1
        if self.locks and self.done[w] >= self.rounds:
            self.held = {lock: h for lock, h in self.held.items() if h != w}
        event = Event(self.step, action)
        self.step += 1
        return event

    def is_finished(self) -> bool:
        return all(d >= self.rounds for d in self.done)

    def check_end(self) -> None:
        if self.counter != self.workers * self.rounds:
            self.violations.append(
                Violation("lost-update", self.step, f"counter {self.counter}, expected more")
            )

    def waits(self) -> list[Wait[Hashable]]:
        waits: list[Wait[Hashable]] = []
        for w in range(self.workers):
            lock = self._next_lock(w) if self.locks and self.done[w] < self.rounds else None
            if lock is not None and lock in self.held:
                waits.append(Wait(f"w{w}", f"lock {lock}", (f"w{self.held[lock]}",)))
        return waits

    def clone(self) -> Self:
        return copy.deepcopy(self)

    def fingerprint(self) -> Hashable:
        # no step count: interleavings of independent steps meet in one state
        return (
            self.counter,
            tuple(self.done),
            tuple(self.read),
            tuple(sorted(self.held.items())),
            tuple(v.invariant for v in self.violations),
        )


def test_breadth_first_finds_the_lost_update_with_its_shortest_trace() -> None:
    result = explore(Increments())
    assert result.exhausted
    assert [f.name for f in result.violations] == ["lost-update"]
    lost = result.violations[0]
    # both read before either writes: four steps, the fewest that lose an update
    assert lost.depth == 4
    assert [a.kind for a in lost.trace] == ["read", "read", "write", "write"]
    assert lost.violation is not None
    assert lost.violation.invariant == "lost-update"
    assert result.deadlocks == ()
    assert (
        result.summary()
        == f"explored {result.distinct} distinct states to depth 4: 1 invariant violation"
    )


def test_depth_first_finds_it_too_with_a_trace_no_shorter() -> None:
    bfs = explore(Increments(workers=3))
    dfs = explore(Increments(workers=3), strategy="dfs")
    assert dfs.exhausted
    assert dfs.distinct == bfs.distinct
    assert {f.name for f in dfs.findings} == {f.name for f in bfs.findings}
    for name in {f.name for f in bfs.findings}:
        shortest = next(f for f in bfs.findings if f.name == name)
        found = next(f for f in dfs.findings if f.name == name)
        assert shortest.depth <= found.depth


def test_the_trace_replays_to_the_violation() -> None:
    lost = explore(Increments(workers=3)).violations[0]
    simulation = Simulation(lambda: Increments(workers=3), SeededRandom(0))
    for action in lost.trace:
        simulation.step(action)
    assert simulation.run().status is RunStatus.VIOLATION


def test_an_atomic_counter_is_explored_to_the_end_with_nothing_found() -> None:
    result = explore(Increments(workers=3, atomic=True))
    assert result.exhausted
    assert result.findings == ()
    # counter and done together: every subset of the three workers, each state once
    assert result.distinct == 8
    assert result.finished == 1
    assert result.depth == 3
    assert result.summary() == (
        "explored 8 distinct states to depth 3: no deadlock, every invariant holds"
    )


def test_crossed_locks_deadlock_with_the_cycle_and_the_shortest_trace() -> None:
    result = explore(Increments(locks=True, atomic=True))
    assert [f.kind for f in result.findings] == [FindingKind.DEADLOCK]
    deadlock = result.findings[0]
    assert deadlock.name == "w0 -> w1 -> w0"
    assert deadlock.depth == 2
    assert {str(a) for a in deadlock.trace} == {"w0: take A", "w1: take B"}
    assert deadlock.deadlock is not None
    assert set(deadlock.deadlock.cycle) == {"w0", "w1"}
    assert "deadlock at depth 2 (found after " in deadlock.describe()


def test_a_run_and_the_explorer_end_a_run_alike() -> None:
    # the deadlock the explorer reports is the one a run that takes its trace ends in
    deadlock = explore(Increments(locks=True, atomic=True)).findings[0]
    simulation = Simulation(lambda: Increments(locks=True, atomic=True), SeededRandom(0))
    for action in deadlock.trace:
        simulation.step(action)
    ended = simulation.run()
    assert ended.status is RunStatus.DEADLOCK
    assert ended.deadlock is not None
    assert deadlock.deadlock is not None
    assert ended.deadlock.cycle_path == deadlock.deadlock.cycle_path


def test_the_start_is_left_unchanged() -> None:
    start = Increments(workers=3)
    before = start.fingerprint()
    explore(start)
    explore(start, strategy="dfs")
    explore(start, strategy="random-walk", bounds=Bounds(walks=5))
    assert start.fingerprint() == before


def test_the_bound_on_states_stops_it() -> None:
    result = explore(Increments(workers=4, rounds=2), bounds=Bounds(max_states=50))
    assert result.stopped_by is StopReason.MAX_STATES
    assert not result.exhausted
    assert result.distinct == 50
    assert "so far; stopped by the bound on distinct states" in result.summary()
    # a space of exactly the bound's size is exhausted, not stopped
    assert explore(Increments(workers=3, atomic=True), bounds=Bounds(max_states=8)).exhausted


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_the_depth_bound_checks_every_state_up_to_it(strategy: str) -> None:
    result = explore(Increments(workers=3), strategy=strategy, bounds=Bounds(max_depth=3))
    assert result.stopped_by is StopReason.MAX_DEPTH
    assert result.depth == 3
    assert result.findings == ()  # the fewest steps that lose an update are four
    assert "stopped by the depth bound" in result.summary()
    full = explore(Increments(workers=3))
    within = explore(Increments(workers=3), bounds=Bounds(max_depth=full.depth))
    assert within.exhausted  # nothing lies deeper: the bound cut nothing off
    assert within.distinct == full.distinct


@dataclass
class Climb:
    """A counter climbs to ``top`` by one or two at a time, and may stay where it is (a step
    back to the same state): one state reached by paths of different lengths, and cycles."""

    top: int = 10
    at: int = 0
    step: int = 0
    violations: list[Violation] = field(default_factory=list)

    def enabled_actions(self) -> Sequence[Action]:
        moves = [Action("climber", "one"), Action("climber", "two"), Action("climber", "stay")]
        return [m for m in moves if self.at + {"one": 1, "two": 2, "stay": 0}[m.kind] <= self.top]

    def apply(self, action: Action) -> Event:
        self.at += {"one": 1, "two": 2, "stay": 0}[action.kind]
        self.step += 1
        return Event(self.step - 1, action)

    def is_finished(self) -> bool:
        return self.at == self.top

    def check_end(self) -> None:
        pass

    def waits(self) -> list[Wait[Hashable]]:
        return []

    def clone(self) -> Self:
        return copy.deepcopy(self)

    def fingerprint(self) -> Hashable:
        return self.at


def test_depth_first_under_a_depth_bound_misses_nothing_within_it() -> None:
    # depth first climbs one at a time, reaching 3 at depth 3 first; 4 to 6 it reaches
    # within three steps only by twos, later: each state reached in fewer steps is expanded
    # again from there
    bounds = Bounds(max_depth=3)
    bfs = explore(Climb(), bounds=bounds)
    dfs = explore(Climb(), strategy="dfs", bounds=bounds)
    assert bfs.distinct == dfs.distinct == 7
    assert bfs.stopped_by is dfs.stopped_by is StopReason.MAX_DEPTH
    for strategy in ("bfs", "dfs"):
        whole = explore(Climb(), strategy=strategy)
        assert whole.exhausted
        assert whole.distinct == 11  # the cycles (stay) end nowhere new
    for depth in range(1, 8):
        bounds = Bounds(max_depth=depth)
        bfs = explore(Increments(workers=3, rounds=2), bounds=bounds)
        dfs = explore(Increments(workers=3, rounds=2), strategy="dfs", bounds=bounds)
        assert dfs.distinct == bfs.distinct, depth


def test_the_time_budget_stops_it() -> None:
    result = explore(Increments(workers=8, rounds=3), bounds=Bounds(time=0.05))
    assert result.stopped_by is StopReason.TIME
    assert result.elapsed < 2
    assert "stopped by the time budget" in result.summary()


def test_random_walks_sample_reproducibly() -> None:
    walks = Bounds(walks=30)
    first = explore(Increments(workers=3), strategy="random-walk", bounds=walks, seed=4)
    again = explore(Increments(workers=3), strategy="random-walk", bounds=walks, seed=4)
    assert (first.states, first.distinct) == (again.states, again.distinct)
    assert [f.trace for f in first.findings] == [f.trace for f in again.findings]
    assert first.stopped_by is StopReason.WALKS
    assert not first.exhausted
    assert first.states == 30 * 7  # each walk: the start and six steps
    assert "sampling never exhausts a space" in first.summary()
    assert [f.name for f in first.findings] == ["lost-update"]


@pytest.mark.slow
def test_progress_is_reported_and_counts_grow() -> None:
    seen: list[Progress] = []
    result = explore(Increments(workers=4, rounds=2), progress=seen.append)
    assert seen, "the final report at least"
    assert seen[-1].distinct == result.distinct
    assert seen[-1].states == result.states
    assert seen[-1].depth == result.depth
    assert all(a.distinct <= b.distinct for a, b in itertools.pairwise(seen))
    assert seen[-1].per_second > 0


def test_bounds_are_checked() -> None:
    for bad in ({"max_states": 0}, {"max_depth": -1}, {"walks": True}, {"max_states": 1.5}):
        with pytest.raises(InvalidParameterError, match="at least 1"):
            Bounds(**bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="positive"):
        Bounds(time=0)
    with pytest.raises(InvalidParameterError, match="bfs, dfs, random-walk"):
        explore(Increments(), strategy="sideways")


class FirstOnly:
    """A reduction that follows the first enabled action only and tells states apart by
    their counter alone: the hooks are what the explorer follows and deduplicates by."""

    def actions(self, model: Model, enabled: Sequence[Action]) -> Sequence[Action]:
        return enabled[:1]

    def independent(self, model: Model, first: Action, second: Action) -> bool:
        return False

    def key(self, model: Model) -> Hashable:
        assert isinstance(model, Increments)
        return (model.counter, tuple(model.done), tuple(model.read))


def test_a_reduction_decides_what_is_followed() -> None:
    result = explore(Increments(workers=3), reduction=FirstOnly())
    assert result.exhausted
    assert result.distinct == 7  # one path: the start and six steps
    assert result.findings == ()  # the path that runs each worker through never loses one
    assert Strategy.parse("bfs") is Strategy.BFS


def test_the_store_keeps_one_parent_pointer_per_state() -> None:
    store = StateStore()
    a, b, c = Action("x", "a"), Action("x", "b"), Action("x", "c")
    assert store.visit(("root",), -1, None, 0) == (0, True)
    assert store.visit(("one", ("shared",)), 0, a, 1) == (1, True)
    assert store.visit(("two", ("shared",)), 1, b, 2) == (2, True)
    assert store.visit(("one", ("shared",)), 2, c, 3) == (1, False)  # seen, not shorter
    assert store.trace(2) == (a, b)
    assert store.visit(("two", ("shared",)), 0, c, 1) == (2, True)  # shorter now
    assert store.trace(2) == (c,)
    assert len(store) == 3
    assert ("one", ("shared",)) in store
    # a part is numbered by equality: a tuple key and a key that is not a tuple never meet
    assert store.visit(("root",), 0, a, 1) == (0, False)
    assert store.visit("root", 0, a, 1) == (3, True)
    assert store.visit((("root",),), 0, a, 1) == (4, True)
    assert store.pack(("one", ("shared",))) == store.pack(("one", ("shared",)))


def test_a_key_numbered_against_another_packs_as_it_does_alone() -> None:
    store = StateStore()
    shared = ("shared", (1, 2))
    parent = store.number(("root", shared, frozenset({1})))
    # the very same part is numbered by identity, an equal one by equality, another afresh
    child = store.number(("root", shared, frozenset({1, 2})), like=parent)
    assert child.numbers[2] == parent.numbers[2]
    assert child.numbers[3] != parent.numbers[3]
    equal = store.number(("root", ("shared", (1, 2)), frozenset({1, 2})), like=parent)
    assert equal.numbers == child.numbers
    fresh = StateStore()
    for key, like in (
        (child.key, parent),
        (("other", shared, frozenset()), child),
        (("root", shared), parent),  # another length: numbered part by part
        ("root", parent),  # not a tuple
        (("root", shared, frozenset({1})), store.number("root")),
    ):
        numbered = store.number(key, like=like)
        assert numbered.key is key
        assert numbered.numbers.tobytes() == store.pack(key)
        # the numbers themselves depend on the order parts were met; equality does not
        assert (numbered.numbers.tobytes() == parent.numbers.tobytes()) == (
            fresh.pack(key) == fresh.pack(parent.key)
        )


# -- partial-order reduction by sleep sets


@dataclass
class Workers:
    """Each worker takes ``private`` steps of its own (or, ``leaps``, two at once: the same
    state is then reached at different depths), then adds one to a shared counter by reading
    it and writing back (a lost update when another writes in between, unless ``atomic``).
    ``footprint`` says what each action touches; ``lie`` makes it call the shared steps
    independent too."""

    workers: int = 2
    private: int = 3
    leaps: bool = False
    atomic: bool = False
    lie: bool = False
    step: int = 0
    counter: int = 0
    violations: list[Violation] = field(default_factory=list)
    progress: list[int] = field(default_factory=list)
    read: list[int | None] = field(default_factory=list)
    added: list[bool] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.progress = self.progress or [0] * self.workers
        self.read = self.read or [None] * self.workers
        self.added = self.added or [False] * self.workers

    def enabled_actions(self) -> Sequence[Action]:
        actions = []
        for w in range(self.workers):
            name = f"w{w}"
            if self.progress[w] < self.private:
                actions.append(Action(name, "private"))
                if self.leaps and self.progress[w] + 2 <= self.private:
                    actions.append(Action(name, "leap"))
            elif not self.added[w]:
                if self.atomic:
                    actions.append(Action(name, "add"))
                else:
                    actions.append(Action(name, "read" if self.read[w] is None else "write"))
        return actions

    def apply(self, action: Action) -> Event:
        w = int(action.actor[1:])
        if action.kind == "private":
            self.progress[w] += 1
        elif action.kind == "leap":
            self.progress[w] += 2
        elif action.kind == "add":
            self.counter += 1
            self.added[w] = True
        elif action.kind == "read":
            self.read[w] = self.counter
        else:
            value = self.read[w]
            assert value is not None
            self.counter = value + 1
            self.added[w] = True
        event = Event(self.step, action)
        self.step += 1
        return event

    def footprint(self, action: Action) -> frozenset[Hashable] | None:
        if action.kind in ("private", "leap") or self.lie:
            return frozenset({action.actor})
        return frozenset({action.actor, "counter"})

    def is_finished(self) -> bool:
        return all(self.added)

    def check_end(self) -> None:
        if self.counter != self.workers:
            self.violations.append(
                Violation("lost-update", self.step, f"counter {self.counter}, expected more")
            )

    def waits(self) -> list[Wait[Hashable]]:
        return []

    def clone(self) -> Self:
        return copy.deepcopy(self)

    def fingerprint(self) -> Hashable:
        return (
            self.counter,
            tuple(self.progress),
            tuple(self.read),
            tuple(self.added),
            tuple(v.invariant for v in self.violations),
        )


def _verdict(result: ExplorationResult) -> tuple[object, ...]:
    return (
        result.distinct,
        result.depth,
        result.finished,
        result.stopped_by,
        [(f.kind, f.name, f.depth) for f in result.findings],
    )


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
@pytest.mark.parametrize(
    "model",
    [
        Workers(),
        Workers(workers=3, private=2),
        Workers(workers=3, private=3, leaps=True),
        Workers(workers=3, atomic=True, leaps=True),
    ],
    ids=["two", "three", "three-leaping", "atomic"],
)
def test_sleep_sets_reach_every_state_and_finding_with_fewer_transitions(
    strategy: str, model: Workers
) -> None:
    plain = explore(model, strategy=strategy)
    sleeping = SleepSets(verify=True)
    reduced = explore(model, strategy=strategy, reduction=sleeping)
    assert plain.exhausted
    assert _verdict(reduced) == _verdict(plain)
    assert sleeping.claims > 0
    assert reduced.states < plain.states
    if not model.atomic:
        assert [f.name for f in reduced.violations] == ["lost-update"]


def test_sleep_sets_enter_each_state_once_where_every_two_workers_commute() -> None:
    """Atomic additions commute (the footprint that calls them independent is true here):
    a cube of 5 x 5 x 5 states, each entered by one transition instead of up to three."""
    model = Workers(workers=3, private=3, atomic=True, lie=True)
    for strategy in ("bfs", "dfs"):
        plain = explore(model, strategy=strategy)
        reduced = explore(model, strategy=strategy, reduction=SleepSets(verify=True))
        assert reduced.distinct == plain.distinct == 5**3
        assert reduced.states == reduced.distinct  # the start, and one arrival at each other
        assert plain.states == 1 + 3 * 5**2 * 4  # every worker's 4 steps from 25 states each


def test_a_footprint_that_misses_something_is_caught_when_verified() -> None:
    with pytest.raises(IndependenceError, match="different states"):
        explore(Workers(lie=True), reduction=SleepSets(verify=True))


def test_verifying_along_runs_checks_pairs_with_the_collector_paused() -> None:
    """Its copies free themselves by reference counting; the collector would walk every one
    of them again and again (a third of the time on a restart of the model)."""

    class Watched(Workers):
        def apply(self, action: Action) -> Event:
            collecting.append(gc.isenabled())
            return super().apply(action)

    collecting: list[bool] = []
    assert gc.isenabled()
    assert verify_along_runs(Watched(atomic=True, lie=True), seeds=2, every=1) > 0
    assert collecting
    assert not any(collecting)
    assert gc.isenabled()
    with pytest.raises(IndependenceError, match="different states"):
        verify_along_runs(Workers(lie=True), every=1)
    assert gc.isenabled()


def test_without_a_reduction_nothing_is_independent() -> None:
    model = Workers()
    assert not NO_REDUCTION.independent(model, Action("w0", "private"), Action("w1", "private"))
    assert SleepSets().independent(model, Action("w0", "private"), Action("w1", "private"))
    assert not SleepSets().independent(model, Action("w0", "private"), Action("w0", "leap"))


def test_asked_to_stop_it_ends_as_a_bound_does_with_what_it_found() -> None:
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 1  # the second time it is asked

    result = explore(Workers(workers=4, private=4), stop=stop)
    assert result.stopped_by is StopReason.STOPPED
    assert not result.exhausted
    assert 0 < result.distinct < explore(Workers(workers=4, private=4)).distinct
    assert result.summary().endswith("so far; stopped by request")


# -- depth first's memory: its path and a world every SNAPSHOT_EVERY steps along it

#: the Ladder worlds alive now, and the most seen alive at once (by ``Ladder.apply``)
LIVE: weakref.WeakSet[object] = weakref.WeakSet()
PEAK = [0]


@dataclass(eq=False)  # counted by identity
class Ladder:
    """Climbs ``height`` rungs, and on every rung may step aside, up to ``wide`` times (where
    the run ends): depth first climbs to the top first, every rung below it keeping its steps
    aside to take when the search comes back. Its worlds are counted while alive (``LIVE``)."""

    height: int = 320
    wide: int = 1
    rung: int = 0
    aside: int = 0
    step: int = 0
    violations: list[Violation] = field(default_factory=list)

    def __post_init__(self) -> None:
        LIVE.add(self)

    def enabled_actions(self) -> Sequence[Action]:
        if self.rung == self.height:
            return []
        up = [Action("climber", "up")] if self.aside == 0 else []
        return up + ([Action("climber", "aside")] if self.aside < self.wide else [])

    def apply(self, action: Action) -> Event:
        if action.kind == "up":
            self.rung += 1
        else:
            self.aside += 1
        self.step += 1
        PEAK[0] = max(PEAK[0], len(LIVE))
        return Event(self.step - 1, action)

    def is_finished(self) -> bool:
        return True

    def check_end(self) -> None:
        pass

    def waits(self) -> list[Wait[Hashable]]:
        return []

    def clone(self) -> Self:
        return Ladder(self.height, self.wide, self.rung, self.aside, self.step)

    def fingerprint(self) -> Hashable:
        return (self.rung, self.aside)


def _peak_worlds(ladder: Ladder) -> tuple[int, ExplorationResult]:
    """The most Ladder worlds alive at once while depth first explores ``ladder``."""
    PEAK[0] = 0
    result = explore(ladder, strategy="dfs")
    return PEAK[0], result


def test_depth_first_keeps_a_world_per_snapshot_along_its_path_not_per_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    every = search.SNAPSHOT_EVERY
    for height in (160, 320):
        peak, result = _peak_worlds(Ladder(height))
        assert result.exhausted
        assert result.distinct == 2 * height + 1
        assert result.depth == height
        assert result.finished == height + 1
        # the start, a snapshot every ``every`` rungs, the worlds above the highest snapshot,
        # the one being copied
        assert peak <= height // every + every + 3
    # keeping the world of every state on the path (as depth first did) holds one per rung
    monkeypatch.setattr(search, "SNAPSHOT_EVERY", 1)
    peak, kept = _peak_worlds(Ladder(320))
    assert peak > 320
    monkeypatch.undo()
    assert _verdict(kept) == _verdict(_peak_worlds(Ladder(320))[1])


def test_the_worlds_depth_first_holds_grow_with_its_depth_not_with_the_states() -> None:
    every = search.SNAPSHOT_EVERY
    narrow_peak, narrow = _peak_worlds(Ladder(160, wide=1))
    wide_peak, wide = _peak_worlds(Ladder(160, wide=40))
    assert wide.distinct == 160 * 41 + 1 > 20 * narrow.distinct
    assert wide.depth == 160 + 39
    assert narrow_peak <= wide_peak <= wide.depth // every + every + 3
    assert len(LIVE) == 0  # none outlive the search


@pytest.mark.parametrize("every", [1, 2, 3, 16])
@pytest.mark.parametrize(
    ("model", "reduction", "bounds"),
    [
        (Increments(workers=3, rounds=2), NO_REDUCTION, Bounds()),
        (Increments(workers=2, locks=True), NO_REDUCTION, Bounds()),
        (Workers(workers=3, private=3, leaps=True), SleepSets(), Bounds()),
        (Workers(workers=3, private=2), SleepSets(), Bounds(max_states=150)),
        (Climb(top=40), NO_REDUCTION, Bounds(max_depth=25)),
    ],
    ids=["lost-update", "crossed-locks", "sleep-sets", "bounded", "depth-bound"],
)
def test_depth_first_finds_the_same_whatever_it_keeps_of_its_path(
    monkeypatch: pytest.MonkeyPatch, every: int, model: Model, reduction: Any, bounds: Bounds
) -> None:
    expected = explore(model, strategy="dfs", reduction=reduction, bounds=bounds)
    monkeypatch.setattr(search, "SNAPSHOT_EVERY", every)
    result = explore(model, strategy="dfs", reduction=reduction, bounds=bounds)
    assert _verdict(result) == _verdict(expected)
    assert (result.states, result.broken) == (expected.states, expected.broken)
    assert [f.trace for f in result.findings] == [f.trace for f in expected.findings]
