"""A throwaway JupyterLab for browser tests.

It runs from the same Python as the tests (so it finds this environment's ipykernel and
widget extensions), listens on loopback with its own token, and keeps its config, data,
runtime, workspace, checkpoint and IPython directories in a temporary folder: it neither reads the
user's Jupyter setup nor leaves anything in it.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

STARTUP_TIMEOUT = 60.0
SHUTDOWN_TIMEOUT = 20.0

#: JupyterLab user settings for an unattended run. Autosave off: a run must never write its
#: outputs back into a notebook under test. Windowing off: every cell stays attached, so
#: widgets in cells below the fold render like the others. No news, update checks or toasts:
#: the machine may be offline, and a toast must not cover what the test clicks.
USER_SETTINGS: dict[str, dict[str, Any]] = {
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
        "doNotDisturbMode": True,
    },
}


@dataclass(frozen=True)
class LabServer:
    """Where a running JupyterLab answers, and where it logs."""

    url: str
    token: str
    root_dir: Path
    log: Path

    def notebook_url(self, name: str, workspace: str) -> str:
        """The notebook opened in a workspace of its own, reset: one test's page never
        restores the tabs another test opened on the same server."""
        return (
            f"{self.url}/lab/workspaces/{quote(workspace)}/tree/{quote(name)}"
            f"?reset&token={self.token}"
        )

    def end_sessions(self) -> None:
        """Shut down every notebook's kernel (a shared server outlives each test's page, and
        a kernel left running keeps its memory, a Spark JVM's too), and wait until they are
        gone."""
        for session in self.api("/api/sessions") or []:
            with suppress(urllib.error.HTTPError):  # ended meanwhile
                self.api(f"/api/sessions/{session['id']}", method="DELETE")
        deadline = time.monotonic() + SHUTDOWN_TIMEOUT
        while self.api("/api/kernels") and time.monotonic() < deadline:
            time.sleep(0.25)  # polling the server: it has nothing to wait on

    def api(self, path: str, method: str = "GET") -> Any:
        request = urllib.request.Request(
            f"{self.url}{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
            data=b"" if method == "POST" else None,
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            return f"(no server log: {error})"
        return "\n".join(text.splitlines()[-lines:])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _write_user_settings(settings_dir: Path) -> None:
    for plugin, values in USER_SETTINGS.items():
        package, _, name = plugin.rpartition("/")
        path = settings_dir / package / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")


@contextmanager
def running_lab(
    root_dir: Path, home: Path, environment: Mapping[str, str] | None = None
) -> Iterator[LabServer]:
    """Start JupyterLab serving ``root_dir``, wait until it answers, and always stop it. Its
    kernels inherit ``environment`` (this process's by default)."""
    home.mkdir(parents=True, exist_ok=True)
    names = ("config", "data", "runtime", "ipython", "workspaces", "checkpoints")
    dirs = {name: home / name for name in names}
    for path in dirs.values():
        path.mkdir(exist_ok=True)
    settings_dir = dirs["config"] / "lab" / "user-settings"
    _write_user_settings(settings_dir)
    port, token = free_port(), secrets.token_hex(16)
    given = os.environ if environment is None else environment
    env = {key: value for key, value in given.items() if not key.startswith("JUPYTER")}
    env.update(
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        IPYTHONDIR=str(dirs["ipython"]),
    )
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",  # fail loudly rather than serve on another port
        f"--ServerApp.root_dir={root_dir}",
        f"--IdentityProvider.token={token}",
        # window.jupyterapp: JupyterLab's own UI tests (Galata) drive the app through it
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
        f"--LabApp.user_settings_dir={settings_dir}",
        f"--LabApp.workspaces_dir={dirs['workspaces']}",
        # Opening a notebook makes a checkpoint beside it; an absolute checkpoint_dir (joined
        # onto the notebook's folder) keeps them out of the folder under test.
        f"--FileCheckpoints.checkpoint_dir={dirs['checkpoints']}",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = home / "jupyterlab.log"
    lab = LabServer(f"http://127.0.0.1:{port}", token, root_dir, log)
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            command,
            cwd=root_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            _wait_until_up(lab, process)
            yield lab
        finally:
            _stop(lab, process)


def _wait_until_up(lab: LabServer, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    last_error = ""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"JupyterLab exited with code {process.returncode} before answering on "
                f"{lab.url}\n--- server log ---\n{lab.log_tail()}"
            )
        try:
            lab.api("/api/status")
            return
        except (OSError, ValueError) as error:
            last_error = str(error)
        time.sleep(0.25)  # polling a port: there is nothing to wait on
    raise RuntimeError(
        f"JupyterLab did not answer on {lab.url}/api/status within {STARTUP_TIMEOUT:.0f}s "
        f"(last error: {last_error})\n--- server log ---\n{lab.log_tail()}"
    )


def _stop(lab: LabServer, process: subprocess.Popen[bytes]) -> None:
    """Ask the server to shut down (it stops its kernels), then kill its process group."""
    if process.poll() is None:
        with suppress(OSError, ValueError):
            lab.api("/api/shutdown", method="POST")
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=SHUTDOWN_TIMEOUT)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=SHUTDOWN_TIMEOUT / 2)
    process.wait()
