"""``flinkstate rescale``: tables on stdout, a whole HTML report or none, one-line refusals."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import flinkstate.spark.session
from flinkstate.cli import main
from flinkstate.cli.rescale import parse_targets
from flinkstate.errors import InvalidParameterError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"

#: ``flinkstate rescale`` in a fresh process (this one's Spark is running already), then what
#: its run left: the variable and the address the JVM was started with
_CLI_THEN_ADDRESS = """\
import os, sys
from flinkstate.cli import main
status = main(sys.argv[1:])
from pyspark.sql import SparkSession
context = SparkSession.getActiveSession().sparkContext
print("address:", context._jvm.java.lang.System.getenv("SPARK_LOCAL_IP"),
      context.getConf().get("spark.driver.host"))
sys.exit(status)
"""


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
def test_bad_input_is_refused_before_spark_and_the_old_report_kept(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: str,
    arguments: list[str],
    message: str,
) -> None:
    """Refused in a second, where ``--to 0`` waited 26 s for Spark to start."""
    monkeypatch.setattr(flinkstate.spark.session, "spark_session", _spark_never_starts)
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


def _spark_never_starts(*args: object, **kwargs: object) -> None:
    raise AssertionError("Spark started")


def test_a_report_that_cannot_be_written_is_refused_before_spark(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--html /proc/x.html`` was refused only after the whole Spark run."""
    monkeypatch.setattr(flinkstate.spark.session, "spark_session", _spark_never_starts)
    refused = {
        tmp_path / "no" / "r.html": f"no directory {tmp_path / 'no'}",
        tmp_path: "it is a directory",
        Path("/dev/null"): "it is a character device",
        Path("/proc/r.html"): "no file can be created in /proc",
    }
    for target, reason in refused.items():
        assert main(_rescale(str(DATA / "keyed"), "--to", "3", "--html", str(target))) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"flinkstate: error: cannot write {target}: {reason}")
        assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_targets_accept_lists_and_ranges() -> None:
    assert parse_targets(["5", "1,8", "2-4"]) == [5, 1, 8, 2, 3, 4]
    with pytest.raises(InvalidParameterError, match="runs backwards"):
        parse_targets(["5-2"])
    # a parallelism named twice was rescaled once, without a word
    with pytest.raises(InvalidParameterError, match="names parallelism 3 more than once"):
        parse_targets(["3,3"])
    with pytest.raises(InvalidParameterError, match="names parallelism 3, 4 more than once"):
        parse_targets(["5", "3,8", "2-4", "4"])


def test_a_run_prints_its_progress_and_nothing_of_java(tmp_path: Path) -> None:
    """Spark's JVM says nothing on the terminal (no log4j banner, WARN lines, stage bars or
    JVM warnings); the only stderr is the command's own progress bar. Without SPARK_LOCAL_IP
    the embedded driver is started on loopback."""
    env = {k: v for k, v in os.environ.items() if k != "SPARK_LOCAL_IP"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", _CLI_THEN_ADDRESS, "rescale", str(DATA / "keyed"), "--to", "3"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "source->counter: per new subtask" in done.stdout
    assert "address: 127.0.0.1 127.0.0.1" in done.stdout
    pieces = [piece for piece in re.split(r"[\r\n]+", done.stderr) if piece.strip()]
    noise = [p for p in pieces if not p.startswith("rescale 3: ")]
    assert pieces, "no progress bar"
    assert noise == [], "\n".join(noise)


def test_a_jvm_that_cannot_start_is_one_line_with_what_it_said(tmp_path: Path) -> None:
    """Spark's JVM prints into a file, not the terminal; when it cannot start, the refusal
    carries what it printed and no traceback, and no file is left behind."""
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java"), "TMPDIR": str(tmp_path)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "flinkstate", *_rescale(str(DATA / "keyed"), "--to", "3")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("flinkstate: error: Spark's JVM did not start")
    assert f"{tmp_path / 'no-java'}/bin/java" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.glob("flinkstate-spark-jvm-*")) == []


def _jvm_in_group(group: int) -> bool:
    """Whether a process of process group ``group`` is Spark's driver JVM."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            command = (stat.parent / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        if int(fields[2]) == group and b"SparkSubmit" in command:
            return True
    return False


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize(
    ("sent", "later"),
    [(signal.SIGINT, 0.0), (signal.SIGINT, 3.0), (signal.SIGINT, 8.0), (signal.SIGTERM, 0.0)],
    ids=["ctrl-c-as-the-jvm-launches", "ctrl-c-3-s-later", "ctrl-c-8-s-later", "sigterm"],
)
def test_a_signal_while_the_jvm_starts_is_one_line_and_ends_the_jvm(
    sent: signal.Signals, later: float, tmp_path: Path
) -> None:
    """Ctrl-C while Spark's JVM started printed py4j's "ERROR:root:KeyboardInterrupt while
    sending command." and tracebacks before the one line; and a JVM interrupted before its
    gateway listened ran on, orphaned, for good. Ctrl-C reaches the whole foreground group
    (pyspark's JVM ignores it); SIGTERM only the command."""
    env = {**os.environ, "FLINKSTATE_STATE_DIR": str(tmp_path / "state")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "flinkstate", *_rescale(str(DATA / "keyed"), "--to", "2-4")]
    with subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    ) as process:  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not _jvm_in_group(process.pid) and process.poll() is None:
                assert time.monotonic() < deadline, "no JVM started"
                time.sleep(0.05)
            time.sleep(later)
            if sent == signal.SIGINT:
                os.killpg(process.pid, sent)
            else:
                process.send_signal(sent)
            out, errors = process.communicate(timeout=120)
            deadline = time.monotonic() + 30  # the JVM's shutdown takes a moment
            while _group_alive(process.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not _group_alive(process.pid), "the JVM outlived the command"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    assert (process.returncode, errors, out) == (
        128 + sent,
        "flinkstate: interrupted; nothing written\n",
        "",
    )


def test_a_flink_checkpoint_rescales_as_its_exported_dataset(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``rescale CHECKPOINT`` (read by the executors) prints what ``inspect --export`` and
    ``rescale DATASET`` print, the description line aside."""
    from tests.flinkcheckpoint.test_metadata import CHECKPOINTS

    checkpoint = next(p for p in CHECKPOINTS if p.parents[1].name == "keyed-hash-p2-p4")
    how = ["--exchange", "to-record->slow-counter=hash:f0%1000"]
    how += ["--record-type", "Tuple2<Long,String>"]
    assert main(["inspect", str(checkpoint), *how, "--export", str(tmp_path / "ds")]) == 0
    capsys.readouterr()
    outputs = []
    for source, extra in ((str(checkpoint), how), (str(tmp_path / "ds"), [])):
        status = main(_rescale(source, *extra, "--to", "3"))
        out, err = capsys.readouterr()
        assert status == 0, err
        outputs.append(out.splitlines()[1:])
    assert outputs[0] == outputs[1]
    assert any("to-record->slow-counter" in line for line in outputs[0])
    status = main(_rescale(str(tmp_path / "ds"), *how, "--to", "3"))
    assert status != 0
    assert "not a checkpoint Flink wrote" in capsys.readouterr().err
