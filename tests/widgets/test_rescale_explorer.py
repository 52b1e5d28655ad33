"""Drive the rescale explorer as a user would: change values, read the figures and messages."""

from __future__ import annotations

import html
import tracemalloc

import pytest

from flinkstate.widgets.rescale_explorer import (
    MAX_DRAWN_SUBTASKS,
    MAX_PLAN_SIZE,
    RescaleExplorer,
)


def test_initial_figures_show_the_default_rescale() -> None:
    explorer = RescaleExplorer()
    assert "63 of 128 key groups change subtask" in explorer.ownership.layout.title.text
    assert "3 -> 2" in explorer.reading.layout.title.text
    assert explorer.message.value == ""
    assert ">0, 1</td>" in explorer.summary.value
    assert explorer.ownership.layout.width is None  # as wide as the notebook's column


def test_changing_parallelism_updates_figures_in_place() -> None:
    explorer = RescaleExplorer()
    figure = explorer.ownership
    before = list(figure.data[0].z[0])
    explorer.new_parallelism.value = 7
    assert explorer.ownership is figure  # the same live widget, updated
    assert list(figure.data[0].z[0]) != before
    assert max(figure.data[0].z[0]) == 6
    assert explorer.plan is not None
    assert explorer.plan.downstream_parallelism == (3, 7)


def test_refused_value_keeps_last_figure_and_says_why() -> None:
    explorer = RescaleExplorer()
    title = explorer.ownership.layout.title.text
    explorer.max_parallelism.value = 2  # below the old parallelism of 3
    assert "Not applied" in explorer.message.value
    assert "parallelism 3 is above max parallelism 2" in explorer.message.value
    assert explorer.ownership.layout.title.text == title
    explorer.max_parallelism.value = 128
    assert explorer.message.value == ""


def test_pointwise_exchange_shows_no_in_flight_data() -> None:
    explorer = RescaleExplorer()
    explorer.partitioner.value = "RESCALE"
    assert "no in-flight data" in explorer.reading.layout.title.text
    assert "aligns its barriers" in explorer.summary.value


def test_filtered_edges_are_drawn_separately() -> None:
    explorer = RescaleExplorer()
    plain, filtered = explorer.reading.data[0], explorer.reading.data[1]
    assert filtered.name == "reads, filters"
    assert len([x for x in filtered.x if x is not None]) == 4  # old 1 -> new 0 and new 1
    assert len([x for x in plain.x if x is not None]) == 4


def test_a_non_keyed_exchange_has_no_key_group_chart() -> None:
    explorer = RescaleExplorer()
    assert explorer.ownership_box.layout.display == ""
    assert explorer.not_keyed.value == ""
    explorer.partitioner.value = "REBALANCE"
    assert explorer.ownership_box.layout.display == "none"
    assert "not keyed (rebalance()): records go round robin" in explorer.not_keyed.value
    assert "no key groups" in explorer.not_keyed.value
    assert "3 -> 2" in explorer.reading.layout.title.text  # who reads what still shows
    explorer.partitioner.value = "HASH"
    assert explorer.ownership_box.layout.display == ""
    assert explorer.not_keyed.value == ""


def _shown(explorer: RescaleExplorer) -> tuple[object, ...]:
    """What the figures and the table show now."""
    return (
        explorer.ownership.layout.title.text,
        tuple(explorer.ownership.data[0].z[0]),
        explorer.reading.layout.title.text,
        explorer.summary.value,
    )


@pytest.mark.parametrize("box", ["max_parallelism", "old_parallelism", "new_parallelism"])
@pytest.mark.parametrize("typed", [0, -5, 10**9])
def test_a_value_out_of_flinks_bounds_is_refused_not_clamped(box: str, typed: int) -> None:
    explorer = RescaleExplorer()
    before = _shown(explorer)
    getattr(explorer, box).value = typed
    assert getattr(explorer, box).value == typed  # what was typed stays, it is not clamped
    message = html.unescape(explorer.message.value)
    name = box.replace("_", " ")
    if box == "max_parallelism" and typed > 0:
        assert f"Not applied: max parallelism {typed} is above Flink's upper bound 32768" in message
    else:
        assert f"Not applied: {name} {typed} is out of range: Flink accepts 1 to 32768" in message
    assert _shown(explorer) == before  # the last valid figures, not a clamped one
    getattr(explorer, box).value = {"max_parallelism": 128, "old_parallelism": 3}.get(box, 2)
    assert explorer.message.value == ""


@pytest.mark.parametrize("max_parallelism", [4096, 32768])
def test_more_subtasks_than_the_graph_can_draw_are_refused_with_the_limit(
    max_parallelism: int,
) -> None:
    explorer = RescaleExplorer()
    before = _shown(explorer)
    explorer.max_parallelism.value = max_parallelism
    tracemalloc.start()
    try:
        explorer.old_parallelism.value = max_parallelism - 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = html.unescape(explorer.message.value)
    assert f"at most {MAX_DRAWN_SUBTASKS} on a side" in message
    assert f"flinkstate mapping --partitioner keyBy --old {max_parallelism - 1} --new 2" in message
    assert _shown(explorer)[2:] == before[2:]
    assert peak < 50_000_000  # 4095 subtasks ran out of memory; 32768 took 20 GB


def test_a_plan_too_large_to_draw_is_refused_with_the_limit() -> None:
    explorer = RescaleExplorer()
    explorer.partitioner.value = "CUSTOM"  # every new subtask reads every old one's channels
    explorer.old_parallelism.value = 60
    before = _shown(explorer)
    explorer.new_parallelism.value = 59
    message = html.unescape(explorer.message.value)
    assert "partitionCustom() 60 -> 59 is a plan of " in message
    assert f"more than the {MAX_PLAN_SIZE:,} the explorer draws" in message
    assert _shown(explorer) == before
    explorer.new_parallelism.value = 20
    assert explorer.message.value == ""
    assert "60 -> 20" in explorer.reading.layout.title.text


def test_no_partitioner_is_refused_in_words() -> None:
    """``partitioner.value = None`` (code can set it; the page cannot) was an AttributeError
    in the observer."""
    explorer = RescaleExplorer()
    explorer.partitioner.value = None
    assert "Not applied: a partitioner is named by text, got None" in explorer.message.value
    explorer.partitioner.value = "REBALANCE"
    assert explorer.message.value == ""
