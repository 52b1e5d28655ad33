"""The subtasks selected on the executors equal Flink's scalar arithmetic, record by record."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.keygroups import assign_to_key_group, compute_operator_index_for_key_group
from flinkstate.spark.channel_selection import keyed_selection
from flinkstate.spark.tables import load

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow
DATA = Path(__file__).parents[2] / "data"


@pytest.mark.parametrize(
    ("sample", "exchange"), [("keyed", "source->counter"), ("spanning-records", "first->second")]
)
@pytest.mark.parametrize("new_parallelism", [1, 3, 7])
def test_the_subtask_selected_for_every_fragment_is_flinks(
    spark: SparkSession, sample: str, exchange: str, new_parallelism: int
) -> None:
    dataset = load(spark, DATA / sample)
    got = keyed_selection(dataset, exchange, new_parallelism).toPandas()
    stored = dataset.fragments.select("buffer_id", "position", "key_group").toPandas()
    merged = got.merge(stored, on=["buffer_id", "position"], suffixes=("", "_stored"))
    assert len(merged) == len(got) > 0
    assert (merged["key_group"] == merged["key_group_stored"]).all()  # the export agrees
    for key, group, subtask in zip(got["key"], got["key_group"], got["new_subtask"], strict=True):
        assert group == assign_to_key_group(int(key), 128, "long")
        assert subtask == compute_operator_index_for_key_group(128, new_parallelism, int(group))


def test_bad_questions_are_named(spark: SparkSession) -> None:
    dataset = load(spark, DATA / "rebalance")
    with pytest.raises(InvalidParameterError, match="no exchange 'a->b'"):
        keyed_selection(dataset, "a->b", 2)
    with pytest.raises(InvalidParameterError, match="RebalancePartitioner exchange"):
        keyed_selection(dataset, "source->map", 2)
    with pytest.raises(InvalidParameterError, match="parallelism"):
        keyed_selection(dataset, "map->slow", 0)
