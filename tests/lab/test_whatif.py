"""What-if grids over a scenario."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flinkstate.cli import main
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.whatif import what_if


@pytest.mark.slow
def test_one_tidy_row_per_combination_and_seed() -> None:
    seen: list[tuple[int, int]] = []
    table = what_if(
        "prefilter-deadlock",
        {"prefilter_source": ["network", "heap-segment"], "record_size": [36_000, 37_000]},
        seeds=[0, 1],
        progress=lambda done, total: seen.append((done, total)),
    )
    assert len(table) == 8
    assert seen[-1] == (8, 8)
    assert list(table.columns[:3]) == ["prefilter_source", "record_size", "seed"]
    outcome = {(row.prefilter_source, row.record_size): row.outcome for row in table.itertuples()}
    assert outcome[("network", 37_000)] == "deadlock"
    assert outcome[("network", 36_000)] == "recovered"
    assert outcome[("heap-segment", 37_000)] == "recovered"
    deadlocked = table[table.outcome == "deadlock"]
    assert deadlocked.deadlock_cycle.str.startswith("channel-state-reader").all()
    assert (table[table.prefilter_source == "heap-segment"].heap_peak_bytes > 0).all()
    assert (table.recovered_bytes > 0).all()


def test_bad_grids_fail_before_anything_runs() -> None:
    with pytest.raises(InvalidParameterError, match="unknown parameter 'pool_size'"):
        what_if("baseline-recovery", {"pool_size": [1, 2]}, progress=False)
    with pytest.raises(InvalidParameterError, match="must be a non-empty list"):
        what_if("baseline-recovery", {"records": []}, progress=False)
    with pytest.raises(InvalidParameterError, match="more than 10"):
        what_if("baseline-recovery", {"records": list(range(1, 12))}, max_runs=10, progress=False)
    with pytest.raises(InvalidParameterError, match="segment_size = 0 is below"):
        what_if("baseline-recovery", {"segment_size": [4096, 0]}, progress=False)


@pytest.mark.slow
def test_whatif_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    csv = tmp_path / "grid.csv"
    code = main(
        [
            "whatif",
            "keyed-downscale",
            "--vary",
            "new_parallelism=2,5",
            "--seeds",
            "0,1",
            "--csv",
            str(csv),
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "4 runs of keyed-downscale; all as expected" in out
    assert csv.read_text().splitlines()[0].startswith("new_parallelism,seed,outcome")
    assert main(["whatif", "prefilter-deadlock", "--vary", "record_size=36000", "--quiet"]) == 1
    assert main(["whatif", "keyed-downscale", "--vary", "oops"]) == 2
    assert "--vary takes KEY=V1,V2" in capsys.readouterr().err


def _never(*args: object, **kwargs: object) -> None:
    raise AssertionError("a run started")


@pytest.mark.parametrize(
    ("grid", "options", "message"),
    [
        (
            {"record_size": [1000, 2000]},
            {"base": {"record_size": 3000}},
            "record_size is both set to 3000 for every run and varied over [1000, 2000]",
        ),
        (
            {"record_size": [1000, "1000"]},
            {},
            "grid values for 'record_size' repeat: 1000 and '1000' are both 1000",
        ),
        (
            {"unaligned": ["true", "1"]},
            {},
            "grid values for 'unaligned' repeat: 'true' and '1' are both True",
        ),
        ({"records": [10]}, {"seeds": [0, 1, 0]}, "seed 0 is given twice"),
    ],
)
def test_contradictory_or_repeated_grids_are_refused_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch, grid: dict[str, list[object]], options: Any, message: str
) -> None:
    monkeypatch.setattr("flinkstate.lab.whatif.run_scenario", _never)
    with pytest.raises(InvalidParameterError) as refused:
        what_if("baseline-recovery", grid, progress=False, **options)
    assert message in str(refused.value)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--vary", "records=1,2", "--vary", "records=3"],
            "--vary records is given twice; give all its values in one --vary records=1,2,3",
        ),
        (
            ["--set", "records=2", "--vary", "records=3,4"],
            "records is both set to '2' for every run and varied over ['3', '4']",
        ),
        (["--vary", "nosuch=1,2"], "unknown parameter 'nosuch'"),
        (["--vary", "records=5,-1"], "records = -1 is below its minimum 0"),
        (["--seeds", "1,1"], "seed 1 is given twice"),
    ],
)
def test_whatif_refuses_before_any_run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.setattr("flinkstate.lab.whatif.run_scenario", _never)
    assert main(["whatif", "baseline-recovery", "--quiet", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
