"""Tour: a checkpoint barrier held behind a subpartition blocked after recovery (FLINK-39018)."""

from __future__ import annotations

from collections.abc import Mapping

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event
from flinkstate.views.tours.base import (
    Stop,
    Tour,
    actor_place,
    ended,
    is_barrier,
    is_blocked,
    items_where,
    on,
    places_where,
    together,
)


def _blocked(event: Event, world: NetworkWorld) -> bool:
    return any(sub.blocked for sub in world.subpartitions.values())


def _held(event: Event, world: NetworkWorld) -> bool:
    """A priority barrier sits in a blocked subpartition."""
    return any(
        sub.blocked and any(b.priority for b in sub.queue) for sub in world.subpartitions.values()
    )


def _figures(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    """The blocked subpartitions, the checkpoint's limits, and the slots per TaskManager that
    put the whole job in one TaskManager (slot sharing: one slot per subtask index, so as
    many as the widest operator has subtasks)."""
    return {
        "whole_job_slots": max(op.parallelism for op in world.graph.operators),
        "blocked": sum(1 for sub in world.subpartitions.values() if sub.blocked),
        "timeout": world.options.checkpoint_timeout,
        "tolerable": world.options.tolerable_failed_checkpoints,
        "checkpoint": world.checkpoints.pending.id
        if world.checkpoints.pending
        else (world.checkpoints.expired or [0])[-1],
    }


BLOCKED_SUBPARTITION = Tour(
    name="blocked-subpartition",
    title="A barrier held by a blocked subpartition (before FLINK-39018)",
    scenario="barrier-held-by-blocked-subpartition",
    introduction=(
        "After a restart, a subpartition that has handed its consumer the "
        "EndOfOutputChannelStateEvent is blocked until the consumer has that event from every "
        "channel of its gate, so live data cannot overtake recovered data. Before FLINK-39018, "
        "a checkpoint's priority barrier was held there too."
    ),
    stops=(
        Stop(
            "A subpartition blocks",
            "netty handed a consumer the end of a source's recovered output state: that "
            "subpartition is now **blocked** (red frame) until the counter has the event from "
            "all its sources. Blocked subpartitions now: {blocked}.",
            on(ActionKind.SEND, ActorKind.NETTY, _blocked),
            together(actor_place, places_where(is_blocked)),
            _figures,
        ),
        Stop(
            "A checkpoint during the restart",
            "The coordinator triggered checkpoint {checkpoint} while subpartitions are still "
            "blocked.",
            on(ActionKind.TRIGGER, ActorKind.COORDINATOR),
            places_where(is_blocked),
            _figures,
        ),
        Stop(
            "The barrier is held",
            "A source put the checkpoint's unaligned barrier at the head of its subpartitions, "
            "but a blocked subpartition does not hand out even a priority event: the barrier "
            "sits at the head of a red queue and the counter behind it never sees it.",
            on(ActionKind.CHECKPOINT, ActorKind.TASK, _held),
            together(items_where(is_barrier), places_where(is_blocked)),
            _figures,
        ),
        Stop(
            "Expired, and the job fails",
            "Checkpoint {checkpoint} was not acknowledged within {timeout} steps: it expired. "
            "The job tolerates {tolerable} failed checkpoints, so it fails over, only to meet "
            "the same blocked subpartitions after its next restart. FLINK-39018 lets a priority "
            "event pass a blocked subpartition, but only to a local reader; these channels are "
            "remote, and a reader holding credit still misses the barrier (FLINK-40519). "
            "Explore with blocked_priority=fixed, or with master and "
            "slots_per_tm={whole_job_slots} (the whole job in one TaskManager, every channel "
            "local): the checkpoint completes.",
            ended,
            places_where(is_blocked),
            _figures,
        ),
    ),
)
