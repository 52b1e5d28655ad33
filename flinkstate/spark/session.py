"""The one Spark session of a process: embedded by default, a cluster when asked.

Creating a session costs seconds, so every caller (the command line, the notebooks, the tests)
shares one. On a cluster the executors get flinkstate itself as a zip added to the job, whoever
started the session, so they need nothing from the driver's working directory and no install of
flinkstate; their Python needs flinkstate's dependencies (numpy, pandas, pyarrow), as any
PySpark job using Arrow does.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from flinkstate.errors import InvalidParameterError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MASTER_ENV = "FLINKSTATE_SPARK_MASTER"
DEFAULT_MASTER = "local[*]"
PACKAGE = Path(__file__).resolve().parents[1]


def master_url(master: str | None = None) -> str:
    """The master to use: the argument, else $FLINKSTATE_SPARK_MASTER, else local[*]."""
    chosen = (master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER).strip()
    if not (chosen.startswith(("local", "spark://", "yarn", "k8s://", "mesos://"))):
        raise InvalidParameterError(
            f"Spark master {chosen!r} is not a master URL (local[*], spark://host:port, yarn, "
            "k8s://...)"
        )
    return chosen


def spark_session(master: str | None = None, *, driver_memory: str | None = None) -> SparkSession:
    """The session for ``master`` (see :func:`master_url`), created on first use.

    Without a master named (argument or environment), a session already running in this
    process is used whatever its master; a session on another master than the one named is
    refused rather than silently reused.
    """
    from pyspark.sql import SparkSession

    wanted = master_url(master)
    active = SparkSession.getActiveSession()
    if active is not None and master is None and not os.environ.get(MASTER_ENV):
        return _shipped(active)
    if active is not None:
        running = active.sparkContext.master
        if running != wanted:
            raise InvalidParameterError(
                f"a Spark session on {running} is already running in this process; stop it "
                f"(spark.stop()) before using {wanted}"
            )
        return _shipped(active)
    builder = (
        SparkSession.builder.master(wanted)
        .appName("flinkstate")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        # flinkstate draws its own progress (flinkstate.spark.progress)
        .config("spark.ui.showConsoleProgress", "false")
    )
    if wanted.startswith("local"):
        # embedded: the Python workers are this interpreter, which has flinkstate and
        # pyarrow installed (pyspark reads the variable when the context starts)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # few shuffle partitions: one machine's cores, not a cluster's default of 200
        builder = (
            builder.config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", str(max(4, 2 * (os.cpu_count() or 2))))
        )
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return _shipped(session)


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
    """flinkstate's own modules as a zip an executor can import from."""
    target = Path(tempfile.mkdtemp(prefix="flinkstate-spark-")) / "flinkstate.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(PACKAGE.rglob("*.py")):
            archive.write(path, Path("flinkstate") / path.relative_to(PACKAGE))
    return target
