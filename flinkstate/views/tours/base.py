"""What a guided tour is made of: stops, the conditions that find them, highlights, figures.

A tour is data. Each :class:`Stop` says where to stop (the first step after the previous stop
at which its condition holds), a title, a text for the learner (markdown, with ``{figure}``
placeholders filled from the model at that step, so every number it states is the model's),
and what to highlight on the canvas. :func:`locate` runs the scenario once and finds the step
of every stop; the tour widget then moves the recovery stepper there, and "explore from here"
leaves the learner in the stepper at exactly that state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.jobgraph import OperatorKind
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event, Simulation
from flinkstate.views.tours.runs import CatalogueRun, TourRun

#: where a stop is: a condition on the step just taken and the world after it
Condition = Callable[[Event, NetworkWorld], bool]
#: what a stop shows: ids of places and items of the scene at that step
Highlight = Callable[[Event | None, NetworkWorld, Mapping[str, Any]], list[str]]
#: the figures a stop's text names, read from the model at that step
Figures = Callable[[Event | None, NetworkWorld], Mapping[str, object]]


def _nothing(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    return {}


def _no_highlight(event: Event | None, world: NetworkWorld, scene: Mapping[str, Any]) -> list[str]:
    return []


@dataclass(frozen=True)
class Stop:
    title: str
    text: str
    #: None: the run's first state (step 0)
    when: Condition | None = None
    highlight: Highlight = _no_highlight
    figures: Figures = _nothing
    #: in a tour with a focus: a moment of the whole job (every task running, the run's end),
    #: found at any subtask's step, not only at the focused one's
    whole_job: bool = False

    def describe(self, event: Event | None, world: NetworkWorld) -> str:
        """The stop's text with its figures filled in."""
        return self.text.format(**self.figures(event, world))


def job_figures(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    """The job's shape for a tour's introduction: each operator's parallelism by its name
    (``counter``) and, for a restart, before it (``old_counter``), so that the introduction
    names the run's rescale rather than the one its scenario had when the text was written."""
    figures: dict[str, object] = {op.name: op.parallelism for op in world.graph.operators}
    if world.restore is not None:
        before = world.restore.checkpoint.graph
        if before is not None:
            figures.update({f"old_{op.name}": op.parallelism for op in before.operators})
    return figures


@dataclass(frozen=True)
class Tour:
    """A tour: its stops over one run. The run is the scenario's (``scenario``, ``phase``,
    ``seed``, ``overrides``) unless ``run`` names another (a counterexample's trace, a real
    checkpoint's forecast). With ``focus``, every stop after the first state is a step of one
    subtask: the one whose step first meets ``focus`` in the whole run, chosen from the run
    (not named in the tour), so the learner follows it throughout."""

    name: str
    title: str
    scenario: str
    #: markdown-free text with ``{figure}`` placeholders filled by ``job_figures`` at step 0
    introduction: str
    stops: tuple[Stop, ...]
    phase: str = "restart"
    seed: int = 0
    overrides: Mapping[str, object] = field(default_factory=dict)
    run: TourRun | None = None
    focus: Condition | None = None

    def opening(self) -> TourRun:
        """The run the tour goes over."""
        if self.run is not None:
            return self.run
        return CatalogueRun(self.scenario, self.phase, self.seed, self.overrides)

    def introduce(self, world: NetworkWorld) -> str:
        """The introduction with the job's figures filled in (``world``: the run's start)."""
        return self.introduction.format(**job_figures(None, world))


def locate(tour: Tour, *, max_steps: int = 400_000) -> list[int]:
    """The step of every stop, in order: each the first step after the previous stop whose
    condition holds (a step of the focused subtask, where the tour has a focus, unless the
    stop is one of the whole job). A stop that never
    comes is an error in the tour, named here."""
    opening = tour.opening()
    focus = "" if tour.focus is None else focused_task(tour, max_steps=max_steps)
    simulation = opening.simulation()
    steps: list[int] = []
    stops = list(tour.stops)
    while stops and stops[0].when is None:
        steps.append(0)
        stops.pop(0)
    for event, world in _steps(simulation, max_steps):
        mine = not focus or task_of(event, world) == focus
        while stops and (mine or stops[0].whole_job) and _comes(stops[0], event, world):
            steps.append(simulation.step_count)
            stops.pop(0)
        if not stops:
            break
    if stops:
        raise InvalidParameterError(
            f"tour {tour.name}: stop {stops[0].title!r} never comes in {opening.describe()}"
        )
    return steps


def _comes(stop: Stop, event: Event, world: NetworkWorld) -> bool:
    return stop.when is not None and stop.when(event, world)


def focused_task(tour: Tour, *, max_steps: int = 400_000) -> str:
    """The subtask a focused tour follows: that of the first step its ``focus`` holds at
    ("" for a tour without one)."""
    if tour.focus is None:
        return ""
    for event, world in _steps(tour.opening().simulation(), max_steps):
        if tour.focus(event, world):
            return task_of(event, world)
    raise InvalidParameterError(
        f"tour {tour.name}: no step of {tour.opening().describe()} is one to follow"
    )


def _steps(simulation: Simulation, max_steps: int) -> Iterator[tuple[Event, NetworkWorld]]:
    """Each step of a run to its end (or ``max_steps``), with the world after it."""
    while simulation.step_count < max_steps:
        event = simulation.step()
        if event is None:
            return
        world = simulation.model
        assert isinstance(world, NetworkWorld)
        yield event, world


# -- conditions ------------------------------------------------------------------------------


def on(
    kind: ActionKind, actor: ActorKind | None = None, also: Condition | None = None
) -> Condition:
    """The step whose action is ``kind`` (of an actor of that kind, where ``also`` holds)."""

    def condition(event: Event, world: NetworkWorld) -> bool:
        if event.action.kind != kind:
            return False
        if actor is not None:
            ref = world.actor(event.action.actor)
            if ref.kind is not actor:
                return False
        return also is None or also(event, world)

    return condition


def ended(event: Event, world: NetworkWorld) -> bool:
    """The run's last step: nothing more is enabled."""
    return not world.enabled_actions()


def all_running(event: Event, world: NetworkWorld) -> bool:
    return all(t.phase is TaskPhase.RUNNING for t in world.tasks.values())


def checkpoint_completed(event: Event, world: NetworkWorld) -> bool:
    return bool(world.checkpoints.completed)


def recovered_input(event: Event, world: NetworkWorld) -> bool:
    """The step's task had input state to recover (a sink after a downscale may have none)."""
    restore = world.restore
    return restore is not None and bool(restore.subtasks[task_of(event, world)].input_state)


def barrier_sent(event: Event, world: NetworkWorld) -> bool:
    """netty just put an unaligned barrier at the head of its channel."""
    ref = world.actor(event.action.actor)
    if not ref.channel:
        return False
    received = world.channels[ref.channel].received
    return bool(received) and received[0].priority


def task_of(event: Event | None, world: NetworkWorld) -> str:
    if event is None:
        return ""
    ref = world.actor(event.action.actor)
    return ref.task


# -- highlights ------------------------------------------------------------------------------


def actor_place(event: Event | None, world: NetworkWorld, scene: Mapping[str, Any]) -> list[str]:
    """The place of the actor that took the step."""
    place = scene.get("actor")
    return [place] if place else []


def items_where(test: Callable[[Mapping[str, Any]], bool]) -> Highlight:
    """Every item of the scene that passes ``test``."""

    def highlight(event: Event | None, world: NetworkWorld, scene: Mapping[str, Any]) -> list[str]:
        return [str(item["id"]) for item in scene["items"] if test(item)]

    return highlight


def items_of_task(test: Callable[[Mapping[str, Any]], bool]) -> Highlight:
    """The items that pass ``test`` in the places of the step's task (its gates' channels,
    its partitions, its reader and drainer): the subtask a stop is about, not every other."""

    def highlight(event: Event | None, world: NetworkWorld, scene: Mapping[str, Any]) -> list[str]:
        task = task_of(event, world)
        mine = {str(p["id"]) for p in scene["places"] if p.get("task") == task}
        return [str(i["id"]) for i in scene["items"] if i["place"] in mine and test(i)]

    return highlight


def places_of_kind(*kinds: str) -> Highlight:
    def highlight(event: Event | None, world: NetworkWorld, scene: Mapping[str, Any]) -> list[str]:
        return [str(place["id"]) for place in scene["places"] if place["kind"] in kinds]

    return highlight


def together(*parts: Highlight) -> Highlight:
    def highlight(event: Event | None, world: NetworkWorld, scene: Mapping[str, Any]) -> list[str]:
        return [key for part in parts for key in part(event, world, scene)]

    return highlight


def is_barrier(item: Mapping[str, Any]) -> bool:
    return bool(item["kind"] == "barrier")


def is_persisted(item: Mapping[str, Any]) -> bool:
    return "persisted" in item


def is_recovered(item: Mapping[str, Any]) -> bool:
    return bool(item.get("recovered"))


def has_dropped(item: Mapping[str, Any]) -> bool:
    return any(piece[6] == "dropped" for piece in item.get("pieces", ()))


def is_request(item: Mapping[str, Any]) -> bool:
    return bool(item["kind"] == "request")


# -- figures -----------------------------------------------------------------------------------


def checkpoint_figures(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    progress = world.checkpoints.pending
    requests = [r for w in world.writers.values() for r in w.requests]
    return {
        "checkpoint": progress.id
        if progress
        else (world.checkpoints.completed[-1].id if world.checkpoints.completed else 0),
        "acknowledged": len(progress.acknowledged) if progress else len(world.tasks),
        "tasks": len(world.tasks),
        "requests": len(requests),
        "output_requests": sum(1 for r in requests if r.output),
        "input_requests": sum(1 for r in requests if not r.output),
        "task": task_of(event, world),
    }


def completed_figures(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    last = world.checkpoints.completed[-1]
    inputs = sum(len(s.buffers) for s in last.input_channel_state)
    outputs = sum(len(s.buffers) for s in last.result_subpartition_state)
    return {
        "checkpoint": last.id,
        "in_flight": last.in_flight_bytes,
        "input_buffers": inputs,
        "output_buffers": outputs,
        "records": len(last.persisted_records),
        "steps": last.completed_at - last.triggered_at,
    }


def restore_figures(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    restore = world.restore
    recovered = 0 if restore is None else restore.recovered_bytes
    readers = len(world.readers)
    sources = sum(1 for t in world.tasks.values() if t.kind is OperatorKind.SOURCE)
    in_all = filtered_in_all(world)
    return {
        "step": world.step,
        "recovered": recovered,
        "readers": readers,
        "sources": sources,
        "tasks": len(world.tasks),
        "task": task_of(event, world),
        "filtered": len(world.filtered),
        "filtered_in_all": in_all,
        "filtered_later": in_all - len(world.filtered),
        "heap_peak": world.heap_peak,
        "spilled": world.spill.bytes_written,
    }


def filtered_in_all(world: NetworkWorld) -> int:
    """How many recovered records the restart drops to its end (the badge's *records filtered
    out*), known at any step from the state assignment alone: every new subtask that receives
    a piece of a recovered record reassembles it, and all but the one the partitioner selects
    drop it. A stop mid-restore can so say both what was dropped so far and what the badge
    will count, instead of a figure that seems to contradict it. (A run that does not filter,
    a fault's or FLIP-547's unfiltered fetch, or one that stops early drops fewer.)"""
    restore = world.restore
    if restore is None:
        return 0
    receivers: dict[int, set[str]] = {}
    for subtask in restore.subtasks.values():
        for chunk in subtask.input_state:
            for piece in chunk.fragments:
                receivers.setdefault(piece.record, set()).add(subtask.subtask)
        for chunk in subtask.output_state:
            exchange = restore.graph.outputs_of(subtask.operator)[chunk.index]
            consumer = restore.graph.operator(exchange.downstream)
            for target in chunk.targets:
                for piece in chunk.fragments:
                    receivers.setdefault(piece.record, set()).add(consumer.subtask_name(target))
    return sum(
        len(names) - 1 for record, names in receivers.items() if restore.records[record].is_record
    )


def filtered_now(event: Event, world: NetworkWorld) -> bool:
    """The step dropped a recovered record another subtask owns now."""
    return any(step == event.step for step in world.filtered.values())


def violated(event: Event, world: NetworkWorld) -> bool:
    return bool(world.violations)


def places_where(test: Callable[[Mapping[str, Any]], bool]) -> Highlight:
    """Every place of the scene that passes ``test``."""

    def highlight(event: Event | None, world: NetworkWorld, scene: Mapping[str, Any]) -> list[str]:
        return [str(place["id"]) for place in scene["places"] if test(place)]

    return highlight


def is_blocked(place: Mapping[str, Any]) -> bool:
    return bool(place.get("blocked"))


def is_waiting(place: Mapping[str, Any]) -> bool:
    return "waits" in place
