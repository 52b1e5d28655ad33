"""The model's side of the search on Spark, without Spark: the start built from its spec, paths
replayed from the longest shared prefix to the states they name, each state checked as the
single-process explorer checks it, and a worker whose start differs refused."""

from __future__ import annotations

import random

import pytest

from flinkstate.lab.counterexample import exploration_subject
from flinkstate.lab.spark_exploration import (
    ModelExpander,
    Replay,
    SubjectSpec,
    finding_of,
    verdict,
)
from flinkstate.lab.state_digest import state_digest
from flinkstate.runtime.options import Fault
from flinkstate.sim import Model
from flinkstate.spark.exploration import FoundPath, Outcome
from tests.lab.test_state_digest import SMALL

DUPLICATE = Fault.parse_all(["duplicate-record"])


def _walk(start: Model, rng: random.Random, steps: int) -> tuple[list[int], Model]:
    model = start.clone()
    path = []
    for _ in range(steps):
        enabled = model.enabled_actions()
        if not enabled or model.violations:
            break
        path.append(rng.randrange(len(enabled)))
        model.apply(enabled[path[-1]])
    return path, model


def test_replayed_paths_reach_the_states_their_actions_reach() -> None:
    subject = exploration_subject("keyed", overrides=SMALL)
    start = subject.initial.clone()
    rng = random.Random(3)
    walks = [_walk(start, rng, rng.randrange(1, 25)) for _ in range(30)]
    replay = Replay(SubjectSpec.of(subject).start())
    for path, model in sorted(walks, key=lambda w: w[0]):
        assert replay.state(path).fingerprint() == model.fingerprint()
        assert replay.path == path
    assert replay.state([]).fingerprint() == start.fingerprint()


def test_the_expander_checks_and_names_children_by_digest() -> None:
    subject = exploration_subject(
        "keyed", overrides=SMALL, faults=Fault.parse_all(["duplicate-record"])
    )
    start = subject.initial.clone()
    expander = ModelExpander(SubjectSpec.of(subject), state_digest(start.fingerprint()))
    [(path, root)] = list(expander.expand(iter([[]]), follow=True))
    assert path == []
    assert root.outcome is Outcome.OPEN
    enabled = start.enabled_actions()
    assert [index for _, index in root.children] == list(range(len(enabled)))
    for (digest, _), action in zip(root.children, enabled, strict=True):
        child = start.clone()
        child.apply(action)
        assert digest == state_digest(child.fingerprint())
    [(_, leaf)] = list(expander.expand(iter([[]]), follow=False))
    assert leaf.children == ()


def test_a_finding_is_replayed_on_the_driver_to_its_trace_and_violation() -> None:
    subject = exploration_subject(
        "keyed", overrides=SMALL, faults=Fault.parse_all(["duplicate-record"])
    )
    start = subject.initial.clone()
    rng = random.Random(0)
    for _ in range(200):  # a walk that breaks exactly-once
        path, model = _walk(start, rng, 40)
        if verdict(model, len(path)).outcome is Outcome.BROKEN:
            break
    checked = verdict(model, len(path))
    kind, name = checked.findings()[0]
    found = finding_of(start, FoundPath(kind, name, tuple(path), 7))
    assert found.depth == len(path)
    assert found.violation is not None
    assert found.violation.invariant == name
    assert found.found_after == 7
    replayed = start.clone()
    for action in found.trace:
        replayed.apply(action)
    assert replayed.fingerprint() == model.fingerprint()


def test_a_worker_that_builds_another_start_is_refused() -> None:
    subject = exploration_subject("keyed", overrides=SMALL)
    expander = ModelExpander(SubjectSpec.of(subject), b"\0" * 16)
    with pytest.raises(RuntimeError, match="another start for keyed than the driver's"):
        list(expander.expand(iter([[]]), follow=True))
