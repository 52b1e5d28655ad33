"""``flinkstate explore``: the verdict, each counterexample with its trace, traces written
whole that load back to the state found, bad input in one line, Ctrl-C."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.cli import main
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.lab.scenario_trace import load_scenario_trace
from flinkstate.lab.topology_trace import load_topology_trace
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import explore as exploration

#: the keyed job at 2 x 2, one record per source, every channel local: a few thousand states
SMALL = [
    "records=1",
    "parallelism=2",
    "source_parallelism=2",
    "slots_per_tm=2",
    "checkpoint_interval=0",
    "network_buffers=16",
]
#: the sequential reader's restart at its smallest (seed 4's checkpoint holds both inputs)
SEQUENTIAL = [
    "records=2",
    "record_size=100",
    "checkpoint_interval=2",
    "cost=0",
    "parallelism=1",
    "source_parallelism=1",
    "network_buffers=32",
]


def sets(values: list[str]) -> list[str]:
    return [arg for value in values for arg in ("--set", value)]


def explore_cli(*args: str) -> int:
    return main(["explore", *args, "--quiet"])


@pytest.mark.slow
def test_an_exhausted_space_says_so_plainly(capsys: pytest.CaptureFixture[str]) -> None:
    assert explore_cli("keyed", *sets(SMALL)) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("keyed, bfs, sleep sets, seed 0: explored ")
    assert first.endswith(" distinct states to depth 30: no deadlock, every invariant holds")


@pytest.mark.slow
def test_without_reduction_every_transition_is_followed_to_the_same_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explore", "keyed", *sets(SMALL), "--json"]) == 0
    reduced = json.loads(capsys.readouterr().out)
    assert main(["explore", "keyed", *sets(SMALL), "--reduction", "none", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert (reduced["reduction"], plain["reduction"]) == ("sleep-sets", "none")
    assert reduced["summary"] == plain["summary"]
    assert reduced["distinct_states"] == plain["distinct_states"]
    assert reduced["states"] < plain["states"]


@pytest.mark.slow
def test_a_fault_is_shown_with_its_depth_and_trace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "found"
    code = explore_cli(
        "keyed", *sets(SMALL), "--fault", "duplicate-record", "--trace-dir", str(folder)
    )
    assert code == 1
    out = capsys.readouterr().out
    assert ": 3 invariant violations" in out.splitlines()[0]
    assert "violation of exactly-once at depth 10 (found after 253 states): task counter[0] " in out
    assert "  trace: task source[0]: emit; task source[1]: emit; " in out
    assert "... 2 more ...; " in out  # ten actions: three, the two left out, the last five
    assert f"  written to {folder / 'violation-exactly-once.jsonl'}" in out
    assert sorted(p.name for p in folder.iterdir()) == [
        "violation-channel-order.jsonl",
        "violation-exactly-once.jsonl",
        "violation-key-order.jsonl",
    ]


@pytest.mark.slow
def test_a_written_trace_loads_back_to_the_state_found(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    assert (
        explore_cli(
            "keyed",
            *sets(SMALL),
            "--fault",
            "duplicate-record",
            "--trace-dir",
            str(folder),
            "--json",
        )
        == 1
    )
    loaded = load_topology_trace(folder / "violation-exactly-once.jsonl")
    world = loaded.model
    assert isinstance(world, NetworkWorld)
    assert "exactly-once" in {v.invariant for v in world.violations}
    # the state the explorer found: its trace applied to the start
    start = topology("keyed").build(
        dict(v.split("=") for v in SMALL), faults=frozenset({"duplicate-record"})
    )
    found = exploration.explore(start).violations
    shortest = next(f for f in found if f.name == "exactly-once")
    replayed = start.clone()
    for action in shortest.trace:
        replayed.apply(action)
    assert world.fingerprint() == replayed.fingerprint()


def test_a_scenarios_deadlock_and_its_trace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "deadlocks"
    code = explore_cli(
        "selective-reading-all-gates",
        "--seed",
        "4",
        *sets(SEQUENTIAL),
        "--trace-dir",
        str(folder),
        "--json",
    )
    assert code == 1
    result = json.loads(capsys.readouterr().out)
    assert result["kind"] == "scenario"
    assert result["phase"] == "restart"
    assert result["exhausted"] is True
    assert result["stopped_by"] == "exhausted"
    [deadlock] = result["findings"]
    assert deadlock["kind"] == "deadlock"
    assert deadlock["name"].startswith("request-partitions sequential[0]<first -> ")
    assert deadlock["trace_file"] == str(folder / "deadlock-1.jsonl")
    loaded = load_scenario_trace(folder / "deadlock-1.jsonl")
    assert loaded.step == deadlock["depth"]
    assert loaded.run.result is not None
    assert loaded.run.result.deadlock is not None
    assert loaded.run.result.deadlock.cycle_path == deadlock["name"]
    # the restart the explorer started from, with the trace's actions
    run = prepare_scenario(
        "selective-reading-all-gates", seed=4, overrides=dict(v.split("=") for v in SEQUENTIAL)
    )
    assert run.simulation is not None
    for text in deadlock["trace"]:
        run.simulation.step(next(a for a in run.simulation.enabled_actions() if str(a) == text))
    assert loaded.run.world is not None
    assert run.world is not None
    assert loaded.run.world.fingerprint() == run.world.fingerprint()


@pytest.mark.slow
def test_the_fixed_variant_is_exhausted_with_nothing_found(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        explore_cli("selective-reading-per-gate", "--seed", "4", *sets(SEQUENTIAL), "--json") == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["exhausted"] is True
    assert result["findings"] == []
    assert result["summary"].endswith(": no deadlock, every invariant holds")


def test_a_bound_that_stops_it_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert explore_cli("keyed", *sets(SMALL), "--max-states", "100") == 0
    assert "so far; stopped by the bound on distinct states" in capsys.readouterr().out
    assert explore_cli("keyed", *sets(SMALL), "--strategy", "dfs", "--max-depth", "5") == 0
    assert "stopped by the depth bound (every state up to it explored)" in capsys.readouterr().out
    assert explore_cli("keyed", *sets(SMALL), "--strategy", "random-walk", "--walks", "3") == 0
    assert "stopped by the number of random walks" in capsys.readouterr().out


def test_the_job_before_the_restart_can_be_explored(capsys: pytest.CaptureFixture[str]) -> None:
    code = explore_cli(
        "selective-reading-per-gate",
        "--phase",
        "job",
        *sets(SEQUENTIAL),
        "--max-states",
        "50",
        "--json",
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["phase"] == "job"
    assert result["distinct_states"] == 50


def test_a_fault_breaks_the_job_when_the_job_is_explored(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the fault is put into the phase explored: here the job itself, not only its restart
    code = explore_cli(
        "baseline-recovery",
        "--phase",
        "job",
        *sets(["records=2", "parallelism=1", "source_parallelism=1"]),
        "--fault",
        "duplicate-record",
        "--json",
    )
    assert code == 1
    result = json.loads(capsys.readouterr().out)
    assert result["faults"] == ["duplicate-record"]
    assert "exactly-once" in {f["name"] for f in result["findings"]}


@pytest.mark.slow
def test_no_counterexample_leaves_an_empty_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "traces"
    assert (
        explore_cli(
            "keyed", *sets(SMALL), "--fault", "duplicate-record", "--trace-dir", str(folder)
        )
        == 1
    )
    capsys.readouterr()
    # a later run replaces the traces of an earlier one, whole
    assert explore_cli("keyed", *sets(SMALL), "--max-states", "10", "--trace-dir", str(folder)) == 0
    assert f"no counterexample to write: {folder} is empty" in capsys.readouterr().out
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuch"], "unknown topology or scenario 'nosuch'; topologies: "),
        (
            ["keyed", "--max-states", "0"],
            "--max-states takes a whole number of at least 1, got '0'",
        ),
        (
            ["keyed", "--max-depth", "deep"],
            "--max-depth takes a whole number of at least 1, got 'deep'",
        ),
        (["keyed", "--time", "-1"], "--time takes a positive number of seconds, got '-1'"),
        (["keyed", "--time", "nan"], "--time takes a positive number of seconds, got 'nan'"),
        (["keyed", "--set", "parallelism=0"], "parallelism = 0 is below its minimum 1"),
        (["keyed", "--strategy", "sideways"], "unknown strategy 'sideways'"),
        (["keyed", "--reduction", "magic"], "unknown partial order 'magic'"),
        (["keyed", "--phase", "job"], "--phase picks a scenario's run; keyed is a topology"),
        (["keyed", "--walks", "3"], "--walks counts random walks"),
        (["keyed", "--fault", "gremlins"], "unknown fault(s) ['gremlins']"),
        # taken, and printed as the seed explored, before: run's rule
        (["keyed", "--seed", "-1"], "seed must be between 0 and 2147483647, got -1"),
        (["keyed", "--seed", str(2**31)], "seed must be between 0 and 2147483647"),
        (
            ["keyed", "--max-memory", "0"],
            "--max-memory takes a memory size of at least 1mb (512mb, 2gb), got '0'",
        ),
        (
            ["keyed", "--max-memory", "4 GiB"],
            "--max-memory: memory size unit 'gib' of '4 GiB' is none of Flink's units",
        ),
        (
            ["baseline-recovery", "--set", "checkpoint_interval=0"],
            "baseline-recovery has no restart to explore: no-checkpoint",
        ),
    ],
)
def test_bad_input_is_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert explore_cli(*args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"flinkstate: error: {message}")


def test_the_memory_budget_stops_it_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    # any process holds more than a mebibyte: the first reading (64 states in) stops it
    assert explore_cli("keyed", *sets(SMALL), "--max-memory", "1mb", "--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["stopped_by"] == "max-memory"
    assert not result["exhausted"]
    assert result["states"] == exploration.search.CLOCK_EVERY
    assert result["memory"]["max_memory"] == 1024**2
    assert result["memory"]["resident"] > 1024**2
    assert (
        "no deadlock, every invariant holds so far; stopped by the memory budget ("
        in (result["summary"])
    )
    assert explore_cli("keyed", *sets(SMALL), "--strategy", "dfs", "--max-memory", "1m") == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("keyed, dfs, sleep sets, seed 0: explored ")
    assert first.endswith(" resident of 1 MiB)")
    # a budget that does not stop it is not in the answer (the bounds that do are)
    assert explore_cli("keyed", *sets(SMALL), "--max-states", "50", "--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["stopped_by"] == "max-states"
    assert "memory" not in result


def test_running_out_of_memory_is_one_line_naming_the_budget(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = exploration.explore

    def starved() -> int:
        raise MemoryError

    def explore_starved(*args: Any, **kwargs: Any) -> exploration.ExplorationResult:
        return real(*args, **kwargs, resident=starved)

    monkeypatch.setattr("flinkstate.cli.explore.explore", explore_starved)
    assert explore_cli("keyed", *sets(SMALL), "--max-memory", "3gb") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("flinkstate: error: out of memory after ")
    assert " distinct states to depth " in err
    assert "before the memory budget of 3,072 MiB was reached" in err

    def no_memory(*args: Any, **kwargs: Any) -> exploration.ExplorationResult:
        raise MemoryError

    monkeypatch.setattr("flinkstate.cli.explore.explore", no_memory)
    assert explore_cli("keyed", *sets(SMALL)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("flinkstate: error: out of memory before or after the search (")


@pytest.mark.slow
def test_depth_first_finds_what_it_found_before_it_let_its_worlds_go(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The counts and the traces depth first gave when it kept the world of every state on
    its path: it now keeps one every ``SNAPSHOT_EVERY`` steps and takes the others again."""
    code = explore_cli(
        "keyed", *sets(SMALL), "--strategy", "dfs", "--fault", "duplicate-record", "--json"
    )
    assert code == 1
    result = json.loads(capsys.readouterr().out)
    counts = ("distinct_states", "states", "depth", "finished_states", "broken_states")
    # (2,789 distinct states before record paths were routes rather than numbers drawn)
    assert [result[name] for name in counts] == [1973, 2492, 24, 0, 262]
    assert [(f["name"], f["depth"], f["found_after"]) for f in result["findings"]] == [
        ("channel-order", 10, 894),
        ("exactly-once", 10, 894),
        ("key-order", 10, 894),
    ]
    assert result["findings"][0]["trace"] == [
        "task source[0]: emit",
        "task source[1]: emit",
        "task source[1]: request-buffer source[1]>counter[0]",
        "task source[1]: write source[1]>counter[0]",
        "task source[1]: finish",
        "task counter[0]: poll counter[0]<source[1]",
        "task counter[0]: process",
        "task counter[0]: request-buffer counter[0]>sink[0]",
        "task counter[0]: write counter[0]>sink[0]",
        "task counter[0]: process",
    ]
    assert explore_cli("keyed", *sets(SMALL), "--strategy", "dfs", "--max-states", "2000") == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        "keyed, dfs, sleep sets, seed 0: explored 2000 distinct states to depth 30: no deadlock, "
        "every invariant holds so far; stopped by the bound on distinct states",
        "  2690 states reached (with repeats); 14 distinct states where the run finished",
    ]


def test_a_folder_of_other_files_is_refused_before_exploring(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("explored before the folder was checked")

    monkeypatch.setattr("flinkstate.cli.explore.explore", never)
    assert explore_cli("keyed", "--trace-dir", str(tmp_path)) == 2
    assert "the folder holds other files (notes.txt)" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_ctrl_c_while_exploring_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("flinkstate.cli.explore.explore", interrupted)
    folder = tmp_path / "traces"
    assert explore_cli("keyed", *sets(SMALL), "--trace-dir", str(folder)) == 130
    assert capsys.readouterr().err == "flinkstate: interrupted; nothing written\n"
    assert not folder.exists()


@pytest.mark.slow
def test_ctrl_c_while_writing_traces_leaves_no_half_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import flinkstate.lab.counterexample as counterexample

    written: list[Any] = []

    def interrupted_after_one(path: Path, header: Any, events: Any) -> int:
        if written:
            raise KeyboardInterrupt
        written.append(path)
        return 0

    monkeypatch.setattr(counterexample, "write_topology_trace", interrupted_after_one)
    folder = tmp_path / "traces"
    code = explore_cli(
        "keyed", *sets(SMALL), "--fault", "duplicate-record", "--trace-dir", str(folder)
    )
    assert code == 130
    assert capsys.readouterr().err == "flinkstate: interrupted; nothing written\n"
    assert written
    assert not folder.exists()
    assert list(tmp_path.iterdir()) == []


def test_the_progress_bar_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "keyed", *sets(SMALL), "--max-states", "300"]) == 0
    captured = capsys.readouterr()
    assert "explore keyed" in captured.err
    assert "state" in captured.err
    assert "explore keyed" not in captured.out
