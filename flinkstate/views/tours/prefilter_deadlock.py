"""Tour: FLINK-39519, the channel-state reader that waits for a buffer it holds itself."""

from __future__ import annotations

from collections.abc import Mapping

from flinkstate.memory_segment import LENGTH_PREFIX_BYTES
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event
from flinkstate.views.tours.base import (
    Stop,
    Tour,
    actor_place,
    ended,
    is_recovered,
    is_waiting,
    items_where,
    on,
    places_of_kind,
    places_where,
    task_of,
    together,
)


def _reader_figures(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    """The reader's buffers against its channel's: what one kept record needs (the pre-filter
    buffer and the post-filter ones its serialized bytes fill), what the channel has, and what
    the reader holds now; from the restored records and the network's segment size."""
    task = world.tasks[task_of(event, world)] if event is not None else None
    reader = None if task is None else world.readers.get(task.name)
    gate = None if task is None or not task.gates else task.gates[0]
    exclusive = 0 if gate is None else gate.exclusive_per_channel
    floating = 0 if gate is None else gate.pool.size
    restored = [] if world.restore is None else list(world.restore.records.values())
    longest = max((r.serialized_length for r in restored if r.is_record), default=0)
    segment = world.config.segment_size
    posts = -(-longest // segment)  # post-filter buffers one record fills
    held = 0 if reader is None else len(reader.posts) + (reader.pre is not None)
    return {
        "step": world.step,
        "task": "" if task is None else task_of(event, world),
        "posts": 0 if reader is None else len(reader.posts),
        "held": held,
        "exclusive": exclusive,
        "floating": floating,
        "available": exclusive + floating,
        "record_size": longest - LENGTH_PREFIX_BYTES,
        "length_bytes": LENGTH_PREFIX_BYTES,
        "segment": segment,
        "per_record": posts,
        "needed": posts + 1,
        "generation": world.effective_generation.value,
    }


PREFILTER_DEADLOCK = Tour(
    name="prefilter-deadlock",
    title="The pre-filter deadlock (FLINK-39519)",
    scenario="prefilter-deadlock",
    introduction=(
        "With checkpointing during recovery on, Flink 2.3's channel-state reader filters "
        "recovered records on its own thread. It reads each buffer of old input state into a "
        "pre-filter buffer and rewrites the records it keeps into post-filter buffers, all taken "
        "from the same recovered channel, and lets go of none until the source buffer is done."
    ),
    stops=(
        Stop(
            "Filtering on the reader",
            "Step {step}. The restart runs the {generation} generation of the recovery code: each "
            "counter's **channel-state reader** (beside its gate) will filter before anything "
            "reaches the channels.",
            None,
            places_of_kind("channel-state-reader"),
            _reader_figures,
        ),
        Stop(
            "A pre-filter buffer",
            "The reader of {task} took a **pre-filter buffer** (hatched, first in the row right "
            "of the reader) from its recovered channel and read a chunk of old input state into "
            "it.",
            on(ActionKind.FILTER, ActorKind.READER),
            together(actor_place, items_where(is_recovered)),
            _reader_figures,
        ),
        Stop(
            "Post-filter buffers pile up",
            "The records kept are {record_size:,} bytes each, {length_bytes} more with their "
            "length: rewriting one fills {per_record} **post-filter buffers** of {segment:,} "
            "bytes, also from the channel. The reader of {task} holds {posts} of them now, "
            "besides the pre-filter one.",
            on(ActionKind.REWRITE, ActorKind.READER),
            together(actor_place, items_where(is_recovered)),
            _reader_figures,
        ),
        Stop(
            "Stuck",
            "The channel has {exclusive} exclusive buffers and the gate {floating} floating "
            "ones, {available} in all. The reader needs {needed}, the pre-filter buffer and "
            "{per_record} post-filter ones, and holds {held} of the {available}. The only "
            "thread that "
            "could give one back is the reader itself, waiting: the run is **deadlocked**, "
            "the reader waiting on itself, a waits-for cycle (in the notebook the graph below "
            "the canvas draws it; on a page the places on it are tagged *cycle* and the "
            "caption names it). "
            "Flink's fixes take the pre-filter buffer from the heap instead (the heap fallback "
            "of 2.3, or one reusable heap segment since FLINK-39519): explore and set "
            "prefilter_source.",
            ended,
            places_where(is_waiting),
            _reader_figures,
        ),
    ),
)
