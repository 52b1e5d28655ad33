"""Tour: rescaled in-flight data read through virtual channels, and the records filtered out."""

from __future__ import annotations

from collections.abc import Mapping

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event
from flinkstate.views.captions.step import plural
from flinkstate.views.tours.base import (
    Stop,
    Tour,
    actor_place,
    all_running,
    filtered_now,
    has_dropped,
    items_where,
    on,
    places_of_kind,
    restore_figures,
    task_of,
    together,
)


def _filters(event: Event, world: NetworkWorld) -> bool:
    """The step's task holds recovered data of a virtual channel that filters."""
    task = world.tasks[task_of(event, world)]
    return any(
        gate.plan is not None
        and any(
            gate.plan.filters_virtual_channel(channel.index, *b.descriptor)
            for channel in gate.channels
            for b in channel.recovery.queue
            if b.descriptor is not None
        )
        for gate in task.gates
    )


def _descriptor_polled(event: Event, world: NetworkWorld) -> bool:
    task = world.tasks[task_of(event, world)]
    return task.current is None and any(
        c.demultiplexer.selected is not None for g in task.gates for c in g.channels
    )


def _chunk_figures(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    """The chunk the reader just put into a recovered channel: its virtual channel, how many
    new counters read that old subtask, and how many of its records another one owns now."""
    figures = dict(restore_figures(event, world))
    if event is None or event.action.target not in world.channels:
        return figures
    channel = world.channels[event.action.target]
    gate = world.gate_of(channel)
    task = world.task_named(channel.task)
    queue = list(channel.recovery.queue)
    descriptors = [b.descriptor for b in queue if b.descriptor is not None]
    data = [b for b in queue if b.fragments]
    if not descriptors or not data:
        return figures
    old_subtask, old_channel = descriptors[-1]
    readers = [
        t.name
        for t in world.tasks.values()
        for g in t.gates
        if g.exchange == gate.exchange
        and g.plan is not None
        and old_subtask in g.plan.input_state_from
    ]
    records = {f.record for f in data[-1].fragments if world.records[f.record].is_record}
    others = {r for r in records if world.selected_subtask(gate, r) != task.index}
    return {
        **figures,
        "old_subtask": old_subtask,
        "old_channel": old_channel,
        "sharing": len(readers),
        "dropped": plural(len(others), "record"),
        "belong": "belongs" if len(others) == 1 else "belong",
    }


def _filtered_figures(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    """The record the step's task completed and dropped, whose it is now, and what the
    deserializer has left to process (the caption's figure)."""
    figures = dict(restore_figures(event, world))
    if event is None:
        return figures
    task = world.tasks[task_of(event, world)]
    dropped = sorted(
        record
        for (record, name), step in world.filtered.items()
        if step == event.step and name == task.name
    )
    if not dropped or not task.gates:
        return figures
    gate = task.gates[0]
    owner = world.graph.operator(task.operator).subtask_name(
        world.selected_subtask(gate, dropped[0])
    )
    ready = plural(len(task.ready), "complete record")
    return {**figures, "record": dropped[0], "owner": owner, "ready": ready}


RESCALING_FILTERING = Tour(
    name="rescaling-filtering",
    title="Rescaled in-flight data: virtual channels and filtering",
    scenario="keyed-upscale",
    introduction=(
        "The keyed job restarts with its counters and sinks going from {old_counter} to "
        "{counter}. Each new counter "
        "owns a smaller key-group range, so it must read the in-flight data of every old counter "
        "whose range overlaps its own, and drop the records that are now someone else's."
    ),
    stops=(
        Stop(
            "Who reads what",
            "Step {step}. {recovered:,} bytes of channel state go back to {tasks} tasks. Every "
            "counter has **recovered channels** (orange): its reader fills them with the old "
            "counters' input state, and the sources put their old output state back into their "
            "subpartitions.",
            None,
            places_of_kind("recovered-channel"),
            restore_figures,
        ),
        Stop(
            "Records that belong elsewhere",
            "The reader of {task} put a chunk of an old channel into a recovered channel. It "
            "came through a **virtual channel** (old subtask {old_subtask}, old channel "
            "{old_channel}), and {sharing} new counters read that old subtask's input state, so "
            "{dropped} in it now {belong} to another of them (**struck through**). Hover the "
            "buffer to see the key groups.",
            on(ActionKind.RECOVER_INPUT, ActorKind.READER, _filters),
            together(actor_place, items_where(has_dropped)),
            _chunk_figures,
        ),
        Stop(
            "A descriptor",
            "{task} took a **descriptor** (D): the buffers behind it come from another old "
            "channel. The deserializer keeps one partial record per virtual channel, so a record "
            "that spans buffers of one old channel is put together from those buffers only.",
            on(ActionKind.POLL, ActorKind.TASK, _descriptor_polled),
            actor_place,
            restore_figures,
        ),
        Stop(
            "Filtered",
            "The buffer {task} took completed record {record}, which after the rescale belongs "
            "to {owner}: the record filter drops it instead of handing it on, so the "
            "deserializer has {ready} to process ({filtered} filtered so far). "
            "{owner} reads the same bytes and keeps the record, so every record is processed "
            "exactly once.",
            on(ActionKind.POLL, ActorKind.TASK, filtered_now),
            actor_place,
            _filtered_figures,
        ),
        Stop(
            "Normal processing",
            "Every task is running again at step {step}, and {filtered} recovered records have "
            "been filtered out so far. Not all of the {filtered_in_all} the restart drops (the "
            "badge's *records filtered out*): the other {filtered_later} end in the sources' "
            "recovered output state, which still arrives through the converted channels and is "
            "filtered as it comes (explore on to the end of the run to see them go).",
            all_running,
            places_of_kind("task"),
            restore_figures,
        ),
    ),
)
