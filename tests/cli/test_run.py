from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.cli import main
from flinkstate.lab.scenario_trace import load_scenario_trace
from flinkstate.lab.topology_trace import load_topology_trace
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event, Simulation
from flinkstate.sim.trace import TraceError


def test_run_summary_and_trace(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    code = main(
        [
            "run",
            "keyed",
            "--seed",
            "2",
            "--set",
            "records=10",
            "--set",
            "checkpoint_interval=20",
            "--trace",
            str(trace),
            "--json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    summary = json.loads(out)
    assert summary["status"] == "finished"
    assert summary["records_emitted_by_sources"] == 40
    assert summary["records_processed_by_sinks"] == 40
    assert summary["buffers_at_peak"]["queue"] >= 1
    assert [c["type"] for c in summary["checkpoints"]] == ["unaligned"]
    # the header, the phase line, a line per step and the end line
    assert len(trace.read_text().splitlines()) == summary["steps"] + 3
    loaded = load_topology_trace(trace)
    assert loaded.step_count == summary["steps"]
    assert isinstance(loaded.model, NetworkWorld)
    assert len(loaded.model.checkpoints.completed) == 1


def test_run_table_and_steps(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "backpressure", "--steps", "50", "--scheduler", "round-robin"])
    out = capsys.readouterr().out
    assert code == 0
    assert "stopped after 50 steps" in out
    assert "invariants: all held" in out


@pytest.fixture
def no_simulation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any simulation that starts fails the test: what is refused, is refused before it."""

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run started")

    monkeypatch.setattr(Simulation, "run", never)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "nope"], "unknown topology"),
        (["run", "keyed", "--set", "records"], "KEY=VALUE"),
        (["run", "keyed", "--set", "bogus=1"], "unknown parameter 'bogus'"),
        (["run", "keyed", "--set", "segment_size=1024"], "Minimum memory segment size is 4096"),
        (["run", "keyed", "--scheduler", "fair"], "unknown scheduling policy"),
        (
            ["run", "keyed", "--set", "records=10", "--set", "records = 20"],
            "--set records is given twice ('10' and '20'); give it once",
        ),
        (
            ["run", "keyed", "--set", "segment_size=2147483648"],
            "taskmanager.memory.segment-size 2147483648 does not fit a Java int (at most "
            "2147483647 bytes",
        ),
        (
            [
                "run",
                "checkpoint-during-drain",
                "--set",
                "execution.checkpointing.unaligned.during-recovery.enabled=true",
            ],
            "execution.checkpointing.unaligned.during-recovery.enabled is not a Flink option "
            "(Flink 2.3's release notes print it, but Flink reads "
            "execution.checkpointing.during-recovery.enabled",
        ),
        (
            [
                "run",
                "keyed",
                "--set",
                "unaligned=false",
                "--set",
                "execution.checkpointing.unaligned.enabled=true",
            ],
            "unaligned is given twice (by its name and by its Flink key "
            "execution.checkpointing.unaligned.enabled); give it once",
        ),
        (["run", "baseline-recovery", "--steps", "-5"], "--steps must be at least 1, got -5"),
        (["run", "keyed", "--steps", "-1"], "--steps must be at least 1, got -1"),
        (["run", "keyed", "--steps", "0"], "--steps must be at least 1, got 0"),
        # the seed by the rule (and in the words) of the stepper's seed box and constructor
        (
            ["run", "baseline-recovery", "--seed", "-1"],
            "flinkstate: error: seed must be between 0 and 2147483647, got -1",
        ),
        (
            ["run", "keyed", "--seed", "-1"],
            "flinkstate: error: seed must be between 0 and 2147483647, got -1",
        ),
        (
            ["run", "keyed", "--seed", str(2**31)],
            "flinkstate: error: seed must be between 0 and 2147483647, got 2147483648",
        ),
    ],
)
def test_run_bad_input(
    capsys: pytest.CaptureFixture[str],
    no_simulation: None,
    argv: list[str],
    message: str,
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_topologies_lists_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["topologies"]) == 0
    out = capsys.readouterr().out
    for expected in ("keyed:", "backpressure:", "two-input:", "segment_size"):
        assert expected in out


def test_scenarios_are_listed_and_shown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenarios"]) == 0
    listing = capsys.readouterr().out
    assert "keyed-upscale" in listing
    assert "small-page-size" in listing
    assert main(["scenarios", "keyed-downscale"]) == 0
    shown = capsys.readouterr().out
    assert "expected outcome: recovered" in shown
    assert "new_parallelism=3" in shown


@pytest.mark.slow
def test_running_a_scenario_exits_by_its_expectation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["run", "keyed-upscale", "--seed", "1", "--export", str(tmp_path / "d")]) == 0
    out = capsys.readouterr().out
    assert "recovered, as expected" in out
    assert "counter 4 -> 7" in out
    assert "invariants: all held" in out
    assert (tmp_path / "d").is_dir()
    assert main(["run", "small-page-size", "--set", "segment_size=4096"]) == 1
    assert "expected rejected" in capsys.readouterr().out
    assert main(["run", "baseline-recovery", "--json"]) == 0
    assert '"as_expected": true' in capsys.readouterr().out
    assert main(["run", "nothing-like-it"]) == 2
    assert "unknown topology or scenario" in capsys.readouterr().err


def test_a_scenario_that_restarts_twice_describes_both_restarts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Both restarts and the checkpoint between them: the job's checkpoint, the first restart
    (sources 2 -> 3) with its own first checkpoint (old source 2's IDLE status in flight), the
    second restart (3 -> 2) from that one."""
    assert main(["run", "merged-idle-status-passed-through"]) == 0
    lines = capsys.readouterr().out.splitlines()
    first = next(line for line in lines if line.startswith("first restart: "))
    assert first.startswith("first restart: source 2 -> 3; its checkpoint 1: ")
    assert first.endswith(" watermarks, 1 watermark status(es))")
    second = next(line for line in lines if line.startswith("second restart: "))
    assert second.startswith("second restart: source 3 -> 2; ")
    assert not any(line.startswith("restart: ") for line in lines)


@pytest.mark.slow
def test_run_writes_a_page_of_the_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    page = tmp_path / "run.html"
    code = main(["run", "keyed", "--set", "records=10", "--html", str(page), "--json"])
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert code == 0
    assert summary["page"] == str(page)
    assert summary["page_bytes"] == page.stat().st_size > 10_000
    assert "drawing run" in captured.err  # progress while it draws every step
    assert page.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("missing/run.html", "no directory"),
        (".", "it is a directory"),
    ],
)
def test_a_page_that_cannot_be_written_is_refused_before_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, where: str, message: str
) -> None:
    code = main(["run", "prefilter-deadlock", "--html", str(tmp_path / where)])
    captured = capsys.readouterr()
    assert code == 2
    assert message in captured.err
    assert captured.out == ""  # nothing ran
    assert list(tmp_path.iterdir()) == []


def _refusals(tmp_path: Path) -> dict[Path, str]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return {
        tmp_path: "it is a directory",
        tmp_path / "missing" / "t.jsonl": "no directory",
        fifo: "it is a FIFO",
        Path("/proc/version"): "no file can be created in /proc",
    }


@pytest.mark.parametrize("name", ["keyed", "baseline-recovery"])
def test_a_trace_target_is_refused_before_the_run(
    capsys: pytest.CaptureFixture[str],
    no_simulation: None,
    tmp_path: Path,
    name: str,
) -> None:
    for target, reason in _refusals(tmp_path).items():
        assert main(["run", name, "--trace", str(target)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"flinkstate: error: cannot write {target}: {reason}")
        assert err.count("\n") == 1
    assert [p.name for p in tmp_path.iterdir()] == ["fifo"]


def test_ctrl_c_during_the_run_writes_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Simulation, "run", interrupted)
    trace = tmp_path / "t.jsonl"
    assert main(["run", "keyed", "--set", "records=10", "--trace", str(trace)]) == 130
    captured = capsys.readouterr()
    assert captured.err == "flinkstate: interrupted; nothing written\n"
    assert captured.out == ""
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_while_the_trace_is_written_leaves_no_part_of_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    written = Event.to_json
    calls = 0

    def interrupted_after_some(event: Event) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        if calls > 50:
            raise KeyboardInterrupt
        return written(event)

    monkeypatch.setattr(Event, "to_json", interrupted_after_some)
    trace = tmp_path / "t.jsonl"
    trace.write_text("an older trace\n")
    assert main(["run", "keyed", "--set", "records=10", "--trace", str(trace)]) == 130
    assert capsys.readouterr().err == "flinkstate: interrupted; nothing written\n"
    assert calls > 50
    assert list(tmp_path.iterdir()) == [trace]
    assert trace.read_text() == "an older trace\n"


@pytest.mark.slow
def test_a_scenario_is_traced_phase_by_phase(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "cycle.jsonl"
    assert main(["run", "flip-547-rescale-cycle", "--seed", "2", "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    last = out.splitlines()[-1]
    assert last.startswith("trace: steps per phase job ")
    assert last.endswith(f" written to {trace}")
    loaded = load_scenario_trace(trace)
    counts = ", ".join(f"{m.name} {m.steps}" for m in loaded.phases)
    assert last == f"trace: steps per phase {counts} written to {trace}"
    assert [m.name for m in loaded.phases] == ["job", "first-restart", "restart"]
    assert loaded.run.outcome is Outcome.RECOVERED
    assert f"restored job: finished after {loaded.steps} steps" in out
    again = tmp_path / "again.jsonl"
    assert (
        main(["run", "flip-547-rescale-cycle", "--seed", "2", "--json", "--trace", str(again)]) == 0
    )
    assert json.loads(capsys.readouterr().out)["outcome"] == "recovered"
    assert again.read_bytes() == trace.read_bytes()


def test_a_scenario_trace_keeps_the_step_limit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "t.jsonl"
    argv = ["run", "keyed-upscale", "--set", "records=20", "--steps", "100"]
    assert main([*argv, "--trace", str(trace)]) == 1  # no checkpoint within 100 steps
    assert "trace: steps per phase job 100 written to" in capsys.readouterr().out
    loaded = load_scenario_trace(trace, phase="job", step=40)
    assert (loaded.step, loaded.steps, loaded.max_steps) == (40, 100, 100)
    assert loaded.overrides == {"records": 20}


def test_a_refused_scenario_traces_its_header(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "t.jsonl"
    assert main(["run", "small-page-size", "--trace", str(trace)]) == 0
    assert f"trace: no phase ran, the header only written to {trace}" in capsys.readouterr().out
    with pytest.raises(TraceError, match="has no phase 'restart'; it has none"):
        load_scenario_trace(trace)


def test_ctrl_c_during_a_scenario_writes_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Simulation, "run", interrupted)
    trace = tmp_path / "t.jsonl"
    assert main(["run", "baseline-recovery", "--trace", str(trace)]) == 130
    assert capsys.readouterr().err == "flinkstate: interrupted; nothing written\n"
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_after_the_trace_names_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import flinkstate.dataset

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(flinkstate.dataset, "write_dataset", interrupted)
    trace = tmp_path / "t.jsonl"
    argv = ["run", "keyed-upscale", "--set", "records=20", "--trace", str(trace)]
    assert main([*argv, "--export", str(tmp_path / "d")]) == 130
    assert capsys.readouterr().err == f"flinkstate: interrupted; only {trace} written\n"
    assert load_scenario_trace(trace).run.outcome is Outcome.RECOVERED


@pytest.mark.parametrize("name", ["keyed", "baseline-recovery"])
def test_an_export_into_a_folder_of_other_files_is_refused_before_the_run(
    capsys: pytest.CaptureFixture[str],
    no_simulation: None,
    tmp_path: Path,
    name: str,
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["run", name, "--export", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"flinkstate: error: cannot write a dataset to {tmp_path}: the folder holds other files "
        "(notes.txt), not a dataset; name a new or empty folder, or a dataset to replace\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_an_export_replaces_an_earlier_dataset_whole(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from flinkstate.dataset import read_dataset

    export = tmp_path / "d"
    argv = ["run", "keyed", "--set", "checkpoint_interval=150", "--export", str(export)]
    assert main([*argv, "--seed", "1"]) == 0
    assert main([*argv, "--seed", "2"]) == 0
    assert f"exported to {export}" in capsys.readouterr().out
    assert read_dataset(export).manifest["description"].startswith("keyed seed 2 ")
    assert [p.name for p in tmp_path.iterdir()] == ["d"]


_FAILOVER_SETTINGS = [
    "fail_operator=sink",
    "fail_subtask=1",
    "fail_after_records=30",
    "checkpoint_during_failover=true",
    "checkpoint_interval=1",
]


def test_a_task_failure_shows_in_the_run_and_its_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = [arg for s in _FAILOVER_SETTINGS for arg in ("--set", s)]
    assert main(["run", "pipelined-regions", *settings]) == 0
    out = capsys.readouterr().out
    assert "\ntask failure: sink[1] failed at step " in out
    assert "restarted at step" in out
    assert "checkpoint failures:\n  a checkpoint (no id yet) failed at step " in out
    assert "(NOT_ALL_REQUIRED_TASKS_RUNNING, not counted)" in out
    assert main(["run", "pipelined-regions", *settings, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["task_failure"].startswith("sink[1] failed at step ")
    (refused,) = summary["checkpoint_failures"]
    assert "source[1] is CANCELED, sink[1] is FAILED" in refused
    # the rule before FLINK-40482 breaks an invariant: exit status 1
    before = [*settings, "--set", "terminal_tasks=as-finished"]
    assert main(["run", "pipelined-regions", *before]) == 1
    assert "checkpoint-completeness: checkpoint 2 completed without" in capsys.readouterr().out


def test_a_run_without_a_failure_says_nothing_of_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "pipelined-regions", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert "task_failure" not in summary
    assert "checkpoint_failures" not in summary


def test_an_outcome_other_than_expected_at_other_values_says_whose_expectation_it_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A scenario's expected outcome is its own values': a run at other values that ends
    otherwise says so, while a run at the scenario's values says only "as expected"."""
    assert main(["run", "failed-task-counted-as-finished"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "failed-task-counted-as-finished (seed 0): violation, as expected"
    assert main(["run", "failed-task-counted-as-finished", "--set", "terminal_tasks=abort"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        "failed-task-counted-as-finished (seed 0): job-failed, expected violation with the "
        "scenario's own values"
    )
