"""Tour: rescaled in-flight data read through virtual channels, and the records filtered out."""

from __future__ import annotations

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event
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


RESCALING_FILTERING = Tour(
    name="rescaling-filtering",
    title="Rescaled in-flight data: virtual channels and filtering",
    scenario="keyed-upscale",
    introduction=(
        "The keyed job restarts with its counters and sinks going from 4 to 7. Each new counter "
        "owns a smaller key-group range, so it must read the in-flight data of every old counter "
        "whose range overlaps its own, and drop the records that are now someone else's."
    ),
    stops=(
        Stop(
            "Who reads what",
            "Step 0. {recovered:,} bytes of channel state go back to {tasks} tasks. Every "
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
            "came through a **virtual channel** (old subtask, old channel) that two new "
            "counters share, so some records in it now belong to the other one: they are "
            "**struck through**. Hover the buffer to see their key groups.",
            on(ActionKind.RECOVER_INPUT, ActorKind.READER, _filters),
            together(actor_place, items_where(has_dropped)),
            restore_figures,
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
            "{task} completed a record that, after the rescale, belongs to another counter: the "
            "record filter drops it instead of processing it ({filtered} filtered so far). The "
            "other counter reads the same bytes and keeps it, so every record is processed "
            "exactly once.",
            on(ActionKind.POLL, ActorKind.TASK, filtered_now),
            actor_place,
            restore_figures,
        ),
        Stop(
            "Normal processing",
            "Every task is running again at step {step}, and {filtered} recovered records have "
            "been filtered out so far. Not all: records of the sources' recovered output state "
            "still arrive through the converted channels and are filtered as they come (explore "
            "on to the end of the run to count them all).",
            all_running,
            places_of_kind("task"),
            lambda e, w: {**restore_figures(e, w), "step": w.step},
        ),
    ),
)
