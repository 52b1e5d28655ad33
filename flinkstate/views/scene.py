"""The world at one step as a scene for the canvas: places, wires and the items in them.

A scene is plain JSON, a pure function of the model, so it is tested without a browser and
can be written into a page that has no kernel. Its places and their positions are the nodes of
the ownership graph (:func:`flinkstate.views.ownership.ownership_graph`), so the job's
structure is modelled once and the graph view stays one click away. Its items are the buffers
of the world, found by walking the containers that hold them (subpartition queues and
builders, received and recovered queues of input channels, a task's deserializer, the
channel-state reader's filtering buffers) and the channel-state writers' requests.

Every item has an id that stays the same from one step to the next while it exists
(``b<uid>`` for a buffer, ``w<uid>`` for a write request), so the canvas can move it from its
old place to its new one. An item's ``slot`` is its position in its place's queue, head first:
a barrier that overtakes queued buffers is at slot 0, ahead of them.

Records inside a buffer are drawn as pieces (the fragment's byte range); a record that spans
buffers is one piece in each, marked as continuing. Pieces carry the colour index of their
source subtask (``splits``) and their key group, so the canvas can colour by either.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from flinkstate.runtime.actor_ref import ActorKind, ActorRef
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.buffer.records import MIN_WATERMARK
from flinkstate.runtime.checkpoint.checkpoint import CheckpointInProgress
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.watermark.watermarks import watermark_text
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event
from flinkstate.views.glyphs import scene_legend
from flinkstate.views.ownership import (
    OwnershipPlaces,
    channel_node,
    gate_node,
    owner_node,
    ownership_places,
    partition_node,
    subpartition_node,
    task_node,
)
from flinkstate.views.scene_items import scene_items
from flinkstate.views.scene_layout import SceneLayout

#: version of the scene's JSON layout (the canvas and pages written from it read this)
SCENE_VERSION = 1
#: the ES module that draws a scene in a browser: the live widget's and a written page's
CANVAS_MODULE = Path(__file__).with_name("canvas.js")


#: the Flink class behind each kind of place, shown on hover
FLINK_CLASSES: Mapping[str, str] = {
    "task": "StreamTask",
    "result-partition": "PipelinedResultPartition",
    "subpartition": "PipelinedSubpartition",
    "remote-channel": "RemoteInputChannel",
    "local-channel": "LocalInputChannel",
    "recovered-channel": "RecoveredInputChannel",
    "input-gate": "SingleInputGate",
    "network-pool": "NetworkBufferPool",
    "channel-state-reader": "SequentialChannelStateReaderImpl",
    "channel-state-writer": "ChannelStateWriterImpl",
    "drainer": "FetchedChannelStateDrainer",
    "heap": "",
}


def sources_said(splits: list[str]) -> str:
    """The subtasks records are coloured by, as the legend names them: ``source[0-2]`` (an en
    dash) for the subtasks of one operator, else their names; "" when none. Read from the
    records, so the legend's range is the data's: a forecast's records come from the old
    subtasks that sent them, which may be fewer than the restored job's."""
    splits = [name.removeprefix("task ") for name in splits]  # a task's name: its subtask
    if not splits:
        return ""
    parsed = [re.fullmatch(r"(.+)\[(\d+)\]", name) for name in splits]
    operators = {m.group(1) for m in parsed if m is not None}
    if len(operators) != 1 or any(m is None for m in parsed):
        return ", ".join(splits)
    indexes = sorted(int(m.group(2)) for m in parsed if m is not None)
    (operator,) = operators
    if indexes == list(range(indexes[0], indexes[-1] + 1)) and len(indexes) > 1:
        return f"{operator}[{indexes[0]}\u2013{indexes[-1]}]"
    return f"{operator}[{', '.join(map(str, indexes))}]"


def build_scene(
    world: NetworkWorld,
    event: Event | None = None,
    layout: SceneLayout | None = None,
    *,
    expanded: Collection[str] | None = None,
    items: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The world at its current step as the canvas draws it.

    ``event`` is the step just taken: its actor is highlighted, its segment moves become
    arrows. The result is JSON (dicts, lists, strings and numbers only). With ``expanded``
    it is the scene as a large job is shown, ``collapse_scene(build_scene(...), expanded)``,
    made without the details of the places folded away (at P = 64, 8,000 of 8,300 places and
    most of a step's cost). ``items``: the world's ``scene_items``, where the caller has them.
    Its ``legend`` names the glyphs it may be drawn with (:mod:`flinkstate.views.glyphs`).
    """
    layout = layout or SceneLayout.of(world)
    hidden = None if expanded is None else hidden_places(world, layout, expanded)
    graph = ownership_places(
        world, event, layout.ownership, None if not hidden else _not_in(hidden)
    )
    places = scene_places(graph, layout, world.tasks)
    items = scene_items(world, layout) if items is None else items
    mark_places(places, place_details(world), waiting_places(world))
    scene = scene_frame(world, event, layout, places, _wires_and_moves(graph), items)
    if hidden is not None and layout.collapsible:
        scene = collapsed(scene, hidden, layout.collapsible, expanded or ())
    scene["legend"] = scene_legend(scene)  # of what is drawn: folded places are not
    return scene


def mark_places(
    places: list[dict[str, Any]],
    details: Mapping[str, Mapping[str, Any]],
    waiting: Mapping[str, str],
) -> None:
    """Put into each place the figures drawn inside it and what it waits for, if anything."""
    for place in places:
        place.update(details.get(place["id"], {}))
    for place in places:
        if place["id"] in waiting:
            place["waits"] = waiting[place["id"]]


def scene_frame(
    world: NetworkWorld,
    event: Event | None,
    layout: SceneLayout,
    places: list[dict[str, Any]],
    wires_and_moves: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    items: list[dict[str, Any]],
) -> dict[str, Any]:
    """The scene around its places, wires, moves and items: the step, the job's exchanges
    and columns, the actor, the checkpoint in progress and the run's verdicts so far."""
    wires, moves = wires_and_moves
    progress = world.checkpoints.pending
    return {
        "version": SCENE_VERSION,
        "step": world.step,
        "exchanges": [
            {"name": e.name, "upstream": e.upstream, "downstream": e.downstream}
            for e in world.graph.exchanges
        ],
        "collapsible": sorted(layout.collapsible),
        "columns": [
            {"x": x, "label": label} for x, label in sorted(layout.ownership.columns.items())
        ],
        "places": places,
        "wires": wires,
        "items": items,
        "moves": moves,
        "actor": _actor_place(world, event),
        "checkpoint": None if progress is None else _progress(progress, len(world.tasks)),
        "completed": [c.id for c in world.checkpoints.completed],
        "splits": len(layout.splits),
        "sources_said": sources_said(list(layout.splits)),
        **({"event_time": True} if world.graph.event_time else {}),
        "job_failed": world.checkpoints.job_failed,
        "violations": [str(v) for v in world.violations[:3]],
    }


def scene_places(
    graph: OwnershipPlaces, layout: SceneLayout, tasks: Mapping[str, Task]
) -> list[dict[str, Any]]:
    """Every place shown, where the ownership graph put it, with the Flink class it stands
    for and, for a task's places, the task, its lane and its operator."""
    lanes = {key: layout.ownership.positions[task_node(task)][1] for key, task in tasks.items()}
    places = []
    for node, data in graph.nodes.items():
        if data is None:
            continue
        x, y = layout.rounded[node]
        place = {
            "id": node,
            "kind": data["kind"],
            "x": x,
            "y": y,
            "label": data["label"],
            "buffers": data["buffers"],
            "blocked": bool(data["blocked"]),
            "hover": data["hover"],
            "flink": FLINK_CLASSES.get(data["kind"], ""),
        }
        task = layout.place_task.get(node)
        if task is not None:
            place["task"] = task
            place["lane"] = round(lanes[task], 4)
            place["operator"] = tasks[task].operator
        places.append(place)
    return places


def _wires_and_moves(
    graph: OwnershipPlaces,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The data paths the canvas draws as wires, and the step's segment moves as arrows."""
    edges = [
        (source, target, data)
        for source in graph.nodes
        for target, data in graph.edges.get(source, {}).items()
    ]
    wires = [
        {"from": source, "to": target, "kind": data["kind"]}
        for source, target, data in edges
        if data["kind"] in ("local", "remote", "restore", "drain")
    ]
    moves = [
        {"from": source, "to": target, "count": data["count"]}
        for source, target, data in edges
        if data["kind"] == "move"
    ]
    return wires, moves


def _progress(progress: CheckpointInProgress, tasks: int) -> dict[str, Any]:
    """The pending checkpoint as the canvas's header shows it."""
    return {
        "id": progress.id,
        "unaligned": progress.unaligned,
        "acknowledged": len(progress.acknowledged),
        "tasks": tasks,
        "pending_writes": sum(progress.pending_writes.values()),
    }


def _not_in(hidden: Mapping[str, str]) -> Callable[[str], bool]:
    return lambda node: node not in hidden


def hidden_places(
    world: NetworkWorld, layout: SceneLayout, expanded: Collection[str]
) -> dict[str, str]:
    """The places ``collapse_scene`` folds away with these lanes open, each with its task's
    place (the same rule, read from the layout instead of a whole scene)."""
    hidden: dict[str, str] = {}
    for node, key in layout.place_task.items():
        task = world.tasks[key]
        if task.operator in layout.collapsible and key not in expanded:
            place = task_node(task)
            if node != place:
                hidden[node] = place
    return hidden


def _actor_place(world: NetworkWorld, event: Event | None) -> str | None:
    """The place of the actor that took the step, or None (the coordinator has none)."""
    if event is None:
        return None
    return _place_of_actor(world, world.actor(event.action.actor))


def node_place(world: NetworkWorld, node: object) -> str | None:
    """The place of a node of a waits-for graph (:mod:`flinkstate.sim.deadlock`): an actor's,
    or that of an owner holding what an actor waits for; None for one with no place."""
    if isinstance(node, ActorRef):
        return _place_of_actor(world, node)
    if isinstance(node, Owner):
        return owner_node(world, node)
    return None


def _place_of_actor(world: NetworkWorld, ref: ActorRef) -> str | None:
    if ref.kind is ActorKind.TASK:
        return task_node(world.tasks[ref.task])
    if ref.kind is ActorKind.NETTY:
        return channel_node(world.channels[ref.channel])
    if ref.kind is ActorKind.WRITER:
        return world.writers[ref.writer].name
    if ref.kind is ActorKind.READER:
        return world.readers[world.tasks[ref.task].name].name
    if ref.kind is ActorKind.DRAINER:
        return world.drainers[world.tasks[ref.task].name].name
    return None


def waiting_places(world: NetworkWorld) -> dict[str, str]:
    """Places of actors that cannot proceed now, with what they wait for. A running task
    with nothing to write is just idle until data comes, which is not worth a mark; one that
    waits for a buffer (back-pressure) or for its recovery to move on is."""
    if world.is_finished():
        return {}
    places: dict[str, str] = {}
    for wait in world.waits():
        ref = wait.actor
        if not isinstance(ref, ActorRef):  # only holders can be owners rather than actors
            continue
        if ref.kind is ActorKind.TASK:
            task = world.tasks[ref.task]
            if not task.pending and task.phase is TaskPhase.RUNNING:
                continue
        place = _place_of_actor(world, ref)
        if place is not None and place not in places:
            places[place] = f"waits for {wait.resource}"
    return places


def place_details(
    world: NetworkWorld, tasks: Collection[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Figures the canvas draws inside a place: gauges, credit and backlog, phases; of the
    places in the lanes of ``tasks`` only (keys in ``world.tasks``), if given."""
    details: dict[str, dict[str, Any]] = {}
    for network_pool in world.network_pools.values():
        details[network_pool.name] = {
            "gauge": [network_pool.total - len(network_pool.free), network_pool.total]
        }
    for key, task in world.tasks.items():
        if tasks is not None and key not in tasks:
            continue
        progress = world.checkpoints.pending
        details[task_node(task)] = {
            "phase": task.phase,
            "finished": task.finished,
            "processed": task.processed,
            "emitted": task.emitted,
            "ready": len(task.ready),
            "acknowledged": progress is not None and task.name in progress.acknowledged,
        }
        if world.graph.event_time:
            details[task_node(task)]["watermark"] = watermark_text(
                world.event_time.watermark.get(task.name, MIN_WATERMARK)
            )
        if task.failover is not None:  # FAILED, CANCELING or CANCELED by a failover
            details[task_node(task)]["failover"] = task.failover.value
        for partition in task.partitions:
            pool = partition.pool
            details[partition_node(partition)] = {
                "gauge": [pool.requested - len(pool.free), pool.size],
            }
            for sub in partition.subpartitions:
                details[subpartition_node(sub)] = {"backlog": sub.backlog}
        for gate in task.gates:
            pool = gate.pool
            details[gate_node(gate)] = {
                "gauge": [pool.requested - len(pool.free), pool.size],
                "converted": gate.converted,
                "demultiplexing": gate.demultiplexing,
            }
            for channel in gate.channels:
                detail: dict[str, Any] = {
                    "remote": channel.remote,
                    "exclusive_free": len(channel.buffers.exclusive),
                    "floating": len(channel.buffers.floating),
                    "recovery_free": len(channel.recovery.exclusive),
                    "in_recovery": channel.recoverable.in_recovery,
                    "finished": channel.finished,
                }
                if channel.remote and not channel.recovered and not channel.recoverable.in_recovery:
                    detail["credit"] = channel.buffers.available
                    detail["backlog"] = channel.buffers.backlog_seen
                    detail["no_credit"] = channel.buffers.available == 0 and (
                        bool(world.subpartitions[channel.subpartition].queue)
                    )
                if channel.partial is not None:
                    record, got = channel.partial
                    detail["partial"] = [record, got, world.records[record].serialized_length]
                details[channel_node(channel)] = detail
    for reader in world.readers.values():
        details[reader.name] = {
            "chunks": len(reader.chunks),
            "finished": reader.finished,
            "spilled": 0 if reader.spill is None else reader.spill.bytes_written,
        }
    for drainer in world.drainers.values():
        state = drainer.state
        details[drainer.name] = {
            "installed": drainer.installed,
            "finished": drainer.finished,
            "spill_files": 0 if state is None or state.deleted else len(state.files),
            "spill_bytes": 0 if state is None or state.deleted else state.size,
        }
    for writer in world.writers.values():
        details[writer.name] = {"requests": len(writer.requests)}
    details["heap"] = {"heap_bytes": world.heap_bytes, "heap_peak": world.heap_peak}
    return details


def collapse_scene(scene: Mapping[str, Any], expanded: Collection[str] = ()) -> dict[str, Any]:
    """The scene as the canvas shows a large job: each subtask of an operator with more than
    :data:`COLLAPSE_OVER` subtasks is one row with counts, unless its task key is in
    ``expanded``. Its queues, channels, gate, reader and drainer, their items and wires, are
    left out; the task's place says how many buffers its inputs and outputs hold."""
    collapsible = set(scene.get("collapsible", ()))
    if not collapsible:
        return dict(scene)
    hidden: dict[str, str] = {}  # place id -> its collapsed task's place id
    task_places: dict[str, str] = {}
    for place in scene["places"]:
        if place["kind"] == "task" and "task" in place:
            task_places[place["task"]] = place["id"]
    for place in scene["places"]:
        task = place.get("task")
        if (
            task is not None
            and place["operator"] in collapsible
            and task not in expanded
            and place["kind"] != "task"
        ):
            hidden[place["id"]] = task_places[task]
    folded = collapsed(scene, hidden, collapsible, expanded)
    folded["legend"] = scene_legend(folded)  # of what is drawn: folded places are not
    return folded


def collapsed(
    scene: Mapping[str, Any],
    hidden: Mapping[str, str],
    collapsible: Collection[str],
    expanded: Collection[str],
) -> dict[str, Any]:
    """``scene`` without the ``hidden`` places (each mapped to its task's place), their items
    counted on the task's place, their wires left out and moves drawn from the task. Its
    legend is the caller's to make (a scene drawn step by step finds its glyphs place by
    place, not over the whole scene again)."""
    counts: dict[str, dict[str, int]] = {}
    items = []
    for item in scene["items"]:
        task_place = hidden.get(item["place"])
        if task_place is None:
            items.append(item)
            continue
        side = "in" if item.get("lane") in ("received", "recovered", "stash") else "out"
        tally = counts.setdefault(task_place, {"in": 0, "out": 0})
        tally[side] += item["kind"] == "buffer"
    places = []
    for place in scene["places"]:
        if place["id"] in hidden:
            continue
        if place["kind"] == "task" and place.get("operator") in collapsible:
            if place["task"] not in expanded:
                place = {**place, "collapsed": counts.get(place["id"], {"in": 0, "out": 0})}
            else:
                place = {**place, "expanded": True}
        places.append(place)
    actor = scene.get("actor")
    folded = {
        **scene,
        "places": places,
        "items": items,
        "wires": [w for w in scene["wires"] if w["from"] not in hidden and w["to"] not in hidden],
        "moves": [
            {**m, "from": hidden.get(m["from"], m["from"]), "to": hidden.get(m["to"], m["to"])}
            for m in scene["moves"]
        ],
        "actor": hidden.get(actor, actor) if isinstance(actor, str) else actor,
    }
    return folded
