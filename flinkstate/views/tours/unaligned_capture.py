"""Tour: what an unaligned checkpoint captures, from its trigger to its completion."""

from __future__ import annotations

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.views.tours.base import (
    Stop,
    Tour,
    actor_place,
    barrier_sent,
    checkpoint_completed,
    checkpoint_figures,
    completed_figures,
    is_barrier,
    is_persisted,
    is_request,
    items_where,
    on,
    places_of_kind,
    task_of,
    together,
)

UNALIGNED_CAPTURE = Tour(
    name="unaligned-capture",
    title="What an unaligned checkpoint captures",
    scenario="baseline-recovery",
    phase="job",
    introduction=(
        "The keyed job ({source} sources, keyBy, {counter} slow counters, {sink} sinks) is "
        "back-pressured: buffers pile up in the sources' subpartitions. Follow its first "
        "checkpoint from its trigger to its completion and see which buffers it persists."
    ),
    stops=(
        Stop(
            "Back-pressure",
            "Step {step}: the counters are slow, so the sources' **subpartitions** (the queues "
            "on the left, head on the right) fill with buffers. Each buffer shows its records, "
            "coloured by the source subtask that read them. This is the data an aligned barrier "
            "would have to wait behind.",
            on(ActionKind.TRIGGER, ActorKind.COORDINATOR),
            places_of_kind("subpartition"),
            lambda e, w: {"step": w.step},
        ),
        Stop(
            "The barrier overtakes",
            "{task} took its snapshot and put checkpoint {checkpoint}'s **barrier** (the black "
            "bar) at the **head** of each of its subpartitions: it overtook the queued buffers. "
            "Those buffers now have the checkpoint's purple outline, and the channel-state "
            "writer of their TaskManager (bottom band) holds {output_requests} write requests "
            "for them: they will be **output state** of the checkpoint.",
            on(ActionKind.CHECKPOINT, ActorKind.TASK),
            together(items_where(is_barrier), items_where(is_persisted)),
            checkpoint_figures,
        ),
        Stop(
            "Priority over the wire",
            "netty sent the barrier ahead of everything else: a barrier is an event, it needs "
            "no credit, and as a priority event it goes to the head of the channel's received "
            "queue, ahead of buffers that arrived before it.",
            on(ActionKind.SEND, ActorKind.NETTY, barrier_sent),
            together(actor_place, items_where(is_barrier)),
        ),
        Stop(
            "The first barrier at a counter",
            "{task} took its first barrier of checkpoint {checkpoint}. It does not wait for the "
            "others: it starts its unaligned snapshot at once and persists the in-flight "
            "**input**, the buffers still ahead of the barrier in its other channels "
            "({input_requests} requests queued at the writers now). Its own outputs to the sinks "
            "are a forward exchange, which Flink checkpoints aligned: there the barrier goes to "
            "the tail.",
            on(
                ActionKind.BARRIER,
                ActorKind.TASK,
                lambda e, w: (
                    sum(
                        1
                        for g in w.tasks[task_of(e, w)].gates
                        for c in g.channels
                        if w.checkpoints.pending is not None
                        and c.persister.barrier_seen == w.checkpoints.pending.id
                    )
                    == 1
                ),
            ),
            together(actor_place, items_where(is_request)),
            checkpoint_figures,
        ),
        Stop(
            "Complete",
            "Every task acknowledged: checkpoint {checkpoint} is complete, {steps} steps after "
            "its trigger. It persisted {in_flight:,} bytes of in-flight data: {output_buffers} "
            "buffers of output state and {input_buffers} of input state, {records} records in "
            "all. The restart will put exactly these back.",
            checkpoint_completed,
            items_where(is_persisted),
            completed_figures,
        ),
    ),
)
