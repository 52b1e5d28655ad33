"""A swarm's searcher, without Spark: a seeded random depth-first search that reaches every
state of a small space (in its own order), checks each as the explorer does, and keeps each
finding's shortest path it saw."""

from __future__ import annotations

import pytest

from flinkstate.lab.counterexample import exploration_subject
from flinkstate.lab.spark_exploration import SubjectSpec, finding_of
from flinkstate.lab.state_digest import state_digest
from flinkstate.lab.swarm_search import RandomDepthFirst
from flinkstate.runtime.options import Fault
from flinkstate.sim.explore import explore
from flinkstate.spark.exploration import FoundPath
from tests.lab.test_spark_exploration import DUPLICATE
from tests.lab.test_state_digest import SMALL


def _searcher(faults: frozenset[Fault] = frozenset(), **bounds: int) -> RandomDepthFirst:
    subject = exploration_subject("keyed", overrides=SMALL, faults=faults)
    root = state_digest(subject.initial.clone().fingerprint())
    return RandomDepthFirst(SubjectSpec.of(subject), root, bounds.pop("max_depth", 200), **bounds)


@pytest.mark.slow
def test_an_unbounded_searcher_reaches_every_state_in_its_own_order() -> None:
    searcher = _searcher()
    one, other = searcher.search(1), searcher.search(2)
    assert len(one.digests) == len(set(one.digests)) == 3725
    assert set(one.digests) == set(other.digests)
    assert one.digests != other.digests  # the seeds' orders differ
    assert one.outcomes.count("finished") == 24
    assert searcher.search(1) == one


def test_a_searcher_keeps_to_its_bounds_and_finds_what_the_explorer_finds() -> None:
    searcher = _searcher(DUPLICATE, max_depth=14, max_states=400)
    done = searcher.search(7)
    assert len(done.digests) == 400
    assert done.deepest <= 14
    names = {name for _, name in done.findings}
    assert names  # a deep enough walk breaks one
    subject = exploration_subject("keyed", overrides=SMALL, faults=DUPLICATE)
    assert names <= {f.name for f in explore(subject.initial).findings}
    for (kind, name), (path, after) in done.findings.items():
        found = finding_of(subject.initial, FoundPath(kind, name, tuple(path), after))
        assert found.violation is not None
        assert found.depth == len(path) >= 10  # the shortest there is: 10 steps
        assert 0 < after <= 400
