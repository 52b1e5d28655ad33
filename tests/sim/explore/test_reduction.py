"""Persistent sets on a toy model: one actor's actions followed alone where no other may
interfere, and the proviso that keeps a persistent set from putting another actor off forever
around a cycle."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Self

import pytest

from flinkstate.sim import Action, Event, Violation, Wait
from flinkstate.sim.explore import NO_REDUCTION, PersistentSets, SleepSets, explore


@dataclass
class Blinker:
    """Actor ``lamp`` blinks forever (on, off, on, ...); actor ``alarm`` rings once, which
    breaks the invariant ``quiet``; actor ``clock`` ticks ``ticks`` times. The three touch
    nothing in common and no one interferes with another, so each actor's actions alone are
    a persistent set; the lamp's closes a cycle at once."""

    ticks: int = 0
    alarm: bool = True
    lamp: bool = False
    rung: bool = False
    ticked: int = 0
    step: int = 0
    violations: list[Violation] = field(default_factory=list)

    def enabled_actions(self) -> Sequence[Action]:
        actions = [Action("lamp", "blink")]
        if self.alarm and not self.rung:
            actions.append(Action("alarm", "ring"))
        if self.ticked < self.ticks:
            actions.append(Action("clock", "tick"))
        return actions

    def apply(self, action: Action) -> Event:
        if action.actor == "lamp":
            self.lamp = not self.lamp
        elif action.actor == "alarm":
            self.rung = True
            self.violations.append(Violation("quiet", self.step, "the alarm rang"))
        else:
            self.ticked += 1
        self.step += 1
        return Event(self.step - 1, action)

    def is_finished(self) -> bool:
        return False

    def waits(self) -> Sequence[Wait[Hashable]]:
        return ()

    def check_end(self) -> None:
        pass

    def clone(self) -> Self:
        return type(self)(
            self.ticks,
            self.alarm,
            self.lamp,
            self.rung,
            self.ticked,
            self.step,
            list(self.violations),
        )

    def fingerprint(self) -> Hashable:
        return (self.lamp, self.rung, self.ticked, tuple(v.invariant for v in self.violations))

    def footprint(self, action: Action) -> frozenset[Hashable] | None:
        return frozenset((action.actor,))

    def isolates(self) -> bool:
        return True

    def interferes(self, actions: Sequence[Action], touched: frozenset[Hashable]) -> bool:
        return False


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_the_proviso_follows_what_a_cycle_of_one_actor_would_put_off(strategy: str) -> None:
    plain = explore(Blinker(), strategy=strategy, reduction=NO_REDUCTION)
    reduced = explore(Blinker(), strategy=strategy, reduction=PersistentSets())
    assert [f.name for f in plain.findings] == ["quiet"]
    # the lamp's blinks alone are a persistent set from the start; the blink back to the
    # start closes a cycle, so the proviso expands a state fully and the alarm is heard
    assert [f.name for f in reduced.findings] == ["quiet"]
    assert reduced.persistent >= 1
    assert reduced.proviso >= 1


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_a_persistent_set_stores_fewer_states_than_sleep_sets(strategy: str) -> None:
    """Without the alarm, the lamp and the clock never interfere: every interleaving of
    three ticks with the blinks is one state per (lamp, ticks) pair without reduction;
    following the clock's ticks alone, then the lamp's, stores fewer."""
    model = Blinker(ticks=3, alarm=False)
    plain = explore(model, strategy=strategy, reduction=SleepSets())
    reduced = explore(model, strategy=strategy, reduction=PersistentSets())
    assert plain.exhausted
    assert reduced.exhausted
    assert plain.distinct == 8  # lamp on or off, 0 to 3 ticks
    assert reduced.distinct < plain.distinct
    assert reduced.findings == plain.findings == ()


def test_a_model_that_cannot_say_who_interferes_is_explored_by_sleep_sets() -> None:
    class Opaque(Blinker):
        def isolates(self) -> bool:
            return False

    reduced = explore(Opaque(ticks=2, alarm=False), reduction=PersistentSets())
    assert reduced.persistent == 0
    assert reduced.distinct == 6
