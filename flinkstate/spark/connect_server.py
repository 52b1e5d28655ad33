"""A local Spark Connect server that outlives one command: the warm Spark of the command line and
the notebooks.

Starting Spark's JVM costs most of a small question's time (about 20 s of a 21 s
``flinkstate rescale data/keyed --to 3`` on two busy cores). A Spark Connect server started
once, in the background, keeps that JVM: every later command or notebook kernel opens a session
on it in well under a second (:func:`flinkstate.spark.session.spark_session` does so whenever one
runs and no master was asked for).

The server is pyspark's own (``org.apache.spark.sql.connect.service.SparkConnectServer``, run by
``spark-submit`` from the installed pyspark, whose jars include Spark Connect), with the driver
settings an embedded session has (:mod:`flinkstate.spark.settings`). It listens on 127.0.0.1
only and requires a token: a random one per start, kept in the state file (readable by its owner
only) and handed to the JVM in its environment, not on its command line where ``ps`` shows it, so
other users of the machine can neither reach it from the network nor use it locally. Clients
send the token to 127.0.0.1 itself, never to the name ``localhost`` (which may mean ``::1``,
where another user could listen: :mod:`flinkstate.spark.connect_channel`), and a port held on
any loopback address is refused at start. Its Python
workers are the interpreter that started it, importing the flinkstate that started it; a client
of another flinkstate or Python version does not use it (:func:`unusable_because`).

Its pid, port and token are in a state file in a per-user directory (``$FLINKSTATE_STATE_DIR``,
else ``$XDG_STATE_HOME/flinkstate``, else ``~/.local/state/flinkstate``), its log beside it. A
state file whose process is gone, or is no longer the server, is stale and removed when seen.
Starting and stopping hold a lock on that directory, so two at once cannot both start one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from flinkstate.errors import InvalidParameterError, SparkStartError
from flinkstate.spark.settings import (
    LOOPBACK,
    driver_settings,
    local_settings,
    loopback_addresses,
)

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
#: Spark Connect's own default port
DEFAULT_PORT = 15002
STATE_DIR_ENV = "FLINKSTATE_STATE_DIR"
#: the master of the server's one Spark context
MASTER = "local[*]"
#: the flinkstate package the server's Python workers import
PACKAGE = Path(__file__).resolve().parents[1]
#: seconds the server may take to listen; its JVM alone takes 10 to 20 s on two busy cores
START_TIMEOUT = 180.0
#: seconds a stopped server may take to exit before it is killed
STOP_TIMEOUT = 30.0
#: seconds a connection to the server's port may take
PROBE_TIMEOUT = 1.0
#: the token reaches the server and the Connect client through this variable
TOKEN_ENV = "SPARK_CONNECT_AUTHENTICATE_TOKEN"
#: what makes pyspark in the server's Python workers believe it is a Connect client
_CLIENT_VARIABLES = ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE")

#: servers started by this process, so that stopping one also reaps it
_started_here: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class ServerState:
    """A running server as its state file records it."""

    pid: int
    port: int
    token: str
    log: str
    #: major.minor of the Python its workers run, which must be the client's
    python: str
    #: the flinkstate folder its workers import
    package: str
    spark_version: str
    #: the server-side session every client opens (see :func:`renew_session`)
    session: str

    @property
    def address(self) -> str:
        """Where it listens, for people."""
        return f"sc://{LOOPBACK}:{self.port}"

    @property
    def remote(self) -> str:
        """The connection string a Connect client opens, token included: the address the
        server listens on, never the name ``localhost``, which may also stand for ``::1`` where
        another user could listen (:mod:`flinkstate.spark.connect_channel` opens it)."""
        return f"sc://{LOOPBACK}:{self.port}/;token={self.token};session_id={self.session}"


def state_dir() -> Path:
    """The per-user folder of the server's state file and log, created readable by its owner
    only."""
    chosen = os.environ.get(STATE_DIR_ENV) or ""
    if chosen:
        folder = Path(chosen)
    else:
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        folder = Path(base) / "flinkstate"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def state_file() -> Path:
    return state_dir() / "spark-connect.json"


def log_file() -> Path:
    return state_dir() / "spark-connect.log"


def check_port(port: int) -> int:
    """``port`` if it can be one to listen on, else an :class:`InvalidParameterError`."""
    if not 1 <= port <= 65535:
        raise InvalidParameterError(f"port {port} is not a TCP port (1 to 65535)")
    return port


def read_state() -> ServerState | None:
    """What the state file says, or None if there is none (or it is not one of ours)."""
    try:
        data = json.loads(state_file().read_text(encoding="utf-8"))
        return ServerState(**data)
    except (OSError, ValueError, TypeError):
        return None


def _recorded_pid() -> int | None:
    """The pid in a state file :func:`read_state` cannot read (another flinkstate version's),
    so that ``stop`` still stops what it started."""
    try:
        pid = json.loads(state_file().read_text(encoding="utf-8"))["pid"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return pid if isinstance(pid, int) and not isinstance(pid, bool) else None


def running_server() -> ServerState | None:
    """The server if it runs and accepts connections; a stale state file is removed."""
    state = read_state()
    if state is None:
        return None
    if not is_server(state.pid):
        _forget(state)
        return None
    return state if _accepts(state.port) else None


def unusable_because(state: ServerState) -> str | None:
    """Why this process cannot use ``state``'s server (None if it can): its Python workers must
    run this Python version, this pyspark and this flinkstate."""
    from pyspark import __version__ as spark_version

    python = _python_version()
    if state.python != python:
        return f"its Python is {state.python}, this one {python}"
    if state.spark_version != spark_version:
        return f"it runs pyspark {state.spark_version}, this process {spark_version}"
    if state.package != str(PACKAGE):
        return f"it serves flinkstate from {state.package}, this process from {PACKAGE}"
    return None


def renew_session(closed: ServerState) -> ServerState:
    """The server's state with a new shared session in place of ``closed``'s, which a client
    stopped (``spark.stop()``) or the server let expire; a client that renewed it already wins.

    Every client opens the same server-side session because Spark keeps a pool of Python
    workers per session and never stops one before the server stops (Spark 4.3): a session per
    command would leave three Python processes behind each time, and start them anew (seconds
    on a busy machine) where a shared session finds them running.
    """
    with _locked():
        state = read_state()
        if state is None:
            raise SparkStartError("the Spark Connect server stopped")
        if state.session == closed.session:
            state = replace(state, session=str(uuid.uuid4()))
            _write_state(state)
        return state


def is_server(pid: int) -> bool:
    """Whether ``pid`` is a live Spark Connect server (a pid reused by another program, or a
    server that exited but was not reaped yet, is not)."""
    child = _started_here.get(pid)
    if child is not None and child.poll() is not None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process: the pid was reused
    return SERVER_CLASS in _command_line(pid)


def start(port: int = DEFAULT_PORT, *, timeout: float = START_TIMEOUT) -> ServerState:
    """Start the server on 127.0.0.1:``port`` and return once it accepts connections.

    Refused, each in one line: a server already running, a port taken, a server that exits or
    stays silent while starting (with the last error of its log).
    """
    check_port(port)
    with _locked():
        running = running_server()
        if running is not None:
            raise SparkStartError(
                f"a Spark Connect server is already running at {running.address} "
                f"(pid {running.pid}); 'flinkstate spark-server stop' stops it"
            )
        state = read_state()
        if state is not None:  # alive but not answering: starting, or hung
            raise SparkStartError(
                f"the Spark Connect server (pid {state.pid}) does not answer on port "
                f"{state.port}; 'flinkstate spark-server stop' stops it"
            )
        _check_free(port)
        return _launch(port, timeout)


def stop(timeout: float = STOP_TIMEOUT) -> int | None:
    """Stop the server and its Python workers; its pid, or None if none ran (a stale state
    file is removed)."""
    with _locked():
        state = read_state()
        pid = _recorded_pid() if state is None else state.pid
        stopped = pid if pid is not None and is_server(pid) else None
        if stopped is not None:
            _terminate(stopped, timeout)
        state_file().unlink(missing_ok=True)
        return stopped


def _launch(port: int, timeout: float) -> ServerState:
    import pyspark

    spark_home = Path(pyspark.__file__).resolve().parent
    token = secrets.token_hex(24)
    settings = {
        **driver_settings(),
        **local_settings(),
        "spark.driver.host": LOOPBACK,
        "spark.driver.bindAddress": LOOPBACK,
        "spark.connect.grpc.binding.address": LOOPBACK,
        "spark.connect.grpc.binding.port": str(port),
    }
    command = [
        str(spark_home / "bin" / "spark-submit"),
        "--class",
        SERVER_CLASS,
        "--name",
        "flinkstate Spark Connect server",
        "--master",
        MASTER,
    ]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    environment = {k: v for k, v in os.environ.items() if k not in _CLIENT_VARIABLES}
    path = os.pathsep.join(p for p in (str(PACKAGE.parent), os.environ.get("PYTHONPATH")) if p)
    environment.update(
        {
            "SPARK_HOME": str(spark_home),
            "PYSPARK_PYTHON": sys.executable,
            "PYTHONPATH": path,
            "SPARK_LOCAL_IP": LOOPBACK,
            TOKEN_ENV: token,
        }
    )
    log = log_file()
    folder = state_dir()
    with log.open("wb") as stream:
        try:
            process = subprocess.Popen(
                command,
                cwd=folder,  # Spark's scratch folders (spark-warehouse) land here
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=stream,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in the starting terminal does not reach it
            )
        except OSError as error:
            raise SparkStartError(f"cannot run {command[0]}: {error.strerror or error}") from None
    _started_here[process.pid] = process
    state = ServerState(
        pid=process.pid,
        port=port,
        token=token,
        log=str(log),
        python=_python_version(),
        package=str(PACKAGE),
        spark_version=pyspark.__version__,
        session=str(uuid.uuid4()),
    )
    try:
        _await_ready(process, state, timeout)
        _write_state(state)
    except BaseException:
        _terminate(process.pid, STOP_TIMEOUT)
        raise
    return state


def _await_ready(process: subprocess.Popen[bytes], state: ServerState, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SparkStartError(
                f"the Spark Connect server exited while starting: {_last_error(Path(state.log))} "
                f"(log: {state.log})"
            )
        if _accepts(state.port):
            return
        time.sleep(0.2)
    raise SparkStartError(
        f"the Spark Connect server did not listen on port {state.port} within {timeout:g} s "
        f"(log: {state.log})"
    )


def _terminate(pid: int, timeout: float) -> None:
    """SIGTERM (Spark stops its context and Python workers), SIGKILL after ``timeout``; then
    whatever is left of the server's process group."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and is_server(pid):
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL if is_server(pid) else signal.SIGTERM)
    child = _started_here.pop(pid, None)
    if child is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout)


def _write_state(state: ServerState) -> None:
    """The state file, written whole (a temporary file renamed) and readable by its owner only:
    it holds the token."""
    target = state_file()
    descriptor, name = tempfile.mkstemp(prefix=".spark-connect-", dir=target.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            json.dump(asdict(state), stream)
        os.replace(name, target)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def _forget(state: ServerState) -> None:
    """Remove the state file if it still describes ``state``."""
    if read_state() == state:
        state_file().unlink(missing_ok=True)


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    with (state_dir() / "spark-connect.lock").open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        yield


def _check_free(port: int) -> None:
    """Refuse a port another process holds on any loopback address: a client that says
    ``localhost`` (pyspark's own default) may reach it there instead of the server."""
    for family, address in loopback_addresses():
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((address, port))
            except OSError as error:
                raise SparkStartError(
                    f"port {port} on {address} is taken ({error.strerror or error}); "
                    "choose another with --port"
                ) from None


def _accepts(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(PROBE_TIMEOUT)
        return probe.connect_ex((LOOPBACK, port)) == 0


def _command_line(pid: int) -> str:
    try:
        arguments = Path(f"/proc/{pid}/cmdline").read_bytes()
        return arguments.replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        pass
    try:  # no /proc (macOS)
        found = subprocess.run(
            ["ps", "-ww", "-p", str(pid), "-o", "command="],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return found.stdout


def _last_error(log: Path) -> str:
    """The log's last line that says what went wrong, else its last line."""
    try:
        lines = [x.strip() for x in log.read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return "no log"
    said = [x for x in lines if " ERROR " in x or "Exception" in x or "Error" in x]
    return (said or lines or ["nothing logged"])[-1][:300]


def _python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"
