"""Shared widget pieces: parameter controls refuse with the parameter's words, and a live figure
ends up showing exactly the figure it was given, however it got there."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest

from flinkstate.catalogue.scenarios import SCENARIOS, get_scenario
from flinkstate.errors import InvalidParameterError
from flinkstate.widgets.controls import ParameterControls, live_figure, scenario_picker, show_spec


def _spec(y: list[int], colour: str, with_text: bool) -> dict[str, object]:
    trace: dict[str, object] = {
        "type": "scatter",
        "x": [0, 1, 2],
        "y": y,
        "marker": {"color": colour, "size": 9},
    }
    if with_text:
        trace["text"] = ["a", "b", "c"]
    return {"data": [trace], "layout": {"title": {"text": f"y={y}"}, "height": 300}}


def _shown(figure: go.FigureWidget) -> tuple[list[dict[str, object]], object]:
    data = figure.to_plotly_json()["data"]
    for trace in data:
        trace.pop("uid", None)
    return data, figure.layout.title.text


def test_live_figure_matches_a_fresh_figure_after_any_sequence() -> None:
    live = live_figure()
    for y, colour, text in [
        ([1, 2, 3], "red", True),
        ([3, 2, 1], "blue", False),
        ([3, 2, 1], "blue", True),
        ([0, 0, 0], "red", False),
    ]:
        spec = _spec(y, colour, text)
        show_spec(live, spec)
        fresh = go.FigureWidget(spec)
        assert _shown(live) == _shown(fresh)


def test_changing_the_number_of_traces_replaces_them() -> None:
    live = live_figure()
    show_spec(live, _spec([1, 2, 3], "red", False))
    two = {"data": [_spec([1, 1, 1], "red", False)["data"][0]] * 2, "layout": {}}  # type: ignore[index]
    show_spec(live, two)
    assert len(live.data) == 2
    show_spec(live, go.Figure(go.Heatmap(z=np.arange(6).reshape(2, 3))))
    assert [t.type for t in live.data] == ["heatmap"]
    assert list(live.data[0].z[1]) == [3, 4, 5]


def test_parameter_controls_check_with_the_parameters_own_bounds() -> None:
    controls = ParameterControls(get_scenario("prefilter-deadlock"), {"record_size": 36_000})
    assert controls.values()["record_size"] == 36_000
    assert controls.controls["prefilter_source"].options == (
        "network",
        "heap-fallback",
        "heap-segment",
    )
    controls.controls["floating_buffers"].value = 5000
    with pytest.raises(InvalidParameterError, match="floating_buffers = 5000 is above its maximum"):
        controls.values()
    assert "(min 1, max 1024)" in controls.controls["floating_buffers"].tooltip


def test_changes_are_sent_to_the_browser() -> None:
    """plotly only tells the front end about a change made through its validating setters: a
    live figure must not take a shortcut that leaves the page showing the old step."""
    live = live_figure()
    updates: list[dict[str, Any]] = []
    live.observe(
        lambda change: updates.append(copy.deepcopy(change["new"])) if change["new"] else None,
        "_py2js_update",
    )
    show_spec(live, _spec([1, 2, 3], "red", True))
    show_spec(live, _spec([1, 2, 4], "red", True))
    last = updates[-1]
    assert last["style_data"] == {"y": [[1, 2, 4]]}  # only what changed, and it was sent
    assert last["layout_data"] == {"title": {"text": "y=[1, 2, 4]"}}


def _page_draws(figure: go.FigureWidget) -> None:
    """What plotly's front end sends after drawing the figure, or after applying an edit: the
    traces as drawn, for the last edit it has."""
    figure._js2py_traceDeltas = {"trace_deltas": [], "trace_edit_id": figure._last_trace_edit_id}


def _relayouts(figure: go.FigureWidget) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    figure.observe(
        lambda change: sent.append(change["new"]["relayout_data"]) if change["new"] else None,
        "_py2js_relayout",
    )
    return sent


def test_a_live_figure_is_measured_again_once_it_is_on_the_page() -> None:
    """Drawn before it is on the page, the figure comes out at plotly's default width; once
    the page has drawn it, the figure asks the page to measure its column, once per drawing,
    not at every edit."""
    live = live_figure()
    assert live._config["responsive"] is True  # a window resize fits it too
    spec = _spec([1, 2, 3], "red", False)
    show_spec(live, {**spec, "layout": {**spec["layout"], "autosize": True}})  # type: ignore[dict-item]
    relayouts = _relayouts(live)
    _page_draws(live)  # first drawn, off the page
    assert relayouts == [{"autosize": True}]
    show_spec(live, _spec([1, 2, 4], "red", False))
    _page_draws(live)  # the edit applied: nothing to measure
    assert relayouts == [{"autosize": True}]
    _page_draws(live)  # drawn again (shown in a second place, or the notebook reopened)
    assert relayouts == [{"autosize": True}] * 2


def test_a_figure_with_a_fixed_width_is_left_alone() -> None:
    live = live_figure()
    spec = _spec([1, 2, 3], "red", False)
    show_spec(live, {**spec, "layout": {**spec["layout"], "width": 500}})  # type: ignore[dict-item]
    relayouts = _relayouts(live)
    _page_draws(live)
    assert relayouts == []


def test_an_update_gives_every_trace_in_it_every_property_in_it() -> None:
    """Plotly's browser model writes a property an update leaves out for one of its traces as
    the string "_undefined_"; a page drawing the figure from that model (a figure in a box, a
    reopened notebook) then loses the trace. No update may leave anything out."""
    from plotly.basedatatypes import Undefined  # what becomes "_undefined_"

    live = live_figure()
    two = {
        "data": [
            {"type": "scatter", "x": [0, 1], "y": [0, 1], "text": ["a", "b"]},
            {"type": "scatter", "x": [0, 1], "y": [1, 0], "text": ["c", "d"]},
        ],
        "layout": {"title": {"text": "0"}},
    }
    show_spec(live, two)
    updates: list[dict[str, Any]] = []  # as sent: a copy would copy plotly's marker too
    live.observe(
        lambda change: updates.append(change["new"]) if change["new"] else None,
        "_py2js_update",
    )
    # one trace moves, the other only changes its text
    moved = copy.deepcopy(two)
    moved["data"][0]["x"] = [5, 6]
    moved["data"][1]["text"] = ["e", "f"]
    moved["layout"]["title"]["text"] = "1"
    show_spec(live, moved)
    (update,) = updates
    assert update["style_traces"] == [0, 1]
    for values in update["style_data"].values():
        assert Undefined not in values
    assert update["style_data"]["x"] == [[5, 6], [0, 1]]  # the unchanged one's own x
    assert _shown(live) == _shown(go.FigureWidget(moved))


def test_the_scenario_picker_tells_the_whole_line_of_the_chosen_scenario() -> None:
    """Titles run longer than a picker is wide: its tooltip is the chosen one's whole line."""
    picker = scenario_picker("trigger-no-op-after-drain")
    item = SCENARIOS["trigger-no-op-after-drain"]
    assert picker.tooltip == f"{item.name}: {item.title}"
    picker.value = "baseline-recovery"
    assert picker.tooltip == f"baseline-recovery: {SCENARIOS['baseline-recovery'].title}"
    assert picker.layout.width == "auto"
