"""Drive the rescale explorer as a user would: change values, read the figures and messages."""

from __future__ import annotations

from flinkstate.widgets.rescale_explorer import RescaleExplorer


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
