"""Which master, what ships to a cluster's executors, and a driver that stays quiet and local."""

from __future__ import annotations

import os
import zipfile
from typing import TYPE_CHECKING

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.spark.session import (
    LOCAL_IP_ENV,
    LOG4J2_CONFIG,
    MASTER_ENV,
    loopback_driver,
    master_url,
    package_zip,
    spark_session,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_master_comes_from_argument_then_environment_then_local(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(MASTER_ENV, raising=False)
    assert master_url() == "local[*]"
    monkeypatch.setenv(MASTER_ENV, "spark://10.0.0.1:7077")
    assert master_url() == "spark://10.0.0.1:7077"
    assert master_url("local[2]") == "local[2]"
    with pytest.raises(InvalidParameterError, match="'http://x' is not a master URL"):
        master_url("http://x")


@pytest.mark.slow
def test_a_second_master_in_one_process_is_refused(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert spark_session("local[2]") is spark
    monkeypatch.delenv(MASTER_ENV, raising=False)
    assert spark_session() is spark  # no master named: the running one will do
    with pytest.raises(InvalidParameterError, match="already running"):
        spark_session("spark://127.0.0.1:7077")


def test_the_package_ships_as_a_zip_of_its_modules() -> None:
    with zipfile.ZipFile(package_zip()) as archive:
        names = set(archive.namelist())
    assert {
        "flinkstate/__init__.py",
        "flinkstate/keygroups.py",
        "flinkstate/spark/tables.py",
    } <= names
    assert not any(name.endswith(".pyc") for name in names)


def test_an_embedded_driver_stays_on_loopback_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOCAL_IP_ENV, raising=False)
    assert loopback_driver() == {
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
    }
    assert os.environ[LOCAL_IP_ENV] == "127.0.0.1"  # read by the JVM when it starts
    monkeypatch.setenv(LOCAL_IP_ENV, "10.1.2.3")
    assert loopback_driver() == {}  # the user's choice: Spark derives the driver's address
    assert os.environ[LOCAL_IP_ENV] == "10.1.2.3"


@pytest.mark.slow
def test_the_driver_logs_errors_only_with_the_packaged_configuration(spark: SparkSession) -> None:
    jvm = spark.sparkContext._jvm
    assert LOG4J2_CONFIG.is_file()
    assert jvm.java.lang.System.getProperty("log4j2.configurationFile") == LOG4J2_CONFIG.as_uri()
    root = jvm.org.apache.logging.log4j.LogManager.getRootLogger()
    assert str(root.getLevel()) == "ERROR"
