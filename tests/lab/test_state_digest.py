"""A state's digest: the same in every process (whatever its hash seed), equal exactly when
the fingerprints are, each part written out as Python's ``==`` tells values apart."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from enum import Enum, IntEnum, StrEnum
from pathlib import Path
from typing import NamedTuple

import pytest

from flinkstate.lab.counterexample import exploration_subject
from flinkstate.lab.spark_exploration import child_of
from flinkstate.lab.state_digest import StateDigester, canonical_bytes, state_digest
from flinkstate.runtime import Fixed
from flinkstate.sim import Model

REPO = Path(__file__).resolve().parents[2]
#: the keyed job at 2 x 2, one record per source (tests/cli/test_explore.py's SMALL)
SMALL = {
    "records": "1",
    "parallelism": "2",
    "source_parallelism": "2",
    "slots_per_tm": "2",
    "checkpoint_interval": "0",
    "network_buffers": "16",
}
#: a walk's steps: always the last enabled action (deterministic, and reaching far)
WALK = 40

#: what a subprocess prints: the digests along the walk
_DIGESTS = f"""
import json
from flinkstate.lab.counterexample import exploration_subject
from flinkstate.lab.state_digest import state_digest
world = exploration_subject("keyed", overrides={SMALL!r}).initial.clone()
digests = [state_digest(world.fingerprint()).hex()]
for _ in range({WALK}):
    enabled = world.enabled_actions()
    if not enabled:
        break
    world.apply(enabled[-1])
    digests.append(state_digest(world.fingerprint()).hex())
print(json.dumps(digests))
"""


def _walk_digests(hash_seed: str) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", _DIGESTS], env=env, capture_output=True, text=True, check=True
    ).stdout
    digests: list[str] = json.loads(out)
    return digests


@pytest.mark.slow
def test_two_processes_with_other_hash_seeds_give_the_same_digests() -> None:
    one, other = _walk_digests("1"), _walk_digests("2")
    assert one == other
    assert len(set(one)) == len(one) > 20  # every step of the walk a new state
    world = exploration_subject("keyed", overrides=SMALL).initial.clone()
    assert state_digest(world.fingerprint()).hex() == one[0]


@pytest.mark.slow
def test_digests_are_equal_exactly_when_fingerprints_are() -> None:
    """Every state of the small keyed job, reached every way (a few thousand)."""
    world = exploration_subject("keyed", overrides=SMALL).initial.clone()
    digester = StateDigester()
    by_print = {world.fingerprint(): digester.digest(world.fingerprint())}
    level: list[Model] = [world]
    while level:
        following = []
        for model in level:
            for action in [] if model.violations else model.enabled_actions():
                child = child_of(model, action)
                print_, digest = child.fingerprint(), digester.digest(child.fingerprint())
                if print_ in by_print:
                    assert by_print[print_] == digest
                else:
                    by_print[print_] = digest
                    following.append(child)
        level = following
    assert len(by_print) == 3725
    assert len(set(by_print.values())) == len(by_print)
    # a digester that remembers nothing gives each the same digest
    fresh = StateDigester()
    assert all(fresh.digest(p) == d for p, d in list(by_print.items())[::97])


class _Kind(Enum):
    ONE = 1
    TWO = 2


class _Text(StrEnum):
    A = "a"


class _Number(IntEnum):
    SEVEN = 7


class _Pair(NamedTuple):
    left: int
    right: str


@dataclasses.dataclass(frozen=True)
class _Value:
    name: str
    count: int
    note: str = dataclasses.field(default="", compare=False)


@dataclasses.dataclass(frozen=True)
class _Other:
    name: str
    count: int


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (frozenset({"x", "y", "z"}), frozenset({"z", "y", "x"})),
        ({"b": 1, "a": 2}, {"a": 2, "b": 1}),
        (_Pair(1, "a"), (1, "a")),
        (_Text.A, "a"),
        (_Number.SEVEN, 7),
        (True, 1),
        (2.0, 2),
        (_Value("v", 1, note="one"), _Value("v", 1, note="other")),
        (Fixed(("keyed", 4)), Fixed(("keyed", 4))),
    ],
    ids=lambda value: _stable_id(value),
)
def test_equal_values_write_the_same_bytes(one: object, other: object) -> None:
    assert one == other
    assert canonical_bytes(one) == canonical_bytes(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (("ab", "c"), ("a", "bc")),
        ((1, 2), [1, 2]),
        (frozenset({(1, 2)}), frozenset({1, 2})),
        (_Kind.ONE, 1),
        (_Kind.ONE, _Kind.TWO),
        (_Value("v", 1), _Other("v", 1)),
        ("1", 1),
        (None, ()),
        (Fixed(("keyed", 4)), ("keyed", 4)),
        (0.5, 0.25),
    ],
    ids=lambda value: _stable_id(value),
)
def test_unequal_values_write_other_bytes(one: object, other: object) -> None:
    assert one != other
    assert canonical_bytes(one) != canonical_bytes(other)


def test_a_value_it_cannot_write_exactly_is_refused() -> None:
    class Opaque:
        pass

    with pytest.raises(TypeError, match="cannot write a Opaque"):
        state_digest(("fine", Opaque()))

    @dataclasses.dataclass(eq=False)
    class ByIdentity:
        name: str

    with pytest.raises(TypeError, match="cannot write a ByIdentity"):
        canonical_bytes(ByIdentity("x"))


def test_a_tuple_and_any_other_fingerprint_never_share_a_digest() -> None:
    assert state_digest(("a",)) != state_digest(frozenset(["a"]))
    assert len(state_digest("a")) == len(state_digest(("a",))) == 16


def _stable_id(value: object) -> str:
    """A test id every worker computes alike: a set's members sorted (its repr follows the
    process's hash seed, and pytest-xdist's workers must collect the same ids)."""
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(repr(v) for v in value)) + "}"
    return repr(value)
