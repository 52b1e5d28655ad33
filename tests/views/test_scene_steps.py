"""Scenes derived step by step are the scenes drawn from scratch, at every step: for runs
that take every kind of action (recovery's reader and drainer, checkpoints, a failover,
watermarks, a job large enough to fold its lanes)."""

from __future__ import annotations

import pytest

from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.views.scene import build_scene
from flinkstate.views.scene_items import scene_items
from flinkstate.views.scene_layout import SceneLayout
from flinkstate.views.scene_steps import SceneSteps


def _check_every_step(name: str, phase: str, steps: int) -> SceneSteps:
    run = prepare_scenario(name, seed=0, phase=phase)
    simulation = run.simulation
    assert simulation is not None
    simulation.run(max_steps=steps)
    history = list(simulation.history)
    simulation.goto(0)
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    layout = SceneLayout.of(world)
    scenes = SceneSteps(world, layout)
    assert scenes.scene == build_scene(world, None, layout, expanded=())
    for action in history:
        event = scenes.step(simulation, action)
        world = simulation.model
        assert isinstance(world, NetworkWorld)
        assert scenes.scene == build_scene(world, event, layout, expanded=()), world.step
        assert scenes.items == scene_items(world, layout), world.step
    assert simulation.step_count == len(history)
    return scenes


@pytest.mark.parametrize(
    ("name", "phase", "steps"),
    [
        ("prefilter-deadlock", "restart", 400),  # the channel-state reader, a deadlock
        ("checkpoint-during-drain", "restart", 600),  # V2's drainer and a checkpoint
        ("spill-pressure-v2", "restart", 500),  # V2's reader spilling: its own steps (HELPER)
        ("checkpoint-aborted-during-failover", "job", 400),  # a task failure and its failover
        ("merged-watermarks-aggregated", "job", 300),  # watermarks
        ("keyed-12-to-7", "restart", 300),  # lanes folded: more than 8 subtasks
    ],
)
def test_scenes_derived_step_by_step_are_the_scenes_drawn_whole(
    name: str, phase: str, steps: int
) -> None:
    scenes = _check_every_step(name, phase, steps)
    assert scenes.redrawn < steps  # most steps draw only what they touched


@pytest.mark.slow
def test_a_long_job_is_derived_exactly_to_its_end() -> None:
    scenes = _check_every_step("prefilter-deadlock", "job", 3000)
    assert scenes.redrawn < 300
