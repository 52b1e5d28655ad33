"""``flinkstate spark-server`` without a server running: status, stop, a stale state file, the
refusals made before any JVM starts. A running server's commands are in
``tests/spark/test_connect_server.py``, which starts the one server they need."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from flinkstate.cli import main
from flinkstate.spark import connect_server


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv(connect_server.STATE_DIR_ENV, str(folder))
    return folder


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _write_state(folder: Path, pid: int, port: int = 1) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    state = connect_server.ServerState(
        pid=pid,
        port=port,
        token="t",
        log=str(folder / "spark-connect.log"),
        python="3.11",
        package=str(connect_server.PACKAGE),
        spark_version="4.3.0",
        session="00000000-0000-4000-8000-000000000000",
    )
    path = folder / "spark-connect.json"
    path.write_text(json.dumps(state.__dict__), encoding="utf-8")
    return path


def test_status_and_stop_without_a_server(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "spark-server", "status") == (1, "not running\n", "")
    assert run(capsys, "spark-server", "stop") == (0, "no Spark Connect server was running\n", "")
    assert state_dir.stat().st_mode & 0o777 == 0o700  # per user: nobody else reads the token


@pytest.mark.parametrize("alive", [False, True], ids=["pid gone", "pid reused"])
def test_a_stale_state_file_is_removed(
    state_dir: Path, capsys: pytest.CaptureFixture[str], alive: bool
) -> None:
    # a pid that no longer exists, or one now used by another program (this one)
    pid = os.getpid() if alive else _dead_pid()
    state = _write_state(state_dir, pid)
    code, out, err = run(capsys, "spark-server", "status")
    assert (code, err) == (1, "")
    assert out == f"not running (pid {pid} is gone; its state file was removed)\n"
    assert not state.exists()
    assert connect_server.running_server() is None
    _write_state(state_dir, pid)
    assert run(capsys, "spark-server", "stop") == (0, "no Spark Connect server was running\n", "")
    assert not state.exists()


def test_a_state_file_of_another_version_is_not_a_server(state_dir: Path) -> None:
    state_dir.mkdir()
    (state_dir / "spark-connect.json").write_text('{"pid": "x"}', encoding="utf-8")
    assert connect_server.read_state() is None
    assert connect_server.running_server() is None
    assert connect_server.stop() is None
    assert not (state_dir / "spark-connect.json").exists()


def test_a_taken_port_is_refused_before_spark_starts(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = run(capsys, "spark-server", "start", "--port", str(port))
    assert (code, out) == (2, "")
    assert err == (
        f"flinkstate: error: port {port} on 127.0.0.1 is taken (Address already in use); "
        "choose another with --port\n"
    )
    assert not (state_dir / "spark-connect.json").exists()


@pytest.mark.parametrize("port", ["0", "70000"])
def test_a_port_out_of_range_is_one_line(
    state_dir: Path, capsys: pytest.CaptureFixture[str], port: str
) -> None:
    code, out, err = run(capsys, "spark-server", "start", "--port", port)
    assert (code, out) == (2, "")
    assert err == f"flinkstate: error: port {port} is not a TCP port (1 to 65535)\n"


def test_the_state_folder_follows_xdg_state_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(connect_server.STATE_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert connect_server.state_file() == tmp_path / "flinkstate" / "spark-connect.json"
