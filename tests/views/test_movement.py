"""The rescale figures show exactly the pipeline's numbers, for every exchange and parallelism."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.spark.rescaling import RescaleResult, RescalingPipeline
from flinkstate.spark.tables import load
from flinkstate.views.movement import (
    key_group_heatmap,
    movement_sankey,
    subtask_bars,
    sweep_figure,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def pipeline(spark: SparkSession) -> Iterator[RescalingPipeline]:
    made = RescalingPipeline(load(spark, DATA / "spanning-records"))
    yield made
    made.close()


@pytest.fixture(scope="module")
def result(pipeline: RescalingPipeline) -> RescaleResult:
    return pipeline.analyse([2, 3, 6], progress=False)


def test_sankey_links_carry_the_moved_bytes(result: RescaleResult) -> None:
    for to in result.targets:
        for exchange in result.exchanges:
            sankey = movement_sankey(result, exchange, to).data[0]
            sweep = result.sweep.set_index(["to", "exchange"]).loc[(to, exchange)]
            assert sum(sankey.link.value) == sweep["delivered_bytes"]
            old_p, new_p = int(sweep["old_parallelism"]), int(sweep["new_parallelism"])
            assert len(sankey.node.label) == old_p + new_p
            assert all(old_p <= target < old_p + new_p for target in sankey.link.target)
            assert all(0 <= source < old_p for source in sankey.link.source)


def test_bars_split_what_each_subtask_reads(result: RescaleResult) -> None:
    figure = subtask_bars(result, "source->first", 3)
    kept, filtered = figure.data
    rows = result.subtasks[
        (result.subtasks["to"] == 3) & (result.subtasks["exchange"] == "source->first")
    ]
    assert list(kept.x) == [str(s) for s in rows["subtask"]]
    np.testing.assert_array_equal(np.add(kept.y, filtered.y), rows["bytes"])
    np.testing.assert_array_equal(filtered.y, rows["filtered_bytes"])
    assert sum(filtered.y) > 0


def test_sweep_has_a_point_per_parallelism(result: RescaleResult) -> None:
    figure = sweep_figure(result)
    assert len(figure.data) == 3 * len(result.exchanges)
    for trace in figure.data:
        assert list(trace.x) == [2, 3, 6]
    only = sweep_figure(result, "first->second")
    assert {trace.name.split(":")[0] for trace in only.data} == {"first->second"}


def test_heatmap_shows_owners_and_in_flight_records(
    pipeline: RescalingPipeline, result: RescaleResult
) -> None:
    frame = pipeline.key_groups("source->first", 3)
    assert (
        frame["records"].sum()
        == result.persisted.set_index(["exchange", "side"])["records"].loc["source->first"].sum()
    )
    figure = key_group_heatmap(frame, "source->first", 4, 3)
    new, old = figure.data[0].z
    np.testing.assert_array_equal(old, frame["old_subtask"])
    np.testing.assert_array_equal(new, frame["new_subtask"])
    assert "key groups change subtask" in figure.layout.title.text
    assert list(figure.data[0].colorbar.tickvals) == [0, 1, 2, 3]  # a colour bar of subtasks
    with pytest.raises(InvalidParameterError, match="no key groups"):
        key_group_heatmap(frame.iloc[:0], "source->first", 4, 3)


def test_figures_fit_their_container(result: RescaleResult) -> None:
    exchange, to = result.exchanges[0], result.targets[0]
    for figure in (
        movement_sankey(result, exchange, to),
        subtask_bars(result, exchange, to),
        sweep_figure(result),
    ):
        assert figure.layout.width is None
        assert figure.layout.autosize is True


def test_unknown_exchange_or_parallelism_is_named(result: RescaleResult) -> None:
    with pytest.raises(InvalidParameterError, match="no in-flight data on 'nope'"):
        movement_sankey(result, "nope", 2)
    with pytest.raises(InvalidParameterError, match="parallelism 5 was not asked"):
        subtask_bars(result, "source->first", 5)
