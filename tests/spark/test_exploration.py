"""The breadth-first search on Spark against the single-process explorer: the same distinct
states, depth, verdicts and findings, with the same shortest traces (and when they were found),
within each bound; the command line's --spark; bad input in one line before Spark starts."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from flinkstate.cli import main
from flinkstate.lab.counterexample import exploration_subject
from flinkstate.lab.spark_exploration import explore_on_spark
from flinkstate.runtime.options import Fault
from flinkstate.sim.explore import Bounds, ExplorationResult, StopReason, explore
from flinkstate.spark.exploration import LevelProgress
from tests.cli.test_explore import SEQUENTIAL, SMALL, sets

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: (name, overrides, seed, faults, bounds): a fault's three violations; a restart's deadlock;
#: the depth bound; the bound on distinct states, crossed in the middle of a level
CASES = {
    "duplicate-record": ("keyed", SMALL, 0, ("duplicate-record",), Bounds()),
    "selective-reading-deadlock": ("selective-reading-all-gates", SEQUENTIAL, 4, (), Bounds()),
    "depth-bound": ("keyed", SMALL, 0, (), Bounds(max_depth=9)),
    "state-bound": ("keyed", SMALL, 0, (), Bounds(max_states=700)),
}


def _findings(result: ExplorationResult) -> list[tuple[object, ...]]:
    return [
        (f.kind, f.name, f.trace, f.found_after, f.describe(), f.deadlock) for f in result.findings
    ]


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_the_same_states_and_findings_as_the_single_process_search(
    case: str, spark: SparkSession
) -> None:
    name, values, seed, faults, bounds = CASES[case]
    subject = exploration_subject(
        name,
        overrides=dict(v.split("=") for v in values),
        seed=seed,
        faults=Fault.parse_all(faults),
    )
    single = explore(subject.initial, bounds=bounds)
    levels: list[LevelProgress] = []
    spread = explore_on_spark(spark, subject, bounds, levels.append)
    assert (spread.distinct, spread.depth, spread.stopped_by) == (
        single.distinct,
        single.depth,
        single.stopped_by,
    )
    assert (spread.finished, spread.broken) == (single.finished, single.broken)
    assert _findings(spread) == _findings(single)
    assert spread.summary() == single.summary()
    if single.stopped_by is not StopReason.MAX_STATES:  # arrivals: up to the bound's moment
        assert spread.states == single.states
    assert [level.depth for level in levels] == list(range(spread.depth + 1))
    assert levels[-1].distinct == spread.distinct
    assert sum(level.frontier for level in levels) == spread.distinct


@pytest.mark.slow
def test_the_command_line_explores_on_spark_as_without(
    spark: SparkSession, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["explore", "keyed", *sets(SMALL), "--fault", "duplicate-record", "--json"]
    assert main([*args, "--reduction", "none"]) == 1
    single = json.loads(capsys.readouterr().out)
    assert main([*args, "--spark"]) == 1
    spread = json.loads(capsys.readouterr().out)
    for document in (single, spread):
        del document["elapsed_seconds"]
        document["bounds"].pop("max_memory", None)
    assert spread == single
    assert main(["explore", "keyed", *sets(SMALL), "--max-depth", "3", "--spark"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == (
        "keyed, bfs on Spark, seed 0: explored 13 distinct states to depth 3: no deadlock, "
        "every invariant holds so far; stopped by the depth bound (every state up to it "
        "explored)"
    )
    assert "explore keyed on Spark: depth 3, 6 states on the level, 13 distinct, " in (captured.err)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["nope"], "unknown topology or scenario 'nope'"),
        (["keyed", "--master", "foo"], "Spark master 'foo' is not a master URL"),
        (["keyed", "--master", "spark://127.0.0.1:1"], "cannot reach the Spark master"),
        (["keyed", "--strategy", "dfs"], "--spark explores breadth first only"),
        (["keyed", "--max-memory", "1gb"], "--max-memory bounds a search in this process"),
        (["keyed", "--reduction", "persistent-sets"], "--reduction persistent-sets is of the"),
    ],
)
@pytest.mark.filterwarnings("ignore")
def test_bad_input_is_one_line_before_spark_starts(
    args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explore", *args, "--spark"]) == 2
    err = capsys.readouterr().err
    assert said in err
    assert len(err.strip().splitlines()) == 1


def test_a_master_without_spark_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "keyed", "--master", "local[1]"]) == 2
    assert (
        "--master and --swarm are of the search on Spark: give --spark" in capsys.readouterr().err
    )
