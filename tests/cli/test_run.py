from __future__ import annotations

import json
from pathlib import Path

import pytest

from flinkstate.cli import main


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
    assert len(trace.read_text().splitlines()) == summary["steps"] + 1


def test_run_table_and_steps(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "backpressure", "--steps", "50", "--scheduler", "round-robin"])
    out = capsys.readouterr().out
    assert code == 0
    assert "stopped after 50 steps" in out
    assert "invariants: all held" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "nope"], "unknown topology"),
        (["run", "keyed", "--set", "records"], "KEY=VALUE"),
        (["run", "keyed", "--set", "bogus=1"], "unknown parameter 'bogus'"),
        (["run", "keyed", "--set", "segment_size=1024"], "Minimum memory segment size is 4096"),
        (["run", "keyed", "--scheduler", "fair"], "unknown scheduling policy"),
    ],
)
def test_run_bad_input(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


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
    assert main(["run", "baseline-recovery", "--trace", str(tmp_path / "t.jsonl")]) == 2
    assert "--trace records a single run" in capsys.readouterr().err
    assert main(["run", "nothing-like-it"]) == 2
    assert "unknown topology or scenario" in capsys.readouterr().err


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
