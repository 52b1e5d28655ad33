"""A run as a page: patches that rebuild every scene exactly, and a page that carries its
run, the canvas module and nothing it would have to fetch."""

from __future__ import annotations

import base64
import gzip
import json
import re
from itertools import islice
from typing import Any

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.views.captions import caption
from flinkstate.views.page import (
    apply_patch,
    record_phase,
    run_page,
    scenario_page,
    scene_patch,
)
from flinkstate.views.scene import build_scene, collapse_scene
from flinkstate.views.scene_layout import COLLAPSE_OVER, SceneLayout


def _canonical(scene: dict[str, Any]) -> dict[str, Any]:
    """A scene with its places and items keyed by id (a patch does not keep item order)."""
    return {
        **{k: v for k, v in scene.items() if k not in ("places", "items")},
        "places": {p["id"]: p for p in scene["places"]},
        "items": {i["id"]: i for i in scene["items"]},
    }


@pytest.mark.slow
def test_patches_rebuild_every_scene_of_a_run() -> None:
    run = prepare_scenario("checkpoint-during-drain", seed=0)
    simulation = run.simulation
    assert simulation is not None
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    layout = SceneLayout.of(world)
    before = build_scene(world, None, layout)
    rebuilt = before
    for _ in range(1200):
        event = simulation.step()
        if event is None:
            break
        after = build_scene(world, event, layout)
        patch = scene_patch(before, after)
        assert len(json.dumps(patch)) < len(json.dumps(after))
        rebuilt = apply_patch(rebuilt, patch)
        assert _canonical(rebuilt) == _canonical(after), f"step {world.step}"
        before = after


def _unpack(page: str) -> list[dict[str, Any]]:
    match = re.search(
        r'<script id="run-data" type="application/octet-stream">([^<]*)</script>', page
    )
    assert match, "the page carries no run"
    data: list[dict[str, Any]] = json.loads(gzip.decompress(base64.b64decode(match.group(1))))
    return data


@pytest.mark.slow
def test_a_page_carries_both_runs_of_a_scenario_and_fetches_nothing() -> None:
    steps: list[tuple[str, int, int]] = []
    page = scenario_page(
        "prefilter-deadlock", progress=lambda phase, step, total: steps.append((phase, step, total))
    )
    phases = _unpack(page)
    assert [p["name"] for p in phases] == ["job", "restart"]
    for phase in phases:
        assert len(phase["patches"]) == len(phase["captions"]) > 0
        assert all(c.endswith(".") for c in phase["captions"])
        assert phase["first"]["step"] == 0
    restart = phases[1]
    assert "deadlock" in restart["ending"]
    assert steps[-1] == ("restart", len(restart["patches"]), len(restart["patches"]))
    assert "export default { render }" in page  # the canvas module itself
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page), "the page fetches"
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page


@pytest.mark.slow
def test_the_last_scene_of_a_page_is_the_run_s_last_scene() -> None:
    run = prepare_scenario("baseline-recovery", seed=0, overrides={"records": 20})
    simulation = run.simulation
    assert simulation is not None
    simulation.run()
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    last = build_scene(world, simulation.events[-1], SceneLayout.of(world))
    recording = record_phase("restart", "the restart", simulation)
    assert simulation.step_count == len(recording.patches)  # back where it was
    *_, scene = recording.scenes()
    assert _canonical(scene) == _canonical(last)
    page = run_page("t", "s", [recording])
    assert len(_unpack(page)[0]["patches"]) == simulation.step_count


#: the restart's recovery and its first checkpoint (the whole run is 1,212 steps)
STEPS_COMPARED = 500


@pytest.mark.slow
def test_a_large_jobs_recording_is_its_scenes_collapsed_with_captions_of_every_item() -> None:
    """A job over :data:`COLLAPSE_OVER` subtasks is recorded without the details of its folded
    places; every recorded scene is still the whole scene collapsed, and every caption the one
    the whole scenes give (it reads items inside folded lanes too)."""
    over = COLLAPSE_OVER + 1
    overrides = {"source_parallelism": over, "parallelism": over, "records": 6}
    run = prepare_scenario("baseline-recovery", seed=0, overrides=overrides)
    simulation = run.simulation
    assert simulation is not None
    simulation.run()
    recording = record_phase("restart", "the restart", simulation)
    scenes = recording.scenes()
    simulation.goto(0)
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    layout = SceneLayout.of(world)
    assert layout.collapsible
    whole = build_scene(world, None, layout)
    assert _canonical(next(scenes)) == _canonical(collapse_scene(whole))
    for number, scene in enumerate(islice(scenes, STEPS_COMPARED)):
        event = simulation.step()
        assert event is not None
        after = build_scene(world, event, layout)
        assert _canonical(scene) == _canonical(collapse_scene(after)), f"step {world.step}"
        assert recording.captions[number] == caption(event, world, whole, after)
        whole = after
    assert simulation.step_count == STEPS_COMPARED < len(recording.patches)


def test_a_scenario_flink_refuses_has_no_page() -> None:
    with pytest.raises(InvalidParameterError, match="Minimum memory segment size"):
        scenario_page("small-page-size")


def _opening(page: str) -> int:
    match = re.search(r"const OPENING = (\d+);", page)
    assert match, "the page says no phase to open on"
    return int(match.group(1))


@pytest.mark.slow
def test_a_deadlocking_scenario_s_page_opens_on_its_deadlock_with_the_cycle() -> None:
    """The page is about the deadlock: it opens on the restart at the step the run deadlocked
    (the run's own report, no number written here), whose scene marks the waits-for cycle's
    places and whose caption names the cycle, as the run's deadlock report does."""
    run = prepare_scenario("prefilter-deadlock", seed=0)
    assert run.simulation is not None
    run.conclude(run.simulation.run())
    assert run.result is not None
    assert run.result.deadlock is not None
    report = run.result.deadlock
    page = scenario_page("prefilter-deadlock")
    phases = _unpack(page)
    opened = phases[_opening(page)]
    assert opened["name"] == "restart"
    assert opened["focus"] == report.step == len(opened["patches"]) > 0
    assert report.cycle_path.split(" -> ")[0] in opened["captions"][-1]
    assert "waits-for cycle" in opened["captions"][-1]
    scene = opened["first"]
    for patch in opened["patches"]:
        scene = apply_patch(scene, patch)
    cycle = [p["id"] for p in scene["places"] if p.get("cycle")]
    assert cycle == ["channel-state-reader counter[0]"]  # the reader waits on itself
    assert "waits-for cycle" in scene["deadlock"]
    assert "cycle" in [glyph for glyph, _ in scene["legend"]]  # the legend says what it is
    job = phases[0]
    assert job["name"] == "job"
    assert job["focus"] == 0  # nothing stuck before the restart


def test_a_page_opens_on_the_phase_it_is_told() -> None:
    run = prepare_scenario("baseline-recovery", seed=0, overrides={"records": 20})
    simulation = run.simulation
    assert simulation is not None
    simulation.run(max_steps=50)
    recording = record_phase("restart", "the restart", simulation)
    assert recording.focus == 0  # no deadlock: its first step
    page = run_page("t", "s", [recording, recording], 1)
    assert _opening(page) == 1
    assert _unpack(page)[1]["focus"] == 0
