"""Checkpoints at the tasks: barriers, unaligned snapshots, persisting, acknowledgement.

A source takes its snapshot when triggered and puts a barrier into every subpartition (at the
head, overtaking and persisting the queued data, on exchanges Flink checkpoints unaligned). A
task's first unaligned barrier starts its unaligned snapshot (``SingleCheckpointBarrierHandler``
with the alternating handler): the deserializer's leftovers, the data received before each
channel's barrier and whatever arrives before it are handed to the channel-state writer, which
retains the buffers; aligned barriers block their channel until all are in. A task acknowledges
once it has every barrier and its writer has written all it was given; the last
acknowledgement the plan waits for completes the checkpoint, which is then checked as a
consistent cut that holds the state of every subtask that has not finished.
"""

from __future__ import annotations

from typing import Protocol

from flinkstate.keygroups import KeyGroupRange
from flinkstate.runtime.action_kind import ActionKind, action
from flinkstate.runtime.buffer.buffer import HEAP, Buffer
from flinkstate.runtime.buffer.records import Fragment, Record
from flinkstate.runtime.checkpoint import coordinator
from flinkstate.runtime.checkpoint.channel import fetched_channel_state_drainer
from flinkstate.runtime.checkpoint.channel.channel_state_writer import (
    ChannelStateWriter,
    WriteRequest,
)
from flinkstate.runtime.checkpoint.channel.fetched_channel_state_drainer import DrainerWorld
from flinkstate.runtime.checkpoint.checkpoint import (
    ChannelState,
    Checkpoint,
    CheckpointInProgress,
    InputChannelInfo,
    PersistedBuffer,
    ResultSubpartitionInfo,
    SubtaskState,
)
from flinkstate.runtime.checkpoint.happenings import (
    AlignmentTimedOut,
    BarrierReceived,
    ChannelStateWritten,
    StaleBarrierDropped,
)
from flinkstate.runtime.events import (
    BARRIER,
    RECOVERY_BARRIER,
)
from flinkstate.runtime.options import (
    CheckpointFailureReason,
    Fault,
    RecoveryCheckpointTrigger,
)
from flinkstate.runtime.partition import record_writer
from flinkstate.runtime.partition.consumer import recycling
from flinkstate.runtime.partition.consumer.input_gate import Channel
from flinkstate.runtime.partition.record_writer import RecordWriterWorld
from flinkstate.runtime.partition.result_partition import Subpartition
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.tasks.task import Task
from flinkstate.sim.action import Action


class BarrierHandlerWorld(DrainerWorld, RecordWriterWorld, Protocol):
    """What a task's barrier handling reaches of the world, beside what V2's drainer (its
    recovery barriers) and the record writer (barriers sent downstream) do: the tasks, the
    records, the channel-state writers (by task), the next request's uid, and the checks of a
    checkpoint it completes (the model's invariants, which the world runs). The world
    (``NetworkState``) is one; mypy checks it at every call."""

    @property
    def records(self) -> dict[int, Record]: ...
    def check_completed(self, checkpoint: Checkpoint, progress: CheckpointInProgress) -> None: ...

    @property
    def tasks(self) -> dict[str, Task]: ...
    def task_named(self, name: str) -> Task: ...
    @property
    def writers(self) -> dict[str, ChannelStateWriter]: ...
    @property
    def writer_of(self) -> dict[str, str]: ...

    next_uid: int


def writer_actions(world: BarrierHandlerWorld, writer: ChannelStateWriter) -> tuple[Action, ...]:
    if not writer.requests:
        return ()
    return (action(writer.name, ActionKind.WRITE, writer.requests[0].channel),)


def do_checkpoint(world: BarrierHandlerWorld, task: Task, action: Action) -> None:
    checkpoint = world.checkpoints.pending
    assert checkpoint is not None
    task.trigger = 0
    _snapshot(world, task, checkpoint)
    _broadcast_barrier(world, task, checkpoint, checkpoint.unaligned)
    _acknowledge(world, task, checkpoint)


def do_barrier(world: BarrierHandlerWorld, task: Task, action: Action) -> None:
    channel = world.channels[action.target]
    # its head is taken; the others are noted where the barrier changes what their readers
    # read (blocked, upstream_blocked, a recovery queue), not all of them at every barrier
    changes = world.journal.changes
    if channel.remote:
        barrier = channel.poll_received(changes)
    else:
        barrier = channel.poll_local(world.subpartitions[channel.subpartition], changes)
    checkpoint = world.checkpoints.pending
    if checkpoint is None or barrier.checkpoint != checkpoint.id:
        world.journal.tell(StaleBarrierDropped(barrier.checkpoint))
        return
    channel.persister.barrier_seen = checkpoint.id
    channel.persister.persisting = 0
    if checkpoint.alignment_timeout:
        # the barrier has left the producer's subpartition: its output future completes
        # (empty), and the producer may now acknowledge (the model tells it when the
        # consumer takes the barrier, also for a remote channel, whose transport sent it)
        _maybe_acknowledge(world, world.task_named(channel.producer), checkpoint)
    # Flink's alternating barrier handler: an unaligned (priority) barrier starts an
    # unaligned snapshot of every input; an aligned one (the inputs of an operator fed by a
    # pointwise or broadcast exchange, or any while a checkpoint with an aligned checkpoint
    # timeout is aligned) blocks its channel until all barriers are in.
    if barrier.priority:
        if task.name not in checkpoint.snapshots:
            _start_unaligned(world, task, checkpoint, channel)
            if world.checkpoints.pending is not checkpoint:
                return  # declined: the coordinator aborted it
    elif not (
        task.name in checkpoint.timed_out and world.options.timed_out_alignment.resumes_blocked
    ):  # before FLINK-22638 a task switched to unaligned let aligned barriers through
        channel.blocked = True
    channels = [c for gate in task.gates for c in gate.channels]
    if all(c.persister.barrier_seen == checkpoint.id for c in channels):
        if task.name not in checkpoint.snapshots:
            _snapshot(world, task, checkpoint)
            _broadcast_barrier(world, task, checkpoint, checkpoint.unaligned)
        for c in channels:
            c.persister.stop_persisting(checkpoint.id)  # ``checkpointStopped``
            if c.blocked or c.upstream_blocked:  # the alignment ends: unblocked
                c.resume_consumption(changes)
        _acknowledge(world, task, checkpoint)
    elif (
        task.name not in checkpoint.snapshots
        and checkpoint.alignment_timed_out(world.journal.step, strictly=True)
        and _timeoutable_inputs(world, task)
    ):
        # ``AbstractAlternatingAlignedBarrierHandlerState.barrierReceived``: a barrier that
        # comes in after the timeout switches the alignment to an unaligned snapshot
        world.journal.tell(AlignmentTimedOut(checkpoint.id, task.name, inputs=True))
        _start_unaligned(world, task, checkpoint, channel)
    world.journal.tell(BarrierReceived(checkpoint.id, channel.name))


def _start_unaligned(
    world: BarrierHandlerWorld,
    task: Task,
    checkpoint: CheckpointInProgress,
    arrived: Channel | None,
) -> None:
    """Persist every input's in-flight data, snapshot state, pass the barrier on.

    ``arrived``: the channel whose barrier starts it (None: the alignment timer). A channel
    whose barrier has come (blocked by an aligned one) persists nothing and stays blocked
    until every barrier is in (``AlternatingCollectingBarriersUnaligned``, since FLINK-22638).

    A task recovering with V2 first cuts its recovered state
    (``ChannelState.onCheckpointStartedForAllInputs``): recovery barriers and the drainer's
    position; each channel in recovery persists its recovered buffers queued before its
    barrier; the undrained rest of the spill files follows on the writer.
    """
    why = not_ready(world, task)
    if why:
        coordinator.decline(
            world,
            task,
            checkpoint,
            CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY,
            why,
        )
        return
    cut = None
    if task.recovery_trigger is RecoveryCheckpointTrigger.DRAINER:
        cut = fetched_channel_state_drainer.snapshot_and_insert_barriers(world, task, checkpoint.id)
    fetched = cut is not None or task.name in world.drainers
    spilled = cut is not None and not cut.empty
    flat = [c for gate in task.gates for c in gate.channels]
    offset = 0
    for gate in task.gates:
        for channel in gate.channels:
            # hasInflightData: before FLINK-18139 another gate's channel may answer
            asked = world.options.inflight_data_lookup.asked(
                flat, gate_offset=offset, index=channel.index
            )
            expects = asked is channel or asked.persister.barrier_seen != checkpoint.id
            if not _persist_channel(
                world, task, checkpoint, channel, arrived, (fetched, spilled), expects
            ):
                return
        offset += len(gate.channels)
    if cut is not None and not cut.empty:
        # V2: the spill files' undrained rest follows the channels' buffers on the writer;
        # the last chunk's write releases the spill (at once when nothing is left)
        state = world.drainers[task.name].state
        assert state is not None
        chunks = cut.remaining_slice(state)
        if Fault.FORGET_SPILL_SLICE in world.options.faults:
            chunks = ()
        for position, (info, fragments) in enumerate(chunks):
            channel = task.gates[info.gate].channels[info.channel]
            last = position == len(chunks) - 1
            persist(
                world,
                task,
                checkpoint,
                False,
                channel.name,
                fragments,
                release_spill=task.name if last else "",
            )
        if not chunks:
            world.release_spill(task.name)
    if not checkpoint.unaligned:  # an aligned one with a timeout: ``asUnaligned``
        checkpoint.timed_out.add(task.name)
        if world.options.timed_out_alignment.resumes_blocked:  # before FLINK-22638
            for channel in flat:
                if channel.blocked:
                    channel.resume_consumption(world.journal.changes)
    _snapshot(world, task, checkpoint)
    _broadcast_barrier(world, task, checkpoint, True)


def alignment_timeout_actions(world: BarrierHandlerWorld) -> tuple[Action, ...]:
    """The tasks whose alignment timer has fired and has something to do: a task still
    aligning the pending checkpoint (a barrier in, its snapshot not yet taken), or one whose
    aligned barriers still queue in a subpartition of an exchange Flink checkpoints
    unaligned. Nothing unless the checkpoint is aligned with a timeout that has elapsed."""
    checkpoint = world.checkpoints.pending
    if checkpoint is None or not checkpoint.alignment_timed_out(world.journal.step):
        return ()
    return tuple(
        action(task.name, ActionKind.ALIGNMENT_TIMEOUT)
        for task in world.tasks.values()
        if _timer_due(world, task, checkpoint)
    )


def _timer_due(world: BarrierHandlerWorld, task: Task, checkpoint: CheckpointInProgress) -> bool:
    # a timer is a mail: it runs between records, in a task that is running
    if task.finished or task.failover is not None or task.busy or task.pending:
        return False
    if task.phase is not TaskPhase.RUNNING:
        return False
    if task.name not in checkpoint.snapshots:
        return _timeoutable_inputs(world, task) and any(
            c.persister.barrier_seen == checkpoint.id for gate in task.gates for c in gate.channels
        )
    return _awaits_output_futures(world, task, checkpoint)


def _timeoutable_inputs(world: BarrierHandlerWorld, task: Task) -> bool:
    """Whether the task's barriers can time out: not those of an operator whose inputs Flink
    always checkpoints aligned (a pointwise or broadcast input: ``FORCED_ALIGNED`` barriers
    are not timeoutable, and the handler registers no timer for them, FLINK-33693)."""
    graph = world.graph
    return all(graph.checkpoints_unaligned(e) for e in graph.inputs_of(task.operator))


def _awaits_output_futures(
    world: BarrierHandlerWorld, task: Task, checkpoint: CheckpointInProgress
) -> bool:
    """Whether a timeoutable barrier of the task still queues in one of its subpartitions:
    its output state is a future (``ChannelStateWriter.addOutputDataFuture``) that completes
    when the barrier leaves, empty, or times out, with the data it overtakes, and the
    task's snapshot is not complete before."""
    return any(
        _queues_aligned_barrier(sub, checkpoint.id)
        for partition in task.partitions
        if world.graph.checkpoints_unaligned(partition.exchange)
        for sub in partition.subpartitions
    )


def _queues_aligned_barrier(sub: Subpartition, checkpoint: int) -> bool:
    return any(
        b.event == BARRIER and b.checkpoint == checkpoint and not b.priority for b in sub.queue
    )


def do_alignment_timeout(world: BarrierHandlerWorld, task: Task, action: Action) -> None:
    """The alignment timer fires. A task still aligning switches to an unaligned snapshot
    of the same checkpoint (``AlternatingCollectingBarriers.alignedCheckpointTimeout``):
    the channels whose barrier is still to come persist their in-flight data and what
    arrives until their barrier; the blocked ones stay blocked. A task that has passed its
    barrier on turns the ones still queued in its subpartitions into priority events
    (``SubtaskCheckpointCoordinatorImpl``'s timer, ``PipelinedSubpartition
    .alignedBarrierTimeout``): each overtakes the data before it, which becomes the
    subpartition's output state. Exchanges Flink checkpoints aligned whatever the options
    (pointwise, broadcast: FLINK-33693's FORCED_ALIGNED) keep their barriers in place."""
    checkpoint = world.checkpoints.pending
    assert checkpoint is not None
    if task.name not in checkpoint.snapshots:
        world.journal.tell(AlignmentTimedOut(checkpoint.id, task.name, inputs=True))
        _start_unaligned(world, task, checkpoint, None)
        return
    changes = world.journal.changes
    converted = []
    for partition in task.partitions:
        if not world.graph.checkpoints_unaligned(partition.exchange):
            continue
        for sub in partition.subpartitions:
            before = sub.time_out_barrier(checkpoint.id, changes)
            if before is None:
                continue  # its barrier has left: nothing to do
            for buffer in before:
                persist_buffer(world, task, checkpoint, sub.name, buffer, output=True)
            barrier = world.new_buffer(
                HEAP, 0, event=BARRIER, checkpoint=checkpoint.id, priority=True
            )
            sub.add_priority(barrier, changes)
            converted.append(sub.name)
    world.journal.tell(
        AlignmentTimedOut(checkpoint.id, task.name, inputs=False, converted=tuple(converted))
    )
    _maybe_acknowledge(world, task, checkpoint)


def _persist_channel(
    world: BarrierHandlerWorld,
    task: Task,
    checkpoint: CheckpointInProgress,
    channel: Channel,
    arrived: Channel | None,
    recovery: tuple[bool, bool],
    expects: bool,
) -> bool:
    """One input's part of the unaligned snapshot: the deserializer's leftovers, then its
    recovered buffers before the barrier or the data it received before it; a channel whose
    barrier is still to come persists what arrives until then (a local one since FLINK-17315,
    ``LocalChannelPersistence``). ``recovery``: whether the task recovers with V2, whose
    recovered queues hold recovery barriers, and whether its cut holds spill files to release
    if the snapshot is declined; ``expects``: whether the handler still expects the channel's
    barrier (its in-flight data are skipped if not: ``InflightDataLookup``). False when the
    checkpoint was declined (a recovery barrier is missing), so that the snapshot stops
    there."""
    fetched, spilled = recovery
    unconsumed = []
    if task.current is channel:
        unconsumed += [_whole(world, r) for r in task.ready]
    if channel.partial is not None:
        record, received = channel.partial
        total = world.records[record].serialized_length
        unconsumed.append(Fragment(record, 0, received, total))
    if unconsumed:
        persist(world, task, checkpoint, False, channel.name, tuple(unconsumed))
    if channel.recovered:
        # declined before the snapshot since FLINK-20654; Flink 1.12.0's RecoveredInputChannel
        # let the start pass (InputChannel's empty checkpointStarted): its queued recovered
        # buffers are not persisted, and once converted it persists nothing before its barrier
        return True
    if channel.recoverable.in_recovery:
        # V1: every migrated buffer precedes the barrier; V2: those before its recovery barrier
        queued = channel.cut_recovered_queue(checkpoint.id, fetched, world.journal.changes)
        if queued is None:
            if spilled:
                world.release_spill(task.name)
            _decline_missing_barrier(world, task, checkpoint, channel)
            return False
        for buffer in queued:
            persist_buffer(world, task, checkpoint, channel.name, buffer)
    elif channel.remote and expects:
        data = [b for b in channel.received if not b.is_event]
        if channel.persister.barrier_arrived == checkpoint.id:
            data = data[: channel.persister.pre_barrier]  # later ones came after the barrier
        if Fault.FORGET_IN_FLIGHT in world.options.faults:
            data = []
        for buffer in data:
            persist_buffer(world, task, checkpoint, channel.name, buffer)
    persister = channel.persister
    barriers = (persister.barrier_seen, persister.barrier_arrived if channel.remote else 0)
    # before FLINK-17315 a local channel let the checkpoint's start pass unnoticed
    starts = world.options.local_channel_persistence.starts_persisting(remote=channel.remote)
    # before FLINK-19681 a local channel's persister missed the aligned barrier it delivered
    # (the one that blocks it): it starts persisting as if the barrier were still to come
    tracking = world.options.aligned_barrier_tracking
    unnoticed = (
        channel.blocked
        and persister.barrier_seen == checkpoint.id
        and not tracking.notes(remote=channel.remote, priority=False)
    )
    if starts and (
        unnoticed or (expects and channel is not arrived and checkpoint.id not in barriers)
    ):
        persister.persisting = checkpoint.id
    return True


def not_ready(world: BarrierHandlerWorld, task: Task) -> str:
    """Why a task still restoring cannot take an unaligned snapshot ("" if it can)."""
    if task.recovery_trigger is RecoveryCheckpointTrigger.NOT_READY:
        return "recovery checkpoint trigger NOT_READY: the drainer is not installed yet"
    for gate in task.gates:
        if gate.demultiplexing:
            return f"{gate.name} still demultiplexes recovered data"
        for channel in gate.channels:
            # RecoveredInputChannel.checkpointStarted throws since FLINK-20654 (Flink 1.12.2)
            if channel.recovered and world.options.recovered_channel_checkpoint_start.declines:
                return f"{channel.name} is still a RecoveredInputChannel"
    return ""


def _decline_missing_barrier(
    world: BarrierHandlerWorld, task: Task, checkpoint: CheckpointInProgress, channel: Channel
) -> None:
    """``collectPreRecoveryBarrier`` found no recovery barrier of this checkpoint."""
    why = f"no {RECOVERY_BARRIER} of checkpoint {checkpoint.id} in {channel.name}"
    coordinator.decline(world, task, checkpoint, world.options.recovery_barrier_decline.reason, why)


def _whole(world: BarrierHandlerWorld, record: int) -> Fragment:
    total = world.records[record].serialized_length
    return Fragment(record, 0, total, total)


def persist(
    world: BarrierHandlerWorld,
    task: Task,
    checkpoint: CheckpointInProgress,
    output: bool,
    name: str,
    fragments: tuple[Fragment, ...],
    segment: int = HEAP,
    release_spill: str = "",
    buffer: int = -1,
) -> None:
    """Hand one buffer to the task's channel-state writer, retaining its segment.

    ``buffer`` is the uid of the buffer handed over (-1 for bytes copied out of the
    deserializer or a spill file)."""
    writer = world.writers[world.writer_of[task.name]]
    uid = world.next_uid
    world.next_uid += 1
    writer.submit(
        WriteRequest(
            checkpoint.id,
            task.name,
            name,
            output,
            fragments,
            segment,
            release_spill,
            uid=uid,
            buffer=buffer,
        ),
        world.journal.changes,
    )
    if buffer >= 0:
        checkpoint.persisted_buffers.add(buffer)
    checkpoint.pending_writes[task.name] = checkpoint.pending_writes.get(task.name, 0) + 1
    if segment != HEAP:
        world.ledger.share(segment, writer.owner)


def persist_buffer(
    world: BarrierHandlerWorld,
    task: Task,
    checkpoint: CheckpointInProgress,
    name: str,
    buffer: Buffer,
    *,
    output: bool = False,
) -> None:
    """Hand a whole buffer of a channel (or, ``output``, a subpartition) to the writer,
    retaining its segment; the buffer is outlined as persisted."""
    persist(
        world,
        task,
        checkpoint,
        output,
        name,
        tuple(buffer.fragments),
        buffer.segment,
        buffer=buffer.uid,
    )


def persist_input(world: BarrierHandlerWorld, channel: Channel, buffer: Buffer) -> None:
    checkpoint = world.checkpoints.pending
    assert checkpoint is not None
    assert checkpoint.id == channel.persister.persisting
    task = world.task_named(channel.task)
    persist_buffer(world, task, checkpoint, channel.name, buffer)
    if Fault.PERSIST_TWICE in world.options.faults:  # FLINK-40016: a buffer persisted a second time
        persist_buffer(world, task, checkpoint, channel.name, buffer)


def write_channel_state(world: BarrierHandlerWorld, writer: ChannelStateWriter) -> None:
    request = writer.poll(world.journal.changes)
    checkpoint = world.checkpoints.pending
    # a task acknowledges only after its writes, so its checkpoint is still in progress
    assert checkpoint is not None
    assert checkpoint.id == request.checkpoint
    into = checkpoint.outputs if request.output else checkpoint.inputs
    into.setdefault(request.channel, []).append(PersistedBuffer(request.fragments))
    world.journal.persisted.extend(f.record for f in request.fragments)
    checkpoint.pending_writes[request.task] -= 1
    world.journal.tell(ChannelStateWritten(request.output, request.channel, len(request.fragments)))
    if request.segment != HEAP:
        recycling.drop(world, request.segment, writer.owner, None)
    if request.release_spill:
        world.release_spill(request.release_spill)
    _maybe_acknowledge(world, world.task_named(request.task), checkpoint)


def _snapshot(world: BarrierHandlerWorld, task: Task, checkpoint: CheckpointInProgress) -> None:
    op = world.graph.operator(task.operator)
    name = task.key
    checkpoint.snapshots[task.name] = SubtaskState(
        subtask=name,
        operator=op.name,
        index=task.index,
        snapshot_step=world.journal.step,
        key_groups=None if task.key_groups is None else KeyGroupRange(*task.key_groups),
        keyed_state=tuple(sorted(task.keyed_state.items())),
        source_splits=tuple(task.splits.items()),
    )


def _broadcast_barrier(
    world: BarrierHandlerWorld, task: Task, checkpoint: CheckpointInProgress, unaligned: bool
) -> None:
    """Finish open buffers, then put the barrier into every subpartition: at the head,
    persisting the data it overtakes, on exchanges Flink checkpoints unaligned if the
    task's snapshot is (``unaligned``); at the tail otherwise (pointwise and broadcast
    exchanges, and every input of an operator that has one, are always aligned)."""
    for partition in task.partitions:
        overtakes = unaligned and world.graph.checkpoints_unaligned(partition.exchange)
        for sub in partition.subpartitions:
            if sub.builder is not None and sub.builder.used:
                record_writer.finish_builder(world, sub)
            barrier = world.new_buffer(
                HEAP, 0, event=BARRIER, checkpoint=checkpoint.id, priority=overtakes
            )
            if overtakes:
                for buffer in sub.queue:
                    if not buffer.is_event:
                        persist_buffer(world, task, checkpoint, sub.name, buffer, output=True)
                sub.add_priority(barrier, world.journal.changes)
            else:
                sub.add(barrier, world.journal.changes)


def _acknowledge(world: BarrierHandlerWorld, task: Task, checkpoint: CheckpointInProgress) -> None:
    """The task has its snapshot and every barrier; it acknowledges once its writer has
    written all the channel state it was given."""
    checkpoint.barriers_complete.add(task.name)
    _maybe_acknowledge(world, task, checkpoint)


def _maybe_acknowledge(
    world: BarrierHandlerWorld, task: Task, checkpoint: CheckpointInProgress
) -> None:
    if (
        task.name in checkpoint.barriers_complete
        and not checkpoint.pending_writes.get(task.name)
        and task.name not in checkpoint.acknowledged
        and not (checkpoint.alignment_timeout and _awaits_output_futures(world, task, checkpoint))
    ):
        checkpoint.acknowledged.add(task.name)
        waiting = checkpoint.waiting_for
        if (
            len(checkpoint.acknowledged) == len(world.tasks)
            if waiting is None
            else waiting <= checkpoint.acknowledged
        ):
            _complete(world, checkpoint)


def _complete(world: BarrierHandlerWorld, progress: CheckpointInProgress) -> None:
    inputs: list[ChannelState] = []
    outputs: list[ChannelState] = []

    def collect(
        into: list[ChannelState],
        persisted: dict[str, list[PersistedBuffer]],
        task: Task,
        name: str,
        info: InputChannelInfo | ResultSubpartitionInfo,
    ) -> None:
        buffers = persisted.get(name)
        if buffers:
            into.append(ChannelState(task.key, name, info, tuple(buffers)))

    for task in world.tasks.values():
        for gate_index, gate in enumerate(task.gates):
            for channel in gate.channels:
                collect(
                    inputs,
                    progress.inputs,
                    task,
                    channel.name,
                    InputChannelInfo(gate_index, channel.index),
                )
        for partition_index, partition in enumerate(task.partitions):
            for sub in partition.subpartitions:
                collect(
                    outputs,
                    progress.outputs,
                    task,
                    sub.name,
                    ResultSubpartitionInfo(partition_index, sub.index),
                )
    checkpoint = Checkpoint(
        id=progress.id,
        # reported unaligned if any task's alignment timed out (``CheckpointMetrics``)
        unaligned=progress.unaligned or bool(progress.timed_out),
        trigger_step=progress.trigger_step,
        completion_step=world.journal.step,
        subtasks=tuple(
            progress.snapshots[t.name] for t in world.tasks.values() if t.name in progress.snapshots
        ),
        input_channel_state=tuple(inputs),
        result_subpartition_state=tuple(outputs),
        graph=world.graph,
        records=tuple(
            world.records[r]
            for r in sorted({f.record for state in (*inputs, *outputs) for f in state.fragments})
        ),
        persisted_buffers=frozenset(progress.persisted_buffers),
        finished_subtasks=progress.finished,
    )
    world.checkpoints.completed.append(checkpoint)
    world.checkpoints.pending = None
    world.checkpoints.last_end = world.journal.step
    world.check_completed(checkpoint, progress)
