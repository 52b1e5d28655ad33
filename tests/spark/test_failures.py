"""Spark's errors in one line, naming the cause a user can act on."""

from __future__ import annotations

import pytest
from py4j.protocol import Py4JError  # type: ignore[import-untyped]

from flinkstate.errors import SparkJobError
from flinkstate.spark.failures import describe, spark_errors, summary

#: what a task that imports pandas says from an executor whose Python lacks it (abridged)
_NO_PANDAS = """\
An exception was thrown from the Python worker. Please see the stack trace below.
Traceback (most recent call last):
  File "/opt/spark/python/lib/pyspark.zip/pyspark/worker.py", line 1964, in main
    func, profiler, deserializer, serializer = read_udfs(pickleSer, infile, eval_type)
  File "/tmp/spark-1/userFiles-2/flinkstate.zip/flinkstate/spark/rescaling.py", line 29
    import pandas as pd
ModuleNotFoundError: No module named 'pandas'

JVM stacktrace:
org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2935)
"""


def test_an_executor_without_pandas_or_pyarrow_is_named() -> None:
    line = describe(_NO_PANDAS)
    assert line.startswith("the executors' Python lacks pandas (needed by flinkstate's Arrow")
    assert line.endswith("install them there or set PYSPARK_PYTHON to a Python that has them")
    arrow = (
        "[PACKAGE_NOT_INSTALLED] PyArrow >= 15.0.0 must be installed; however, it was not found."
    )
    assert describe(arrow).startswith("the executors' Python lacks pyarrow ")
    assert describe("No module named 'numpy.core'").startswith("the executors' Python lacks numpy ")
    assert describe("No module named 'flinkstate'").startswith(
        "the executors cannot import flinkstate"
    )
    assert describe("No module named 'yaml'") == "the executors' Python lacks the module yaml"


def test_other_failures_are_their_first_line() -> None:
    python = 'Traceback (most recent call last):\n  File "x", line 1\nZeroDivisionError: oops\n'
    assert describe("Job aborted.\n" + python) == (
        "a task failed in the executors' Python: ZeroDivisionError: oops"
    )
    java = "\n[PATH_NOT_FOUND] Path does not exist: file:/x.\n\tat org.apache.spark.sql.Dataset\n"
    assert describe(java) == "[PATH_NOT_FOUND] Path does not exist: file:/x."
    assert summary("x" * 1000) == "x" * 297 + "..."
    assert summary("") == "unknown error"


def test_a_wrapper_line_gives_way_to_its_cause() -> None:
    text = (
        "org.apache.spark.SparkException: Exception thrown in awaitResult: \n"
        "org.apache.spark.SparkException: [PATH_NOT_FOUND] Path does not exist: file:/x\n"
    )
    assert describe(text) == (
        "org.apache.spark.SparkException: [PATH_NOT_FOUND] Path does not exist: file:/x"
    )


def _failing(error: BaseException, during: BaseException | None = None) -> None:
    """Raise ``error`` in :func:`spark_errors`, while handling ``during`` if given."""
    with spark_errors(SparkJobError, "the Spark job failed"):
        if during is None:
            raise error
        try:
            raise during
        except BaseException:
            raise error from None


def test_a_py4j_error_is_one_line_and_ctrl_c_stays_ctrl_c() -> None:
    """PySpark cancels every job on Ctrl-C, and the call waiting for one fails with the
    cancellation: that is the interrupt, not a failed job."""
    with pytest.raises(SparkJobError) as error:
        _failing(Py4JError("An error occurred while calling o7.collect\nAnswer from Java side"))
    assert str(error.value) == "the Spark job failed: Answer from Java side"
    with pytest.raises(KeyboardInterrupt):
        _failing(Py4JError("An error occurred while calling o7.collect"), KeyboardInterrupt())
    cancelled = "[SPARK_JOB_CANCELLED] Job 20 cancelled as part of cancellation of all jobs"
    with pytest.raises(KeyboardInterrupt):
        _failing(Py4JError(cancelled))
