"""The one Spark session of a process: the local Spark Connect server's when it runs, else
embedded; a cluster when asked.

Creating a session costs seconds, so every caller (the command line, the notebooks, the tests)
shares one. Starting Spark's JVM is most of that: when ``flinkstate spark-server start`` (or
``make lab``) has a local Spark Connect server running (:mod:`flinkstate.spark.connect_server`)
and no master is asked for, the session is a Connect session on it, which opens in well under a
second; a server this process cannot use (another flinkstate or Python) is passed over with a
one-line note, and Spark runs embedded. Over Connect there is no ``sparkContext``: nothing is
shipped (the server's Python workers import the flinkstate that started it, the same as this
one) and progress comes from Connect's progress handlers (:mod:`flinkstate.spark.progress`).
A process's sessions are all one kind: pyspark switches its functions to Connect for the whole
process once a Connect session exists.

On a cluster the executors get flinkstate itself as a zip added to the job, whoever
started the session, so they need nothing from the driver's working directory and no install of
flinkstate. The rescaling jobs run no Python on the executors (key groups and selected
subtasks are Spark expressions), so their Python needs none of its dependencies; the explorer's
search (:mod:`flinkstate.spark.exploration`) runs the model there, which needs numpy and
pyarrow. The zip's temporary folder is removed when the process exits.

The driver listens on 127.0.0.1 whatever the master, unless the user gives an address
(``driver_host``, ``$SPARK_DRIVER_HOST``, or ``$SPARK_LOCAL_IP`` for Spark to derive it): an
unauthenticated Spark driver on the machine's network address accepts anyone's connections. A
master elsewhere cannot reach a driver on loopback, so that is refused with what to set rather
than left to hang; a cluster session without ``spark.authenticate`` gets a one-line note.

Starting fails fast and in one line: a standalone master's port is probed before the JVM starts
(Spark itself retries for a minute), and Spark's and Py4J's errors while the session starts
become a :class:`~flinkstate.errors.SparkStartError` with the JVM's own reason.
"""

from __future__ import annotations

import atexit
import contextlib
import ipaddress
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from flinkstate.errors import InvalidParameterError, SparkStartError
from flinkstate.spark import connect_server
from flinkstate.spark.failures import describe, error_text, summary
from flinkstate.spark.settings import LOOPBACK, driver_settings, local_settings

if TYPE_CHECKING:
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

MASTER_ENV = "FLINKSTATE_SPARK_MASTER"
DEFAULT_MASTER = "local[*]"
PACKAGE = Path(__file__).resolve().parents[1]
LOCAL_IP_ENV = "SPARK_LOCAL_IP"
#: the driver's address when the user names one without a --driver-host option
DRIVER_HOST_ENV = "SPARK_DRIVER_HOST"
#: seconds a standalone master's port may take to accept a connection
PROBE_TIMEOUT = 3.0
#: how a cluster's connections are authenticated (the README says more)
AUTHENTICATE = (
    "set spark.authenticate=true and spark.authenticate.secret=SECRET in spark-defaults.conf "
    "($SPARK_CONF_DIR), the same on the master and every worker"
)


def master_url(master: str | None = None) -> str:
    """The master to use: the argument, else $FLINKSTATE_SPARK_MASTER, else local[*]."""
    chosen = (master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER).strip()
    if not (chosen.startswith(("local", "spark://", "yarn", "k8s://", "mesos://"))):
        raise InvalidParameterError(
            f"Spark master {chosen!r} is not a master URL (local[*], spark://host:port, yarn, "
            "k8s://...)"
        )
    return chosen


def spark_session(
    master: str | None = None,
    *,
    driver_memory: str | None = None,
    driver_host: str | None = None,
    connect: bool = True,
) -> SparkSession:
    """The session for ``master`` (see :func:`master_url`), created on first use, its driver
    at ``driver_host`` (see :func:`driver_address`).

    Without a master named (argument or environment), a session already running in this
    process is used whatever its master, else the local Spark Connect server's if one runs
    (unless ``connect`` is False, or a driver setting is given: those need a driver of this
    process's own); a session on another master than the one named is refused rather than
    silently reused.
    """
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    wanted = master_url(master)
    named = master is not None or bool(os.environ.get(MASTER_ENV))
    remote = _remote_session()
    if remote is not None:
        if not named:
            return remote
        raise InvalidParameterError(
            "a Spark Connect session is already running in this process; stop it "
            f"(spark.stop()) before using {wanted}"
        )
    active = SparkSession.getActiveSession()
    if active is not None and not named:
        return _shipped(active)
    if active is None and not named and connect and driver_memory is None and not driver_host:
        session = connect_session()
        if session is not None:
            return session
    if active is not None:
        running = active.sparkContext.master
        if running != wanted:
            raise InvalidParameterError(
                f"a Spark session on {running} is already running in this process; stop it "
                f"(spark.stop()) before using {wanted}"
            )
        return _shipped(active)
    local = wanted.startswith("local")
    if not local:
        check_driver_reachable(wanted, driver_host)
        probe_master(wanted)
    address = driver_address(driver_host)
    settings = {**driver_settings(), **address}
    if local:
        # embedded: the Python workers are this interpreter, which has flinkstate and
        # pyarrow installed (pyspark reads the variable when the context starts)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        settings.update(local_settings())
    if driver_memory:
        settings["spark.driver.memory"] = driver_memory
    conf = SparkConf().setMaster(wanted).setAppName("flinkstate").setAll(list(settings.items()))
    session = _started(wanted, conf)
    if not local:
        note = cluster_note(session.sparkContext.getConf().getAll())
        if note:
            print(f"flinkstate: note: {note}", file=sys.stderr)
    return _shipped(session)


def connect_session() -> SparkSession | None:
    """A Connect session on the local server if one runs that this process can use, else None
    (with a one-line note on stderr when one runs but cannot be used, or does not answer)."""
    server = connect_server.running_server()
    if server is None:
        return None
    reason = connect_server.unusable_because(server)
    if reason is None:
        try:
            try:
                return remote_session(server.remote)
            except ClosedSessionError:
                return remote_session(connect_server.renew_session(server).remote)
        except SparkStartError as error:
            reason = str(error)
    print(
        f"flinkstate: note: not using the Spark Connect server at {server.address} ({reason}); "
        "Spark runs embedded",
        file=sys.stderr,
    )
    return None


def remote_session(url: str) -> SparkSession:
    """A new Spark Connect session on ``url`` (``sc://127.0.0.1:port/;token=...``, the local
    server's), checked with one round trip; a server that does not answer is a
    :class:`SparkStartError` in one line."""
    from pyspark.errors import PySparkException
    from pyspark.sql.connect.session import SparkSession as RemoteSession

    from flinkstate.spark.connect_channel import LoopbackChannelBuilder

    global _remote
    # what pyspark's own builder does for a remote session: its functions build Connect columns
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
    # to the address the server listens on, not to the name localhost (see the module)
    session = RemoteSession.builder.channelBuilder(LoopbackChannelBuilder(url)).create()
    try:
        session.version  # noqa: B018  (one round trip: is the server there, is the token right)
    except PySparkException as error:
        _close_client(session)
        del os.environ["SPARK_CONNECT_MODE_ENABLED"]
        kind = ClosedSessionError if _CLOSED_SESSION in str(error) else SparkStartError
        said = _GRPC_DETAILS.search(str(error))
        reason = said.group(1) if said else summary(str(error))
        raise kind(f"cannot open a session on the Spark Connect server: {reason}") from None
    _remote = session
    # its connection closed before the interpreter's exit, where gRPC can hang closing it;
    # the server-side session stays open for the next command (spark.stop() would close it)
    atexit.register(_close_client, session)
    return cast("SparkSession", session)  # the same API, not the same class


def _close_client(session: Any) -> None:
    with contextlib.suppress(Exception):
        session.client.close()


class ClosedSessionError(SparkStartError):
    """The server-side session asked for was closed (a client stopped it, or it expired)."""


#: the server's own words in a gRPC error, whose first line says only that one happened
_GRPC_DETAILS = re.compile(r'details = "([^"\n]+)"')
#: how the server says a session was closed
_CLOSED_SESSION = "SESSION_CLOSED"

#: the Connect session this process opened, if any
_remote: Any = None


def _remote_session() -> SparkSession | None:
    """The Connect session this process opened, unless it was stopped."""
    if _remote is None or _remote.is_stopped:
        return None
    session: SparkSession = _remote
    return session


def is_connect(session: SparkSession) -> bool:
    """Whether ``session`` is a Spark Connect session (it has no ``sparkContext``)."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def _started(master: str, conf: SparkConf) -> SparkSession:
    """A new session on ``conf``; whatever goes wrong on the way is one
    :class:`SparkStartError`, with the JVM's own reason where it logged one (the context half
    started is stopped, so that a retry can start another)."""
    from py4j.protocol import Py4JError  # type: ignore[import-untyped]
    from pyspark import SparkContext
    from pyspark.errors import PySparkException
    from pyspark.sql import SparkSession

    _drop_py4j_root_records()
    gateway = _quiet_gateway(conf)
    try:
        context = SparkContext(conf=conf, gateway=gateway)
        context.setLogLevel("ERROR")
        if context._jsc.sc().isStopped():  # a standalone master refused the application
            raise SparkStartError("the master did not accept the application")
        return SparkSession.builder.getOrCreate()
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the JVM this call started ends with it
        if gateway is not None:
            _forget_gateway(gateway)
        raise
    except (Py4JError, PySparkException, SparkStartError) as error:
        with contextlib.suppress(Exception):
            if SparkContext._active_spark_context is not None:
                SparkContext._active_spark_context.stop()
        reason = _jvm_said() or (
            str(error) if isinstance(error, SparkStartError) else describe(error_text(error))
        )
        raise SparkStartError(f"Spark did not start on {master}: {reason}") from error


def driver_address(host: str | None = None) -> dict[str, str]:
    """The driver's address settings: ``host`` if given, else ``$SPARK_DRIVER_HOST``, else
    none if ``$SPARK_LOCAL_IP`` is set (Spark derives the address from it), else 127.0.0.1
    for the driver, its block manager and an embedded session's workers, so that nothing
    listens on the machine's network unasked (and Spark picks, and warns about, no other
    interface when the host name resolves to loopback). In that last case it sets
    ``$SPARK_LOCAL_IP``, which the JVM reads at launch."""
    global _local_ip_set_here
    chosen = (host or os.environ.get(DRIVER_HOST_ENV) or "").strip()
    if chosen:
        return {"spark.driver.host": chosen, "spark.driver.bindAddress": chosen}
    if LOCAL_IP_ENV in os.environ:
        return {}
    os.environ[LOCAL_IP_ENV] = LOOPBACK
    _local_ip_set_here = True
    return {"spark.driver.host": LOOPBACK, "spark.driver.bindAddress": LOOPBACK}


#: whether $SPARK_LOCAL_IP is flinkstate's default rather than the user's choice
_local_ip_set_here = False


def _address_chosen(host: str | None) -> bool:
    """Whether the user chose the driver's address (:func:`driver_address`)."""
    if (host or os.environ.get(DRIVER_HOST_ENV) or "").strip():
        return True
    return LOCAL_IP_ENV in os.environ and not (
        _local_ip_set_here and os.environ[LOCAL_IP_ENV] == LOOPBACK
    )


def master_hosts(master: str) -> list[tuple[str, int]]:
    """The (host, port) pairs of a ``spark://`` master URL (several for a standby list); none
    for other masters. A malformed one is an :class:`InvalidParameterError`."""
    if not master.startswith("spark://"):
        return []
    hosts = []
    for entry in master.removeprefix("spark://").split(","):
        try:
            parts = urlsplit(f"spark://{entry.strip()}")
            host, port = parts.hostname, parts.port
        except ValueError:
            host, port = None, None
        if not host or port is None:
            raise InvalidParameterError(
                f"Spark master {master}: {entry.strip()!r} is not host:port (spark://host:7077)"
            )
        hosts.append((host, port))
    return hosts


def check_driver_reachable(master: str, host: str | None = None) -> None:
    """Refuse the default driver address, loopback (:func:`driver_address` without a choice
    of the user's), for a master on another machine: its executors could never connect to
    the driver, and Spark would wait for them without end."""
    if _address_chosen(host):
        return
    hosts = [name for name, _ in master_hosts(master)]
    if hosts and all(_is_loopback(name) for name in hosts):
        return
    raise InvalidParameterError(
        f"the executors of {master} cannot reach Spark's driver on {LOOPBACK}, where "
        f"flinkstate keeps it unless told: give an address of this machine they can reach "
        f"with --driver-host ADDRESS or ${DRIVER_HOST_ENV}, and enable spark.authenticate "
        "(README: Spark on a cluster)"
    )


def _is_loopback(host: str) -> bool:
    try:
        found = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(found) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in found)


def probe_master(master: str, timeout: float = PROBE_TIMEOUT) -> None:
    """Return once one of a ``spark://`` master's addresses accepts a TCP connection (other
    masters are not probed); else a :class:`SparkStartError` saying why, within ``timeout``
    seconds per address, before any JVM starts (Spark would retry for a minute and then
    print pages of Java)."""
    failures = []
    for host, port in master_hosts(master):
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except socket.gaierror:
            failures.append(f"{host}: no such host")
        except TimeoutError:
            failures.append(f"{host}:{port}: no answer within {timeout:g} s")
        except OSError as error:
            failures.append(f"{host}:{port}: {error.strerror or error}")
    if failures:
        raise SparkStartError(
            f"cannot reach the Spark master {master} ({'; '.join(failures)}): is it running, "
            "and is that its URL?"
        )


def cluster_note(conf: Sequence[tuple[str, str]]) -> str | None:
    """The note for a session on a cluster whose connections are not authenticated."""
    settings = dict(conf)
    if settings.get("spark.authenticate", "false").lower() == "true":
        return None
    host = settings.get("spark.driver.host", "this machine's address")
    return (
        f"Spark's driver listens on {host} and nothing authenticates who connects to it or to "
        f"the cluster; to change that, {AUTHENTICATE} (README: Spark on a cluster)"
    )


def _quiet_gateway(conf: SparkConf) -> Any:
    """A gateway to Spark's driver JVM with its stdout and stderr in a temporary file, or None
    when this process already has one (a stopped session leaves its JVM running for the next).

    Logging settings cannot silence all of it: the JVM announces the incubator module Spark's
    launcher adds before any logging starts, and in a notebook ipykernel copies the JVM's
    output into the cell. If the JVM does not start, the error carries what it printed. Once it
    runs, the file's name is removed: the JVM writes on to its own descriptor, and nothing is
    left behind however the process ends (a notebook's kernel is often killed). Errors of
    Spark jobs reach Python as exceptions anyway.
    """
    from pyspark import SparkContext
    from pyspark.errors import PySparkRuntimeError

    global _jvm_log
    if SparkContext._gateway is not None:
        return None
    descriptor, name = tempfile.mkstemp(prefix="flinkstate-spark-jvm-", suffix=".log")
    log = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as stream:  # the JVM gets a copy of the descriptor
            try:
                gateway = _launched(conf, stream)
            except PySparkRuntimeError as error:
                lines = [x.strip() for x in log.read_text(errors="replace").splitlines()]
                said = "; ".join([x for x in lines if x][-3:])  # one line, its last words
                raise SparkStartError(f"Spark's JVM did not start ({error}): {said}") from error
        # kept open to read the JVM's reason if the session does not start (_jvm_said)
        _jvm_log = log.open("rb")
        atexit.register(_jvm_log.close)
        return gateway
    finally:
        log.unlink(missing_ok=True)


def _launched(conf: SparkConf, stream: IO[bytes]) -> Any:
    """pyspark's ``launch_gateway``, writing the JVM's output to ``stream``, except that
    Ctrl-C or SIGTERM while the JVM starts (seconds) ends the JVM too: pyspark keeps the
    process to itself, and a JVM whose Python went away before its gateway listened never
    saw its standard input close, and ran on orphaned for good."""
    from pyspark import java_gateway as module

    java_gateway: Any = module  # its Popen is swapped for one that keeps the process
    launched: list[subprocess.Popen[bytes]] = []
    popen = java_gateway.Popen

    def tracked(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        process: subprocess.Popen[bytes] = popen(*args, **kwargs)
        launched.append(process)
        return process

    java_gateway.Popen = tracked
    try:
        return java_gateway.launch_gateway(conf, popen_kwargs={"stdout": stream, "stderr": stream})
    except BaseException:
        for process in launched:
            _ended(process)
        raise
    finally:
        java_gateway.Popen = popen


def _forget_gateway(gateway: Any) -> None:
    """A gateway whose session did not start (Ctrl-C): its JVM ended, and pyspark's record
    of it cleared, so that a later session (a notebook's next cell) starts a JVM anew."""
    from pyspark import SparkContext

    with contextlib.suppress(Exception):
        gateway.close()
    if gateway.proc is not None:
        _ended(gateway.proc)
    SparkContext._gateway = None
    SparkContext._jvm = None


def _ended(process: subprocess.Popen[bytes], patience: float = 10.0) -> None:
    """``process`` terminated (killed if it takes longer than ``patience`` seconds)."""
    with contextlib.suppress(OSError):
        process.terminate()
    try:
        process.wait(patience)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class _NoPy4JRootRecords(logging.Filter):
    """Py4J logs a failed call to the JVM on the root logger, with its traceback ("ERROR:root:
    KeyboardInterrupt while sending command.", "ERROR:root:Exception while sending command.":
    Ctrl-C during a call, or pyspark's Ctrl-C handler calling the JVM in the middle of one),
    while the same failure, or the interruption, reaches the caller, which reports it in one
    line: those records are dropped. Py4J's other records go to its own logger."""

    def __init__(self, package: str) -> None:
        super().__init__()
        self.package = package

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.pathname.startswith(self.package)


def _drop_py4j_root_records() -> None:
    """Install :class:`_NoPy4JRootRecords` on the root logger, once."""
    import py4j  # type: ignore[import-untyped]

    root = logging.getLogger()
    if not any(isinstance(f, _NoPy4JRootRecords) for f in root.filters):
        root.addFilter(_NoPy4JRootRecords(str(Path(py4j.__file__).parent) + os.sep))


#: what the JVM prints (errors only), read from where the last read stopped
_jvm_log: IO[bytes] | None = None


def _jvm_said() -> str:
    """The JVM's last error message since the last call, in one line ("" if none)."""
    if _jvm_log is None:
        return ""
    lines = _jvm_log.read().decode(errors="replace").splitlines()
    errors = [line.split(": ", 1)[-1] for line in lines if " ERROR " in line]
    return summary(errors[-1]) if errors else ""


def _shipped(session: SparkSession) -> SparkSession:
    """``session`` with flinkstate added to its jobs once, if it runs on a cluster (an
    embedded session's workers are this interpreter)."""
    context = session.sparkContext
    if not str(context.master).startswith("local") and not getattr(
        context, "_flinkstate_shipped", False
    ):
        context.addPyFile(str(package_zip()))
        context._flinkstate_shipped = True  # type: ignore[attr-defined]
    return session


@cache
def package_zip() -> Path:
    """flinkstate's own modules as a zip an executor can import from, in a temporary folder
    removed when the process exits (however it ends but killed: the driver serves the file to
    executors as long as the session lives)."""
    folder = tempfile.mkdtemp(prefix="flinkstate-spark-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    target = Path(folder) / "flinkstate.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(PACKAGE.rglob("*.py")):
            archive.write(path, Path("flinkstate") / path.relative_to(PACKAGE))
    return target
