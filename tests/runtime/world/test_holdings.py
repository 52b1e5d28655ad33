"""The one walk over every container: complete for the segment audit and for the canvas."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.buffer.owners import OwnerKind
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world.holdings import CHANNEL_LANES, Holding, Lane, holdings
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.views.scene import SceneLayout, scene_items

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
        held = Counter(s for h in holdings(world) for s in h.held_segments())
        assert sorted(held) == list(range(len(world.owner)))
        # a buffer persisted while still queued is held by its sharer (the writer) too
        assert held == {s: 1 + len(world.shares.get(s, ())) for s in held}


def test_every_kind_of_owner_has_its_container_in_the_walk() -> None:
    """A new kind of owner without a container here would be a leak to the audit."""
    kinds = {
        h.owner.kind
        for world in _worlds("prefilter-heap-fallback", STEPS)
        for h in holdings(world)
        if h.held_segments()
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
            for h in holdings(world)
            if h.lane in drawn and not _idle_deserializer(h)
            for b in h.buffers
        ]
        assert ids == walked


def _idle_deserializer(holding: Holding) -> bool:
    """A deserializer's buffer the canvas leaves out: its task has no current channel."""
    task = holding.component
    return isinstance(task, Task) and task.current is None


def test_a_channel_has_its_lanes_in_order() -> None:
    *_, world = _worlds("prefilter-heap-fallback", 10)
    channel = next(iter(world.channels.values()))
    lanes = tuple(h.lane for h in holdings(world) if h.component is channel)
    assert lanes == CHANNEL_LANES
