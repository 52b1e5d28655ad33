"""``flinkstate whatif --csv``: the target refused before the runs, the table written whole."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import flinkstate.lab.whatif
from flinkstate.cli import main

_GRID = ["whatif", "baseline-recovery", "--quiet", "--csv"]


def test_a_csv_target_is_refused_before_the_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """It was written after every run, and a missing folder read ``error: : None``."""

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the runs started")

    monkeypatch.setattr(flinkstate.lab.whatif, "what_if", never)
    refused = {
        tmp_path / "missing" / "grid.csv": f"no directory {tmp_path / 'missing'}",
        tmp_path: "it is a directory",
        Path("/proc/grid.csv"): "no file can be created in /proc",
    }
    for target, reason in refused.items():
        assert main([*_GRID, str(target)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"flinkstate: error: cannot write {target}: {reason}")
        assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_an_interrupted_csv_leaves_the_earlier_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    csv = tmp_path / "grid.csv"
    csv.write_text("the earlier table\n")
    written = pd.DataFrame.to_csv

    def half_then_ctrl_c(frame: pd.DataFrame, out: object, **kwargs: object) -> None:
        written(frame.head(1), out, **kwargs)  # type: ignore[call-overload]
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_ctrl_c)
    try:
        status = main([*_GRID, str(csv)])
    except KeyboardInterrupt:  # until main turns Ctrl-C into its own exit status
        status = 130
    assert status == 130
    assert csv.read_text() == "the earlier table\n"
    assert list(tmp_path.iterdir()) == [csv]
    monkeypatch.undo()
    assert main([*_GRID, str(csv)]) == 0
    assert f"table written to {csv}" in capsys.readouterr().out
    assert csv.read_text().startswith("seed,outcome,expected,as_expected,")
    assert list(tmp_path.iterdir()) == [csv]


def test_an_empty_name_is_a_name_nobody_has(capsys: pytest.CaptureFixture[str]) -> None:
    """``flinkstate scenarios ''`` listed every scenario, exit 0."""
    assert main(["scenarios", ""]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("flinkstate: error: unknown scenario ''; known: ")


@pytest.mark.parametrize("seeds", ["-1", "0,2147483648"])
def test_a_seed_outside_runs_rule_is_refused_before_the_runs(
    seeds: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each was run (and printed as its seed) before: the seeds by flinkstate run's rule."""

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the runs started")

    monkeypatch.setattr(flinkstate.lab.whatif, "what_if", never)
    assert main(["whatif", "baseline-recovery", "--quiet", "--seeds", seeds]) == 2
    err = capsys.readouterr().err
    assert err.startswith("flinkstate: error: --seeds must be between 0 and 2147483647, got ")
    assert err.count("\n") == 1


@pytest.mark.parametrize("said", ["FLINK-35351", "flink-35351", " 35351 "])
def test_a_bug_lists_the_scenarios_of_its_fix(
    said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scenarios", "--bug", said]) == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.splitlines()[2:] if line.startswith("custom")]
    assert listed == [
        "custom-partitioner-input-kept",
        "custom-partitioner-input-split",
        "custom-partitioner-input-still-kept",
    ]
    assert "violation" in out
    assert "recovered" in out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--bug", "FLINK-1"], "no scenario names FLINK-1; the bugs the catalogue names: "),
        (["--bug", "FLINK-x"], "'FLINK-x' is not a Flink issue: write it as FLINK-NNNNN"),
        (["--bug", "\u00b2"], "'\u00b2' is not a Flink issue"),
        (["--bug", ""], "'' is not a Flink issue"),
        (["baseline-recovery", "--bug", "35351"], "give a scenario's name or --bug, not both"),
    ],
)
def test_a_bug_the_catalogue_does_not_name_is_said_in_one_line(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scenarios", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"flinkstate: error: {said}")
    assert captured.err.count("\n") == 1
