"""One Spark Connect server for the notebooks' kernels of a test process, as ``make lab`` runs
one beside JupyterLab.

A notebook that asks for ``spark_session()`` in a kernel of its own would start a JVM each
time it runs (a JVM's start and warm-up is most of a Spark notebook's run); the kernels of one
test process share this server instead, started when the first such notebook runs, and answer
warm after it. The kernels find it as a learner's do: through the state folder named by
``FLINKSTATE_STATE_DIR``, with no master named (``FLINKSTATE_SPARK_MASTER`` would ask for an
embedded session).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from flinkstate.spark import connect_server
from flinkstate.spark.session import MASTER_ENV


def uses_spark(notebook: Path) -> bool:
    """Whether a notebook opens a Spark session (its kernel then needs the server)."""
    return "spark_session(" in notebook.read_text(encoding="utf-8")


class KernelSpark:
    """The server of one test process, started at most once, on first need; stopped by
    :meth:`close`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.started: connect_server.ServerState | None = None

    def kernel_environment(self) -> dict[str, str]:
        """The environment for a kernel (or a JupyterLab whose kernels inherit it): this
        process's, with the server's state folder and no master named."""
        env = {key: value for key, value in os.environ.items() if key != MASTER_ENV}
        env[connect_server.STATE_DIR_ENV] = str(self.folder)
        return env

    def ensure_running(self) -> None:
        """Start the server unless this process started it already."""
        if self.started is None:
            with self._state_folder():
                self.started = connect_server.start(_free_port())

    def close(self) -> None:
        if self.started is not None:
            with self._state_folder():
                connect_server.stop()
            self.started = None

    @contextmanager
    def _state_folder(self) -> Iterator[None]:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(connect_server.STATE_DIR_ENV, str(self.folder))
            yield


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
