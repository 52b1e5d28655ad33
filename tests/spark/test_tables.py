"""Spark reads the datasets checked, and its aggregates equal pandas' on the same tables."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest

from flinkstate.dataset import DatasetError, read_dataset
from flinkstate.samples import SAMPLES
from flinkstate.spark.tables import in_flight, load

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow
DATA = Path(__file__).parents[2] / "data"


def _expected(directory: Path) -> pd.DataFrame:
    tables = read_dataset(directory).tables
    buffers = tables["buffers"].to_pandas()
    fragments = tables["fragments"].to_pandas().merge(buffers, on="buffer_id")
    fragments["spans"] = fragments["continues_from_previous"] | fragments["continues_into_next"]
    sides = buffers.groupby(["exchange", "side"]).agg(
        buffers=("buffer_id", "count"), bytes=("size", "sum")
    )
    contents = fragments.groupby(["exchange", "side"]).agg(
        records=("record", "nunique"),
        fragments=("record", "count"),
        spanning_fragments=("spans", "sum"),
    )
    return sides.join(contents).fillna(0).astype("int64").reset_index()


@pytest.mark.parametrize("name", list(SAMPLES))
def test_in_flight_equals_pandas(spark: SparkSession, name: str) -> None:
    got = (
        in_flight(load(spark, DATA / name))
        .toPandas()
        .astype(
            {c: "int64" for c in ("buffers", "bytes", "records", "fragments", "spanning_fragments")}
        )
    )
    expected = _expected(DATA / name)
    pd.testing.assert_frame_equal(got[expected.columns], expected)


def test_a_wrong_folder_fails_before_spark_reads_it(spark: SparkSession, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"no manifest\.json"):
        load(spark, tmp_path)
