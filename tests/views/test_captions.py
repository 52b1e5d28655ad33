"""A caption for every step: every kind of action that occurs in any scenario has one, and
captions count what the scenes show."""

from __future__ import annotations

from typing import Any

import pytest

from flinkstate.catalogue.scenarios import SCENARIOS
from flinkstate.catalogue.topologies import topology
from flinkstate.lab.forecast import prepare_forecast
from flinkstate.lab.scenario_run import PHASES, prepare_scenario
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import COORDINATOR, ActorKind
from flinkstate.runtime.buffer.records import StreamElementKind
from flinkstate.runtime.checkpoint import coordinator
from flinkstate.runtime.checkpoint.channel.happenings import GateConverted
from flinkstate.runtime.world import world as world_module
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.action import Action
from flinkstate.sim.core import Event, Simulation
from flinkstate.views.captions import CAPTIONS, caption, checkpointing
from flinkstate.views.captions.step import Step
from flinkstate.views.scene import build_scene
from flinkstate.views.scene_items import scene_items
from flinkstate.views.scene_layout import SceneLayout
from tests.lab.test_forecast import TUPLE, by_name, exchanges


def _step_captioned(
    simulation: Simulation, layout: SceneLayout
) -> tuple[Event, str, dict[str, Any]]:
    """Take the next step with scenes before and after it: the step, its caption, the scene
    after."""
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    before = build_scene(world, simulation.events[-1] if simulation.events else None, layout)
    event = simulation.step()
    assert event is not None
    after = build_scene(world, event, layout)
    return event, caption(event, world, before, after), after


def _captioned(simulation: Simulation, layout: SceneLayout) -> tuple[Event, str, dict[str, Any]]:
    """Go back one step, then take it again with scenes before and after."""
    simulation.goto(simulation.step_count - 1)
    return _step_captioned(simulation, layout)


@pytest.mark.slow
def test_every_action_kind_of_every_scenario_has_a_caption() -> None:
    seen: dict[tuple[str, str], str] = {}
    for name in SCENARIOS:
        for phase in PHASES:
            run = prepare_scenario(name, seed=0, phase=phase)
            simulation = run.simulation
            if simulation is None:
                continue
            world = simulation.model
            assert isinstance(world, NetworkWorld)
            layout = SceneLayout.of(world)
            kinds: set[tuple[str, str]] = set()
            # a look at the next action, so that only the first step of each kind is drawn
            # (before and after it) and no step is taken twice
            while (action := simulation.next_action()) is not None:
                ref = world.actor(action.actor)
                assert ref is not None, action.actor
                key = (ref.kind.value, action.kind)
                if key in kinds:
                    simulation.step(action)
                    continue
                kinds.add(key)
                _, text, _ = _step_captioned(simulation, layout)
                assert text.endswith("."), text
                assert len(text) > 40, text
                seen.setdefault(key, text)
    registered = {(kind.value, action) for kind, action in CAPTIONS}
    # every registered caption was needed, and every kind that occurred was captioned
    assert set(seen) == registered, set(seen) ^ registered


def test_every_kind_the_world_handles_has_a_caption_for_its_actor() -> None:
    """``CAPTIONS`` covers every ``ActionKind``: a task's kinds (the world's task handlers) for
    a task, every other kind (its other handlers) for the actor that takes it, ``write`` for
    both a task and a channel-state writer. Each kind belongs to one kind of actor only."""
    by_task = {kind for actor, kind in CAPTIONS if actor is ActorKind.TASK}
    by_others = {kind for actor, kind in CAPTIONS if actor is not ActorKind.TASK}
    assert by_task == set(world_module._TASK_HANDLERS)
    assert by_others == set(world_module._THREAD_HANDLERS)
    assert by_task | by_others == set(ActionKind)
    assert all(type(kind) is ActionKind for _, kind in CAPTIONS)
    actors = [kind for _, kind in CAPTIONS if kind is not ActionKind.WRITE]
    assert len(actors) == len(set(actors)), "a kind captioned for two kinds of actor"


def _first(name: str, phase: str, kind: str, actor: str = "") -> tuple[Event, str, NetworkWorld]:
    run = prepare_scenario(name, seed=0, phase=phase)
    simulation = run.simulation
    assert simulation is not None
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    layout = SceneLayout.of(world)
    while (event := simulation.step()) is not None:
        if event.action.kind == kind and event.action.actor.startswith(actor):
            captioned, text, _ = _captioned(simulation, layout)
            world = simulation.model
            assert isinstance(world, NetworkWorld)
            return captioned, text, world
    raise AssertionError(f"no {kind} in {name}")


def test_a_source_checkpoint_counts_the_buffers_its_barrier_overtook() -> None:
    event, text, world = _first("baseline-recovery", "job", "checkpoint")
    progress = world.checkpoints.pending
    assert progress is not None
    task = world.tasks[world.actor(event.action.actor).task]
    overtaken = [
        r
        for w in world.writers.values()
        for r in w.requests
        if r.task == task.name and r.output and r.checkpoint == progress.id
    ]
    assert f"checkpoint {progress.id}" in text
    assert "at the head of its 4 subpartitions" in text
    assert f"the {len(overtaken)} buffer" in text


def test_a_recovered_chunk_says_which_records_will_be_filtered() -> None:
    _, text, _ = _first("keyed-upscale", "restart", "recover-input")
    assert "old subtask" in text
    assert "SequentialChannelStateReaderImpl" in text


def test_the_first_unaligned_barrier_starts_the_snapshot() -> None:
    _, text, _ = _first("baseline-recovery", "job", "barrier", "task counter")
    assert "1 of 4 channels" in text
    assert "starts its unaligned snapshot" in text
    assert "tail of its outputs" in text  # counter -> sink is a forward exchange


def test_an_unknown_actor_is_refused() -> None:
    event, _, world = _first("baseline-recovery", "job", "emit")
    strange = event._replace(action=event.action.__class__("nobody", "emit"))
    with pytest.raises(KeyError, match="no actor 'nobody'"):
        caption(strange, world, None, build_scene(world))


@pytest.mark.slow
def test_captions_name_watermarks_and_idleness_for_what_they_are() -> None:
    """A source restarted past its splits with idleness: its IDLE, every source's watermarks
    and MAX, and the valves reading them are told as such, never as records."""
    run = prepare_scenario(
        "baseline-recovery",
        overrides={"new_source_parallelism": 5, "watermark_interval": 2, "source_idleness": True},
        keep_snapshots=False,  # stepped forward only
    )
    sim = run.simulation
    assert sim is not None
    layout = SceneLayout.of(sim.model)
    # what a caption reads of a scene: its items (as a page records them)
    before = {"items": scene_items(sim.model, layout)}
    said: dict[str, str] = {}
    while (event := sim.step()) is not None:
        after = {"items": scene_items(sim.model, layout)}
        text = caption(event, sim.model, before, after)
        before = after
        for element in (*event.delivered, *event.emitted):
            if not sim.model.records[element].is_record:
                assert f"record {element} " not in text, text
        kinds = {
            "idle": "watermark status IDLE to every subpartition",
            "max": "sends watermark MAX",
            "after": "which it sends after the record",
            "valve": "StatusWatermarkValve",
        }
        for name, phrase in kinds.items():
            if phrase in text:
                said.setdefault(name, text)
    assert set(said) == {"idle", "max", "after", "valve"}
    assert any(r.kind is StreamElementKind.WATERMARK_STATUS for r in sim.model.records.values())


def test_only_a_sink_keeps_the_records_it_processes() -> None:
    """A real job's last modelled operator (its output carried no in-flight data, as the
    committed checkpoints' chained sink) passes records on to what the model leaves out."""
    checkpoint = by_name("keyed-hash-p2-p4")
    prepared = prepare_forecast(checkpoint, 3, exchanges=exchanges(checkpoint), value=TUPLE)
    simulation = prepared.simulation
    world = prepared.world
    layout = SceneLayout.of(world)
    while (event := simulation.step()) is not None:
        if event.action.kind == "process" and event.delivered:
            _, text, _ = _captioned(simulation, layout)
            break
    else:
        raise AssertionError("no record processed")
    assert event.action.actor.startswith("task slow-counter")
    assert "passed its output on to operators the model leaves out" in text
    assert "a sink" not in text
    _, text, _ = _first("baseline-recovery", "restart", "process", "task sink")
    assert "kept it: a sink" in text


def test_a_manual_checkpoint_the_model_cannot_take_is_captioned_from_its_happening() -> None:
    world = topology("pipelined-regions").build({"terminal_tasks": "as-finished"})
    world.tasks["source[0]"].finished = True
    coordinator.trigger_manual(world)
    event = world.journal.event(Action(COORDINATOR, ActionKind.MANUAL_CHECKPOINT))
    actor = world.actor(COORDINATOR)
    assert actor is not None
    text = checkpointing.manual_checkpoint(Step(event, world, actor, {}, {}))
    assert text.endswith(
        "the model cannot carry out its plan (the plan triggers sink[0], whose predecessors "
        "have finished) and goes on without the checkpoint Flink would take."
    )


def test_a_conversion_before_flink_18989_says_what_it_released_unread() -> None:
    simulation = prepare_scenario("converted-early-state-lost", seed=0).simulation
    assert simulation is not None
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    layout = SceneLayout.of(world)
    while (action := simulation.next_action()) is not None:
        if action.kind != ActionKind.CONVERT:
            simulation.step(action)
            continue
        event, text, _ = _step_captioned(simulation, layout)
        if any(isinstance(h, GateConverted) and h.released for h in event.happenings):
            assert "recycled 1 recovered buffer the task never read" in text
            assert "FLINK-18989" in text
            return
    raise AssertionError("no conversion released a recovered buffer")
