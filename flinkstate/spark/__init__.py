"""Spark over checkpoint datasets: what rescaling does to in-flight data, at any size.

Spark runs embedded (``local[*]``), or on the local Spark Connect server when one runs
(``flinkstate spark-server``), unless ``FLINKSTATE_SPARK_MASTER`` or an explicit master names
a cluster. Results are aggregates computed by Spark; nothing is collected row by row. The explorer's
breadth-first search runs here too (:mod:`flinkstate.spark.exploration`), its frontier and its
states seen in Spark, only counts and findings on the driver.
"""

from __future__ import annotations

from flinkstate.face import lazy_face

#: the package's face: each name other packages (and the lessons) use, by the module of the
#: package that defines it, loaded on first use (``flinkstate.face``; ``tests/test_faces.py``
#: holds every import from another package to it)
FACE: dict[str, str] = {
    "load_planned": "checkpoint_source",
    "plan_read": "checkpoint_source",
    "check_port": "connect_server",
    "breadth_first": "exploration",
    "Expansion": "exploration",
    "FoundPath": "exploration",
    "LevelProgress": "exploration",
    "Outcome": "exploration",
    "DEFAULT_PORT": "connect_server",
    "read_state": "connect_server",
    "running_server": "connect_server",
    "start": "connect_server",
    "stop": "connect_server",
    "unusable_because": "connect_server",
    "RescaleResult": "rescaling",
    "RescalingPipeline": "rescaling",
    "sweep_plan": "rescaling",
    "master_hosts": "session",
    "probe_master": "session",
    "master_url": "session",
    "spark_session": "session",
    "Searched": "swarm",
    "swarm": "swarm",
    "job_shape": "tables",
    "load": "tables",
}
__all__ = sorted(FACE)
__getattr__, __dir__ = lazy_face(__name__, FACE)
