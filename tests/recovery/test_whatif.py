"""What-if grids over a scenario."""

from __future__ import annotations

from pathlib import Path

import pytest

from flinkstate.cli import main
from flinkstate.errors import InvalidParameterError
from flinkstate.recovery.whatif import what_if


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
