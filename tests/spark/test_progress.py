"""Spark progress: a callback hears each phase start and end, and the task counts between."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from flinkstate.spark.progress import SparkProgress

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow


def test_a_callback_hears_phases_and_live_task_counts(spark: SparkSession) -> None:
    heard: list[tuple[int, int, str]] = []
    progress = SparkProgress(spark, 2, "test", lambda *told: heard.append(told), poll_seconds=0.05)
    slow = spark.sparkContext.parallelize(range(4), 4).map(lambda v: time.sleep(0.4) or v)
    with progress.phase("counting"):
        slow.collect()
    with progress.phase("nothing"):
        pass
    progress.close()
    assert heard[0] == (0, 2, "counting")
    assert heard[-2:] == [(1, 2, "nothing"), (2, 2, "nothing")]
    live = [what for done, _, what in heard if done == 0 and what != "counting"]
    assert live, heard
    assert all(what.startswith("counting: ") and what.endswith("/4 tasks") for what in live)
