"""Timelines hold exactly what the world held at every step, however they were recorded."""

from __future__ import annotations

import itertools

import plotly.graph_objects as go
import pytest

from flinkstate.network.world import NetworkWorld
from flinkstate.recovery.scenarios import prepare_scenario, run_scenario
from flinkstate.sim.core import Simulation
from flinkstate.views.palette import GROUP_COLOURS, OWNER_GROUPS
from flinkstate.views.timelines import MAX_CONNECTIONS, Timelines, timelines_figure


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
