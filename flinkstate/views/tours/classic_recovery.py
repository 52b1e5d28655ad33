"""Tour: recovery with checkpointing during recovery off, from restore to normal processing."""

from __future__ import annotations

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.views.tours.base import (
    Stop,
    Tour,
    actor_place,
    all_running,
    is_recovered,
    items_where,
    on,
    places_of_kind,
    recovered_input,
    restore_figures,
    task_of,
    together,
)

CLASSIC_RECOVERY = Tour(
    name="classic-recovery",
    title="Recovery, step by step (checkpointing during recovery off)",
    scenario="keyed-downscale",
    introduction=(
        "The keyed job restarts from its checkpoint with counters and sinks going from "
        "{old_counter} to {counter}. "
        "Follow the recovered in-flight data from the checkpoint back into the network stack."
    ),
    stops=(
        Stop(
            "Restoring",
            "Step {step}: every task starts **restoring**. The {readers} tasks with inputs have a "
            "**channel-state reader** (dashed orange, beside the gate) and **recovered "
            "channels** (orange, dashed): they cannot receive live data yet. {recovered:,} bytes "
            "of channel state wait to be put back.",
            None,
            places_of_kind("channel-state-reader", "recovered-channel"),
            restore_figures,
        ),
        Stop(
            "Output state first",
            "{task} read a chunk of its output state into its subpartitions, behind a "
            "**descriptor** (D) that names the old subtask and channel it came from. The "
            "recovered buffers are hatched orange.",
            on(ActionKind.RECOVER_OUTPUT, ActorKind.TASK),
            together(actor_place, items_where(is_recovered)),
            restore_figures,
        ),
        Stop(
            "Input state into recovered channels",
            "The channel-state reader of {task} read input state into a recovered channel, "
            "using the channel's own buffers (taken from the global pool on first use) and then "
            "the gate's floating ones.",
            on(ActionKind.RECOVER_INPUT, ActorKind.READER),
            together(actor_place, items_where(is_recovered)),
            restore_figures,
        ),
        Stop(
            "Consumed like live data",
            "{task} took a recovered buffer: the deserializer reassembles records from it as "
            "from any buffer, per virtual channel where the gate was rescaled.",
            on(
                ActionKind.POLL,
                ActorKind.TASK,
                lambda e, w: bool(w.tasks[task_of(e, w)].current_buffer is not None),
            ),
            actor_place,
            restore_figures,
        ),
        Stop(
            "Gate conversion",
            "{task}'s gate has consumed all its recovered state: it converts its recovered "
            "channels into local and remote ones, which request their subpartitions. Live data "
            "may flow to this gate from now on.",
            on(ActionKind.CONVERT, ActorKind.TASK, recovered_input),
            actor_place,
            restore_figures,
        ),
        Stop(
            "Everyone running",
            "Every task has left restoring: normal processing resumed at step {step}. The "
            "restart drops {filtered_in_all} recovered records in all (the badge's *records "
            "filtered out*), because after the downscale another subtask owns them; "
            "{filtered} of them so far. The other {filtered_later} end in the sources' "
            "recovered output state, which reaches the counters through the converted channels "
            "after restore: they are completed, and dropped, as they arrive.",
            all_running,
            places_of_kind("task"),
            restore_figures,
        ),
    ),
)
