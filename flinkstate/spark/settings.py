"""The Spark settings every flinkstate driver runs with, embedded or as the local Connect server.

Kept in one place so that a session started in this process (:mod:`flinkstate.spark.session`)
and the long-lived server the command line and the notebooks share
(:mod:`flinkstate.spark.connect_server`) answer alike: the same time zone, Arrow, few shuffle
partitions on one machine, no web UI, errors-only logging.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

#: errors only, on the JVM's stderr (see the file)
LOG4J2_CONFIG = Path(__file__).resolve().with_name("log4j2.properties")
#: the address every server flinkstate starts listens on, and its clients connect to
LOOPBACK = "127.0.0.1"
#: the IPv6 loopback address, which the name ``localhost`` may also stand for
LOOPBACK_V6 = "::1"


def driver_settings() -> dict[str, str]:
    """Settings for any driver flinkstate starts, whatever its master.

    Examples
    --------
    >>> driver_settings()["spark.sql.session.timeZone"]
    'UTC'
    """
    return {
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        # flinkstate draws its own progress (flinkstate.spark.progress)
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()}",
    }


def local_settings() -> dict[str, str]:
    """Settings for a driver whose executors are this machine's cores.

    Examples
    --------
    >>> int(local_settings()["spark.sql.shuffle.partitions"]) >= 4
    True
    """
    # few shuffle partitions: one machine's cores, not a cluster's default of 200
    return {"spark.sql.shuffle.partitions": str(max(4, 2 * (os.cpu_count() or 2)))}


def loopback_addresses() -> list[tuple[socket.AddressFamily, str]]:
    """Every loopback address this machine can bind: 127.0.0.1, and ``::1`` where IPv6 is on.

    A port is free for a server only if it is free on all of them: whoever holds the port on
    another loopback address receives what a client sends to ``localhost`` there.

    Examples
    --------
    >>> (socket.AF_INET, "127.0.0.1") in loopback_addresses()
    True
    """
    found = [(socket.AF_INET, LOOPBACK)]
    if socket.has_ipv6:
        try:
            with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
                probe.bind((LOOPBACK_V6, 0))
        except OSError:
            return found  # IPv6 compiled in but off: no ::1 on this machine
        found.append((socket.AF_INET6, LOOPBACK_V6))
    return found
