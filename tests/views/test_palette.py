"""One look for every figure: a colour per owner kind shared by all of them, sized by the
container, heatmaps with colour bars, titles below the mode bar, readable text."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import pytest

from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.lab.whatif import what_if
from flinkstate.rescale import rescale_exchange
from flinkstate.runtime.world.metrics import OWNER_KINDS, POOL_KINDS, RECOVERY_KINDS
from flinkstate.sim.deadlock import Wait, find_deadlock
from flinkstate.views.checkpoint_files import key_group_figure, records_figure
from flinkstate.views.deadlock import deadlock_figure
from flinkstate.views.movement import key_group_heatmap
from flinkstate.views.ownership import NODE_KINDS, ownership_figure
from flinkstate.views.palette import (
    GROUP_COLOURS,
    MODEBAR,
    NODE_COLOURS,
    OWNER_COLOURS,
    OWNER_GROUPS,
    figure_layout,
    html_table,
    owner_group,
    subtask_colours,
    wrap,
)
from flinkstate.views.recovery import owner_timeline_figure, whatif_figure
from flinkstate.views.rescaling import key_group_ownership_figure, state_reading_figure
from flinkstate.views.timelines import Timelines, timelines_figure

#: one xdist worker runs the module, so that the figures (a module fixture) are drawn once
pytestmark = pytest.mark.xdist_group("palette")


def test_every_owner_kind_has_its_own_colour_in_its_group() -> None:
    assert list(OWNER_COLOURS) == [k for g in OWNER_GROUPS.values() for k in g]
    assert set(OWNER_COLOURS) == set(OWNER_KINDS)
    assert len(set(OWNER_COLOURS.values())) == len(OWNER_KINDS)  # distinct
    assert all(owner_group(k) == "in pools" for k in POOL_KINDS)
    assert all(owner_group(k) == "in recovery" for k in RECOVERY_KINDS)
    assert owner_group("queue") == "in flight in the network"
    assert owner_group("channel-state-writer") == "being persisted"
    assert owner_group("received") == "at the consumer"
    assert len(set(GROUP_COLOURS.values())) == len(GROUP_COLOURS)
    # a group's first kind has the group's colour, the others its tints and shades
    for group, kinds in OWNER_GROUPS.items():
        assert OWNER_COLOURS[kinds[0]] == GROUP_COLOURS[group]


def test_node_kinds_are_coloured_by_what_they_hold() -> None:
    assert NODE_KINDS is NODE_COLOURS
    assert len(set(NODE_COLOURS.values())) == len(NODE_COLOURS)
    assert NODE_COLOURS["network-pool"] == OWNER_COLOURS["network-pool"]
    assert NODE_COLOURS["subpartition"] == OWNER_COLOURS["queue"]
    assert NODE_COLOURS["recovered-channel"] == OWNER_COLOURS["recovered"]
    assert NODE_COLOURS["channel-state-writer"] == OWNER_COLOURS["channel-state-writer"]


def test_wrap_breaks_long_lines_only() -> None:
    assert wrap("short<br>also short") == "short<br>also short"
    wrapped = wrap("word " * 40, 30)
    assert all(len(line) <= 30 for line in wrapped.split("<br>"))


def test_titles_hang_below_the_mode_bar() -> None:
    layout = figure_layout("A title " * 20, subtitle="a subtitle", height=300)
    lines = layout["title"]["text"].count("<br>") + 1
    assert lines >= 3  # wrapped, and the subtitle on its own line
    top = layout["margin"]["t"]
    assert layout["height"] == 300 + top
    # hung from below the mode bar, the title block fits in the top margin
    assert layout["title"]["yref"] == "container"
    assert (1 - layout["title"]["y"]) * layout["height"] >= MODEBAR
    assert top >= MODEBAR + lines * 15


def test_table_headers_line_up_with_their_columns() -> None:
    table = html_table(["metric", "A", "B"], [["bytes", 1234567, None], ["outcome", "x", True]])
    header, *rows = table.split("<tr>")[1:]
    aligns = [cell.split("text-align:")[1].split(";")[0] for cell in header.split("<th")[1:]]
    assert aligns == ["left", "right", "right"]
    for row in rows:
        cells = [c.split("text-align:")[1].split(";")[0] for c in row.split("<td")[1:]]
        assert cells == aligns
    for shown in (">1,234,567<", ">-<", ">yes<"):
        assert shown in table


def test_subtask_colours_name_every_subtask_on_the_colour_bar() -> None:
    few = subtask_colours(3)
    assert few["colorbar"]["tickvals"] == [0, 1, 2]
    assert len({colour for _, colour in few["colorscale"]}) == 3
    many = subtask_colours(40)
    assert many["zmax"] == 39
    assert many["colorbar"]["title"]["text"] == "subtask"


def _figures() -> Iterator[tuple[str, go.Figure]]:
    """Every figure the views draw without Spark (movement's Spark-fed ones: test_movement)."""
    run = prepare_scenario("keyed-upscale", seed=0)
    assert run.simulation is not None
    run.simulation.run(400)
    world = run.world
    assert world is not None
    yield "timelines", timelines_figure(Timelines.of_simulation(run.simulation))
    yield "ownership", ownership_figure(world, run.simulation.events[-1])
    finished = run_scenario("baseline-recovery", seed=0)
    assert finished.simulation is not None
    yield (
        "owner timeline",
        owner_timeline_figure(finished.simulation.events, finished.initial_owners),
    )
    waits = [Wait("task a[0]", "input", ("task b[0]",)), Wait("task b[0]", "input", ("task a[0]",))]
    yield "deadlock", deadlock_figure(find_deadlock(waits, 3))
    yield "key groups", key_group_ownership_figure(128, 3, 5)
    yield "state reading", state_reading_figure(rescale_exchange("keyBy", (3, 2), (3, 2)))
    frame = pd.DataFrame(
        {
            "key_group": range(8),
            "old_subtask": [0, 0, 0, 0, 1, 1, 1, 1],
            "new_subtask": [0, 0, 0, 1, 1, 1, 2, 2],
            "records": range(8),
            "bytes": range(8),
            "state_entries": range(8),
        }
    )
    yield "key-group heatmap", key_group_heatmap(frame, "a->b", 2, 3)
    rows = [{"subtask": s, "key_group": g, "entries": g} for s in (0, 1) for g in range(4)]
    yield "keyed state", key_group_figure(rows)
    summary: dict[str, Any] = {
        "logical_channels": [{"upstream_subtask": 0, "downstream_subtask": 1, "records": 3}]
    }
    yield "records", records_figure(summary)
    table = what_if("prefilter-deadlock", {"record_size": [36_000, 37_000]}, progress=False)
    yield "what-if", whatif_figure(table, "record_size", "steps")


@pytest.fixture(scope="module")
def figures() -> list[tuple[str, go.Figure]]:
    return list(_figures())


def test_no_figure_has_a_fixed_width(figures: list[tuple[str, go.Figure]]) -> None:
    for name, figure in figures:
        assert figure.layout.width is None, name
        assert figure.layout.autosize is True, name
        assert figure.layout.height is not None, name


def test_every_heatmap_has_a_colour_bar(figures: list[tuple[str, go.Figure]]) -> None:
    heatmaps = [(n, t) for n, f in figures for t in f.data if t.type == "heatmap"]
    assert len(heatmaps) == 2
    for name, trace in heatmaps:
        assert trace.showscale is not False, name
        assert trace.colorbar.title.text == "subtask", name


def test_text_is_readable_and_hover_labels_fit(figures: list[tuple[str, go.Figure]]) -> None:
    for name, figure in figures:
        assert figure.layout.font.size >= 11, name
        assert figure.layout.hoverlabel.align == "left", name
        for trace in figure.data:
            size = getattr(trace, "textfont", None) and trace.textfont.size
            sizes = size if isinstance(size, tuple | list) else [size]
            assert all(s is None or s >= 11 for s in sizes), (name, trace.name)
            for text in getattr(trace, "hovertext", None) or ():
                assert all(len(line) <= 80 for line in str(text).split("<br>")), (name, text)


def test_figures_with_owner_kinds_use_the_palette(figures: list[tuple[str, go.Figure]]) -> None:
    shown = dict(figures)
    for name in ("timelines", "owner timeline"):
        groups = [t for t in shown[name].data if t.name in OWNER_GROUPS]
        assert groups, name
        assert all(t.line.color == GROUP_COLOURS[t.name] for t in groups), name
        for trace in groups:  # each kind's swatch in the hover is its own colour
            for kind in OWNER_GROUPS[trace.name]:
                if kind in trace.hovertemplate:
                    assert OWNER_COLOURS[kind] in trace.hovertemplate
    nodes = [t for t in shown["ownership"].data if t.name in NODE_KINDS]
    assert all(t.marker.color == NODE_COLOURS[t.name] for t in nodes)
