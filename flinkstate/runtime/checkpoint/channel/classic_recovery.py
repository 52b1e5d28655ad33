"""The classic recovery of in-flight data after an unaligned checkpoint: the sequence V1 and V2
vary at the reader's step and at conversion.

The sequence is Flink's with checkpointing during recovery off (``StreamTask.restoreStateAndGates``
and ``recoverChannelsWithoutCheckpointing``):

1. *Output state, on the upstream task's own thread*: one buffer per step from the result
   partition's pool, preceded in every target subpartition by a ``SubtaskConnectionDescriptor``;
   several target subpartitions share the one buffer. Then every subpartition gets an
   ``EndOfOutputChannelStateEvent``; handing it to the consumer blocks the subpartition.
2. *Input state, on the task's channel-state reader thread*: buffers of the recovered input
   channel (its exclusive buffers, requested lazily from the global pool, then floating ones of
   the gate), each behind a descriptor; then ``EndOfInputChannelStateEvent`` on every channel.
3. The task consumes recovered channels first, demultiplexing bytes per virtual channel (old
   subtask, old channel) so that spanning records are reassembled per old channel, and drops
   records of another subtask's key groups where the old subtask's state went to several.
4. A gate whose channels all delivered their end-of-state event is converted to local and
   remote channels (remote ones take their exclusive buffers now) and requests its
   subpartitions (``GateConversion``: per gate, or, in the rewrite that deadlocked selective
   readers, only once every gate is through). When all gates are converted, restore is over
   and checkpoints may start.
5. The consumer resumes a blocked subpartition once every channel of the gate has delivered
   ``EndOfOutputChannelStateEvent``, so live data never overtakes recovered data.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Protocol

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorRef, by_name, request_partitions
from flinkstate.runtime.buffer.buffer import HEAP, Buffer
from flinkstate.runtime.buffer.ledger import ReturnKind, ReturnTo
from flinkstate.runtime.checkpoint.channel import channel_state_filtering, spilling_handler
from flinkstate.runtime.checkpoint.channel.channel_state_reader import ChannelStateReader
from flinkstate.runtime.checkpoint.channel.happenings import (
    ConversionRefused,
    DescriptorIgnored,
    GateConverted,
    InputStateFinished,
    InputStateRecovered,
    OutputStateFinished,
    OutputStateRecovered,
    RecordFilteredOut,
    RecoveredInputConsumed,
    UpstreamOutputThrough,
    UpstreamRecoveryComplete,
    VirtualChannelSelected,
)
from flinkstate.runtime.checkpoint.channel.spilling_handler import SpillingTask, SpillingWorld
from flinkstate.runtime.checkpoint.state_assignment import RecoveredChunk, StateAssignment
from flinkstate.runtime.events import END_OF_INPUT_STATE, END_OF_OUTPUT_STATE, SUBTASK_CONNECTION
from flinkstate.runtime.options import Fault, GateConversion, RecoveryGeneration
from flinkstate.runtime.partition.consumer import recovered_channel
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.sim.action import Action
from flinkstate.sim.deadlock import Wait

if TYPE_CHECKING:
    from flinkstate.runtime.partition.consumer.input_gate import Channel, Gate
    from flinkstate.runtime.partition.result_partition import ResultPartition


class RestoringTask(SpillingTask, Protocol):
    """A restored task as the classic recovery sees it (Flink's ``StreamTask`` in
    ``restoreStateAndGates``). The task (``Task``) is one; mypy checks it at every call."""

    @property
    def key(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def gates(self) -> list[Gate]: ...
    @property
    def partitions(self) -> list[ResultPartition]: ...
    @property
    def output_state(self) -> deque[RecoveredChunk]: ...

    phase: TaskPhase


class RecoveryWorld(SpillingWorld, Protocol):
    """What the classic reader and the recovery generations it dispatches to reach of the
    world: what V1's filtering and V2's spilling handler reach, and the restore the run comes
    from (the records it recovers). The world (``NetworkState``) is one; mypy checks it at
    every call."""

    @property
    def restore(self) -> StateAssignment | None: ...
    def task_named(self, name: str) -> RestoringTask: ...


# The hot path's enum members, read once: a member read through its class costs about 45 ns on
# Python 3.11, and a step reads several.
_RECOVER_OUTPUT = ActionKind.RECOVER_OUTPUT
_FINISH_OUTPUT = ActionKind.FINISH_OUTPUT
_RECOVER_INPUT = ActionKind.RECOVER_INPUT
_FINISH_INPUT = ActionKind.FINISH_INPUT
_DROP_RECOVERED = Fault.DROP_RECOVERED
_NO_UPSTREAM_BLOCK = Fault.NO_UPSTREAM_BLOCK
_CONVERT_BEFORE_CONSUMED = Fault.CONVERT_BEFORE_CONSUMED

# -- task thread: output state


def restore_output_action(world: RecoveryWorld, task: RestoringTask) -> ActionKind | None:
    if task.output_state:
        chunk = task.output_state[0]
        pool = task.partitions[chunk.index].pool
        return _RECOVER_OUTPUT if world.buffer_pools.can_request(pool, False) else None
    return _FINISH_OUTPUT


def do_recover_output(world: RecoveryWorld, task: RestoringTask, action: Action) -> None:
    chunk = task.output_state.popleft()
    partition = task.partitions[chunk.index]
    holders = [partition.subpartitions[t].owners.queue for t in chunk.targets]
    segment = world.buffer_pools.request(partition.pool, holders[0])
    assert segment is not None
    used = sum(f.length for f in chunk.fragments)
    for position, target in enumerate(chunk.targets):
        sub = partition.subpartitions[target]
        changes = world.journal.changes
        sub.add(
            world.new_buffer(
                HEAP,
                0,
                event=SUBTASK_CONNECTION,
                descriptor=(chunk.old_subtask, chunk.old_channel),
            ),
            changes,
        )
        sub.add(
            world.new_buffer(
                segment, world.config.segment_size, used, list(chunk.fragments), recovered=True
            ),
            changes,
        )
        if position:
            world.ledger.share(
                segment, holders[position], ReturnTo(ReturnKind.PARTITION, partition.name)
            )
    world.ledger.will_return(segment, ReturnTo(ReturnKind.PARTITION, partition.name))
    world.journal.tell(
        OutputStateRecovered(chunk.old_subtask, chunk.old_channel, used, tuple(chunk.targets))
    )


def do_finish_output(world: RecoveryWorld, task: RestoringTask, action: Action) -> None:
    for partition in task.partitions:
        for sub in partition.subpartitions:
            sub.add(world.new_buffer(HEAP, 0, event=END_OF_OUTPUT_STATE), world.journal.changes)
    task.phase = TaskPhase.RECOVERING if task.gates else TaskPhase.RUNNING
    reader = world.readers.get(task.name)
    if reader is not None:
        reader.output_recovered(world.journal.changes)
    world.journal.tell(OutputStateFinished())


# -- reader thread: input state


def reader_actions(
    world: RecoveryWorld, reader: ChannelStateReader
) -> tuple[ActionKind, str] | None:
    task = world.task_named(reader.task)
    if reader.finished or task.phase is TaskPhase.RESTORING_OUTPUT:
        return None
    if world.effective_generation is RecoveryGeneration.V1:
        return channel_state_filtering.reader_action(world, reader)
    if world.effective_generation is RecoveryGeneration.V2:
        return spilling_handler.fetch_action(world, reader)
    if not reader.chunks:
        return (_FINISH_INPUT, "")
    chunk = reader.chunks[0]
    gate = task.gates[chunk.index]
    return recovered_channel.buffer_step(
        world, gate, gate.channels[chunk.targets[0]], _RECOVER_INPUT
    )


def finish_input(world: RecoveryWorld, reader: ChannelStateReader) -> None:
    """The reader is through its input state: EndOfInputChannelStateEvent on every channel
    (``RecoveredInputChannel.finishReadRecoveredState``); its handler closes."""
    task = world.task_named(reader.task)
    for gate in task.gates:
        for channel in gate.channels:
            channel.on_recovered_state_buffer(
                world.new_buffer(HEAP, 0, event=END_OF_INPUT_STATE), world.journal.changes
            )
    channel_state_filtering.free_prefilter_segment(world, reader)
    reader.finished = True
    world.journal.tell(InputStateFinished())


def request_exclusive(world: RecoveryWorld, reader: ChannelStateReader) -> None:
    """The recovered channel the reader works for takes its exclusive buffers."""
    gate, channel = recovered_channel.reader_target(world, reader)
    recovered_channel.request_exclusive(world, gate, channel)


def recover_input(world: RecoveryWorld, reader: ChannelStateReader) -> None:
    """One chunk of input state into a buffer of its recovered channel, behind the descriptor
    of the virtual channel it came from (``SequentialChannelStateReaderImpl``)."""
    gate, channel = recovered_channel.reader_target(world, reader)
    chunk = reader.chunks.popleft()
    segment = recovered_channel.take_buffer(world, gate, channel, channel.owners.recovered)
    used = sum(f.length for f in chunk.fragments)
    descriptor = world.new_buffer(
        HEAP, 0, event=SUBTASK_CONNECTION, descriptor=(chunk.old_subtask, chunk.old_channel)
    )
    data = world.new_buffer(
        segment, world.config.segment_size, used, list(chunk.fragments), recovered=True
    )
    channel.on_recovered_state_buffers((descriptor, data), world.journal.changes)
    world.journal.tell(
        InputStateRecovered(
            chunk.upstream_output, chunk.old_subtask, chunk.old_channel, used, channel.name
        )
    )
    if world.options.fail_recovered_hand_over and not reader.chunks:
        _fail_hand_over(world, reader, channel, segment)


def _fail_hand_over(
    world: RecoveryWorld, reader: ChannelStateReader, channel: Channel, segment: int
) -> None:
    """The test hook ``fail_recovered_hand_over``: the handler's ``recover`` throws after the
    channel took the buffer. The channel's reference balances the handler's (retained for the
    channel, let go in its ``finally``); before FLINK-22376 the reader's ``catch`` recycles the
    buffer once more, while the channel still queues it, and the failed task's release of the
    channel recycles it again. The exception fails the task."""
    if world.options.recovered_buffer_ownership.reader_recycles_after_recover:
        recovered_channel.recycle(world, channel, segment, channel.owners.recovered)
    world.fail_externally(
        world.task_named(reader.task).key,
        f"its channel-state reader failed recovering its last buffer into {channel.name} "
        "(fail_recovered_hand_over)",
    )


# -- task thread: consuming recovered data


def gate_to_convert(
    world: RecoveryWorld, task: RestoringTask, consumed: dict[str, int] | None = None
) -> Gate | None:
    """The first gate whose conversion may run now: its recovered state is consumed (with
    ``all-gates``, every gate's is), and the pool has the remote channels' exclusive buffers.
    ``consumed`` as for :func:`state_consumed`.

    V1 (Flink 2.3) converts once the reader has filtered everything
    (``getBufferFilteringCompleteFuture``): the recovered buffers still queued migrate into the
    physical channels."""
    early = _CONVERT_BEFORE_CONSUMED in world.options.faults
    v1 = world.effective_generation is RecoveryGeneration.V1
    if v1 or early:
        if not world.readers[task.name].finished:
            return None
    elif world.options.gate_conversion is GateConversion.ALL_GATES and not all(
        state_consumed(gate, consumed) for gate in task.gates
    ):
        return None
    for gate in task.gates:
        if (
            not gate.converted
            and (v1 or early or state_consumed(gate, consumed))
            and world.buffer_pools.free_in(gate.pool.global_pool) + recovery_held(world, gate)
            >= conversion_buffers(gate)
        ):
            return gate
    return None


def state_consumed(gate: Gate, consumed: dict[str, int] | None = None) -> bool:
    """Whether every channel of the gate has consumed its recovered state. ``consumed``, where
    the caller keeps it (the action cache), holds per gate how many of its first channels had
    when last looked: a channel's never goes back within a restore, so only the channels after
    them are looked at, not the whole gate at every step of a task restoring."""
    channels = gate.channels
    count = len(channels)
    if consumed is None:
        return all(c.recovery.state_consumed for c in channels)
    done = consumed.get(gate.name, 0)
    while done < count and channels[done].recovery.state_consumed:
        done += 1
    consumed[gate.name] = done
    return done == count


def conversion_buffers(gate: Gate) -> int:
    """Exclusive buffers the gate's remote channels take when it is converted."""
    return gate.exclusive_per_channel * sum(1 for c in gate.channels if c.remote)


def conversion_waits(world: RecoveryWorld, task: RestoringTask) -> list[Wait[ActorRef]]:
    """Why a gate whose recovered state is consumed is not converted yet, as waits of its
    ``request-partitions`` actor: for the other gates' recovered state (``all-gates``), held
    by the task that has yet to consume it or by the reader that has yet to read it; or for
    the exclusive buffers of its remote channels."""
    waits = []
    all_gates = world.options.gate_conversion is GateConversion.ALL_GATES
    reader = world.readers.get(task.name)
    for gate in task.gates:
        if gate.converted or not all(c.recovery.state_consumed for c in gate.channels):
            continue
        actor = request_partitions(task.key, gate.name)
        pending = [g for g in task.gates if not all(c.recovery.state_consumed for c in g.channels)]
        if all_gates and pending:
            for other in pending:
                holders = {
                    world.actor(task.name if c.recovery.queue or reader is None else reader.name)
                    for c in other.channels
                    if not c.recovery.state_consumed
                }
                waits.append(
                    Wait(
                        actor,
                        f"the recovered state of {other.name} to be consumed (all-gates: no "
                        "gate converts before every gate's state is consumed)",
                        by_name(holders),
                    )
                )
            continue
        global_pool = gate.pool.global_pool
        needed = conversion_buffers(gate)
        if world.buffer_pools.free_in(global_pool) + recovery_held(world, gate) < needed:
            waits.append(
                Wait(
                    actor,
                    f"{needed} exclusive buffers of {global_pool} for its remote channels",
                )
            )
    return waits


def recovery_held(world: RecoveryWorld, gate: Gate) -> int:
    return sum(len(c.recovery.exclusive) for c in gate.channels)


def do_convert(world: RecoveryWorld, task: RestoringTask, action: Action) -> None:
    """The gate's "Input gate request partitions" mail: its recovered channels are converted
    and request their subpartitions, unless ``toInputChannel`` refuses one (the fault
    ``convert-before-consumed`` asks too early): then the task fails, as in Flink. Before
    FLINK-18989 nothing refuses, and each recovered channel, released once converted, recycles
    the recovered buffers it still queues: the task never reads them."""
    gate = world.gates[action.target]
    cause = recovered_channel.refuse_conversion(world, gate)
    if cause is not None:
        world.journal.tell(ConversionRefused(gate.name))
        world.fail_externally(task.key, cause)
        return
    v1 = world.effective_generation is RecoveryGeneration.V1
    released = 0
    if not v1:  # ``releaseAllResources``: what a channel still queues (before FLINK-18989) is gone
        for channel in gate.channels:
            if channel.recovery.queue:
                released += recovered_channel.release_queued(world, channel)
    recovered_channel.convert_gate(
        world, gate, lambda channel: channel.remote, keep_recovery_segments=v1
    )
    migrated = 0
    if v1:  # ``toInputChannel``: what is still queued moves into the physical channel
        for channel in gate.channels:
            if channel.recovery.queue:
                channel.recoverable.in_recovery = True
                migrated += sum(1 for b in channel.recovery.queue if not b.is_event)
    if all(g.converted for g in task.gates):
        task.phase = TaskPhase.RUNNING
    world.journal.tell(GateConverted(gate.name, migrated if v1 else None, released))


def on_recovery_event(
    world: RecoveryWorld, task: RestoringTask, channel: Channel, buffer: Buffer
) -> None:
    """A descriptor or end-of-state event polled by the task."""
    gate = world.gate_of(channel)
    if buffer.event == SUBTASK_CONNECTION:
        assert buffer.descriptor is not None
        if gate.demultiplexing:
            recovered_channel.check_virtual_channel(world, gate, buffer.descriptor, channel)
            channel.demultiplexer.selected = buffer.descriptor
            world.journal.tell(VirtualChannelSelected(channel.name, buffer.descriptor))
        else:
            world.journal.tell(DescriptorIgnored(channel.name))
    elif buffer.event == END_OF_INPUT_STATE:
        channel.recovery.state_consumed = True
        world.journal.tell(RecoveredInputConsumed(channel.name))
    elif buffer.event == END_OF_OUTPUT_STATE:
        channel.recovery.end_of_output = True
        if not channel.remote:
            world.subpartitions[channel.subpartition].blocked = (
                _NO_UPSTREAM_BLOCK not in world.options.faults
            )
        if all(c.recovery.end_of_output for c in gate.channels):
            for c in gate.channels:
                world.subpartitions[c.subpartition].resume_consumption(world.journal.changes)
            finish_demultiplexing(world, gate)
            world.journal.tell(UpstreamRecoveryComplete(gate.name))
        else:
            world.journal.tell(UpstreamOutputThrough(channel.name))


def finish_demultiplexing(world: RecoveryWorld, gate: Gate) -> None:
    """``RescalingStreamTaskNetworkInput.finishRecovery``: every virtual channel must be
    empty, then the gate reads with one plain deserializer per channel."""
    for channel in gate.channels:
        for (old_subtask, old_channel), (record, _) in channel.demultiplexer.partials.items():
            world.journal.violate(
                "exactly-once",
                f"Not all data has been fully consumed: record {record} on {channel.name} "
                f"(virtual channel {old_subtask}, {old_channel}) is incomplete",
            )
        channel.demultiplexer.partials.clear()
        channel.demultiplexer.selected = None
    gate.demultiplexing = False


def keeps(world: RecoveryWorld, channel: Channel, record: int) -> bool:
    """The filter of an ambiguous virtual channel: does the partitioner select this subtask
    for the record?"""
    gate = world.gate_of(channel)
    task = world.task_named(channel.task)
    selected = channel.demultiplexer.selected
    if (
        _DROP_RECOVERED in world.options.faults
        and world.restore is not None
        and record == min(world.restore.records, default=-1)
    ):
        return False  # the fault: the first recovered record vanishes in the deserializer
    if selected is None:
        return True
    if channel_state_filtering.keeps_record(world, task, gate, channel, selected, record):
        return True
    subtask = world.selected_subtask(gate, record)
    world.journal.tell_also(RecordFilteredOut(record, subtask))
    return False
