from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.rescale import Partitioner, rescale_exchange
from flinkstate.views.rescaling import (
    key_group_owners,
    key_group_ownership_figure,
    not_keyed_note,
    state_reading_figure,
    state_reading_graph,
)


def test_owners_follow_flink_ranges() -> None:
    owners = key_group_owners(128, 3).tolist()
    assert owners[:43] == [0] * 43
    assert owners[43:86] == [1] * 43
    assert owners[86:] == [2] * 42


def test_ownership_figure_counts_moved_key_groups() -> None:
    figure = key_group_ownership_figure(128, 2, 4)
    # 2 -> 4: [0,63] [64,127] -> [0,31] [32,63] [64,95] [96,127]: only 0-31 keep subtask 0.
    assert "96 of 128 key groups change subtask" in figure.layout.title.text


def test_ownership_figure_rejects_bad_parallelism() -> None:
    with pytest.raises(InvalidParameterError):
        key_group_ownership_figure(128, 0, 2)


def test_graph_marks_filtered_reads() -> None:
    graph = state_reading_graph(rescale_exchange("keyBy", (3, 2), (3, 2)))
    filtered = {(u[1], v[1]) for u, v, d in graph.edges(data=True) if d["filtered"]}
    assert filtered == {(1, 0), (1, 1)}
    assert graph.number_of_edges() == 4


def test_layout_is_stable_across_parameters() -> None:
    a = state_reading_figure(rescale_exchange("keyBy", (3, 2), (3, 2)))
    b = state_reading_figure(rescale_exchange("rebalance", (3, 2), (3, 2)))
    assert list(a.data[-1].x) == list(b.data[-1].x)
    assert list(a.data[-1].y) == list(b.data[-1].y)


def test_only_a_keyed_exchange_has_key_groups() -> None:
    assert not_keyed_note("keyBy") is None
    note = not_keyed_note(Partitioner.REBALANCE)
    assert note is not None
    assert "not keyed (rebalance()): records go round robin" in note
    for partitioner in Partitioner:
        if partitioner is not Partitioner.HASH:
            assert "no key groups" in (not_keyed_note(partitioner) or "")


def test_ownership_heatmap_names_the_subtasks_on_a_colour_bar() -> None:
    heatmap = key_group_ownership_figure(128, 3, 5).data[0]
    assert heatmap.showscale is not False
    assert list(heatmap.colorbar.tickvals) == list(range(5))
    assert heatmap.zmin == -0.5
    assert heatmap.zmax == 4.5
