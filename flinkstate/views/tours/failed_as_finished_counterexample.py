"""Tour: the counterexample the explorer of every interleaving finds for FLINK-40482 (a
checkpoint asked for during a failover counts the failed subtask as finished), stepped along
its trace.

Random schedules rarely meet this hazard (notebook 8 counts how rarely); the tour's run is the
explorer's shortest trace, found when the tour is first opened, with the settings notebook 8
explores: its stops are the moments that trace lines up.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache

from flinkstate.lab.counterexample import exploration_subject
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.checkpoint.happenings import ManualCheckpointPlanned
from flinkstate.runtime.execution_state import ExecutionState
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.action import Action
from flinkstate.sim.core import Event
from flinkstate.sim.explore import Bounds, PartialOrder, explore
from flinkstate.views.tours.base import (
    Highlight,
    Stop,
    Tour,
    actor_place,
    on,
    places_of_kind,
    task_of,
    violated,
)
from flinkstate.views.tours.runs import CatalogueRun

#: the job notebook 8 explores, cut down to a size the explorer covers in seconds
SCENARIO = "failed-task-counted-as-finished"
PHASE = "job"
SMALL: Mapping[str, object] = {
    "records": 1,
    "bounded_records": 0,
    "checkpoint_interval": 0,
    "fail_after_records": 1,
    "restart_delay": 2,
    "slots_per_tm": 4,
}
#: the explorer's bound in notebook 8 (breadth first, sleep sets: its widget's defaults)
MAX_STATES = 2_000


@cache
def counterexample() -> tuple[Action, ...]:
    """The shortest trace to the first violation the explorer finds (explored once per
    process: a few thousand states)."""
    subject = exploration_subject(SCENARIO, overrides=SMALL, phase=PHASE)
    result = explore(
        subject.initial,
        bounds=Bounds(max_states=MAX_STATES),
        reduction=PartialOrder.SLEEP_SETS.reduction(),
    )
    found = [f for f in result.findings if f.violation is not None]
    if not found:
        return ()
    return tuple(found[0].trace)


def _names(subtasks: Iterable[object]) -> str:
    said = ", ".join(str(s) for s in subtasks)
    return said or "none"


def _in_state(world: NetworkWorld, *states: ExecutionState) -> list[str]:
    return [name for name, t in world.tasks.items() if t.execution_state in states]


def _figures(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    """The job's subtasks and the checkpoint's plan at this step, read from the world."""
    operators = Counter(t.operator for t in world.tasks.values())
    plan = next(
        (h for h in (event.happenings if event else ()) if isinstance(h, ManualCheckpointPlanned)),
        None,
    )
    checkpoints = world.checkpoints
    last = checkpoints.completed[-1] if checkpoints.completed else None
    broken = world.violations[0] if world.violations else None
    return {
        "operators": ", ".join(f"{name} \u00d7{n}" for name, n in operators.items()),
        "tasks": len(world.tasks),
        "task": task_of(event, world),
        "sent": sum(1 for r in world.records.values() if r.source == task_of(event, world)),
        "finished": _names(_in_state(world, ExecutionState.FINISHED)),
        "failed": _names(_in_state(world, ExecutionState.FAILED, ExecutionState.CANCELED)),
        "running": len(_in_state(world, ExecutionState.RUNNING)),
        "checkpoint": plan.checkpoint if plan else (last.id if last else 0),
        "triggered": _names(plan.triggered if plan else ()),
        "waits": _names(plan.waits_for if plan else ()),
        "counted": _names(plan.finished if plan else (last.finished_subtasks if last else ())),
        "completed_at": last.completed_at if last else 0,
        "invariant": broken.invariant if broken else "",
        "why": broken.message if broken else "",
    }


def _planned(event: Event, world: NetworkWorld) -> bool:
    return any(isinstance(h, ManualCheckpointPlanned) for h in event.happenings)


def _not_running(states: tuple[ExecutionState, ...]) -> Highlight:
    """The task places of the subtasks in these states."""

    def highlight(
        event: Event | None, world: NetworkWorld, scene: Mapping[str, object]
    ) -> list[str]:
        return [world.tasks[name].name for name in _in_state(world, *states)]

    return highlight


FAILED_AS_FINISHED_COUNTEREXAMPLE = Tour(
    name="failed-as-finished-counterexample",
    title="The explorer's counterexample: a failed subtask counted as finished (FLINK-40482)",
    scenario=SCENARIO,
    introduction=(
        "The stepper follows the shortest trace the explorer of every interleaving found to a "
        "broken invariant, not a random schedule: each stop is one of the few moments that "
        "must line up for a checkpoint to complete without a failed subtask's state."
    ),
    run=CatalogueRun(SCENARIO, PHASE, 0, SMALL, counterexample),
    stops=(
        Stop(
            "The job, cut down",
            "{tasks} subtasks ({operators}), forward exchanges only, so each subtask index "
            "is a pipelined region of its own. Every subtask is ringed: watch which finish, "
            "which fail, and which the checkpoint waits for.",
            None,
            places_of_kind("task"),
            _figures,
        ),
        Stop(
            "A subtask finishes",
            "{task} sent its {sent} record(s) and FINISHED. From now on Flink plans a checkpoint "
            "over the subtasks still running only, and counts the others as finished.",
            on(ActionKind.FINISH, ActorKind.TASK),
            actor_place,
            _figures,
        ),
        Stop(
            "A subtask fails",
            "{task} threw in its user code: FAILED. Not running: {failed} (failed), "
            "{finished} (finished). The region stays down until the scheduler restarts it.",
            on(ActionKind.FAIL, ActorKind.TASK),
            actor_place,
            _figures,
        ),
        Stop(
            "A checkpoint asked for by hand",
            "Checkpoint {checkpoint} is planned while the region is down: triggered at "
            "{triggered}, it waits for {waits} and counts {counted} as finished (ringed). The "
            "plan's test for finished is also true of {failed}.",
            on(ActionKind.MANUAL_CHECKPOINT, also=_planned),
            _not_running((ExecutionState.FINISHED, ExecutionState.FAILED)),
            _figures,
        ),
        Stop(
            "Completed without its state",
            "The last subtask it waited for acknowledged: checkpoint {checkpoint} completed, "
            "with {counted} recorded as finished. The invariant `{invariant}` is broken: {why}.",
            violated,
            _not_running((ExecutionState.FAILED,)),
            _figures,
        ),
    ),
)
