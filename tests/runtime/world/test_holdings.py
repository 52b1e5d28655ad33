"""The one walk over every container: complete for the segment audit and for the canvas."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.buffer.owners import OwnerKind
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world.holdings import (
    CHANNEL_LANES,
    Component,
    Lane,
    held_segments,
    holdings,
)
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.views.scene_items import scene_items
from flinkstate.views.scene_layout import SceneLayout

#: segments that only pass through a step: the spilling handler's buffer goes to disk and back
#: to its pool within the step that took it
WITHIN_A_STEP = {OwnerKind.SPILLING}


#: recoveries that fill every container: V1's reader filtering into pre- and post-filter
#: buffers, V2's spilling, drain and stash, a rescaled keyed exchange
SCENARIOS = ("prefilter-heap-fallback", "checkpoint-during-drain", "keyed-upscale")
#: how far into each recovery the tests look
STEPS = 3000


def _worlds(name: str, steps: int) -> Iterator[NetworkWorld]:
    """A restarted scenario's world, every few steps of its recovery (the live world: look
    before asking for the next)."""
    sim = prepare_scenario(get_scenario(name), seed=0, keep_snapshots=False).simulation
    assert sim is not None
    world = sim.model
    assert isinstance(world, NetworkWorld)
    for step in range(steps):
        if sim.step() is None:
            return
        if step % 13 == 0:
            yield world


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_segment_is_held_by_its_owner_and_sharers_only(name: str) -> None:
    for world in _worlds(name, STEPS):
        held = Counter(s for h in holdings(world) for s in held_segments(h))
        assert sorted(held) == list(range(len(world.owner)))
        # a buffer persisted while still queued is held by its sharer (the writer) too
        assert held == {s: 1 + len(world.shares.get(s, ())) for s in held}


def test_every_kind_of_owner_has_its_container_in_the_walk() -> None:
    """A new kind of owner without a container here would be a leak to the audit."""
    kinds = {
        owner.kind
        for world in _worlds("prefilter-heap-fallback", STEPS)
        for _, owner, *_ in holdings(world)
    }
    assert kinds | WITHIN_A_STEP == set(OwnerKind)


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_canvas_draws_every_buffer_the_walk_finds(name: str) -> None:
    """Each buffer in a drawn container is one item of the scene, in the walk's order."""
    drawn = {Lane.QUEUE, Lane.BUILDER, Lane.RECEIVED, Lane.DESERIALIZER, Lane.POST_FILTER}
    for world in _worlds(name, STEPS):
        layout = SceneLayout.of(world)
        items = scene_items(world, layout)
        ids = [item["id"] for item in items if item["lane"] in {lane.value for lane in drawn}]
        walked = [
            f"b{b.uid}"
            for lane, _, component, _, buffers, _ in holdings(world)
            if lane in drawn and not _idle_deserializer(component)
            for b in buffers
        ]
        assert ids == walked


def _idle_deserializer(component: Component) -> bool:
    """A deserializer's buffer the canvas leaves out: its task has no current channel."""
    return isinstance(component, Task) and component.current is None


def test_a_channel_has_its_lanes_in_order() -> None:
    for world in _worlds("checkpoint-during-drain", STEPS):
        walked = list(holdings(world))
        assert all(buffers or segments for *_, buffers, segments in walked), "an empty one"
        lanes: dict[int, list[Lane]] = {}
        for lane, _, component, *_ in walked:
            if lane in CHANNEL_LANES:
                lanes.setdefault(id(component), []).append(lane)
        for order in lanes.values():
            assert order == [lane for lane in CHANNEL_LANES if lane in order]
