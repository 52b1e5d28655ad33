"""The engine on a toy model: two workers and two locks, to test stepping, back and deadlock."""

from __future__ import annotations

import copy
import gc
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Self

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.sim import (
    Action,
    Event,
    FixedPriority,
    RoundRobin,
    RunStatus,
    SeededRandom,
    Simulation,
    Violation,
    Wait,
)
from flinkstate.sim.core import RECENT_SNAPSHOTS, kept_snapshot


@dataclass
class Locks:
    """Worker i takes lock (i + first) % 2 then the other, works, releases both.

    With ``crossed`` the workers take the locks in opposite orders and can deadlock.
    """

    crossed: bool = True
    rounds: int = 2
    step: int = 0
    violations: list[Violation] = field(default_factory=list)
    holder: dict[str, str | None] = field(default_factory=lambda: {"A": None, "B": None})
    progress: dict[str, int] = field(default_factory=lambda: {"w0": 0, "w1": 0})
    done: dict[str, int] = field(default_factory=lambda: {"w0": 0, "w1": 0})

    def order(self, worker: str) -> tuple[str, str]:
        return ("B", "A") if self.crossed and worker == "w1" else ("A", "B")

    def enabled_actions(self) -> Sequence[Action]:
        actions = []
        for worker in ("w0", "w1"):
            if self.done[worker] >= self.rounds:
                continue
            stage = self.progress[worker]
            if stage < 2:
                lock = self.order(worker)[stage]
                if self.holder[lock] is None:
                    actions.append(Action(worker, "take", lock))
            else:
                actions.append(Action(worker, "release"))
        return actions

    def apply(self, action: Action) -> Event:
        if action.kind == "take":
            self.holder[action.target] = action.actor
            self.progress[action.actor] += 1
        else:
            for lock in ("A", "B"):
                self.holder[lock] = None
            self.progress[action.actor] = 0
            self.done[action.actor] += 1
        event = Event(self.step, action)
        self.step += 1
        return event

    def is_finished(self) -> bool:
        return all(d >= self.rounds for d in self.done.values())

    def check_end(self) -> None:
        pass

    def waits(self) -> list[Wait]:
        waits = []
        for worker in ("w0", "w1"):
            stage = self.progress[worker]
            if self.done[worker] < self.rounds and stage < 2:
                lock = self.order(worker)[stage]
                holder = self.holder[lock]
                if holder is not None:
                    waits.append(Wait(worker, f"lock {lock}", (holder,)))
        return waits

    def clone(self) -> Self:
        return copy.deepcopy(self)

    def fingerprint(self) -> Hashable:
        return (tuple(self.holder.items()), tuple(self.progress.items()), tuple(self.done.items()))


def test_priority_run_finishes_without_interleaving() -> None:
    sim = Simulation(Locks, FixedPriority())
    result = sim.run()
    assert result.status is RunStatus.FINISHED
    assert result.steps == 12


def test_crossed_locks_deadlock_with_the_cycle_named() -> None:
    sim = Simulation(Locks, FixedPriority())
    sim.step(Action("w0", "take", "A"))
    sim.step(Action("w1", "take", "B"))
    result = sim.run()
    assert result.status is RunStatus.DEADLOCK
    assert result.deadlock is not None
    assert set(result.deadlock.cycle) == {"w0", "w1"}
    text = result.deadlock.describe()
    assert "w0 waits for lock B held by w1" in text
    assert "waits-for cycle" in text


def test_some_seed_finds_the_deadlock_and_seeds_reproduce() -> None:
    outcomes = {}
    for seed in range(40):
        first = Simulation(Locks, SeededRandom(seed)).run()
        again = Simulation(Locks, SeededRandom(seed)).run()
        assert (first.status, first.steps) == (again.status, again.steps)
        outcomes[seed] = first.status
    assert RunStatus.DEADLOCK in outcomes.values()
    assert RunStatus.FINISHED in outcomes.values()


def test_back_returns_to_the_exact_earlier_state() -> None:
    sim = Simulation(lambda: Locks(crossed=False, rounds=50), RoundRobin(), snapshot_every=7)
    sim.run(60)
    states = {}
    replay = Simulation(lambda: Locks(crossed=False, rounds=50), RoundRobin())
    for step in range(61):
        states[step] = replay.model.fingerprint()
        replay.step()
    for target in (59, 41, 35, 0):
        sim.back(sim.step_count - target)
        assert sim.step_count == target
        assert sim.model.fingerprint() == states[target]
    sim.run(60)
    assert sim.model.fingerprint() == states[60]


def test_older_snapshots_thin_out_and_going_back_stays_exact() -> None:
    sim = Simulation(lambda: Locks(crossed=False, rounds=2000), RoundRobin(), snapshot_every=4)
    sim.run(4000)
    kept = list(sim.snapshot_steps)
    newest = 4000 // 4
    assert kept == [s for s in range(0, 4001, 4) if kept_snapshot(s // 4, newest)]
    assert len(kept) < 70  # of 1,001 taken
    assert kept[-RECENT_SNAPSHOTS - 1 :] == list(range(4000 - 4 * RECENT_SNAPSHOTS, 4001, 4))
    replay = Simulation(lambda: Locks(crossed=False, rounds=2000), RoundRobin())
    states = {}
    for step in range(4001):
        states[step] = replay.model.fingerprint()
        replay.step()
    for target in (3999, 3001, 1234, 3, 0):
        sim.goto(target)
        assert sim.model.fingerprint() == states[target]
    sim.run(4000)
    assert sim.model.fingerprint() == states[4000]


def test_forgotten_snapshots_leave_the_start_and_going_back_replays_from_it() -> None:
    sim = Simulation(lambda: Locks(crossed=False, rounds=50), RoundRobin(), snapshot_every=5)
    sim.run(40)
    assert sim.snapshot_steps[:3] == (0, 5, 10)
    before = sim.model.fingerprint()
    sim.back(1)
    at_39 = sim.model.fingerprint()
    sim.step()
    sim.forget_snapshots()
    assert sim.snapshot_steps == (0,)
    assert sim.model.fingerprint() == before  # the running state is not touched
    sim.back(1)
    assert sim.model.fingerprint() == at_39


def test_a_run_nobody_steps_back_through_keeps_only_its_start() -> None:
    sim = Simulation(lambda: Locks(crossed=False, rounds=50), RoundRobin(), snapshot_every=None)
    sim.run(60)
    assert sim.snapshot_steps == (0,)
    replay = Simulation(lambda: Locks(crossed=False, rounds=50), RoundRobin())
    states = {}
    for step in range(61):
        states[step] = replay.model.fingerprint()
        replay.step()
    sim.back(3)  # replayed from the start
    assert sim.model.fingerprint() == states[57]
    sim.run(60)
    assert sim.model.fingerprint() == states[60]
    with pytest.raises(InvalidParameterError, match="at least 1"):
        Simulation(Locks, RoundRobin(), snapshot_every=0)


def test_a_run_without_snapshots_starts_from_the_factory_and_copies_nothing() -> None:
    # its start is a fresh model from the factory when asked for, not a copy of the model run
    # taken at step 0 (which a big world shares its components with, copying on write)
    made: list[Locks] = []

    def factory() -> Locks:
        made.append(Locks(crossed=False, rounds=50))
        return made[-1]

    sim = Simulation(factory, RoundRobin(), snapshot_every=None)
    sim.run(30)
    assert len(made) == 1  # the model run only
    fresh = Simulation(lambda: Locks(crossed=False, rounds=50), RoundRobin())
    assert sim.snapshot_at(0).fingerprint() == fresh.model.fingerprint()
    assert len(made) == 2  # asked for: made anew
    fresh.run(27)
    sim.back(3)
    assert sim.model.fingerprint() == fresh.model.fingerprint()
    assert len(made) == 3


def test_a_snapshot_once_dropped_is_never_kept_again() -> None:
    for number in range(300):
        dropped = [n for n in range(number, 5000) if not kept_snapshot(number, n)]
        if dropped:
            assert dropped == list(range(dropped[0], 5000))
    assert sum(kept_snapshot(n, 100_000) for n in range(100_001)) < 150


def test_reset_and_explicit_choice() -> None:
    sim = Simulation(Locks, FixedPriority())
    with pytest.raises(InvalidParameterError, match="not enabled"):
        sim.step(Action("w0", "release"))
    sim.step(sim.enabled_actions()[-1])
    assert sim.history == [Action("w1", "take", "B")]
    sim.reset()
    assert sim.step_count == 0
    assert sim.model.fingerprint() == Locks().fingerprint()


def test_the_next_action_is_the_one_the_step_takes_and_looking_changes_nothing() -> None:
    for seed in range(20):
        looked = Simulation(Locks, SeededRandom(seed))
        plain = Simulation(Locks, SeededRandom(seed))
        while (action := looked.next_action()) is not None:
            assert looked.next_action() == action  # looking twice sees the same
            event = looked.step()
            assert event is not None
            assert event.action == action
            assert plain.step() == event
        assert plain.step() is None
        assert looked.history == plain.history
        assert looked.model.fingerprint() == plain.model.fingerprint()


def test_run_until_predicate_and_step_limit() -> None:
    sim = Simulation(lambda: Locks(crossed=False), FixedPriority())
    assert sim.run(lambda model: model.done["w0"] == 1).status is RunStatus.STOPPED
    assert sim.model.done["w0"] == 1
    assert sim.run(5).steps == 5


def test_bad_arguments() -> None:
    with pytest.raises(InvalidParameterError):
        Simulation(Locks, FixedPriority(), snapshot_every=0)
    sim = Simulation(Locks, FixedPriority())
    with pytest.raises(InvalidParameterError):
        sim.goto(3)
    with pytest.raises(InvalidParameterError):
        sim.back(-1)


def test_run_pauses_the_collector_and_restores_it() -> None:
    seen: list[bool] = []

    def note(model: object) -> bool:
        seen.append(gc.isenabled())
        return len(seen) > 3

    assert gc.isenabled()
    Simulation(lambda: Locks(crossed=False), FixedPriority()).run(note)
    assert seen
    assert not any(seen)
    assert gc.isenabled()

    def fail(model: object) -> bool:
        raise RuntimeError("a predicate that fails")

    with pytest.raises(RuntimeError):
        Simulation(lambda: Locks(crossed=False), FixedPriority()).run(fail)
    assert gc.isenabled()

    gc.disable()
    try:
        Simulation(lambda: Locks(crossed=False), FixedPriority()).run()
        assert not gc.isenabled()  # a caller's own choice is left alone
    finally:
        gc.enable()


def test_replay_steps_a_fresh_model_through_the_recorded_actions() -> None:
    sim = Simulation(lambda: Locks(crossed=False, rounds=5), RoundRobin())
    sim.run()
    model, events = sim.replay()
    assert model is not sim.model
    assert model.fingerprint() != sim.model.fingerprint()  # nothing applied yet
    replayed = list(events)
    assert [e.action for e in replayed] == sim.history
    assert model.fingerprint() == sim.model.fingerprint()
    assert sim.step_count == len(replayed)  # the simulation itself is untouched
    assert gc.isenabled()  # the collector is back once the replay is done
