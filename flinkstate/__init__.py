"""flinkstate: a model of how Apache Flink recovers in-flight data after unaligned checkpoints."""

from __future__ import annotations

__version__ = "0.1.0"

#: The Flink release whose behaviour the model follows; reference values come from its jars.
FLINK_VERSION = "2.3.0"
