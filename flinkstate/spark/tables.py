"""A checkpoint dataset as Spark DataFrames, checked first.

The manifest and every table's schema are checked without reading a row, so a wrong folder
fails at once with the dataset's own message instead of deep inside a Spark job.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flinkstate.dataset import SCHEMAS, check_dataset, missing_columns

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class SparkDataset:
    manifest: dict[str, Any]
    operators: DataFrame
    exchanges: DataFrame
    buffers: DataFrame
    fragments: DataFrame
    keyed_state: DataFrame


def load(spark: SparkSession, directory: Path) -> SparkDataset:
    """The dataset in ``directory`` (checked by :func:`flinkstate.dataset.check_dataset`);
    the columns an older version lacks are there as nulls, as ``read_dataset`` gives them."""
    from pyspark.sql import functions as F

    manifest = check_dataset(directory)
    absent = missing_columns(manifest)
    frames = {}
    for name, schema in SCHEMAS.items():
        frame = spark.read.parquet(str((directory / f"{name}.parquet").resolve()))
        frames[name] = frame.select(
            *(
                F.lit(None).cast("string").alias(column)  # added in version 2: all strings
                if column in absent.get(name, ())
                else F.col(column)
                for column in schema.names
            )
        )
    return SparkDataset(manifest, **frames)


def in_flight(dataset: SparkDataset) -> DataFrame:
    """Per exchange and side: buffers, bytes, records (a record counted once however many
    buffers it spans), record fragments, and fragments of records that span buffers -- the
    size of what a restart must read back."""
    from pyspark.sql import functions as F

    sides = dataset.buffers.groupBy("exchange", "side").agg(
        F.count("*").alias("buffers"), F.sum("size").alias("bytes")
    )
    spans = F.col("continues_from_previous") | F.col("continues_into_next")
    contents = (
        dataset.fragments.join(dataset.buffers.select("buffer_id", "exchange", "side"), "buffer_id")
        .groupBy("exchange", "side")
        .agg(
            F.countDistinct("record").alias("records"),
            F.count("*").alias("fragments"),
            F.sum(spans.cast("long")).alias("spanning_fragments"),
        )
    )
    return (
        sides.join(contents, ["exchange", "side"], "left")
        .fillna(0, ["records", "fragments", "spanning_fragments"])
        .orderBy("exchange", "side")
    )
