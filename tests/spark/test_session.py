"""Which master, what ships to a cluster's executors, a driver that stays quiet and local,
a start that fails fast and in one line, and no temporary folder left behind."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import flinkstate.spark.session
from flinkstate.errors import InvalidParameterError, SparkStartError
from flinkstate.spark.session import (
    DRIVER_HOST_ENV,
    LOCAL_IP_ENV,
    MASTER_ENV,
    check_driver_reachable,
    cluster_note,
    driver_address,
    master_hosts,
    master_url,
    package_zip,
    probe_master,
    spark_session,
)
from flinkstate.spark.settings import LOG4J2_CONFIG

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_master_comes_from_argument_then_environment_then_local(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(MASTER_ENV, raising=False)
    assert master_url() == "local[*]"
    monkeypatch.setenv(MASTER_ENV, "spark://10.0.0.1:7077")
    assert master_url() == "spark://10.0.0.1:7077"
    assert master_url("local[2]") == "local[2]"
    with pytest.raises(InvalidParameterError, match="'http://x' is not a master URL"):
        master_url("http://x")


@pytest.mark.slow
def test_a_second_master_in_one_process_is_refused(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert spark_session("local[2]") is spark
    monkeypatch.delenv(MASTER_ENV, raising=False)
    assert spark_session() is spark  # no master named: the running one will do
    with pytest.raises(InvalidParameterError, match="already running"):
        spark_session("spark://127.0.0.1:7077")


def test_the_package_ships_as_a_zip_of_its_modules() -> None:
    with zipfile.ZipFile(package_zip()) as archive:
        names = set(archive.namelist())
    assert {
        "flinkstate/__init__.py",
        "flinkstate/keygroups.py",
        "flinkstate/spark/tables.py",
    } <= names
    assert not any(name.endswith(".pyc") for name in names)


def test_the_driver_stays_on_loopback_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOCAL_IP_ENV, raising=False)
    monkeypatch.delenv(DRIVER_HOST_ENV, raising=False)
    monkeypatch.setattr(flinkstate.spark.session, "_local_ip_set_here", False)
    loopback = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    assert driver_address() == loopback
    assert os.environ[LOCAL_IP_ENV] == "127.0.0.1"  # read by the JVM when it starts
    told = {"spark.driver.host": "10.1.2.4", "spark.driver.bindAddress": "10.1.2.4"}
    assert driver_address("10.1.2.4") == told  # --driver-host
    monkeypatch.setenv(DRIVER_HOST_ENV, "10.1.2.4")
    assert driver_address() == told
    monkeypatch.delenv(DRIVER_HOST_ENV)
    monkeypatch.setenv(LOCAL_IP_ENV, "10.1.2.3")
    assert driver_address() == {}  # the user's choice: Spark derives the driver's address
    assert os.environ[LOCAL_IP_ENV] == "10.1.2.3"


def test_a_master_elsewhere_needs_an_address_the_executors_can_reach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A driver on loopback by default would leave a remote cluster's executors unable to
    connect, and Spark waiting for them without end: refused, saying what to set."""
    monkeypatch.delenv(LOCAL_IP_ENV, raising=False)
    monkeypatch.delenv(DRIVER_HOST_ENV, raising=False)
    monkeypatch.setattr(flinkstate.spark.session, "_local_ip_set_here", False)
    for master in ("spark://192.0.2.1:7077", "spark://127.0.0.1:7077,192.0.2.1:7077", "yarn"):
        with pytest.raises(InvalidParameterError, match="--driver-host ADDRESS or \\$SPARK_DRIV"):
            check_driver_reachable(master)
        check_driver_reachable(master, "192.0.2.7")  # the user's address
    check_driver_reachable("spark://127.0.0.1:7077")
    check_driver_reachable("spark://localhost:7077")
    driver_address()  # flinkstate's own default in the environment is no choice of the user's
    with pytest.raises(InvalidParameterError, match=r"cannot reach Spark's driver on 127\.0\.0\.1"):
        check_driver_reachable("spark://192.0.2.1:7077")
    monkeypatch.setenv(LOCAL_IP_ENV, "192.0.2.7")
    check_driver_reachable("spark://192.0.2.1:7077")
    monkeypatch.delenv(LOCAL_IP_ENV)
    monkeypatch.setenv(DRIVER_HOST_ENV, "192.0.2.7")
    check_driver_reachable("spark://192.0.2.1:7077")


def test_master_urls_are_parsed_and_a_closed_port_is_refused_at_once() -> None:
    assert master_hosts("spark://a:7077,b:7078") == [("a", 7077), ("b", 7078)]
    assert master_hosts("spark://[::1]:7077") == [("::1", 7077)]
    assert master_hosts("local[2]") == []
    for bad in ("spark://host", "spark://host:port", "spark://:7077"):
        with pytest.raises(InvalidParameterError, match="is not host:port"):
            master_hosts(bad)
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        probe_master(f"spark://127.0.0.1:{port}")  # accepts: no error
    started = time.monotonic()
    with pytest.raises(SparkStartError) as error:
        probe_master(f"spark://127.0.0.1:{port}")  # closed now
    assert time.monotonic() - started < 2
    assert str(error.value) == (
        f"cannot reach the Spark master spark://127.0.0.1:{port} (127.0.0.1:{port}: Connection "
        "refused): is it running, and is that its URL?"
    )
    with pytest.raises(SparkStartError, match=r"nowhere\.invalid: no such host"):
        probe_master("spark://nowhere.invalid:7077")
    probe_master("yarn")  # not probed


def test_a_cluster_without_authentication_gets_a_note() -> None:
    note = cluster_note([("spark.driver.host", "127.0.0.1")])
    assert note is not None
    assert "listens on 127.0.0.1" in note
    assert "spark.authenticate=true and spark.authenticate.secret=SECRET" in note
    assert "\n" not in note
    assert cluster_note([("spark.authenticate", "true")]) is None


@pytest.mark.slow
def test_an_unreachable_master_is_one_line_before_any_jvm(tmp_path: Path) -> None:
    """It took 75 s and printed a 199-line Py4J error. A JAVA_HOME without Java shows that no
    JVM starts: its refusal would be another message."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java"), "TMPDIR": str(tmp_path)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.pop(MASTER_ENV, None)
    master = f"spark://127.0.0.1:{port}"
    argv = ["rescale", str(REPO / "data" / "keyed"), "--to", "3", "--master", master]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "flinkstate", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert time.monotonic() - started < 30  # the interpreter's start and imports, no Spark
    assert done.returncode == 2
    assert done.stderr == f"flinkstate: error: cannot reach the Spark master {master} (" + (
        f"127.0.0.1:{port}: Connection refused): is it running, and is that its URL?\n"
    )
    assert list(tmp_path.iterdir()) == []


REPO = Path(__file__).resolve().parents[2]

#: make the package's zip, then end as told
_ZIP_THEN = """\
import os, signal, sys, time
from flinkstate.spark.session import package_zip
print(package_zip(), flush=True)
how = sys.argv[1]
if how == "error":
    raise RuntimeError("boom")
if how == "ctrl-c":
    raise KeyboardInterrupt
if how == "sigint":
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(30)
"""


@pytest.mark.parametrize("how", ["normally", "error", "ctrl-c", "sigint"])
def test_the_zips_folder_is_removed_at_exit(tmp_path: Path, how: str) -> None:
    """It stayed in the temporary folder after every session on a cluster."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", _ZIP_THEN, how],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    made = Path(done.stdout.strip())
    assert made.name == "flinkstate.zip"
    assert made.parent.parent == tmp_path
    assert made.parent.name.startswith("flinkstate-spark-")
    ended = {"normally": 0, "error": 1, "ctrl-c": -signal.SIGINT, "sigint": -signal.SIGINT}
    assert done.returncode == ended[how], done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_the_driver_logs_errors_only_with_the_packaged_configuration(spark: SparkSession) -> None:
    jvm = spark.sparkContext._jvm
    assert LOG4J2_CONFIG.is_file()
    assert jvm.java.lang.System.getProperty("log4j2.configurationFile") == LOG4J2_CONFIG.as_uri()
    root = jvm.org.apache.logging.log4j.LogManager.getRootLogger()
    assert str(root.getLevel()) == "ERROR"
