"""Timelines hold exactly what the world held at every step, however they were recorded."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from flinkstate.network.metrics import owner_kind
from flinkstate.network.world import NetworkWorld
from flinkstate.recovery.scenarios import prepare_scenario, run_scenario
from flinkstate.sim.core import Simulation
from flinkstate.views.timelines import MAX_CONNECTIONS, Timelines, timelines_figure


def _truth(world: NetworkWorld) -> dict[str, dict[str, int]]:
    kinds: dict[str, int] = {}
    for owner in world.owner:
        kinds[owner_kind(owner)] = kinds.get(owner_kind(owner), 0) + 1
    return {
        "buffers": kinds,
        "credits": {c.name: c.available for c in world.channels.values() if c.remote},
        "backlog": {
            c.name: world.subpartitions[c.subpartition].backlog for c in world.channels.values()
        },
        "processed": {name: t.processed for name, t in world.tasks.items()},
        "checkpoint": {
            "acknowledged": 0 if world.checkpoint is None else len(world.checkpoint.acknowledged),
            "completed": len(world.completed),
            "expired": len(world.expired),
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
    assert timelines.value("checkpoint", "completed") == len(world.completed) == 1
    assert all(
        timelines.value("processed", name) == task.processed for name, task in world.tasks.items()
    )
    figure = timelines_figure(timelines)  # validates the spec
    assert figure.layout.title.text == f"Over the steps, up to step {run.simulation.step_count}"
    connections = [t for t in figure.data if t.name.startswith("backlog ")]
    assert 0 < len(connections) <= MAX_CONNECTIONS
    assert go.Figure(figure.to_plotly_json()) is not None
