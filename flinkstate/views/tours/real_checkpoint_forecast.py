"""Tour: what the restore of a checkpoint Flink wrote will do, stepped over its forecast (a real
job's in-flight data fetched, filtered, spilled and drained into the restored subtasks).

The tour goes over the forecast notebook 7 makes: ``keyed-hash-p2-p4`` of
``data/real-checkpoints``, restored at parallelism 3 by Flink master's recovery. Every figure is
read from the restored world, so the same stops say the right numbers for any checkpoint a
:class:`~flinkstate.views.tours.runs.ForecastRun` opens.
"""

from __future__ import annotations

from collections.abc import Mapping

from flinkstate.flinkcheckpoint import real_checkpoint
from flinkstate.flinkcheckpoint.export import ExchangeSpec
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.lab.forecast import Forecast, prepare_forecast
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.checkpoint.channel.happenings import PrefilteredSpilled
from flinkstate.runtime.partition.record_writer import IN_FLIGHT
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event
from flinkstate.views.tours.base import (
    Stop,
    Tour,
    actor_place,
    all_running,
    ended,
    is_recovered,
    items_where,
    on,
    places_of_kind,
    task_of,
    together,
)
from flinkstate.views.tours.runs import ForecastRun

#: the checkpoint notebook 7 opens, and what its job does not record: the exchange's partitioner
#: and key, and how the records are encoded
CHECKPOINT = "keyed-hash-p2-p4"
EXCHANGE = "to-record->slow-counter"
KEY = "f0%1000"
VALUE = "Tuple2<Long,String>"
RESTORED_AT = 3


def notebook_forecast() -> Forecast:
    """Notebook 7's forecast at step 0: the checkpoint restored at ``RESTORED_AT`` by Flink
    master's recovery (v2), whose spill files and drainer the stops show."""
    return prepare_forecast(
        real_checkpoint(CHECKPOINT),
        RESTORED_AT,
        exchanges={EXCHANGE: ExchangeSpec(Partitioner.HASH, key=key_function(KEY))},
        value=value_decoder(VALUE),
        generation="v2",
    )


def _figures(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    """The restore's figures at this step, read from the world (the forecast's own)."""
    assignment = world.restore
    assert assignment is not None, "a forecast's world is a restored one"
    recovered = world.recovered_records
    consumed = sum(
        1
        for (record, _), state in world.deliveries.items()
        if record in recovered and state != IN_FLIGHT
    )
    rescaled = [e for e in assignment.exchanges.values() if e.carries_channel_state]
    old, new = rescaled[0].downstream_parallelism if rescaled else (0, 0)
    consumers = sorted({s.operator for s in assignment.subtasks.values() if s.input_state})
    spilled = next(
        (h for h in (event.happenings if event else ()) if isinstance(h, PrefilteredSpilled)),
        None,
    )
    return {
        "checkpoint": assignment.checkpoint.id,
        "consumer": ", ".join(consumers),
        "old": old,
        "new": new,
        "bytes": assignment.recovered_bytes,
        "records": len(recovered),
        "readers": len(world.readers),
        "task": task_of(event, world),
        "filtered": len(world.filtered),
        "consumed": consumed,
        "spilled": world.spill.bytes_written,
        "kept": 0 if spilled is None else spilled.kept,
        "dropped": 0 if spilled is None else spilled.dropped,
        "old_subtask": -1 if spilled is None else spilled.old_subtask,
        "running": sum(1 for t in world.tasks.values() if t.phase is TaskPhase.RUNNING),
        "tasks": len(world.tasks),
        "heap_peak": world.heap_peak,
    }


def _prefiltered(event: Event, world: NetworkWorld) -> bool:
    """The reader filtered records out on the heap before spilling the rest."""
    return any(isinstance(h, PrefilteredSpilled) and h.dropped for h in event.happenings)


def own_drainer(event: Event | None, world: NetworkWorld, scene: Mapping[str, object]) -> list[str]:
    """The drainer of the step's task."""
    task = task_of(event, world)
    drainer = world.drainers.get(world.tasks[task].name) if task in world.tasks else None
    return [] if drainer is None else [drainer.name]


REAL_CHECKPOINT_FORECAST = Tour(
    name="real-checkpoint-forecast",
    title="What the restore of a real checkpoint will do (its forecast, step by step)",
    scenario=CHECKPOINT,
    introduction=(
        "A checkpoint Flink wrote, restored by the simulator at a new parallelism with Flink "
        "master's recovery: its in-flight data is fetched, filtered, spilled to disk and "
        "drained into the new subtasks while they already run."
    ),
    focus=on(ActionKind.DRAIN, ActorKind.DRAINER),
    run=ForecastRun(f"{CHECKPOINT} at parallelism {RESTORED_AT}", notebook_forecast),
    stops=(
        Stop(
            "The checkpoint, restored",
            "Checkpoint {checkpoint} holds {bytes:,} bytes of in-flight data, {records:,} "
            "records, for `{consumer}`, which ran as {old} subtasks. Restored as {new}, each "
            "new subtask has a **channel-state reader** (ringed) that will fetch the old "
            "subtasks' state its key groups overlap.",
            None,
            places_of_kind("channel-state-reader"),
            _figures,
        ),
        Stop(
            "Filtered before the spill",
            "The reader of {task} fetched a chunk of old subtask {old_subtask}'s state into its "
            "heap pre-filter segment: {kept} record(s) kept for its spill file, {dropped} "
            "dropped because another new subtask owns their key group. The tour follows "
            "{task} from here: the first new subtask to drain.",
            on(ActionKind.SPILL, ActorKind.READER, _prefiltered),
            actor_place,
            _figures,
        ),
        Stop(
            "Running while its channels recover",
            "{task} installed its drainer and is RUNNING, {running} of {tasks} tasks so far. "
            "Its channels are still in recovery: no credit until the drainer has filled them.",
            on(ActionKind.INSTALL_DRAINER, ActorKind.TASK),
            together(actor_place, own_drainer),
            _figures,
        ),
        Stop(
            "Drained into a channel",
            "The drainer of {task} copied spilled bytes into a channel in recovery (hatched): "
            "the task reads them as it reads live data.",
            on(ActionKind.DRAIN, ActorKind.DRAINER),
            together(actor_place, items_where(is_recovered)),
            _figures,
        ),
        Stop(
            "Every task running",
            "All {tasks} tasks are RUNNING; {consumed:,} of {records:,} recovered records "
            "consumed, the rest still in spill files and channels.",
            all_running,
            places_of_kind("task"),
            _figures,
            whole_job=True,
        ),
        Stop(
            "The recovered data consumed",
            "The restore is done: {consumed:,} of {records:,} recovered records processed, "
            "each by the new subtask that owns its key; {filtered} copies dropped by subtasks "
            "that read them only to filter them out. The drainers (ringed) are done: "
            "{spilled:,} bytes went through spill files, the heap peaked at {heap_peak:,}.",
            ended,
            places_of_kind("drainer"),
            _figures,
            whole_job=True,
        ),
    ),
)
