"""Timelines hold exactly what the world held at every step, however they were recorded."""

from __future__ import annotations

import dataclasses
import itertools
import json

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.runtime.buffer.records import MAX_WATERMARK, MIN_WATERMARK
from flinkstate.runtime.jobgraph import OperatorKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Simulation
from flinkstate.views.palette import ALERT, GROUP_COLOURS, OWNER_GROUPS
from flinkstate.views.timelines import (
    MAX_CONNECTIONS,
    Timelines,
    event_time_figure,
    timelines_figure,
    timelines_spec,
)


def _truth(world: NetworkWorld) -> dict[str, dict[str, int]]:
    kinds: dict[str, int] = {}
    for owner in world.owner:
        kinds[owner.kind] = kinds.get(owner.kind, 0) + 1
    return {
        "buffers": kinds,
        "credits": {c.name: c.buffers.available for c in world.channels.values() if c.remote},
        "backlog": {
            c.name: world.subpartitions[c.subpartition].backlog for c in world.channels.values()
        },
        "processed": {name: t.processed for name, t in world.tasks.items()},
        "checkpoint": {
            "acknowledged": 0
            if world.checkpoints.pending is None
            else len(world.checkpoints.pending.acknowledged),
            "completed": len(world.checkpoints.completed),
            "expired": len(world.checkpoints.expired),
        },
    }


def _now(timelines: Timelines) -> dict[str, dict[str, int]]:
    return {
        family: {name: points[-1][1] for name, points in getattr(timelines, family).items()}
        for family in ("buffers", "credits", "backlog", "processed", "checkpoint")
    }


def _simulation(scenario: str, phase: str = "restart", **overrides: object) -> Simulation:
    run = prepare_scenario(scenario, seed=3, overrides=overrides or None, phase=phase)
    assert run.simulation is not None
    return run.simulation


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scenario", "phase", "records"),
    [
        ("baseline-recovery", "restart", 30),
        ("baseline-recovery", "job", 30),
        ("prefilter-heap-segment", "restart", 10),
        ("barrier-held-by-blocked-subpartition", "restart", 30),
    ],
)
def test_incremental_recording_equals_reading_everything(
    scenario: str, phase: str, records: int
) -> None:
    simulation = _simulation(scenario, phase, records=records)
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    timelines = Timelines.start(world)
    while (event := simulation.step()) is not None:
        world = simulation.model
        assert isinstance(world, NetworkWorld)
        timelines.record(world, event)
        truth = _truth(world)
        now = _now(timelines)
        for family, values in truth.items():
            for name, value in values.items():
                assert now[family].get(name, 0) == value, (world.step, family, name)


def test_rewind_equals_recording_only_up_to_that_step() -> None:
    simulation = _simulation("baseline-recovery", records=30)
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    timelines = Timelines.start(world)
    for _ in range(900):
        event = simulation.step()
        assert event is not None
        assert isinstance(simulation.model, NetworkWorld)
        timelines.record(simulation.model, event)
    simulation.goto(350)
    timelines.rewind(350)
    fresh = Timelines.of_simulation(simulation)
    assert timelines.step == fresh.step == 350
    for family in ("buffers", "credits", "backlog", "processed", "checkpoint"):
        mine = {k: v for k, v in getattr(timelines, family).items() if v != [(0, 0)]}
        theirs = {k: v for k, v in getattr(fresh, family).items() if v != [(0, 0)]}
        assert mine == theirs, family


@pytest.mark.slow
def test_replayed_run_shows_the_checkpoint_completing() -> None:
    run = run_scenario("baseline-recovery", seed=0)
    assert run.simulation is not None
    timelines = Timelines.of_simulation(run.simulation)
    world = run.world
    assert world is not None
    assert timelines.value("checkpoint", "completed") == len(world.checkpoints.completed) == 1
    assert all(
        timelines.value("processed", name) == task.processed for name, task in world.tasks.items()
    )
    figure = timelines_figure(timelines)  # validates the spec
    assert figure.layout.title.text == f"Over the steps, up to step {run.simulation.step_count}"
    connections = [
        t for t in figure.data if t.name.startswith("backlog ") and t.showlegend is False
    ]
    assert 0 < len(connections) <= MAX_CONNECTIONS
    assert go.Figure(figure.to_plotly_json()) is not None


#: entries of one panel's legend, however many connections, subtasks or owner kinds the job has
MAX_LEGEND_ENTRIES = 6


@pytest.mark.slow
def test_legends_stay_short_and_buffers_are_grouped_by_where_they_are() -> None:
    run = run_scenario("keyed-upscale", seed=0)
    assert run.simulation is not None
    timelines = Timelines.of_simulation(run.simulation)
    assert len(timelines.backlog) > 2 * MAX_LEGEND_ENTRIES  # dozens of connections
    figure = timelines_figure(timelines)
    entries: dict[str, list[str]] = {}
    for trace in figure.data:
        if trace.showlegend is not False:
            entries.setdefault(trace.legend or "legend", []).append(trace.name)
    assert len(entries) == 4  # a legend per panel, beside it
    assert all(len(names) <= MAX_LEGEND_ENTRIES for names in entries.values()), entries
    groups = entries["legend"]
    assert set(groups) <= set(OWNER_GROUPS)
    assert "in recovery" in groups
    for trace in figure.data:
        if trace.name in OWNER_GROUPS:
            kinds = OWNER_GROUPS[trace.name]
            assert trace.line.color == GROUP_COLOURS[trace.name]
            # the group's count is the sum of its kinds', each named on hover
            for step, total in zip(trace.x, trace.y, strict=True):
                assert total == sum(_value(timelines.buffers.get(k, []), step) for k in kinds)
            assert any(kind in trace.hovertemplate for kind in kinds)
    pools = next(t for t in figure.data if t.name == "in pools")
    assert pools.visible == "legendonly"  # thousands of free segments would flatten the rest


def test_panel_titles_sit_in_the_gaps_between_the_panels() -> None:
    simulation = _simulation("baseline-recovery", records=10)
    simulation.run(200)
    figure = timelines_figure(Timelines.of_simulation(simulation))
    layout = figure.layout
    domains = [layout[f"yaxis{'' if i == 1 else i}"].domain for i in range(1, 5)]
    for above, below in itertools.pairwise(domains):
        gap_pixels = (above[0] - below[1]) * (layout.height - layout.margin.t - layout.margin.b)
        assert gap_pixels >= 40  # a title line and the tick labels of the panel above
    titles = [a for a in layout.annotations if a.yref == "paper"]
    assert [round(a.y, 6) for a in titles] == [round(d[1], 6) for d in domains]
    assert all(a.yanchor == "bottom" for a in titles)


def _value(points: list[tuple[int, int]], step: int) -> int:
    """A change-point series' value at ``step``."""
    value = 0
    for at, v in points:
        if at > step:
            break
        value = v
    return value


# -- event time


def _watermarks(world: NetworkWorld) -> dict[str, int]:
    """Each task reading an input: its watermark in the world (MIN_WATERMARK before one)."""
    return {
        name: world.event_time.watermark.get(task.name, MIN_WATERMARK)
        for name, task in world.tasks.items()
        if task.kind is not OperatorKind.SOURCE
    }


def test_watermarks_equal_each_tasks_watermark_in_the_world_after_every_step() -> None:
    """FLINK-40517's fixed run: every task's line is its watermark in the world, step by step,
    from none to MAX, and no record is late."""
    simulation = prepare_scenario("merged-watermarks-aggregated", seed=0).simulation
    assert simulation is not None
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    timelines = Timelines.start(world)
    assert timelines.event_time
    assert set(timelines.watermarks) == {"counter[0]", "counter[1]", "sink[0]", "sink[1]"}
    while (event := simulation.step()) is not None:
        world = simulation.model
        assert isinstance(world, NetworkWorld)
        timelines.record(world, event)
        for name, watermark in _watermarks(world).items():
            assert timelines.value("watermarks", name) == watermark, (world.step, name)
    assert timelines.late == [] == list(world.event_time.late)
    assert all(points[0][1] == MIN_WATERMARK for points in timelines.watermarks.values())
    assert all(v == MAX_WATERMARK for v in _watermarks(world).values())
    figure = timelines_figure(timelines)
    lines = {t.name: t for t in figure.data if t.yaxis == "y5"}
    assert set(lines) == set(timelines.watermarks)
    for name, line in lines.items():
        assert line.y[0] is None  # no watermark yet: no line
        assert line.y[-1] == timelines.end_of_time == 120  # MAX on the dotted line at the top
        assert line.customdata[-1] == "MAX"
        # every change point of the line is the task's watermark at that step
        for x, y, text in zip(line.x, line.y, line.customdata, strict=True):
            value = _value(timelines.watermarks[name], x)
            assert text == ("none" if value == MIN_WATERMARK else "MAX" if y == 120 else str(y))
    assert [s.y0 for s in figure.layout.shapes] == [120]
    assert "no record late" in figure.layout.annotations[4].text


def test_a_record_dropped_as_late_is_marked_at_the_step_that_dropped_it() -> None:
    """FLINK-40517's run before the fix: the cross sits at the step the invariant names, at
    the record's timestamp, on the counter's watermark; hovering it names record and task."""
    run = run_scenario("merged-watermarks-passed-through", seed=0)
    assert run.simulation is not None
    assert run.result is not None
    world = run.world
    assert world is not None
    timelines = Timelines.of_simulation(run.simulation)
    (violation,) = run.result.violations
    assert violation.invariant == "late-record"
    (late,) = timelines.late
    ((record, task), (_, watermark)) = next(iter(world.event_time.late.items()))
    assert (late.record, f"task {late.task}", late.watermark) == (record, task, watermark)
    assert str(violation).startswith(f"step {late.step}:")
    assert late.step == run.simulation.step_count  # the run stops at the violation
    assert late.timestamp <= late.watermark == timelines.value("watermarks", late.task)
    figure = timelines_figure(timelines)
    (cross,) = [t for t in figure.data if t.name == "dropped as late"]
    assert cross.yaxis == "y5"
    assert cross.marker.color == ALERT
    assert (list(cross.x), list(cross.y)) == ([late.step], [late.timestamp])
    hover = cross.customdata[0]
    assert f"record {late.record} " in hover
    assert f"dropped as late by {late.task} at step {late.step}" in hover
    assert f"its watermark was {late.watermark}" in hover
    assert "1 record(s) dropped as late" in figure.layout.annotations[4].text
    alone = event_time_figure(timelines)  # the panel by itself, for the notebook
    assert [t.name for t in alone.data] == [t.name for t in figure.data if t.yaxis == "y5"]


@pytest.mark.slow
def test_a_run_without_watermarks_has_no_event_time_panel() -> None:
    run = run_scenario("baseline-recovery", seed=0)
    assert run.simulation is not None
    timelines = Timelines.of_simulation(run.simulation)
    assert not timelines.event_time
    assert timelines.watermarks == {}
    assert timelines.late == []
    layout = timelines_figure(timelines).layout
    assert "yaxis5" not in layout.to_plotly_json()
    assert len(layout.annotations) == 4
    assert not layout.shapes
    with pytest.raises(InvalidParameterError, match="no event time"):
        event_time_figure(timelines)


def test_the_event_time_panel_leaves_the_other_four_as_they_are() -> None:
    simulation = _simulation("merged-watermarks-aggregated")
    simulation.run(1500)
    timelines = Timelines.of_simulation(simulation)
    spec = timelines_spec(timelines)
    without = timelines_spec(dataclasses.replace(timelines, event_time=False))
    four = [t for t in spec["data"] if t["yaxis"] != "y5"]
    assert _json(four) == _json(without["data"])
    assert spec["layout"]["xaxis5"]["title"]["text"] == "step"
    assert "title" not in spec["layout"]["xaxis4"]


@pytest.mark.slow
def test_going_back_drops_the_watermarks_and_late_records_after_the_step() -> None:
    """Run on past the first late record (three on seed 3), then go back between them."""
    simulation = _simulation("merged-watermarks-passed-through")
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    timelines = Timelines.start(world)
    while (event := simulation.step()) is not None:
        assert isinstance(simulation.model, NetworkWorld)
        timelines.record(simulation.model, event)
    everything = list(timelines.late)
    assert len(everything) == len(simulation.model.event_time.late) == 3
    changed = sorted({step for points in timelines.watermarks.values() for step, _ in points})
    for step in (everything[1].step - 1, everything[0].step, everything[0].step - 1, changed[1]):
        simulation.goto(step)
        timelines.rewind(step)
        fresh = Timelines.of_simulation(simulation)
        assert timelines.watermarks == fresh.watermarks
        assert timelines.late == fresh.late == [late for late in everything if late.step <= step]
        assert all(p[0] <= step for points in timelines.watermarks.values() for p in points)
        crosses = [t for t in timelines_figure(timelines).data if t.name == "dropped as late"]
        assert [len(t.x) for t in crosses] == ([len(fresh.late)] if fresh.late else [])
    # and forward again: the same points as the first time
    while (event := simulation.step()) is not None:
        assert isinstance(simulation.model, NetworkWorld)
        timelines.record(simulation.model, event)
    assert timelines.late == everything


def _json(traces: list[dict[str, object]]) -> object:
    """Traces as plain JSON (numpy arrays as lists), to compare them whole."""
    return json.loads(pio.to_json({"data": traces}, validate=False))["data"]
