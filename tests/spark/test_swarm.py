"""The swarm on Spark: searchers over the executors, their states counted distinct together
(every state of a small space, however many searchers reached it), and each finding's shortest
path among them replayed on the driver to a trace that breaks the invariant."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from flinkstate.cli import main
from flinkstate.lab.counterexample import exploration_subject
from flinkstate.lab.swarm_search import explore_swarm
from flinkstate.runtime.options import Fault
from flinkstate.sim.explore import Bounds, StopReason, explore
from tests.cli.test_explore import SMALL, sets

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow

OVERRIDES = dict(v.split("=") for v in SMALL)


def test_searchers_that_each_exhaust_a_small_space_count_it_once(spark: SparkSession) -> None:
    subject = exploration_subject("keyed", overrides=OVERRIDES)
    result = explore_swarm(spark, subject, Bounds(), searchers=2, seed=3)
    assert (result.distinct, result.finished, result.depth) == (3725, 24, 30)
    assert result.stopped_by is StopReason.WALKS
    assert result.states > 2 * 3725  # each searcher arrives at every state, some again


def test_a_swarm_finds_a_faults_violations_with_traces_that_break_them(
    spark: SparkSession,
) -> None:
    faults = Fault.parse_all(["duplicate-record"])
    subject = exploration_subject("keyed", overrides=OVERRIDES, faults=faults)
    bfs = explore(subject.initial)
    result = explore_swarm(spark, subject, Bounds(max_states=300), searchers=4)
    assert {f.name for f in result.findings} == {f.name for f in bfs.findings}
    shortest = {f.name: f.depth for f in bfs.findings}
    for finding in result.findings:
        assert finding.depth >= shortest[finding.name]
        world = subject.initial.clone()
        for action in finding.trace:
            world.apply(action)
        assert finding.name in {v.invariant for v in world.violations}
    assert result.distinct <= 4 * 300


def test_the_command_line_runs_a_swarm(
    spark: SparkSession, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["explore", "keyed", *sets(SMALL), "--spark", "--swarm", "2", "--max-depth", "8"]
    assert main([*args, "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("keyed, a swarm of 2 random dfs on Spark, seed 0: explored ")
    assert first.endswith(
        "no deadlock, every invariant holds so far; stopped by the number of random walks "
        "(sampling never exhausts a space)"
    )
    assert main(["explore", "keyed", "--swarm", "2"]) == 2
    assert "give --spark" in capsys.readouterr().err
