"""Shared fixtures: reference values computed by Flink's own jar, one embedded Spark session."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Every Spark session of the test process (the fixture, the command line run in-process, the
# notebooks' kernels) is the same small embedded one, whichever test starts it first.
os.environ.setdefault("FLINKSTATE_SPARK_MASTER", "local[2]")

# Property tests check what holds, never how fast: a busy 2-core machine makes single
# examples slow, and hypothesis's per-example deadline would fail them for it.
settings.register_profile("flinkstate", deadline=None)
settings.load_profile("flinkstate")

REFERENCE = Path(__file__).parent / "reference" / "flink-2.3.0-arithmetic.json"


@pytest.fixture(scope="session")
def flink_reference() -> dict[str, Any]:
    """Values printed by tests/reference/FlinkArithmeticReference.java against flink-dist 2.3.0."""
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One embedded Spark session for the whole run (starting one costs seconds); code under
    test that asks for a session gets this one when it names the same master."""
    from flinkstate.spark.session import spark_session

    session = spark_session("local[2]")
    yield session
    session.stop()
