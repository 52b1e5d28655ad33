from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.sim import (
    Action,
    FixedPriority,
    Recorded,
    RoundRobin,
    SeededRandom,
    make_scheduler,
)

ENABLED = [Action("a", "x"), Action("b", "x"), Action("c", "x")]


def test_round_robin_takes_turns() -> None:
    policy = RoundRobin()
    assert policy.choose(0, ENABLED, None) == 0
    assert policy.choose(1, ENABLED, Action("a", "x")) == 1
    assert policy.choose(2, ENABLED, Action("c", "x")) == 0


def test_seeded_random_is_a_function_of_seed_and_step() -> None:
    a, b = SeededRandom(5), SeededRandom(5)
    picks = [a.choose(step, ENABLED, None) for step in range(50)]
    assert picks == [b.choose(step, ENABLED, None) for step in range(50)]
    assert set(picks) == {0, 1, 2}
    assert picks != [SeededRandom(6).choose(step, ENABLED, None) for step in range(50)]


def test_make_scheduler() -> None:
    assert isinstance(make_scheduler("priority"), FixedPriority)
    assert isinstance(make_scheduler("round-robin"), RoundRobin)
    assert isinstance(make_scheduler("random", 3), SeededRandom)
    with pytest.raises(InvalidParameterError, match="unknown scheduling policy"):
        make_scheduler("fair")


def test_recorded_follows_the_trace_then_its_policy() -> None:
    trace = [Action("c", "x"), Action("a", "x")]
    policy = Recorded(trace, RoundRobin())
    assert policy.name == "round-robin"  # the policy the run continues with
    assert policy.choose(0, ENABLED, None) == 2
    assert policy.choose(1, ENABLED, Action("c", "x")) == 0
    assert policy.choose(2, ENABLED, Action("a", "x")) == 1  # then round robin
    with pytest.raises(InvalidParameterError, match=r"recorded action c: x of step 1 is not"):
        policy.choose(0, ENABLED[:2], None)
