"""``make lab`` starts JupyterLab on 127.0.0.1, serving the repository (so the notebooks' links
to ``docs/`` open in it) and opening the notebooks folder."""

from __future__ import annotations

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
def test_make_lab_serves_the_repository_and_opens_the_notebooks_on_loopback() -> None:
    port = _free_port()
    process = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"LAB_PORT={port}"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
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
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    assert f"Serving notebooks from local directory: {ROOT}\n" in output
