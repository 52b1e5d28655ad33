"""Scheduling policies: which of the enabled actions runs next.

Every policy is a pure function of (step, enabled actions, previous action), so going back or
replaying needs no hidden generator state, and a seed reproduces a run exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from flinkstate.errors import InvalidParameterError
from flinkstate.sim.action import Action

_MASK64 = 0xFFFFFFFFFFFFFFFF


class Scheduler(Protocol):
    name: str

    def choose(self, step: int, enabled: Sequence[Action], previous: Action | None) -> int:
        """Index into ``enabled`` (never empty) of the action to run at ``step``."""
        ...


class FixedPriority:
    """Always the first enabled action in the model's order (its priority order)."""

    name = "priority"

    def choose(self, step: int, enabled: Sequence[Action], previous: Action | None) -> int:
        return 0


class RoundRobin:
    """Actors take turns: the first enabled action of the next actor after the previous one."""

    name = "round-robin"

    def choose(self, step: int, enabled: Sequence[Action], previous: Action | None) -> int:
        if previous is None:
            return 0
        for index, action in enumerate(enabled):
            if action.actor > previous.actor:
                return index
        return 0


def splitmix64(value: int) -> int:
    """A stateless 64-bit mixer: the same input always gives the same pseudo-random output."""
    value = (value + 0x9E3779B97F4A7C15) & _MASK64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK64
    return value ^ (value >> 31)


class SeededRandom:
    """A pseudo-random choice derived from (seed, step) alone."""

    name = "random"

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._mixed_seed = splitmix64(seed & _MASK64)

    def choose(self, step: int, enabled: Sequence[Action], previous: Action | None) -> int:
        return splitmix64(self._mixed_seed ^ step) % len(enabled)


class Recorded:
    """The actions a trace recorded, one per step, then ``then``'s choices: stepping a run
    again (after going back) follows the recorded run, whichever policy chose its actions (a
    seeded scheduler, or the explorer of every interleaving, which no policy reproduces). It
    keeps the name of ``then``, the policy the run continues with."""

    def __init__(self, actions: Sequence[Action], then: Scheduler) -> None:
        self.actions = tuple(actions)
        self.then = then
        self.name = then.name

    def choose(self, step: int, enabled: Sequence[Action], previous: Action | None) -> int:
        if step >= len(self.actions):
            return self.then.choose(step, enabled, previous)
        recorded = self.actions[step]
        for index, action in enumerate(enabled):
            if action == recorded:
                return index
        raise InvalidParameterError(
            f"the recorded action {recorded} of step {step + 1} is not enabled here"
        )


def make_scheduler(name: str, seed: int = 0) -> Scheduler:
    """A policy by name: ``priority``, ``round-robin`` or ``random``."""
    if name == "priority":
        return FixedPriority()
    if name in ("round-robin", "round_robin", "roundrobin"):
        return RoundRobin()
    if name == "random":
        return SeededRandom(seed)
    raise InvalidParameterError(
        f"unknown scheduling policy {name!r}; choose priority, round-robin or random"
    )
