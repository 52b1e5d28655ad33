"""The local Spark Connect server (``flinkstate spark-server``) and the pipeline over it.

One server for the module, on a free port, its state in a temporary folder: started, asked
about, refused a second start, checked to listen on loopback only and to require its token,
then used by the pipeline, whose answers must be those of the embedded session, and stopped.
pyspark switches its functions to Connect for a whole process once a Connect session exists
(``SPARK_CONNECT_MODE_ENABLED``), so this process's Connect session is used only inside
:func:`connect_mode` and the embedded one outside it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pytest

from flinkstate.cli import main
from flinkstate.errors import SparkStartError
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.samples import SAMPLES
from flinkstate.spark import connect_server
from flinkstate.spark.rescaling import RescaleResult, RescalingPipeline
from flinkstate.spark.session import MASTER_ENV, connect_session, is_connect, remote_session
from flinkstate.spark.tables import load
from tests.flinkcheckpoint.test_metadata import COMMITTED
from tests.spark.test_connect_channel import HAS_IPV6, Thief

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
CONNECT_MODE = "SPARK_CONNECT_MODE_ENABLED"


@contextmanager
def connect_mode() -> Iterator[None]:
    """pyspark's functions build Connect columns inside, classic ones after."""
    os.environ[CONNECT_MODE] = "1"
    try:
        yield
    finally:
        os.environ.pop(CONNECT_MODE, None)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("spark-server-state")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(connect_server.STATE_DIR_ENV, str(folder))
        yield folder


@pytest.fixture(scope="module")
def server(state_dir: Path) -> Iterator[connect_server.ServerState]:
    """The module's one server; stopping it at the end is checked too."""
    state = connect_server.start(_free_port())
    try:
        yield state
    finally:
        stopped = connect_server.stop()
    assert stopped == state.pid
    assert not connect_server.is_server(state.pid)
    assert connect_server.read_state() is None
    assert not _listening(state.port)


@pytest.fixture
def remote(server: connect_server.ServerState) -> Iterator[SparkSession]:
    """A Connect session of its own (stopping it closes it on the server too), stopped after
    the test, so that the process may use embedded Spark again."""
    with connect_mode():
        session = remote_session(replace(server, session=str(uuid.uuid4())).remote)
    yield session
    with connect_mode():
        session.stop()


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_status_says_where_it_runs_and_a_second_start_is_refused(
    server: connect_server.ServerState, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "spark-server", "status") == (
        0,
        f"running at sc://127.0.0.1:{server.port} (pid {server.pid}, log {server.log})\n",
        "",
    )
    code, out, err = run(capsys, "spark-server", "start", "--port", str(_free_port()))
    assert (code, out) == (2, "")
    assert err == (
        f"flinkstate: error: a Spark Connect server is already running at "
        f"sc://127.0.0.1:{server.port} (pid {server.pid}); 'flinkstate spark-server stop' "
        "stops it\n"
    )
    assert connect_server.running_server() == server


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2)")
def test_it_listens_on_loopback_only_and_keeps_its_token_off_the_command_line(
    server: connect_server.ServerState, state_dir: Path
) -> None:
    listening = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True)
    mine = [line for line in listening.stdout.splitlines() if f"pid={server.pid}," in line]
    assert any(f":{server.port} " in line for line in mine), listening.stdout
    loopback = re.compile(r"(127\.0\.0\.1|\[::ffff:127\.0\.0\.1\]):\d+")
    assert all(loopback.fullmatch(line.split()[3]) for line in mine), mine
    assert server.token not in Path(f"/proc/{server.pid}/cmdline").read_text(errors="replace")
    assert (state_dir / "spark-connect.json").stat().st_mode & 0o777 == 0o600


@pytest.mark.skipif(not HAS_IPV6, reason="this machine has no ::1")
def test_a_listener_on_the_ipv6_loopback_never_sees_the_token(
    server: connect_server.ServerState,
) -> None:
    """Another local user holding ``[::1]`` on the server's port (a client that said
    ``localhost`` could reach it first) gets no connection while sessions come and go."""
    thief = Thief(server.port)
    try:
        with connect_mode():
            session = remote_session(replace(server, session=str(uuid.uuid4())).remote)
            assert session.range(3).count() == 3
            session.stop()
    finally:
        thief.close()
    assert (thief.connections, thief.received) == (0, b"")


def test_a_wrong_token_is_refused_and_passed_over(
    server: connect_server.ServerState,
    state_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    wrong = replace(server, token="not-the-token")
    with pytest.raises(SparkStartError, match="Invalid authentication token"):
        remote_session(wrong.remote)
    assert CONNECT_MODE not in os.environ  # a failed attempt leaves the process classic
    # a state file with the server's pid but another token: a note, then embedded Spark
    monkeypatch.setenv(connect_server.STATE_DIR_ENV, str(tmp_path))
    (tmp_path / "spark-connect.json").write_text(json.dumps(wrong.__dict__), encoding="utf-8")
    assert connect_session() is None
    note = capsys.readouterr().err
    assert note.startswith("flinkstate: note: not using the Spark Connect server at sc://127.")
    assert note.endswith("Spark runs embedded\n")
    assert note.count("\n") == 1


def test_a_server_of_another_flinkstate_is_passed_over(
    server: connect_server.ServerState,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    other = replace(server, package="/elsewhere/flinkstate")
    assert connect_server.unusable_because(other) == (
        f"it serves flinkstate from /elsewhere/flinkstate, this process from "
        f"{connect_server.PACKAGE}"
    )
    monkeypatch.setenv(connect_server.STATE_DIR_ENV, str(tmp_path))
    (tmp_path / "spark-connect.json").write_text(json.dumps(other.__dict__), encoding="utf-8")
    assert connect_session() is None
    assert "serves flinkstate from /elsewhere/flinkstate" in capsys.readouterr().err


def _answers(spark: SparkSession) -> dict[str, Any]:
    """Every table the pipeline gives, for every sample: a sweep, key groups, the volume."""
    found: dict[str, Any] = {}
    for name in SAMPLES:
        pipeline = RescalingPipeline(load(spark, DATA / name))
        try:
            result: RescaleResult = pipeline.analyse([2, 3, 5], progress=False)
            for table in ("persisted", "movement", "subtasks", "sweep"):
                found[f"{name}.{table}"] = getattr(result, table)
            for exchange in result.exchanges:
                if pipeline.shape.exchange(exchange).partitioner is Partitioner.HASH:
                    found[f"{name}.{exchange}.key_groups"] = pipeline.key_groups(exchange, 3)
        finally:
            pipeline.close()
    return found


def test_the_pipeline_answers_alike_over_connect_and_embedded(
    spark: SparkSession, remote: SparkSession
) -> None:
    embedded = _answers(spark)
    with connect_mode():
        assert is_connect(remote)
        assert not is_connect(spark)
        connected = _answers(remote)
    assert connected.keys() == embedded.keys()
    assert any(key.endswith("key_groups") for key in embedded)
    for key, frame in embedded.items():
        pd.testing.assert_frame_equal(connected[key], frame, obj=key)


def test_progress_over_connect_comes_phase_by_phase(remote: SparkSession) -> None:
    heard: list[tuple[Any, ...]] = []
    with connect_mode():
        pipeline = RescalingPipeline(load(remote, DATA / "keyed"))
        try:
            pipeline.analyse(
                3, progress=lambda done, total, what: heard.append((done, total, what))
            )
        finally:
            pipeline.close()
    phases = [(done, what) for done, _, what in heard if ":" not in what]
    assert phases[0] == (0, "reading the checkpoint")
    assert phases[-1] == (4, "summing up")
    assert sorted({done for done, _ in phases}) == [0, 1, 2, 3, 4]


def _python(
    code: str, state_dir: Path, *argv: str, master: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (MASTER_ENV, CONNECT_MODE)}
    if master:
        env[MASTER_ENV] = master
    env[connect_server.STATE_DIR_ENV] = str(state_dir)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


_KIND = (
    "from flinkstate.spark.session import is_connect, spark_session\n"
    "print('connect' if is_connect(spark_session()) else 'embedded')\n"
)
_CLI = "import sys\nfrom flinkstate.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def test_the_command_line_uses_the_server_unless_a_master_is_named(
    server: connect_server.ServerState, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _python(_KIND, state_dir).stdout == "connect\n"
    question = ["rescale", str(DATA / "keyed"), "--to", "3", "--quiet"]
    over_connect = _python(_CLI, state_dir, *question)
    assert (over_connect.returncode, over_connect.stderr) == (0, "")
    assert run(capsys, *question, "--master", "local[2]") == (0, over_connect.stdout, "")


def test_a_real_checkpoint_is_read_by_the_servers_executors(
    server: connect_server.ServerState, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``rescale CHECKPOINT``: the executors behind the server read the channel-state files
    (``mapInArrow`` over Connect) and answer as embedded Spark does."""
    checkpoint = next(p for p in COMMITTED if p.parents[1].name == "keyed-hash-p2-p4")
    question = [
        "rescale",
        str(checkpoint),
        "--exchange",
        "to-record->slow-counter=hash:f0%1000",
        "--record-type",
        "Tuple2<Long,String>",
        "--to",
        "3",
        "--quiet",
    ]
    over_connect = _python(_CLI, state_dir, *question)
    assert (over_connect.returncode, over_connect.stderr) == (0, "")
    assert "      0  0 1                  22  45990     1167        63" in over_connect.stdout
    assert run(capsys, *question, "--master", "local[2]") == (0, over_connect.stdout, "")


def test_without_a_server_spark_runs_embedded(tmp_path: Path) -> None:
    """A state file whose server is gone: removed, and Spark starts embedded, without a word."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    state = connect_server.ServerState(
        pid=dead.pid,
        port=_free_port(),
        token="t",
        log="",
        python="",
        package="",
        spark_version="",
        session="",
    )
    (tmp_path / "spark-connect.json").write_text(json.dumps(state.__dict__), encoding="utf-8")
    found = _python(_KIND, tmp_path)
    assert (found.stdout, found.stderr) == ("embedded\n", "")
    assert not (tmp_path / "spark-connect.json").exists()
