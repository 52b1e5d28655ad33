"""The scene the canvas draws: every buffer exactly once, ids stable while items travel, a
barrier that overtakes queued buffers drawn ahead of them, and JSON only."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.buffer.owners import OwnerKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event, Simulation
from flinkstate.views.scene import build_scene, sources_said
from flinkstate.views.scene_layout import SceneLayout

#: owner kinds of segments that sit in a container the scene walks (a queue, a builder, a
#: channel's received or recovered queue, a task's deserializer, a reader's filter buffers)
CONTAINER_KINDS = frozenset(
    {
        OwnerKind.QUEUE,
        OwnerKind.BUILDER,
        OwnerKind.RECEIVED,
        OwnerKind.RECOVERED,
        OwnerKind.DESERIALIZER,
        OwnerKind.PRE_FILTER,
        OwnerKind.POST_FILTER,
    }
)


def _scenes(
    name: str, phase: str, every: int = 1, limit: int = 4000
) -> Iterator[tuple[NetworkWorld, Event | None, dict[str, Any]]]:
    run = prepare_scenario(name, seed=0, phase=phase)
    simulation = run.simulation
    assert isinstance(simulation, Simulation)
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    layout = SceneLayout.of(world)
    yield world, None, build_scene(world, None, layout)
    while simulation.step_count < limit:
        event = simulation.step()
        if event is None:
            return
        if simulation.step_count % every == 0:
            yield world, event, build_scene(world, event, layout)


def _expected_segments(world: NetworkWorld) -> Counter[int]:
    """Each segment once per container that holds it: its owner and every sharer."""
    held: Counter[int] = Counter()
    for segment, owner in enumerate(world.owner):
        if owner.kind in CONTAINER_KINDS:
            held[segment] += 1
    for segment, sharers in world.shares.items():
        held[segment] += sum(1 for s in sharers if s.kind in CONTAINER_KINDS)
    return held


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scenario", "phase"),
    [
        ("baseline-recovery", "job"),
        ("keyed-upscale", "restart"),
        ("prefilter-heap-fallback", "restart"),
        ("checkpoint-during-drain", "restart"),
        ("spanning-records-rescale", "restart"),
        ("same-upstream-by-data-set", "restart"),  # two gates from one upstream
    ],
)
def test_every_buffer_appears_exactly_once(scenario: str, phase: str) -> None:
    for world, _, scene in _scenes(scenario, phase, every=7, limit=2500):
        ids = Counter(item["id"] for item in scene["items"])
        assert [i for i, n in ids.items() if n > 1] == [], f"step {world.step}"
        drawn = Counter(
            item["segment"]
            for item in scene["items"]
            if item["kind"] == "buffer" and item["segment"] >= 0
        )
        assert drawn == _expected_segments(world), f"step {world.step}"
        places = {place["id"] for place in scene["places"]}
        assert {item["place"] for item in scene["items"]} <= places


@pytest.mark.slow
def test_ids_are_stable_while_an_item_exists() -> None:
    """An id keeps its kind and its records from one step to the next; a buffer being filled
    only gains pieces, and a remote send keeps the buffer's id in the receiving channel."""
    previous: dict[str, dict[str, Any]] = {}
    travelled = 0
    for _, event, scene in _scenes("baseline-recovery", "job", limit=1500):
        items = {item["id"]: item for item in scene["items"]}
        for key, item in items.items():
            before = previous.get(key)
            if before is None:
                continue
            assert item["kind"] == before["kind"], key
            if item["kind"] == "buffer":
                old = [p[:4] for p in before["pieces"]]
                assert [p[:4] for p in item["pieces"]][: len(old)] == old, key
            if before["place"] != item["place"] and event is not None:
                travelled += event.action.kind == "send"
        previous = items
    assert travelled > 20


@pytest.mark.slow
def test_a_barrier_is_drawn_ahead_of_the_buffers_it_overtook() -> None:
    checked = 0
    for world, event, scene in _scenes("baseline-recovery", "job", limit=600):
        if event is None or event.action.kind != "checkpoint":
            continue
        by_place: dict[str, list[dict[str, Any]]] = {}
        for item in scene["items"]:
            by_place.setdefault(item["place"], []).append(item)
        task = world.tasks[world.actor(event.action.actor).task]
        for partition in task.partitions:
            for sub in partition.subpartitions:
                queued = by_place.get(f"subpartition {sub.name}", [])
                queue = sorted((i for i in queued if i["lane"] == "queue"), key=lambda i: i["slot"])
                barrier = queue[0]
                assert barrier["kind"] == "barrier"
                assert barrier["priority"]
                assert barrier["checkpoint"] == world.checkpoints.pending.id  # type: ignore[union-attr]
                behind = [i for i in queue[1:] if i["kind"] == "buffer"]
                assert all(i.get("persisted") == barrier["checkpoint"] for i in behind)
                checked += len(behind)
        requests = [
            i
            for i in scene["items"]
            if i["kind"] == "request"
            and i["of"] in {s.name for p in task.partitions for s in p.subpartitions}
        ]
        assert {r["from"] for r in requests} >= {
            i["id"]
            for place, items in by_place.items()
            for i in items
            if place.startswith("subpartition ")
            and i.get("persisted")
            and i["lane"] == "queue"
            and i["of"] in {s.name for p in task.partitions for s in p.subpartitions}
        }
    assert checked > 0


def test_a_scene_is_json_and_deterministic() -> None:
    scenes = []
    for _ in range(2):
        last = None
        for _, _, scene in _scenes("keyed-upscale", "restart", every=100, limit=900):
            last = scene
        scenes.append(json.dumps(last, sort_keys=True))
    assert scenes[0] == scenes[1]
    assert json.loads(scenes[0])["step"] == 900


@pytest.mark.slow
def test_records_to_be_filtered_are_marked_in_recovered_buffers() -> None:
    """After 4 -> 7 the ambiguous virtual channels hold records the partitioner selects
    another subtask for: they are marked dropped, and each such record is filtered out where it
    is processed."""
    marked: set[tuple[int, str]] = set()
    world = None
    for step_world, _, scene in _scenes("keyed-upscale", "restart", every=3, limit=3000):
        world = step_world
        for item in scene["items"]:
            if item["kind"] == "buffer" and item["lane"] == "recovered":
                place = item["place"]
                marked.update((p[0], place) for p in item["pieces"] if p[6] == "dropped")
    assert world is not None
    assert marked
    filtered_records = {record for record, _ in world.filtered}
    assert {record for record, _ in marked} <= filtered_records


@pytest.mark.slow
def test_waiting_actors_and_blocked_places_are_marked() -> None:
    seen_wait = seen_blocked = False
    for _, _, scene in _scenes("barrier-held-by-blocked-subpartition", "restart", every=5):
        places = scene["places"]
        seen_wait |= any("waits" in p for p in places)
        seen_blocked |= any(p["blocked"] for p in places if p["kind"] == "subpartition")
    assert seen_wait
    assert seen_blocked


def test_large_operators_collapse_to_counts_and_open_one_lane_at_a_time() -> None:
    from flinkstate.views.scene import collapse_scene
    from flinkstate.views.scene_layout import COLLAPSE_OVER

    big = {"source_parallelism": 12, "parallelism": 12, "records": 20}
    run = prepare_scenario("baseline-recovery", seed=0, overrides=big, phase="job")
    simulation = run.simulation
    assert simulation is not None
    simulation.run(300)
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    full = build_scene(world, simulation.events[-1])
    assert set(full["collapsible"]) == {"source", "counter", "sink"}  # 12 > COLLAPSE_OVER
    assert COLLAPSE_OVER < 12
    shown = collapse_scene(full)
    kinds = Counter(p["kind"] for p in shown["places"])
    assert kinds["task"] == 36
    assert kinds["subpartition"] == kinds["remote-channel"] == kinds["input-gate"] == 0
    assert shown["items"] == [i for i in full["items"] if i["kind"] == "request"]
    for place in shown["places"]:
        if place["kind"] == "task":
            mine = [
                i
                for i in full["items"]
                if i["kind"] == "buffer"
                and next(p for p in full["places"] if p["id"] == i["place"]).get("task")
                == place["task"]
                and i["lane"] != "deserializer"
            ]
            assert place["collapsed"]["in"] + place["collapsed"]["out"] == len(mine)
    opened = collapse_scene(full, {"counter[3]"})
    lane = {p["id"] for p in opened["places"] if p.get("task") == "counter[3]"}
    assert len(lane) == 1 + 1 + 12 + 1 + 1  # task, gate, 12 channels, partition, subpartition
    assert next(p for p in opened["places"] if p["id"] == "task counter[3]")["expanded"]


def test_a_small_job_is_never_collapsed() -> None:
    from flinkstate.views.scene import collapse_scene

    for _, _, scene in _scenes("baseline-recovery", "job", every=200, limit=600):
        assert collapse_scene(scene) == scene


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scenario", "overrides", "phase"),
    [
        ("baseline-recovery", {"source_parallelism": 12, "parallelism": 12, "records": 20}, "job"),
        (
            "keyed-upscale",
            {"source_parallelism": 9, "parallelism": 9, "new_parallelism": 13},
            "restart",
        ),
        ("checkpoint-during-drain", {"source_parallelism": 9, "parallelism": 9}, "restart"),
    ],
)
def test_a_scene_built_folded_is_the_whole_scene_folded(
    scenario: str, overrides: dict[str, int], phase: str
) -> None:
    """What the stepper draws at P = 64, built without the folded places' details, is the
    whole scene folded: places in order, their details, items, wires and the step's moves
    (remapped to the task's place), with no lane, one lane and every lane open."""
    from flinkstate.views.scene import collapse_scene
    from flinkstate.views.scene_items import scene_items

    run = prepare_scenario(scenario, seed=0, overrides=overrides, phase=phase)
    simulation = run.simulation
    assert simulation is not None
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    layout = SceneLayout.of(world)
    assert layout.collapsible
    tasks = sorted(world.tasks)
    openings = [set(), {tasks[len(tasks) // 2]}, set(tasks)]
    checked = 0
    while simulation.step_count < 2400:
        event = simulation.step()
        if event is None:
            break
        if simulation.step_count % 300 and not any(m.source != m.target for m in event.moves):
            continue
        whole = build_scene(world, event, layout)
        assert scene_items(world, layout) == whole["items"]
        for expanded in openings:
            folded = build_scene(world, event, layout, expanded=expanded)
            assert folded == collapse_scene(whole, expanded)
        checked += 1
        if checked == 12:
            break
    assert checked == 12


def test_the_legend_names_the_subtasks_records_come_from() -> None:
    """Notebook 7's legend said "source subtask 0-1" over three upstream subtasks: the forecast's
    records come from the two old ones, and the legend now names them."""
    assert sources_said(["to-record[0]", "to-record[1]"]) == "to-record[0\u20131]"
    assert sources_said(["source[0]", "source[2]"]) == "source[0, 2]"
    assert sources_said([f"task source[{i}]" for i in range(4)]) == "source[0\u20133]"
    assert sources_said(["a[0]", "b[1]"]) == "a[0], b[1]"
    assert sources_said([]) == ""
