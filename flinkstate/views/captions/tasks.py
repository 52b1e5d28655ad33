"""The captions of a task's own steps: emitting, writing and processing records, polling its
gates, barriers and checkpoints, restoring its output state, converting its recovered channels,
failing and cancelling (StreamTask, its mailbox and record writer)."""

from __future__ import annotations

from flinkstate.runtime.buffer.records import MAX_WATERMARK, MIN_WATERMARK, StreamElementKind
from flinkstate.runtime.checkpoint.channel.happenings import GateConverted
from flinkstate.runtime.checkpoint.coordinator import failed_region_down
from flinkstate.runtime.failover.happenings import TaskFailed
from flinkstate.runtime.jobgraph import OperatorKind
from flinkstate.runtime.watermark.watermarks import watermark_text
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.views.captions.recovery import spill_files_on_abort
from flinkstate.views.captions.step import Step, buffers_text, byte_count, plural, sentence


def _element(world: NetworkWorld, element_id: int) -> str:
    """A stream element by what it is: record 12, watermark 37, watermark status IDLE."""
    element = world.records[element_id]
    if element.is_record:
        return f"record {element_id}"
    if element.kind is StreamElementKind.WATERMARK:
        return f"watermark {watermark_text(element.timestamp)}"
    return f"watermark status {'IDLE' if element.idle else 'ACTIVE'}"


def emit(s: Step) -> str:
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


def _read_record(s: Step, record_id: int) -> str:
    record = s.world.records[record_id]
    return (
        f"{s.task} read record {record.id} (key {record.key}, {record.serialized_length} bytes "
        "with its length prefix) from its split and handed it to the record writer "
        "(SourceStreamTask, RecordWriter)"
    )


def request_buffer(s: Step) -> str:
    sub = s.world.subpartitions[s.target]
    return (
        f"{s.task} took a buffer from its result partition's pool to write records for "
        f"{sub.consumer} (LocalBufferPool.requestBufferBuilder); a full pool would block it "
        "here: that is back-pressure."
    )


def write(s: Step) -> str:
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


def compute(s: Step) -> str:
    task = s.world.tasks[s.task]
    left = f"{task.busy} more step(s)" if task.busy else "done"
    return f"{s.task} spends a step in its operator's processing of the last record ({left})."


def poll(s: Step) -> str:
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
        f"{s.task} took a {source}buffer ({byte_count(data)} bytes) from {channel.name}; the "
        f"deserializer{_dropped_now(s)} has {plural(ready, 'complete record')} to process"
        f"{rest} (SpillingAdaptiveSpanningRecordDeserializer)."
    )


def _dropped_now(s: Step) -> str:
    """The records this step completed and the record filter dropped: they never reach the
    task's ready records, so without them the caption would say nothing was completed."""
    name = s.world.tasks[s.task].name
    dropped = sorted(
        record
        for (record, task), step in s.world.filtered.items()
        if step == s.event.step and task == name
    )
    if not dropped:
        return ""
    which = ", ".join(str(record) for record in dropped)
    return (
        f" completed {'record' if len(dropped) == 1 else 'records'} {which}, which another "
        "subtask owns after the rescale: the record filter dropped "
        f"{'it' if len(dropped) == 1 else 'them'} (RecordFilter); it"
    )


def process(s: Step) -> str:
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


def finish(s: Step) -> str:
    return (
        f"{s.task} reached the end of its input: it flushed its buffers and put an "
        "EndOfPartitionEvent into every subpartition."
    )


def fail(s: Step) -> str:
    task = s.world.tasks[s.task]
    failover = s.world.failover
    others = [str(t) for t in failover.to_restart if t.name != s.task] if failover else []
    failed = next((h for h in s.event.happenings if isinstance(h, TaskFailed)), None)
    canceling = [] if failed is None else list(failed.cancelling)
    done = [name for name in others if name not in canceling]
    # a finished subtask of the region has nothing to cancel; it restarts with the region
    region = "the other subtasks of its pipelined region"
    if not others:
        cancel = "it is its pipelined region on its own"
    elif not done:
        cancel = f"{region} ({', '.join(canceling)}) are CANCELING"
    elif not canceling:
        cancel = f"{region} ({', '.join(done)}) have FINISHED: nothing to cancel, they restart "
        cancel += "with the region"
    else:
        cancel = f"{region} are CANCELING ({', '.join(canceling)}) but those FINISHED "
        cancel += f"({', '.join(done)}), which restart with the region"
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


def cancel(s: Step) -> str:
    down = (
        "; every subtask of the region has now stopped, and the scheduler waits for its "
        "restart delay"
        if failed_region_down(s.world)
        else ""
    )
    return f"{s.task} stopped for the failover: CANCELED{down} (Task.cancelExecution)."


def alignment_timeout(s: Step) -> str:
    requests = s.added("request")
    inputs = sum(1 for r in requests if r["side"] == "input")
    outputs = sum(1 for r in requests if r["side"] == "output")
    barriers = s.added("barrier")
    checkpoint = s.world.checkpoints.pending
    number = checkpoint.id if checkpoint is not None else "?"
    return (
        f"{s.task}'s alignment timer for checkpoint {number} fired: "
        f"{plural(len(barriers), 'barrier')} now overtake{'s' if len(barriers) == 1 else ''} "
        f"as unaligned priority events, {plural(inputs, 'input buffer')} and "
        f"{plural(outputs, 'output buffer')} handed to the channel-state writer "
        "(SingleCheckpointBarrierHandler's alignment timer, "
        "PipelinedSubpartition.alignedBarrierTimeout)."
    )


def source_checkpoint(s: Step) -> str:
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
            f"; the {buffers_text(overtaken)} it overtook are now output state of checkpoint "
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
        f"its {plural(subs, 'subpartition')}{persisted} ({cls})."
    )


def barrier(s: Step) -> str:
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
                f"{plural(len(outputs), 'buffer')} that become output state"
            )
        else:
            out = (
                "its own barrier goes to the tail of its outputs (a pointwise exchange is "
                "checkpointed aligned)"
            )
        parts.append(
            "its first: it starts its unaligned snapshot and persists the in-flight input "
            f"ahead of the barrier in its other channels ({plural(len(inputs), 'piece')}, "
            f"{plural(sum(int(r['bytes']) for r in inputs), 'byte')}); {out} "
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


def _barrier_id(s: Step) -> str:
    """The id of the barrier the task took: the head of its channel before the step."""
    heads = [
        i
        for i in s.before.values()
        if i["kind"] == "barrier" and i["of"] in (s.target, _subpartition_of(s))
    ]
    return str(min(heads, key=lambda i: i["slot"])["id"]) if heads else ""


def _subpartition_of(s: Step) -> str:
    return s.world.channels[s.target].subpartition


def _priority(s: Step) -> bool:
    barrier = s.before.get(_barrier_id(s))
    return bool(barrier is not None and barrier.get("priority"))


def recover_output(s: Step) -> str:
    added = s.added("buffer")
    subs = {i["of"] for i in added}
    return (
        f"{s.task} read a chunk of its output state ({byte_count(added[:1])} bytes) into "
        f"{plural(len(subs), 'subpartition')} behind a descriptor naming the old subtask "
        "(ResultSubpartitionRecoveredStateHandler)."
        if subs
        else f"{s.task} read a chunk of its output state."
    )


def finish_output(s: Step) -> str:
    return (
        f"{s.task} has restored all its output state and put an "
        "EndOfOutputChannelStateEvent into every subpartition; consumers must take it before "
        "any live data (StreamTask.restoreStateAndGates)."
    )


def convert(s: Step) -> str:
    gate = s.world.gates[s.target]
    if not gate.converted:  # refused: the task failed
        refused = [v for v in s.world.violations if v.step == s.event.step]
        why = f": {refused[0].message}" if refused else ""
        return (
            f"{s.task} tried to convert gate {gate.name} before its recovered channels were "
            f"done{why}. {sentence(s.world.checkpoints.job_failed)}"
        )
    migrated = sum(1 for c in gate.channels if c.recoverable.in_recovery)
    extra = (
        f"; {plural(migrated, 'channel')} still hold recovered buffers, which migrate into "
        "the physical channel (Flink 2.3)"
        if migrated
        else ""
    )
    released = sum(h.released for h in s.event.happenings if isinstance(h, GateConverted))
    if released:
        extra += (
            f"; released, the recovered channels recycled {plural(released, 'recovered buffer')} "
            "the task never read (Flink 1.11: the conversion checked nothing, FLINK-18989)"
        )
    return (
        f"{s.task} converted gate {gate.name}: its recovered channels became local and remote "
        f"channels, which request their subpartitions{extra} "
        "(SingleInputGate.convertRecoveredInputChannels, requestPartitions)."
    )


def request_partitions(s: Step) -> str:
    task = s.world.tasks[s.task]
    if s.world.checkpoints.job_failed:
        return (
            f"{s.task}'s request-partitions mail failed before converting a gate (a test "
            f"hook), between its fetch and its drain: {spill_files_on_abort(s)}. "
            f"{sentence(s.world.checkpoints.job_failed)}"
        )
    recovering = sum(1 for g in task.gates for c in g.channels if c.recoverable.in_recovery)
    return (
        f"{s.task} converted every gate in one mail: {plural(recovering, 'channel')} start "
        "in recovery, with no credit until the drainer has filled them "
        "(requestPartitions with needsRecovery)."
    )


def install_drainer(s: Step) -> str:
    if s.world.checkpoints.job_failed:
        return (
            f"{s.task}'s mail installing its drainer failed (a test hook), so no drain was "
            f"submitted: {spill_files_on_abort(s)}. {sentence(s.world.checkpoints.job_failed)}"
        )
    return (
        f"{s.task} installed its drainer as the recovery checkpoint trigger: restore is over "
        "and the task is RUNNING while its channels are still being drained "
        "(FetchedChannelStateDrainer)."
    )
