"""The Spark settings every flinkstate driver runs with, embedded or as the local Connect server.

Kept in one place so that a session started in this process (:mod:`flinkstate.spark.session`)
and the long-lived server the command line and the notebooks share
(:mod:`flinkstate.spark.connect_server`) answer alike: the same time zone, Arrow, few shuffle
partitions on one machine, no web UI, errors-only logging.
"""

from __future__ import annotations

import os
from pathlib import Path

#: errors only, on the JVM's stderr (see the file)
LOG4J2_CONFIG = Path(__file__).resolve().with_name("log4j2.properties")
LOOPBACK = "127.0.0.1"


def driver_settings() -> dict[str, str]:
    """Settings for any driver flinkstate starts, whatever its master."""
    return {
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        # flinkstate draws its own progress (flinkstate.spark.progress)
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()}",
    }


def local_settings() -> dict[str, str]:
    """Settings for a driver whose executors are this machine's cores."""
    # few shuffle partitions: one machine's cores, not a cluster's default of 200
    return {"spark.sql.shuffle.partitions": str(max(4, 2 * (os.cpu_count() or 2)))}
