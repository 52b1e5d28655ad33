"""Tour: checkpointing during recovery in Flink master (V2): spill files, the drainer, and a
checkpoint taken while recovered data is still being drained."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event
from flinkstate.views.tours.base import (
    Highlight,
    Stop,
    Tour,
    actor_place,
    is_recovered,
    items_of_task,
    on,
    task_of,
    together,
)


def _draining(event: Event, world: NetworkWorld) -> bool:
    """The step's task took a barrier while its drainer was still at work."""
    task = world.tasks[task_of(event, world)]
    drainer = world.drainers.get(task.name)
    return drainer is not None and drainer.installed and not drainer.finished


def _figures(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    task = world.tasks[task_of(event, world)] if event is not None else None
    drainer = None if task is None else world.drainers.get(task.name)
    state = None if drainer is None else drainer.state
    reader = None if task is None else world.readers.get(task.name)
    spill = None if reader is None else reader.spill
    return {
        "task": "" if task is None else task_of(event, world),
        "files": 0 if state is None else len(state.files),
        "segments": 0 if state is None else len(state.segments),
        "size": 0 if state is None else state.size,
        "spilled": 0 if spill is None else spill.bytes_written,
        "generation": world.effective_generation.value,
        "checkpoint": world.checkpoints.pending.id if world.checkpoints.pending else 0,
        "in_recovery": 0
        if task is None
        else sum(1 for g in task.gates for c in g.channels if c.recoverable.in_recovery),
    }


def requests_of_task(
    event: Event | None, world: NetworkWorld, scene: Mapping[str, Any]
) -> list[str]:
    """The channel-state writer's requests for the step's task's channels."""
    prefix = f"{task_of(event, world)}<"
    return [
        str(i["id"])
        for i in scene["items"]
        if i["kind"] == "request" and str(i.get("of", "")).startswith(prefix)
    ]


def places_of_kind_for_task(kind: str) -> Highlight:
    """The step's task's place of that kind (its reader, its drainer)."""

    def highlight(event: Event | None, world: NetworkWorld, scene: Mapping[str, Any]) -> list[str]:
        task = task_of(event, world)
        return [
            str(p["id"]) for p in scene["places"] if p["kind"] == kind and p.get("task") == task
        ]

    return highlight


CHECKPOINTING_DURING_RECOVERY = Tour(
    name="checkpointing-during-recovery",
    title="Checkpointing during recovery: spill files and the drainer (Flink master)",
    scenario="checkpoint-during-drain",
    focus=on(ActionKind.BARRIER, ActorKind.TASK, _draining),
    introduction=(
        "With execution.checkpointing.during-recovery.enabled and recover-output-on-downstream "
        "on, Flink master's recovery fetches a task's recovered input into spill files, then "
        "drains them into the channels while the task already runs, so checkpoints need not "
        "wait for recovery to end."
    ),
    stops=(
        Stop(
            "Fetch into spill files",
            "The reader of {task} fetched a chunk of recovered input towards its spill files "
            "({generation}): records another subtask owns are dropped before they are written. "
            "The channels stay empty for now. The tour follows {task} throughout: it is the "
            "subtask a checkpoint reaches while its drainer is still at work.",
            on(ActionKind.SPILL, ActorKind.READER),
            actor_place,
            _figures,
        ),
        Stop(
            "The files are sealed",
            "The fetch of {task} is done: {files} spill file(s), {segments} segment(s), "
            "{size:,} bytes, handed to its **drainer**.",
            on(
                ActionKind.FINISH_FETCH,
                ActorKind.READER,
                lambda e, w: bool(_figures(e, w)["files"]),
            ),
            together(actor_place, places_of_kind_for_task("drainer")),
            _figures,
        ),
        Stop(
            "Channels in recovery",
            "{task} converted every gate in one mail: its {in_recovery} channels are physical "
            "channels now, but **in recovery**: no credit is announced until the drainer has "
            "filled them.",
            on(
                ActionKind.REQUEST_PARTITIONS,
                ActorKind.TASK,
                lambda e, w: bool(_figures(e, w)["in_recovery"]),
            ),
            actor_place,
            _figures,
        ),
        Stop(
            "Running while draining",
            "{task} installed its drainer as the recovery checkpoint trigger: restore is over "
            "and the task is RUNNING, its channels still in recovery.",
            on(ActionKind.INSTALL_DRAINER, ActorKind.TASK),
            together(actor_place, places_of_kind_for_task("drainer")),
            _figures,
        ),
        Stop(
            "Drained into a channel",
            "The drainer of {task} copied recovered bytes from the spill files into a buffer of "
            "a channel in recovery (hatched): the task consumes it like live data.",
            on(ActionKind.DRAIN, ActorKind.DRAINER),
            together(actor_place, items_of_task(is_recovered)),
            _figures,
        ),
        Stop(
            "A checkpoint meets the drain",
            "{task} took checkpoint {checkpoint}'s barrier while its drainer was still at "
            "work, and cut its recovered state in that one step. Into each of its "
            "{in_recovery} channels in recovery went a **recovery barrier**, and out again in "
            "the same step with the recovered buffers queued before it: those are persisted "
            "(the writer's requests, ringed), with the undrained rest of the spill "
            "files from the drainer's committed position. So no recovery barrier stays on the "
            "canvas: what shows the cut is the requests.",
            on(ActionKind.BARRIER, ActorKind.TASK, _draining),
            together(actor_place, places_of_kind_for_task("drainer"), requests_of_task),
            _figures,
        ),
        Stop(
            "Drain finished",
            "The drainer of {task} delivered everything and queued an "
            "EndOfFetchedChannelStateEvent behind the recovered data of each channel. As the "
            "task consumes that event, the channel leaves recovery and credit flows again; the "
            "spill files are deleted once no checkpoint still reads them.",
            on(ActionKind.FINISH_DRAIN, ActorKind.DRAINER),
            actor_place,
            _figures,
        ),
    ),
)
