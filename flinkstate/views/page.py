"""A run as one self-contained page: the canvas, the captions, a step slider and play.

A design reviewer attaches the page to a ticket; whoever opens it needs no kernel and no
network. The page holds the canvas's own module and the run as data: the first scene of each
phase in full, then per step only what changed (a patch) and the step's caption, the whole
compressed with gzip (the browser's ``DecompressionStream`` opens it). The page rebuilds a
scene by applying patches to the nearest scene it keeps (one every :data:`KEEP_EVERY` steps),
so any step is a few milliseconds away.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event, Simulation
from flinkstate.sim.deadlock import DeadlockReport
from flinkstate.views.captions import caption
from flinkstate.views.deadlock import cycle_text
from flinkstate.views.glyphs import scene_legend
from flinkstate.views.scene import CANVAS_MODULE, node_place
from flinkstate.views.scene_steps import SceneSteps

if TYPE_CHECKING:
    from flinkstate.lab.forecast import Forecast

#: the page around the run: controls, and the script that unpacks the run and drives the canvas
PAGE_TEMPLATE = Path(__file__).with_name("run_page.html")
_PLACEHOLDER = re.compile(r"__(TITLE|NAV|HEADING|SUMMARY|KEEP|OPENING|GONE|MODULE|TOUR|DATA)__")
#: the page keeps a whole scene every this many steps (memory against seek time)
KEEP_EVERY = 200
#: what a patch of a place or the scene's top level says for a field that is gone
GONE = "__gone__"
#: told each step a page draws: its number, its event (None at 0), the world and the scene
Visit = Callable[[int, Event | None, NetworkWorld, Mapping[str, Any]], None]


@dataclass
class PhaseRecording:
    """One phase of a run as the page replays it. Patches are kept as compact JSON text, a
    tenth of their size as Python objects: a long run has a hundred thousand of them."""

    name: str
    title: str
    first: dict[str, Any]
    patches: list[str] = field(default_factory=list)
    captions: list[str] = field(default_factory=list)
    ending: str = ""
    #: the step the phase is about, which the page shows first (the deadlock, say)
    focus: int = 0

    def add(self, patch: Mapping[str, Any], sentence: str) -> None:
        self.patches.append(json.dumps(patch, separators=(",", ":")))
        self.captions.append(sentence)

    def scenes(self) -> Iterator[dict[str, Any]]:
        """Every scene of the phase, the first included, rebuilt from the patches."""
        scene = self.first
        yield scene
        for patch in self.patches:
            scene = apply_patch(scene, json.loads(patch))
            yield scene

    def to_json(self) -> str:
        """The phase as the page reads it (the patches inserted as they are)."""
        head = json.dumps(
            {
                "name": self.name,
                "title": self.title,
                "first": self.first,
                "captions": self.captions,
                "ending": self.ending,
                "focus": self.focus,
            },
            separators=(",", ":"),
        )
        return head[:-1] + ',"patches":[' + ",".join(self.patches) + "]}"


def scene_patch(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """What turns scene ``before`` into ``after``: changed top-level fields, changed fields of
    places, and items added or changed (whole) and removed (by id). The order of the items
    is not kept: the canvas places an item by its place, lane and slot."""
    patch: dict[str, Any] = {}
    top = {
        key: value
        for key, value in after.items()
        if key not in ("places", "items") and before.get(key) != value
    }
    top.update({key: GONE for key in before if key not in after})
    if top:
        patch["t"] = top
    old_places = {p["id"]: p for p in before["places"]}
    places: dict[str, dict[str, Any]] = {}
    for place in after["places"]:
        old = old_places.get(place["id"])
        if old is None:
            places[place["id"]] = dict(place)
            continue
        if old is place or old == place:  # most places, most steps: the same, or compared in C
            continue
        changed = {k: v for k, v in place.items() if old.get(k) != v}
        changed.update({k: GONE for k in old if k not in place})
        if changed:
            places[place["id"]] = changed
    if places:
        patch["p"] = places
    old_items = {i["id"]: i for i in before["items"]}
    new_ids = {i["id"] for i in after["items"]}
    changed_items = [
        i for i in after["items"] if (old := old_items.get(i["id"])) is not i and old != i
    ]
    if changed_items:
        patch["i"] = changed_items
    removed = [key for key in old_items if key not in new_ids]
    if removed:
        patch["r"] = removed
    return patch


def apply_patch(scene: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`scene_patch` (the page does the same in JavaScript)."""
    result = {k: v for k, v in scene.items() if k not in ("places", "items")}
    for key, value in patch.get("t", {}).items():
        if value == GONE:
            result.pop(key, None)
        else:
            result[key] = value
    places = {p["id"]: dict(p) for p in scene["places"]}
    for key, changed in patch.get("p", {}).items():
        place = places.setdefault(key, {})
        for field_name, value in changed.items():
            if value == GONE:
                place.pop(field_name, None)
            else:
                place[field_name] = value
    result["places"] = list(places.values())
    removed = set(patch.get("r", ()))
    items = {i["id"]: i for i in scene["items"] if i["id"] not in removed}
    for item in patch.get("i", ()):
        items[item["id"]] = item
    result["items"] = list(items.values())
    return result


def record_phase(
    name: str,
    title: str,
    simulation: Simulation,
    *,
    ending: str = "",
    progress: Callable[[int], None] | None = None,
    deadlock: DeadlockReport | None = None,
    visit: Visit | None = None,
) -> PhaseRecording:
    """Step ``simulation`` from step 0 to the end of its recorded run (its history), making
    the scene and caption of every step. The simulation ends where it was. A run that
    ``deadlock``-ed is about its deadlock: the phase opens on that step, whose scene marks the
    places of the waits-for cycle and whose caption names it (:func:`stuck_scene`).

    A caption reads every item of a step (lanes folded or not); the page shows a large job's
    lanes collapsed (no kernel opens them), a scene made without the details of the places
    folded away, which are most of a large job's cost.

    ``visit(step, event, world, scene)`` is told every step (0, the start, included) with the
    scene the page shows there: a tour reads its stops' texts and highlights from it, in the
    one pass that draws the page.
    """
    history = list(simulation.history)
    target = len(history)
    simulation.goto(0)
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    scenes = SceneSteps(world)
    recording = PhaseRecording(name, title, scenes.scene, ending=ending)
    if visit is not None:
        visit(0, None, world, scenes.scene)
    for number, action in enumerate(history, start=1):
        items, shown = scenes.items, scenes.scene
        event = scenes.step(simulation, action)
        world = simulation.model
        assert isinstance(world, NetworkWorld)
        sentence = caption(event, world, {"items": items}, {"items": scenes.items})
        after = scenes.scene
        if deadlock is not None and number == deadlock.step:
            after, stuck = stuck_scene(after, world, deadlock)
            sentence = f"{sentence} {stuck}"
            recording.focus = number
        recording.add(scene_patch(shown, after), sentence)
        if visit is not None:
            visit(number, event, world, after)
        if progress is not None:
            progress(number)
    assert simulation.step_count == target
    return recording


def stuck_scene(
    scene: Mapping[str, Any], world: NetworkWorld, deadlock: DeadlockReport
) -> tuple[dict[str, Any], str]:
    """The scene of the step a run deadlocked at, its waits-for cycle marked: each place of an
    actor or holder on the cycle says so (``cycle``, drawn in red), and the scene names the
    cycle (``deadlock``); with the sentence the step's caption ends with. The cycle is the
    deadlock report's (:mod:`flinkstate.sim.deadlock` finds it), not looked for again."""
    on_cycle = {p for p in map(partial(node_place, world), deadlock.cycle) if p is not None}
    if deadlock.cycle:
        stuck = f"waits-for cycle: {cycle_text(deadlock.cycle)}"
    else:
        stuck = "no waits-for cycle: an actor waits for something nobody will release"
    places = [{**p, "cycle": True} if p["id"] in on_cycle else p for p in scene["places"]]
    marked = {**scene, "places": places, "deadlock": stuck}
    marked["legend"] = scene_legend(marked)  # its cycle tag too
    return marked, f"Deadlocked: {stuck}."


def run_page(
    heading: str,
    summary: str,
    phases: list[PhaseRecording],
    opening: int = 0,
    *,
    nav: str = "",
    tour: Mapping[str, Any] | None = None,
) -> str:
    """The page: heading, a line of summary, and the phases to pick from; it opens on phase
    ``opening`` at the step that phase focuses on (``PhaseRecording.focus``). ``nav`` is a
    link over the heading (a site's way back to its index, HTML); ``tour`` makes it a lesson:
    the stops (title, text as HTML, step, highlighted ids) told beside the canvas, which is
    then no taller than the window (:mod:`flinkstate.views.tour_page` makes it)."""
    data = "[" + ",".join(p.to_json() for p in phases) + "]"
    packed = base64.b64encode(gzip.compress(data.encode("utf-8"), mtime=0)).decode("ascii")
    module = CANVAS_MODULE.read_text(encoding="utf-8")
    values = {
        "__TITLE__": html.escape(heading),
        "__NAV__": nav,
        "__HEADING__": html.escape(heading),
        "__SUMMARY__": html.escape(summary),
        "__KEEP__": str(KEEP_EVERY),
        "__OPENING__": str(opening),
        "__GONE__": json.dumps(GONE),
        "__MODULE__": json.dumps(module).replace("</", "<\\/"),
        "__TOUR__": json.dumps(tour).replace("</", "<\\/") if tour is not None else "null",
        "__DATA__": packed,
    }
    # one pass: what is put in is never searched for placeholders again
    return _PLACEHOLDER.sub(
        lambda match: values[match.group(0)], PAGE_TEMPLATE.read_text(encoding="utf-8")
    )


def scenario_page(
    name: str,
    *,
    seed: int = 0,
    overrides: Mapping[str, object] | None = None,
    scheduler: str = "random",
    max_steps: int = 2_000_000,
    progress: Callable[[str, int, int], None] | None = None,
    nav: str = "",
) -> str:
    """The page of a scenario: the job before its restart and the restart, each stepped from
    its start to its end. ``progress(phase, step, steps)`` is told as the steps are drawn;
    ``nav`` as :func:`run_page` takes it."""
    from flinkstate.catalogue.scenarios import get_scenario
    from flinkstate.lab.scenario_run import PHASES, prepare_scenario

    item = get_scenario(name)
    titles = {"job": "the job before its restart", "restart": "the restart"}
    recordings: list[PhaseRecording] = []
    message = ""
    for phase in reversed(PHASES):  # the job first, as it happened
        run = prepare_scenario(
            item,
            seed=seed,
            overrides=overrides,
            scheduler=scheduler,
            max_steps=max_steps,
            phase=phase,
        )
        simulation = run.simulation
        if simulation is None:
            message = f"{run.outcome.value}: {run.message}"
            continue
        run.conclude(simulation.run(max_steps=max_steps))
        steps = simulation.step_count
        ending = f"{titles[phase]}: {run.outcome.value} after {steps} steps"
        if phase == "restart":
            ending += f" (the scenario expects: {item.expected.value})"
        deadlock = None if run.result is None else run.result.deadlock
        if deadlock is not None:
            ending += f"; {deadlock.describe().splitlines()[0]}"
        recordings.append(
            record_phase(
                phase,
                f"{titles[phase]} ({steps} steps)",
                simulation,
                ending=ending,
                progress=None if progress is None else _told(progress, phase, steps),
                deadlock=deadlock,
            )
        )
    if not recordings:
        raise InvalidParameterError(f"{name} has no run to draw: {message}")
    opening = _opening(recordings)
    parameters = ", ".join(f"{k}={v}" for k, v in sorted((overrides or {}).items()))
    summary = (
        f"{item.title} ({item.reference}). Seed {seed}, scheduler {scheduler}"
        + (f", {parameters}" if parameters else "")
        + ". Step through it with the buttons, the slider or play; hover anything for details."
    )
    return run_page(f"flinkstate: {item.name}", summary, recordings, opening, nav=nav)


def _opening(recordings: list[PhaseRecording]) -> int:
    """The phase a scenario's page opens on: the restart, what a scenario is about (at the
    step its recording focuses on: its deadlock, else its first step), unless only the job
    before it could run."""
    for index, recording in enumerate(recordings):
        if recording.name == "restart":
            return index
    return 0


def topology_page(
    name: str,
    *,
    seed: int = 0,
    overrides: Mapping[str, object] | None = None,
    scheduler: str = "random",
    max_steps: int = 2_000_000,
    progress: Callable[[str, int, int], None] | None = None,
) -> str:
    """The page of one run of a catalogued job."""
    from flinkstate.catalogue.topologies import topology
    from flinkstate.sim.scheduler import make_scheduler

    item = topology(name)
    initial = item.build(dict(overrides or {}), seed=seed)
    simulation = Simulation(initial.clone, make_scheduler(scheduler, seed))
    result = simulation.run(max_steps=max_steps)
    steps = simulation.step_count
    recording = record_phase(
        "run",
        f"the run ({steps} steps)",
        simulation,
        ending=f"{result.status.value} after {steps} steps",
        progress=None if progress is None else _told(progress, "run", steps),
    )
    summary = f"{item.description}. Seed {seed}, scheduler {scheduler}."
    return run_page(f"flinkstate: {name}", summary, [recording])


def forecast_page(forecast: Forecast, *, progress: Callable[[int], None] | None = None) -> str:
    """The page of a forecast's restored run (:mod:`flinkstate.lab.forecast`), stepped
    from its start to its end; ``progress(step)`` is told as the steps are drawn."""
    steps = forecast.result.steps
    ending = f"the restored run: {forecast.outcome} after {steps} steps"
    if forecast.result.deadlock is not None:
        ending += f"; {forecast.result.deadlock.describe().splitlines()[0]}"
    recording = record_phase(
        "restart",
        f"checkpoint {forecast.checkpoint_id} restored at {forecast.to} ({steps} steps)",
        forecast.simulation,
        ending=ending,
        progress=progress,
        deadlock=forecast.result.deadlock,
    )
    filtered = sum(s.filtered_records for s in forecast.subtasks)
    kept = sum(s.kept_records for s in forecast.subtasks)
    summary = (
        f"Checkpoint {forecast.checkpoint_id} ({forecast.checkpoint}) restored "
        f"{forecast.to.describe()} with {forecast.generation.value} "
        f"({forecast.generation.flink}), seed "
        f"{forecast.seed}: {forecast.outcome}; every task RUNNING at step "
        f"{forecast.running_step}, the recovered data consumed at step {forecast.consumed_step}; "
        f"{kept:,} records kept, {filtered:,} filtered out. Step through it with the buttons, "
        "the slider or play; hover anything for details."
    )
    return run_page(
        f"flinkstate forecast: checkpoint {forecast.checkpoint_id}", summary, [recording]
    )


def _told(
    progress: Callable[[str, int, int], None], phase: str, steps: int
) -> Callable[[int], None]:
    return lambda step: progress(phase, step, steps)
