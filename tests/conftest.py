"""Shared fixtures: reference values computed by Flink's own jar, one embedded Spark session;
and how the tests are shared out between pytest-xdist's workers (make test, make test-fast)."""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from tests.kernel_spark import KernelSpark

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


@pytest.fixture(scope="session")
def kernel_spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelSpark]:
    """The Spark Connect server the notebooks' kernels of this test process share (started
    when a notebook first needs it)."""
    from tests.kernel_spark import KernelSpark

    shared = KernelSpark(tmp_path_factory.mktemp("kernel-spark"))
    yield shared
    shared.close()


#: the xdist group (``--dist loadgroup``) of every module with a test that uses the embedded
#: Spark session: those modules run on one worker, so one JVM starts rather than one per worker
SPARK_GROUP = "spark"
#: the xdist group of the browser tests: one at a time on one worker (each drives a JupyterLab,
#: a kernel and a Chromium, and waits on their timing), beside the other worker's tests
BROWSER_GROUP = "browser"


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move what collection left alive (every imported module, the test items) out of the
    cyclic collector's reach: it is alive until the process ends, and a full collection would
    walk all of it again each time a test makes enough objects (about a tenth of the suite's
    CPU time, measured on the runtime and views tests)."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Generator[None, None, None]:
    # before xdist's own hook, which reads the groups
    spark_modules = {item.path for item in items if "spark" in getattr(item, "fixturenames", ())}
    for item in items:
        if item.path in spark_modules:
            item.add_marker(pytest.mark.xdist_group(SPARK_GROUP))
        elif item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.xdist_group(BROWSER_GROUP))
    yield
    # after pytest's reordering by fixture: in an xdist worker (every worker sorts alike), the
    # modules with slow tests first, so that the last minutes are many quick tests shared out
    # evenly rather than one long test that started late
    if hasattr(config, "workerinput"):
        slow_modules = {item.path for item in items if item.get_closest_marker("slow")}
        items.sort(key=lambda item: item.path not in slow_modules)
