"""One plain sentence for every step: what happened, where, how much, and which Flink class
does it.

A caption is made from the step's event, the world after it, and the scenes before and after
(:mod:`flinkstate.views.scene`): the scenes say which buffers moved where, which barrier went
to the head of which queue and which write requests the step handed to a channel-state writer,
so a caption counts what a learner sees move on the canvas. Every kind of action the world
has (``ActionKind``) is in :data:`CAPTIONS`, by the actors the world's handlers give it to (a
test holds the two tables to each other); another runs every scenario and requires a caption
for each kind that occurs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.buffer.records import MAX_WATERMARK, MIN_WATERMARK, StreamElementKind
from flinkstate.runtime.checkpoint.coordinator import failed_region_down
from flinkstate.runtime.jobgraph import OperatorKind
from flinkstate.runtime.options import FailedDeliveryRecycle, SpillCleanup, TerminalTaskRule
from flinkstate.runtime.watermark.watermarks import watermark_text
from flinkstate.runtime.world.actors import ActorKind, ActorRef
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event

Scene = Mapping[str, Any]


@dataclass(frozen=True)
class _Step:
    """What a caption reads: the event, the world after it, the actor, and the items that
    appeared, vanished or moved between the two scenes."""

    event: Event
    world: NetworkWorld
    actor: ActorRef
    before: Mapping[str, Mapping[str, Any]]
    after: Mapping[str, Mapping[str, Any]]

    @property
    def target(self) -> str:
        return self.event.action.target

    def added(self, kind: str | None = None) -> list[Mapping[str, Any]]:
        return [
            i
            for key, i in self.after.items()
            if key not in self.before and (kind is None or i["kind"] == kind)
        ]

    def removed(self, kind: str | None = None) -> list[Mapping[str, Any]]:
        return [
            i
            for key, i in self.before.items()
            if key not in self.after and (kind is None or i["kind"] == kind)
        ]

    def moved(self) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
        """(before, after) of every item that changed place."""
        return [
            (i, self.after[key])
            for key, i in self.before.items()
            if key in self.after and self.after[key]["place"] != i["place"]
        ]

    @property
    def task(self) -> str:
        return self.actor.task


def _items(scene: Scene | None) -> dict[str, Mapping[str, Any]]:
    return {} if scene is None else {item["id"]: item for item in scene["items"]}


def caption(event: Event, world: NetworkWorld, before: Scene | None, after: Scene) -> str:
    """The sentence for ``event``, the step that turned scene ``before`` into ``after``."""
    actor = world.actor(event.action.actor)
    step = _Step(event, world, actor, _items(before), _items(after))
    kind = event.action.kind
    try:
        explain = CAPTIONS[actor.kind, ActionKind(kind)]
    except (ValueError, KeyError):  # a kind the world does not have, or not of this actor
        raise KeyError(f"no caption for {actor.kind.value} action {str(kind)!r}") from None
    return explain(step)


# -- helpers ----------------------------------------------------------------------------------


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _records(items: list[Mapping[str, Any]]) -> int:
    return len({p[0] for i in items for p in i.get("pieces", ())})


def _bytes(items: list[Mapping[str, Any]]) -> int:
    return sum(int(i.get("used", i.get("bytes", 0))) for i in items)


def _buffers_text(items: list[Mapping[str, Any]]) -> str:
    data = [i for i in items if i["kind"] == "buffer"]
    return f"{_plural(len(data), 'buffer')} ({_plural(_records(data), 'record')})"


# -- tasks ------------------------------------------------------------------------------------


def _element(world: NetworkWorld, element_id: int) -> str:
    """A stream element by what it is: record 12, watermark 37, watermark status IDLE."""
    element = world.records[element_id]
    if element.is_record:
        return f"record {element_id}"
    if element.kind is StreamElementKind.WATERMARK:
        return f"watermark {watermark_text(element.timestamp)}"
    return f"watermark status {'IDLE' if element.idle else 'ACTIVE'}"


def _emit(s: _Step) -> str:
    # every emit step makes one element at least, and its last one is the newest of the world
    last = s.world.records[s.world.next_record - 1]
    if last.is_record:
        return _read_record(s, last.id) + "."
    if last.kind is StreamElementKind.WATERMARK_STATUS:
        return (
            f"{s.task} has no split to read: its watermark strategy declares idleness, so it "
            "sends watermark status IDLE to every subpartition and the tasks downstream stop "
            "waiting for its watermarks (WatermarkToDataOutput.markIdle)."
        )
    if last.timestamp == MAX_WATERMARK:
        return (
            f"{s.task} has emitted every record of its splits: it sends watermark MAX to every "
            "subpartition, the end of event time "
            "(SourceOperatorStreamTask.advanceToEndOfEventTime)."
        )
    return (
        _read_record(s, last.id - 1)
        + f"; its watermark is now {watermark_text(last.timestamp)} (its splits' largest "
        "timestamps minus the bound minus 1), which it sends after the record to every "
        "subpartition (WatermarkToDataOutput)."
    )


def _read_record(s: _Step, record_id: int) -> str:
    record = s.world.records[record_id]
    return (
        f"{s.task} read record {record.id} (key {record.key}, {record.serialized_length} bytes "
        "with its length prefix) from its split and handed it to the record writer "
        "(SourceStreamTask, RecordWriter)"
    )


def _request_buffer(s: _Step) -> str:
    sub = s.world.subpartitions[s.target]
    return (
        f"{s.task} took a buffer from its result partition's pool to write records for "
        f"{sub.consumer} (LocalBufferPool.requestBufferBuilder); a full pool would block it "
        "here: that is back-pressure."
    )


def _write(s: _Step) -> str:
    sub = s.world.subpartitions[s.target]
    buffer = sub.builder if sub.builder is not None else sub.queue[-1]
    fragment = buffer.fragments[-1]
    whole = fragment.start == 0 and fragment.length == fragment.total
    into = f"into the buffer for {sub.consumer}"
    element = _element(s.world, fragment.record)
    if whole:
        what = f"{s.task} wrote {element} whole ({fragment.length} bytes) {into}"
    elif fragment.start + fragment.length == fragment.total:
        what = (
            f"{s.task} wrote the last {fragment.length} bytes of {element} {into}: "
            f"the {'record' if s.world.records[fragment.record].is_record else 'element'} began "
            "in an earlier buffer (it spans buffers)"
        )
    else:
        what = (
            f"{s.task} wrote {fragment.length} of {element}'s {fragment.total} "
            f"bytes {into}, which is full: the rest goes into the next buffer"
        )
    done = "; the finished buffer joined the subpartition's queue" if sub.builder is None else ""
    return f"{what}{done} (RecordWriter, BufferBuilder)."


def _compute(s: _Step) -> str:
    task = s.world.tasks[s.task]
    left = f"{task.busy} more step(s)" if task.busy else "done"
    return f"{s.task} spends a step in its operator's processing of the last record ({left})."


def _poll(s: _Step) -> str:
    task = s.world.tasks[s.task]
    channel = s.world.channels[s.target]
    taken = [j for _, j in s.moved() if j["lane"] == "deserializer"] + s.removed()
    events = [i for i in taken if i["kind"] in ("event", "barrier")]
    if events:
        event = events[0]
        meaning = {
            "end of partition": "the channel has ended (EndOfPartitionEvent)",
            "descriptor": (
                "the buffers behind it come from old subtask "
                f"{event.get('descriptor', ['?'])[0]}'s old channel "
                f"{event.get('descriptor', ['?', '?'])[1]}: the deserializer switches to that "
                "virtual channel (SubtaskConnectionDescriptor)"
            ),
            "end of input state": (
                "the recovered input state of this channel is through (EndOfInputChannelStateEvent)"
            ),
            "end of output state": (
                "the upstream's recovered output state is through; the subpartition stays "
                "blocked until every channel of the gate has it (EndOfOutputChannelStateEvent)"
            ),
        }.get(str(event.get("label")), str(event.get("event")))
        return f"{s.task} took an event from {channel.name}: {meaning}."
    data = [i for i in taken if i["kind"] == "buffer"]
    ready = len(task.ready)
    partial = (
        channel.partial
        if channel.demultiplexer.selected is None
        else channel.demultiplexer.partials.get(channel.demultiplexer.selected)
    )
    rest = (
        f"; record {partial[0]} continues in the next buffer ({partial[1]} bytes so far)"
        if partial is not None
        else ""
    )
    source = "recovered " if data and data[0].get("recovered") else ""
    return (
        f"{s.task} took a {source}buffer ({_bytes(data)} bytes) from {channel.name}; the "
        f"deserializer has {_plural(ready, 'complete record')} to process{rest} "
        "(SpillingAdaptiveSpanningRecordDeserializer)."
    )


def _process(s: _Step) -> str:
    task = s.world.tasks[s.task]
    record_id = s.event.delivered[0] if s.event.delivered else None
    if record_id is None:
        return f"{s.task} processed a record."
    record = s.world.records[record_id]
    if not record.is_record:
        mark = watermark_text(s.world.event_time.watermark.get(task.name, MIN_WATERMARK))
        where = "its input" if task.current is None else task.current.name
        return (
            f"{s.task} read {_element(s.world, record_id)} from {where}: the input's valve keeps "
            "each channel's last one and passes on the minimum over the active channels; "
            f"{s.task}'s watermark is {mark} (StatusWatermarkValve)."
        )
    steps = [f"{s.task} processed record {record.id} (key {record.key})"]
    if task.key_groups is not None:
        steps.append(f"updated the keyed state of key {record.key}")
    if task.partitions:
        steps.append("handed it to its output")
    elif s.world.graph.operator(task.operator).kind is OperatorKind.SINK:
        steps.append("kept it: a sink")
    else:
        # a real job's operator whose output carried no in-flight data (a chained sink, say)
        steps.append("passed its output on to operators the model leaves out")
    return ", ".join(steps) + " (StreamOneInputProcessor, the operator's processElement)."


def _finish(s: _Step) -> str:
    return (
        f"{s.task} reached the end of its input: it flushed its buffers and put an "
        "EndOfPartitionEvent into every subpartition."
    )


def _fail(s: _Step) -> str:
    task = s.world.tasks[s.task]
    failover = s.world.failover
    others = [str(t) for t in failover.to_restart if t.name != s.task] if failover else []
    cancel = (
        f"the other subtasks of its pipelined region ({', '.join(others)}) are CANCELING"
        if others
        else "it is its pipelined region on its own"
    )
    suspended = [
        f for f in s.world.checkpoints.failures if f.step == s.event.step + 1 and f.checkpoint
    ]
    aborted = (
        f", aborting checkpoint {suspended[0].checkpoint} (CHECKPOINT_COORDINATOR_SUSPEND, not "
        "counted)"
        if suspended
        else ""
    )
    return (
        f"{s.task} threw after {task.handled} record(s): it is FAILED. The scheduler fails "
        f"over: {cancel}, and the periodic checkpoint scheduler stops{aborted} "
        "(RestartPipelinedRegionFailoverStrategy, "
        "ExecutionTrackingCheckpointCoordinatorDeActivator)."
    )


def _cancel(s: _Step) -> str:
    down = (
        "; every subtask of the region has now stopped, and the scheduler waits for its "
        "restart delay"
        if failed_region_down(s.world)
        else ""
    )
    return f"{s.task} stopped for the failover: CANCELED{down} (Task.cancelExecution)."


def _source_checkpoint(s: _Step) -> str:
    task = s.world.tasks[s.task]
    requests = s.added("request")
    overtaken = [
        s.before[str(r["from"])] for r in requests if r.get("from") and r["from"] in s.before
    ]
    barriers = s.added("barrier")
    checkpoint = barriers[0]["checkpoint"] if barriers else "?"
    subs = sum(len(p.subpartitions) for p in task.partitions)
    if barriers and barriers[0].get("priority"):
        persisted = (
            f"; the {_buffers_text(overtaken)} it overtook are now output state of checkpoint "
            f"{checkpoint}, handed to the channel-state writer"
            if overtaken
            else "; the queues were empty, so it overtook nothing"
        )
        where = "at the head of"
        cls = "PipelinedSubpartition.addPriorityEvent, ChannelStateWriter.addOutputData"
    else:
        persisted = ": an aligned barrier waits behind the queued buffers"
        where = "at the tail of"
        cls = "PipelinedSubpartition.add"
    return (
        f"{s.task} took its snapshot for checkpoint {checkpoint} and put the barrier {where} "
        f"its {_plural(subs, 'subpartition')}{persisted} ({cls})."
    )


def _barrier(s: _Step) -> str:
    task = s.world.tasks[s.task]
    channel = s.world.channels[s.target]
    checkpoint = s.world.checkpoints.pending
    number = channel.persister.barrier_seen
    channels = [c for gate in task.gates for c in gate.channels]
    seen = sum(1 for c in channels if c.persister.barrier_seen == number)
    requests = s.added("request")
    inputs = [r for r in requests if r["side"] == "input"]
    outputs = [r for r in requests if r["side"] == "output"]
    if checkpoint is None or checkpoint.id != number:
        if s.world.checkpoints.completed and s.world.checkpoints.completed[-1].id == number:
            return (
                f"{s.task} took checkpoint {number}'s last barrier from {channel.name}; every "
                f"task has acknowledged: checkpoint {number} is complete."
            )
        return f"{s.task} dropped a barrier of checkpoint that is no longer running."
    parts = [
        f"{s.task} took checkpoint {number}'s barrier from {channel.name} "
        f"({seen} of {len(channels)} channels)"
    ]
    if seen == 1 and s.before.get(_barrier_id(s)) is not None and _priority(s):
        unaligned_out = any(
            s.world.graph.checkpoints_unaligned(p.exchange) for p in task.partitions
        )
        if not task.partitions:
            out = "it has no outputs"
        elif unaligned_out:
            out = (
                f"its own barrier goes to the head of its outputs, overtaking "
                f"{_plural(len(outputs), 'buffer')} that become output state"
            )
        else:
            out = (
                "its own barrier goes to the tail of its outputs (a pointwise exchange is "
                "checkpointed aligned)"
            )
        parts.append(
            "its first: it starts its unaligned snapshot and persists the in-flight input "
            f"ahead of the barrier in its other channels ({_plural(len(inputs), 'piece')}, "
            f"{_plural(sum(int(r['bytes']) for r in inputs), 'byte')}); {out} "
            "(SingleCheckpointBarrierHandler, ChannelStateWriter)"
        )
    elif channel.blocked:
        parts.append("an aligned barrier: the channel is blocked until every barrier is in")
    if seen == len(channels):
        done = task.name in checkpoint.acknowledged
        parts.append(
            "it has every barrier and has acknowledged"
            if done
            else "it has every barrier and acknowledges once its writer has written all it "
            "was given"
        )
    return "; ".join(parts) + "."


def _barrier_id(s: _Step) -> str:
    """The id of the barrier the task took: the head of its channel before the step."""
    heads = [
        i
        for i in s.before.values()
        if i["kind"] == "barrier" and i["of"] in (s.target, _subpartition_of(s))
    ]
    return str(min(heads, key=lambda i: i["slot"])["id"]) if heads else ""


def _subpartition_of(s: _Step) -> str:
    return s.world.channels[s.target].subpartition


def _priority(s: _Step) -> bool:
    barrier = s.before.get(_barrier_id(s))
    return bool(barrier is not None and barrier.get("priority"))


def _recover_output(s: _Step) -> str:
    added = s.added("buffer")
    subs = {i["of"] for i in added}
    return (
        f"{s.task} read a chunk of its output state ({_bytes(added[:1])} bytes) into "
        f"{_plural(len(subs), 'subpartition')} behind a descriptor naming the old subtask "
        "(ResultSubpartitionRecoveredStateHandler)."
        if subs
        else f"{s.task} read a chunk of its output state."
    )


def _finish_output(s: _Step) -> str:
    return (
        f"{s.task} has restored all its output state and put an "
        "EndOfOutputChannelStateEvent into every subpartition; consumers must take it before "
        "any live data (StreamTask.restoreStateAndGates)."
    )


def _convert(s: _Step) -> str:
    gate = s.world.gates[s.target]
    if not gate.converted:  # refused: the task failed
        refused = [v for v in s.world.violations if v.step == s.event.step]
        why = f": {refused[0].message}" if refused else ""
        return (
            f"{s.task} tried to convert gate {gate.name} before its recovered channels were "
            f"done{why}. {_sentence(s.world.checkpoints.job_failed)}"
        )
    migrated = sum(1 for c in gate.channels if c.recoverable.in_recovery)
    extra = (
        f"; {_plural(migrated, 'channel')} still hold recovered buffers, which migrate into "
        "the physical channel (Flink 2.3)"
        if migrated
        else ""
    )
    return (
        f"{s.task} converted gate {gate.name}: its recovered channels became local and remote "
        f"channels, which request their subpartitions{extra} "
        "(SingleInputGate.convertRecoveredInputChannels, requestPartitions)."
    )


def _request_partitions(s: _Step) -> str:
    task = s.world.tasks[s.task]
    if s.world.checkpoints.job_failed:
        return (
            f"{s.task}'s request-partitions mail failed before converting a gate (a test "
            f"hook), between its fetch and its drain: {_spill_files_on_abort(s)}. "
            f"{_sentence(s.world.checkpoints.job_failed)}"
        )
    recovering = sum(1 for g in task.gates for c in g.channels if c.recoverable.in_recovery)
    return (
        f"{s.task} converted every gate in one mail: {_plural(recovering, 'channel')} start "
        "in recovery, with no credit until the drainer has filled them "
        "(requestPartitions with needsRecovery)."
    )


def _install_drainer(s: _Step) -> str:
    if s.world.checkpoints.job_failed:
        return (
            f"{s.task}'s mail installing its drainer failed (a test hook), so no drain was "
            f"submitted: {_spill_files_on_abort(s)}. {_sentence(s.world.checkpoints.job_failed)}"
        )
    return (
        f"{s.task} installed its drainer as the recovery checkpoint trigger: restore is over "
        "and the task is RUNNING while its channels are still being drained "
        "(FetchedChannelStateDrainer)."
    )


# -- transport, writers, coordinator ----------------------------------------------------------


def _send(s: _Step) -> str:
    channel = s.world.channels[s.actor.channel]
    travelled = [j for _, j in s.moved() if j["of"] == channel.name]
    if travelled and travelled[0]["kind"] != "buffer":
        item = travelled[0]
        ahead = " at the head, ahead of the received buffers" if item.get("priority") else ""
        return (
            f"netty sent {item['label']} to {channel.name}{ahead}: events need no credit "
            "(PartitionRequestQueue, CreditBasedPartitionRequestClientHandler)."
        )
    data = travelled[:1]
    persisted = (
        "; the channel persists it, since its checkpoint's barrier has not arrived yet"
        if s.added("request")
        else ""
    )
    return (
        f"netty sent a buffer ({_bytes(data)} bytes, {_plural(_records(data), 'record')}) to "
        f"{channel.name}, using one credit: {channel.buffers.available} left, backlog "
        f"{channel.buffers.backlog_seen}{persisted} (CreditBasedSequenceNumberingViewReader)."
    )


def _request_floating(s: _Step) -> str:
    channel = s.world.channels[s.actor.channel]
    gate = s.world.gates[channel.gate]
    return (
        f"{channel.name} took a floating buffer from its gate's pool: it held fewer buffers "
        f"than its announced backlog ({channel.buffers.backlog_seen}) plus its "
        f"{gate.exclusive_per_channel} exclusive ones; the new credit goes to the sender "
        "(BufferManager.requestFloatingBuffers)."
    )


def _write_channel_state(s: _Step) -> str:
    written = s.removed("request")
    writer = s.world.writers[s.actor.writer]
    if not written:
        return f"{writer.name} wrote a piece of channel state."
    request = written[0]
    return (
        f"{writer.name} wrote {request['bytes']} bytes of {request['side']} state of "
        f"{request['of']} for checkpoint {request['checkpoint']}; "
        f"{_plural(len(writer.requests), 'request')} left in its queue "
        "(ChannelStateWriteRequestExecutorImpl)."
    )


def _trigger(s: _Step) -> str:
    progress = s.world.checkpoints.pending
    if progress is None:
        failure = s.world.checkpoints.failures[-1] if s.world.checkpoints.failures else None
        why = f": {failure.reason.name}" if failure is not None else ""
        return f"The checkpoint coordinator triggered a checkpoint, which was declined{why}."
    kind = "unaligned" if progress.unaligned else "aligned"
    return (
        f"The checkpoint coordinator triggered {kind} checkpoint {progress.id}: each source "
        "takes its snapshot between two records (CheckpointCoordinator)."
    )


def _expire(s: _Step) -> str:
    number = s.world.checkpoints.expired[-1] if s.world.checkpoints.expired else "?"
    failed = (
        " That is one failure more than execution.checkpointing.tolerable-failed-checkpoints "
        f"({s.world.options.tolerable_failed_checkpoints}) allows: the job fails over and would "
        "restart from its last completed checkpoint."
        if s.world.checkpoints.job_failed
        else ""
    )
    return (
        f"Checkpoint {number} expired before every task acknowledged it: the coordinator "
        f"aborts it and the writers drop its requests (CheckpointFailureManager).{failed}"
    )


def _manual_checkpoint(s: _Step) -> str:
    asked = (
        "A checkpoint triggered by hand (REST POST /jobs/:jobid/checkpoints, which the stopped "
        "periodic scheduler does not hold back) reached the plan calculator while "
        f"{_failed_region(s)} is down"
    )
    progress = s.world.checkpoints.pending
    if progress is not None and progress.manual:
        waited = sorted(s.world.task_named(name).key for name in progress.waiting_for or ())
        finished = ", ".join(progress.finished) or "no subtask"
        before = (
            ": before FLINK-40482 the plan counts a FAILED or CANCELED subtask as finished"
            if s.world.options.terminal_tasks is TerminalTaskRule.AS_FINISHED
            else ""
        )
        return (
            f"{asked}: it planned checkpoint {progress.id}, waiting for {', '.join(waited)} "
            f"and counting {finished} as finished{before} (DefaultCheckpointPlanCalculator)."
        )
    failures = s.world.checkpoints.failures
    failure = failures[-1] if failures else None
    if failure is not None and failure.step == s.event.step + 1:
        when = "before it got an id" if not failure.checkpoint else "after it got an id"
        return (
            f"{asked}: it failed {when} ({failure.reason.name}, not counted): {failure.detail} "
            "(DefaultCheckpointPlanCalculator, PendingCheckpoint)."
        )
    return f"{asked}; {s.event.note}."


def _failed_region(s: _Step) -> str:
    failover = s.world.failover
    if failover is None:
        return "a failed region"
    return f"the region of {failover.failed} ({', '.join(str(t) for t in failover.to_restart)})"


def _restart(s: _Step) -> str:
    failover = s.world.failover
    waited = (
        "the restart delay has passed"
        if failover is not None and failover.restart_due(s.event.step + 1)
        else "nothing else could happen before the restart delay ran out (the model's clock "
        "moves only with actions)"
    )
    return (
        f"The scheduler restarts {_failed_region(s)}: every cancel has completed and {waited}. "
        "It aborts any pending checkpoint (JOB_FAILOVER_REGION) and restores the region from "
        "the last completed checkpoint; the model ends the run here "
        "(DefaultScheduler.restartTasks, SchedulerBase.restoreState)."
    )


# -- recovery threads -------------------------------------------------------------------------


def _recover_input(s: _Step) -> str:
    added = [i for i in s.added("buffer") if i.get("recovered")]
    place = added[0]["of"] if added else "a recovered channel"
    descriptors = [i for i in s.added("event") if i.get("descriptor")]
    origin = (
        f" of old subtask {descriptors[0]['descriptor'][0]}, old channel "
        f"{descriptors[0]['descriptor'][1]}"
        if descriptors
        else ""
    )
    dropped = {p[0] for i in added for p in i["pieces"] if p[6] == "dropped"}
    filtered = (
        f"; {_plural(len(dropped), 'record')} in it "
        f"{'belongs' if len(dropped) == 1 else 'belong'} to another subtask now and will be "
        "filtered out (struck through)"
        if dropped
        else ""
    )
    return (
        f"The channel-state reader of {s.task} read a chunk of input state{origin} "
        f"({_bytes(added)} bytes) into {place}{filtered} "
        "(SequentialChannelStateReaderImpl, RecoveredInputChannel)."
    )


def _request_exclusive(s: _Step) -> str:
    channel = s.world.channels[s.target]
    return (
        f"The channel-state reader of {s.task} took "
        f"{_plural(len(channel.recovery.segments), 'exclusive buffer')} from the global pool "
        f"for recovered channel {channel.name} (RecoveredInputChannel.requestBufferBlocking)."
    )


def _finish_input(s: _Step) -> str:
    return (
        f"The channel-state reader of {s.task} has read all input state and put an "
        "EndOfInputChannelStateEvent on every channel."
    )


def _filter(s: _Step) -> str:
    dropped = sum(1 for step in s.world.filtered.values() if step == s.event.step)
    reader = s.world.readers[s.world.tasks[s.task].name]
    kept = len(reader.pending)
    what = (
        "no record ends in it (it is the middle of a record that spans buffers)"
        if not kept and not dropped
        else f"{_plural(kept, 'record')} kept to re-serialize, "
        f"{_plural(dropped, 'record')} filtered out"
    )
    return (
        f"The channel-state reader of {s.task} filtered a pre-filter buffer on its own thread: "
        f"{what} (ChannelStateFilteringHandler, Flink 2.3)."
    )


def _rewrite(s: _Step) -> str:
    reader = s.world.readers[s.world.tasks[s.task].name]
    if s.world.checkpoints.job_failed:
        return _failed_delivery(s)
    return (
        f"The channel-state reader of {s.task} re-serialized the kept records into a "
        f"post-filter buffer ({_plural(len(reader.posts), 'buffer')} held so far)."
    )


def _failed_delivery(s: _Step) -> str:
    """A rewrite whose hand-over to the recovered channel failed (``fail_filtered_delivery``)."""
    options = s.world.options
    recycled = (
        "Flink 2.3's compensating loop recycled that buffer too, though the channel already "
        "held it, and the failed task's release recycled it again (before FLINK-40345)"
        if options.failed_delivery_recycle is FailedDeliveryRecycle.FROM_FAILED
        else "the reader recycled only the buffers it had not handed over (FLINK-40345)"
    )
    return (
        f"The channel-state reader of {s.task} handed its filtered buffers to the recovered "
        f"channel, and handing over buffer {options.fail_filtered_delivery} failed (a test "
        f"hook): {recycled}. {_sentence(s.world.checkpoints.job_failed)}"
    )


def _sentence(text: str) -> str:
    """``text`` as a sentence of its own: capitalised, with a full stop."""
    return f"{text[:1].upper()}{text[1:]}" + ("" if text.endswith(".") else ".")


def _spill(s: _Step) -> str:
    reader = s.world.readers[s.world.tasks[s.task].name]
    spill = reader.spill
    written = 0 if spill is None else spill.bytes_written
    open_bytes = 0 if spill is None else spill.heap_bytes
    dropped = sum(1 for step in s.world.filtered.values() if step == s.event.step)
    filtered = f"; {_plural(dropped, 'record')} filtered out first" if dropped else ""
    return (
        f"The channel-state reader of {s.task} fetched a chunk of recovered input towards the "
        f"spill files: {written:,} bytes written so far, {open_bytes:,} in the open segment "
        f"on the heap{filtered} (SpillingWithFilteringHandler, SpillingNoFilteringHandler)."
    )


def _spill_files_on_abort(s: _Step) -> str:
    """What the failover does to the spill files of drains that never started."""
    if s.world.options.spill_cleanup is SpillCleanup.ON_ABORT:
        return (
            "a failed fetch deletes its spill directory and the task's cleanup closes the "
            "fetched state, so every such spill file is deleted (FLINK-40520)"
        )
    return (
        "before FLINK-40520 only the drain deletes spill files, so those of every drain that "
        "never started stay on disk"
    )


def _finish_fetch(s: _Step) -> str:
    if s.world.checkpoints.job_failed:
        return (
            f"The channel-state reader of {s.task} sealed its spill files, and then its fetch "
            f"failed before handing them over (a test hook): {_spill_files_on_abort(s)}. "
            f"{_sentence(s.world.checkpoints.job_failed)}"
        )
    drainer = s.world.drainers[s.world.tasks[s.task].name]
    state = drainer.state
    what = (
        "nothing to recover"
        if state is None
        else f"{_plural(len(state.files), 'spill file')} of {state.size:,} bytes"
    )
    return (
        f"The channel-state reader of {s.task} finished its fetch: {what}, handed to the "
        "drainer (FetchedChannelState)."
    )


def _drain(s: _Step) -> str:
    added = [i for i in s.added("buffer") if i.get("recovered")]
    place = added[0]["of"] if added else "a channel"
    return (
        f"The drainer of {s.task} copied {_bytes(added)} bytes from the spill files into a "
        f"buffer of {place} in recovery and committed its position "
        "(FetchedChannelStateDrainer)."
    )


def _finish_drain(s: _Step) -> str:
    return (
        f"The drainer of {s.task} has delivered everything: an EndOfFetchedChannelStateEvent "
        "ends each channel's recovery."
    )


#: the caption of every kind of action, by the kind of actor that takes it (``write`` twice: a
#: task's record and a channel-state writer's state)
CAPTIONS: Mapping[tuple[ActorKind, ActionKind], Callable[[_Step], str]] = {
    (ActorKind.TASK, ActionKind.EMIT): _emit,
    (ActorKind.TASK, ActionKind.REQUEST_BUFFER): _request_buffer,
    (ActorKind.TASK, ActionKind.WRITE): _write,
    (ActorKind.TASK, ActionKind.COMPUTE): _compute,
    (ActorKind.TASK, ActionKind.POLL): _poll,
    (ActorKind.TASK, ActionKind.PROCESS): _process,
    (ActorKind.TASK, ActionKind.FINISH): _finish,
    (ActorKind.TASK, ActionKind.CHECKPOINT): _source_checkpoint,
    (ActorKind.TASK, ActionKind.BARRIER): _barrier,
    (ActorKind.TASK, ActionKind.RECOVER_OUTPUT): _recover_output,
    (ActorKind.TASK, ActionKind.FINISH_OUTPUT): _finish_output,
    (ActorKind.TASK, ActionKind.CONVERT): _convert,
    (ActorKind.TASK, ActionKind.REQUEST_PARTITIONS): _request_partitions,
    (ActorKind.TASK, ActionKind.INSTALL_DRAINER): _install_drainer,
    (ActorKind.TASK, ActionKind.FAIL): _fail,
    (ActorKind.TASK, ActionKind.CANCEL): _cancel,
    (ActorKind.NETTY, ActionKind.SEND): _send,
    (ActorKind.NETTY, ActionKind.REQUEST_FLOATING): _request_floating,
    (ActorKind.WRITER, ActionKind.WRITE): _write_channel_state,
    (ActorKind.COORDINATOR, ActionKind.TRIGGER): _trigger,
    (ActorKind.COORDINATOR, ActionKind.EXPIRE): _expire,
    (ActorKind.COORDINATOR, ActionKind.MANUAL_CHECKPOINT): _manual_checkpoint,
    (ActorKind.SCHEDULER, ActionKind.RESTART): _restart,
    (ActorKind.READER, ActionKind.RECOVER_INPUT): _recover_input,
    (ActorKind.READER, ActionKind.REQUEST_EXCLUSIVE): _request_exclusive,
    (ActorKind.READER, ActionKind.FINISH_INPUT): _finish_input,
    (ActorKind.READER, ActionKind.FILTER): _filter,
    (ActorKind.READER, ActionKind.REWRITE): _rewrite,
    (ActorKind.READER, ActionKind.SPILL): _spill,
    (ActorKind.READER, ActionKind.FINISH_FETCH): _finish_fetch,
    (ActorKind.DRAINER, ActionKind.DRAIN): _drain,
    (ActorKind.DRAINER, ActionKind.FINISH_DRAIN): _finish_drain,
}
