"""A checkpoint dataset as Spark DataFrames, checked first.

The manifest and every table's schema are checked without reading a row, so a wrong folder
fails at once with the dataset's own message instead of deep inside a Spark job.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from flinkstate.dataset import SCHEMAS, missing_columns, read_dataset
from flinkstate.rescale.routes import JobShape

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
    #: the operators and exchanges, read on the driver when the dataset was opened
    shape: JobShape


#: the Arrow types a dataset's tables hold, by their names in Spark SQL
_SPARK_TYPES = {
    pa.int8(): "tinyint",
    pa.int16(): "smallint",
    pa.int32(): "int",
    pa.int64(): "bigint",
    pa.string(): "string",
    pa.large_string(): "string",
    pa.bool_(): "boolean",
}


def spark_schema(schema: pa.Schema) -> str:
    """A dataset table's Arrow schema as Spark's DDL."""
    return ", ".join(f"{field.name} {_SPARK_TYPES[field.type]}" for field in schema)


def _file_schema(path: Path) -> str | None:
    """The Parquet file's own schema as Spark's DDL, so Spark need not open the file to infer
    it (a few tenths of a second per dataset); None where a column's type has no name here
    (Spark then reads it from the file as before)."""
    schema = pq.read_schema(path)
    if any(field.type not in _SPARK_TYPES for field in schema):
        return None
    return spark_schema(schema)


def job_shape(directory: Path) -> JobShape:
    """The operators and exchanges of the dataset in ``directory``, read on the driver without
    Spark (two small tables), to check a question before Spark starts."""
    return JobShape.of_tables(read_dataset(directory, ("operators", "exchanges")).tables)


def load(spark: SparkSession, directory: Path) -> SparkDataset:
    """The dataset in ``directory`` (checked by :func:`flinkstate.dataset.check_dataset`);
    the columns an older version lacks are there as nulls, as ``read_dataset`` gives them."""
    from pyspark.sql import functions as F

    small = read_dataset(directory, ("operators", "exchanges"))  # the whole dataset checked
    absent = missing_columns(small.manifest)
    frames = {}
    for name, schema in SCHEMAS.items():
        path = (directory / f"{name}.parquet").resolve()
        known = _file_schema(path)  # checked already: readable, with the columns it needs
        reader = spark.read if known is None else spark.read.schema(known)
        frame = reader.parquet(str(path))
        frames[name] = frame.select(
            *(
                F.lit(None).cast("string").alias(column)  # added in version 2: all strings
                if column in absent.get(name, ())
                else F.col(column)
                for column in schema.names
            )
        )
    return SparkDataset(small.manifest, **frames, shape=JobShape.of_tables(small.tables))


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
