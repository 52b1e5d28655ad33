"""Spark reads the datasets checked, and its aggregates equal pandas' on the same tables."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from flinkstate.dataset import DatasetError, read_dataset
from flinkstate.rescale.routes import JobShape
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


def test_the_shape_and_schemas_come_from_the_driver(spark: SparkSession) -> None:
    """The job's shape is the one Spark's own rows give, and every table has the schema its
    file declares (given to Spark, not inferred by it)."""
    dataset = load(spark, DATA / "keyed")
    rows = JobShape.of(
        (r.asDict() for r in dataset.operators.collect()),
        (r.asDict() for r in dataset.exchanges.collect()),
    )
    assert dataset.shape == rows
    inferred = spark.read.parquet(str(DATA / "keyed" / "fragments.parquet"))
    assert dataset.fragments.schema.simpleString() == inferred.schema.simpleString()


def test_a_column_type_without_a_spark_name_is_inferred(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A writer's unsigned sizes (which the dataset's check accepts as integers) leave Spark
    to read the schema from the file: the same rows as the signed original."""
    copy = tmp_path / "keyed"
    shutil.copytree(DATA / "keyed", copy)
    buffers = pq.read_table(copy / "buffers.parquet")
    index = buffers.schema.get_field_index("size")
    pq.write_table(
        buffers.set_column(index, "size", pc.cast(buffers["size"], pa.uint32())),
        copy / "buffers.parquet",
    )
    got = load(spark, copy).buffers.toPandas().sort_values("buffer_id", ignore_index=True)
    expected = load(spark, DATA / "keyed").buffers.toPandas()
    expected = expected.sort_values("buffer_id", ignore_index=True)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
