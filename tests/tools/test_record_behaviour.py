"""``tools/record-behaviour.py``: a recording is reproducible, and a comparison names the
first line where two recordings part."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.tools import load_script


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return load_script("record-behaviour.py", "record_behaviour")


def test_every_scenario_seed_and_topology_is_recorded(tool: ModuleType) -> None:
    from flinkstate.catalogue.scenarios import SCENARIOS
    from flinkstate.catalogue.topologies import CATALOGUE

    planned = dict(tool.runs(None))
    assert len(planned) == 3 * len(SCENARIOS) + len(CATALOGUE) + len(tool.EXPLORATIONS)
    assert planned["baseline-recovery.seed2"] == (
        "run",
        "baseline-recovery",
        "--seed",
        "2",
        "--json",
    )
    assert planned["explore.keyed-bfs"][:2] == ("explore", "keyed")
    assert [stem for stem, _ in tool.runs({"keyed", "explore.keyed-bfs"})] == [
        "keyed.seed0",
        "explore.keyed-bfs",
    ]


@pytest.mark.slow
def test_two_recordings_are_identical_and_a_change_is_named(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    only = {"baseline-recovery", "keyed", "explore.keyed-dfs-depth"}
    assert tool.record(tmp_path / "a", 1, only) == 0
    assert tool.record(tmp_path / "b", 1, only) == 0
    assert len(json.loads((tmp_path / "a" / "manifest.json").read_text())) == 9
    explored = json.loads((tmp_path / "a" / "explore.keyed-dfs-depth.summary.json").read_text())
    assert explored["states"] > 0
    assert "elapsed_seconds" not in explored
    capsys.readouterr()
    assert tool.compare(tmp_path / "a", tmp_path / "b") == 0
    assert "9 of 9 files byte-identical" in capsys.readouterr().out
    trace = tmp_path / "b" / "keyed.seed0.trace.jsonl"
    lines = trace.read_text().splitlines()
    lines[3] = lines[3].replace('"step"', '"stop"', 1)
    trace.write_text("\n".join(lines) + "\n")
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    manifest[trace.name] = "changed"
    (tmp_path / "b" / "manifest.json").write_text(json.dumps(manifest))
    assert tool.compare(tmp_path / "a", tmp_path / "b") == 1
    out = capsys.readouterr().out
    assert "8 of 9 files byte-identical" in out
    assert "keyed.seed0.trace.jsonl: line 4, column " in out
