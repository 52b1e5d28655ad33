"""``make lab`` starts JupyterLab on 127.0.0.1, serving the repository (so the notebooks' links
to ``docs/`` open in it) and opening the notebooks folder, with a local Spark Connect server
beside it that it stops when JupyterLab ends."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from flinkstate.spark.connect_server import STATE_DIR_ENV, is_server

ROOT = Path(__file__).parents[1]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_lab_serves_the_repository_and_opens_the_notebooks_on_loopback(
    tmp_path: Path,
) -> None:
    port, spark_port = _free_port(), _free_port()
    state = tmp_path / "spark-connect.json"
    env = {**os.environ, STATE_DIR_ENV: str(tmp_path)}
    process = subprocess.Popen(
        [
            "make",
            "--no-print-directory",
            "lab",
            f"LAB_PORT={port}",
            f"SPARK_CONNECT_PORT={spark_port}",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300  # the Spark server first, then JupyterLab
        status = None
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status") as response:
                    status = response.status
                break
            except OSError as error:
                if getattr(error, "code", None) in (401, 403):  # up, but wants the token
                    status = error.code  # type: ignore[attr-defined]
                    break
                time.sleep(0.5)
        assert status is not None, f"JupyterLab did not answer on port {port}"
        with pytest.raises(urllib.error.HTTPError) as redirect:
            urllib.request.build_opener(_NoRedirect).open(f"http://127.0.0.1:{port}/")
        assert redirect.value.code == 302
        assert redirect.value.headers["Location"].split("?")[0].endswith("/lab/tree/notebooks")
        listening = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True, check=False)
        lines = [line for line in listening.stdout.splitlines() if f":{port} " in line]
        assert lines, listening.stdout
        assert all("127.0.0.1:" in line for line in lines), lines
        server = json.loads(state.read_text(encoding="utf-8"))
        assert server["port"] == spark_port
        with socket.create_connection(("127.0.0.1", spark_port), timeout=5):
            pass
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=60)
    assert f"Serving notebooks from local directory: {ROOT}\n" in output
    assert f"Spark Connect server started at sc://127.0.0.1:{spark_port}" in output
    assert f"Spark Connect server (pid {server['pid']}) stopped" in output
    assert not state.exists()
    assert not is_server(server["pid"])  # gone (or a zombie until its new parent reaps it)
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", spark_port)) != 0
