"""``flinkstate rescale``: tables on stdout, a whole HTML report or none, one-line refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from flinkstate.cli import main
from flinkstate.cli.rescale import parse_targets
from flinkstate.errors import InvalidParameterError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[2] / "data"


def _rescale(*arguments: str) -> list[str]:
    return ["rescale", *arguments, "--master", "local[2]", "--quiet"]


def test_report_is_self_contained(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.html"
    status = main(_rescale(str(DATA / "spanning-records"), "--to", "3", "--html", str(report)))
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "source->first: per new subtask" in out
    assert f"wrote {report}" in out
    page = report.read_text(encoding="utf-8")
    assert page.count("Plotly.newPlot") == 2 * 2 + 2  # sankey + bars per exchange, 2 heatmaps
    assert "<script src=" not in page  # plotly.js is inside, the page opens offline
    assert page.rstrip().endswith("</html>")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary left


def test_sweep_prints_a_row_per_parallelism_and_exchange(
    spark: SparkSession, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(_rescale(str(DATA / "keyed"), "--to", "2-4", "--to", "6"))
    out, err = capsys.readouterr()
    assert status == 0, err
    rows = [line.split() for line in out.splitlines() if "source->counter" in line]
    assert [row[0] for row in rows if row[0].isdigit()] == ["2", "3", "4", "6"]
    assert "per new subtask" not in out  # a sweep prints the comparison only


def _broken(tmp_path: Path, change: str) -> Path:
    copy = tmp_path / "checkpoint"
    shutil.copytree(DATA / "keyed", copy)
    if change == "missing table":
        (copy / "fragments.parquet").unlink()
    elif change == "version":
        manifest = json.loads((copy / "manifest.json").read_text())
        manifest["version"] = 99
        (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


@pytest.mark.parametrize(
    ("change", "arguments", "message"),
    [
        ("missing table", ["--to", "3"], "missing the fragments table"),
        ("version", ["--to", "3"], "dataset version 99"),
        ("", ["--to", "0"], "new parallelism 0 is out of range"),
        ("", ["--to", "three"], "--to 'three' is not a parallelism"),
        ("", ["--to", "3", "--operator", "nope"], "no operator 'nope'"),
        ("", ["--to", "3", "--operator", "counter"], "forward partitioning"),
        ("", ["--to", "500"], "maximum parallelism"),
    ],
)
def test_bad_input_is_refused_and_the_old_report_kept(
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: str,
    arguments: list[str],
    message: str,
) -> None:
    report = tmp_path / "report.html"
    report.write_text("the previous report")
    checkpoint = _broken(tmp_path, change)
    status = main(_rescale(str(checkpoint), *arguments, "--html", str(report)))
    _out, err = capsys.readouterr()
    assert status == 2
    assert message in err
    assert "Traceback" not in err
    assert report.read_text() == "the previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint", "report.html"]


def test_report_into_a_missing_folder_is_refused_before_spark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        _rescale(str(DATA / "keyed"), "--to", "3", "--html", str(tmp_path / "no" / "r.html"))
    )
    assert status == 2
    assert "no directory" in capsys.readouterr().err


def test_targets_accept_lists_and_ranges() -> None:
    assert parse_targets(["5", "3,8", "2-4"]) == [5, 3, 8, 2, 3, 4]
    with pytest.raises(InvalidParameterError, match="runs backwards"):
        parse_targets(["5-2"])
