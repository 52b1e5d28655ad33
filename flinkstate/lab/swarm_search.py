"""A swarm of seeded, bounded random depth-first searches on Spark: the model's side of
:mod:`flinkstate.spark.swarm`, and its answer as the explorer's result.

Each searcher builds the start from the subject's spec (as the breadth-first search on Spark
does), then goes depth first taking the enabled actions in an order its seed shuffles, each
state once (by its digest), to the depth bound and until it has stored its share of states or
its time is up. A state is checked as the explorer checks one. What lies deep is found sooner
by many searchers going deep in different orders than by a breadth-first search that must
finish every level above it; but no searcher exhausts anything, and a finding's trace is the
shortest one a searcher happened on, not the shortest there is: the result says it sampled.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from flinkstate.collector import collector_paused
from flinkstate.lab.counterexample import ExplorationSubject
from flinkstate.lab.spark_exploration import SubjectSpec, child_of, finding_of, verdict
from flinkstate.lab.state_digest import StateDigester
from flinkstate.sim import Model
from flinkstate.sim.explore import Bounds, ExplorationResult, StopReason, Strategy
from flinkstate.spark.exploration import FoundPath, Outcome
from flinkstate.spark.swarm import Searched, swarm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: a searcher's depth bound when none is given
DEFAULT_SWARM_DEPTH = 200
#: seeds of one swarm are this far apart from the next seed's
SEED_STRIDE = 1_000_003


@dataclass(frozen=True)
class RandomDepthFirst:
    """One searcher of a swarm, pickled to the executors: ``root`` is the start's digest on
    the driver (a worker that builds another start fails the job)."""

    spec: SubjectSpec
    root: bytes
    max_depth: int
    max_states: int | None = None
    seconds: float | None = None

    def search(self, seed: int) -> Searched:
        digester = StateDigester()
        start = self.spec.checked_start(self.root, digester)
        with collector_paused(float("inf")):
            return _Walk(self, random.Random(seed), digester).run(start)


class _Walk:
    """A searcher's run: its stack of (state, path, action indices still to take)."""

    def __init__(self, bounds: RandomDepthFirst, rng: random.Random, digester: StateDigester):
        self.bounds = bounds
        self.rng = rng
        self.digester = digester
        self.seen: dict[bytes, str] = {}
        self.findings: dict[tuple[str, str], tuple[list[int], int]] = {}
        self.arrivals = 1
        self.deepest = 0
        self.deadline = None if bounds.seconds is None else time.monotonic() + bounds.seconds

    def run(self, start: Model) -> Searched:
        stack: list[tuple[Model, list[int], list[int]]] = []
        self.reach(start, [], stack)
        limit = self.bounds.max_states
        while stack and (limit is None or len(self.seen) < limit):
            if self.deadline is not None and time.monotonic() >= self.deadline:
                break
            model, path, todo = stack[-1]
            if not todo:
                stack.pop()
                continue
            index = todo.pop()
            self.arrivals += 1
            self.reach(child_of(model, model.enabled_actions()[index]), [*path, index], stack)
        return Searched(
            list(self.seen), list(self.seen.values()), self.findings, self.arrivals, self.deepest
        )

    def reach(
        self, model: Model, path: list[int], stack: list[tuple[Model, list[int], list[int]]]
    ) -> None:
        """Check a state reached along ``path``, if new, and put it on the stack to go on."""
        digest = self.digester.digest(model.fingerprint())
        if digest in self.seen:
            return
        found = verdict(model, len(path))
        self.seen[digest] = found.outcome.value
        self.deepest = max(self.deepest, len(path))
        for key in found.findings():
            known = self.findings.get(key)
            if known is None or (len(path), path) < (len(known[0]), known[0]):
                self.findings[key] = (path, len(self.seen))
        if found.outcome is Outcome.OPEN and len(path) < self.bounds.max_depth:
            order = list(range(len(found.enabled)))
            self.rng.shuffle(order)
            stack.append((model, path, order))


def explore_swarm(
    spark: SparkSession,
    subject: ExplorationSubject,
    bounds: Bounds,
    searchers: int,
    seed: int = 0,
) -> ExplorationResult:
    """``searchers`` random depth-first searches from ``subject``'s start over Spark's
    executors, each within ``bounds`` (its depth, its own distinct states, its time), as the
    explorer's result (sampling: stopped by the number of searches, never exhausted)."""
    root = StateDigester().digest(subject.initial.clone().fingerprint())
    searcher = RandomDepthFirst(
        SubjectSpec.of(subject),
        root,
        bounds.max_depth or DEFAULT_SWARM_DEPTH,
        bounds.max_states,
        bounds.time,
    )
    first = seed * SEED_STRIDE
    answer = swarm(spark, searcher, range(first, first + searchers))
    initial = cast(Model, subject.initial)
    findings = [finding_of(initial, FoundPath(*found)) for found in answer.findings]
    return ExplorationResult(
        Strategy.DFS,
        Bounds(max_states=bounds.max_states, max_depth=searcher.max_depth, time=bounds.time),
        answer.states,
        answer.distinct,
        answer.depth,
        answer.elapsed,
        StopReason.WALKS,
        tuple(findings),
        answer.finished,
        answer.broken,
    )
