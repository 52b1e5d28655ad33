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
from typing import TYPE_CHECKING, Any

from flinkstate.errors import InvalidParameterError, SparkStartError

if TYPE_CHECKING:
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

MASTER_ENV = "FLINKSTATE_SPARK_MASTER"
DEFAULT_MASTER = "local[*]"
PACKAGE = Path(__file__).resolve().parents[1]
#: errors only, on the JVM's stderr (see the file)
LOG4J2_CONFIG = Path(__file__).resolve().with_name("log4j2.properties")
LOCAL_IP_ENV = "SPARK_LOCAL_IP"
LOOPBACK = "127.0.0.1"


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
    from pyspark import SparkConf, SparkContext
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
    settings = {
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        # flinkstate draws its own progress (flinkstate.spark.progress)
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()}",
    }
    if wanted.startswith("local"):
        # embedded: the Python workers are this interpreter, which has flinkstate and
        # pyarrow installed (pyspark reads the variable when the context starts)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # few shuffle partitions: one machine's cores, not a cluster's default of 200
        settings["spark.sql.shuffle.partitions"] = str(max(4, 2 * (os.cpu_count() or 2)))
        settings.update(loopback_driver())
    if driver_memory:
        settings["spark.driver.memory"] = driver_memory
    conf = SparkConf().setMaster(wanted).setAppName("flinkstate").setAll(list(settings.items()))
    SparkContext(conf=conf, gateway=_quiet_gateway(conf)).setLogLevel("ERROR")
    return _shipped(SparkSession.builder.getOrCreate())


def loopback_driver() -> dict[str, str]:
    """Keep an embedded session's driver, block manager and workers on 127.0.0.1 unless the
    user chose an address in $SPARK_LOCAL_IP: nothing then listens on the machine's network,
    and Spark does not pick (and warn about) another interface when the host name resolves to
    loopback. Sets the variable, which the JVM reads at launch, and returns the driver's
    settings."""
    if LOCAL_IP_ENV in os.environ:
        return {}
    os.environ[LOCAL_IP_ENV] = LOOPBACK
    return {"spark.driver.host": LOOPBACK, "spark.driver.bindAddress": LOOPBACK}


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
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return None
    descriptor, name = tempfile.mkstemp(prefix="flinkstate-spark-jvm-", suffix=".log")
    log = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as stream:  # the JVM gets a copy of the descriptor
            try:
                return launch_gateway(  # type: ignore[no-untyped-call]
                    conf, popen_kwargs={"stdout": stream, "stderr": stream}
                )
            except PySparkRuntimeError as error:
                said = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
                raise SparkStartError(f"Spark's JVM did not start ({error}):\n{said}") from error
    finally:
        log.unlink(missing_ok=True)


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
