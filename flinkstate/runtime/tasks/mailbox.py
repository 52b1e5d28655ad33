"""A task's mailbox thread: what it does next, and polling and processing records.

The order of ``StreamTask``'s mailbox: recovery mails first while the task restores, then
spending a record's processing cost, writing pending output, a source's checkpoint, a priority
(unaligned) barrier between any two records, the records of the current buffer, and finally
polling the next channel with data (round robin within a gate, only the selected input of an
``InputSelectable`` operator). Polling hands the buffer to the deserializer; processing checks
exactly-once delivery, order per path and per key, and key groups, updates keyed state and
routes the record on.
"""

from __future__ import annotations

import functools
from bisect import bisect_left
from typing import Protocol

from flinkstate.keygroups import assign_to_key_group
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.runtime.action_kind import ActionKind, action
from flinkstate.runtime.buffer.buffer import HEAP, Buffer
from flinkstate.runtime.buffer.records import Path, Record, StreamElementKind
from flinkstate.runtime.checkpoint import coordinator
from flinkstate.runtime.checkpoint.channel import classic_recovery, fetched_channel_state_drainer
from flinkstate.runtime.checkpoint.channel.classic_recovery import RecoveryWorld
from flinkstate.runtime.checkpoint.coordinator import EnabledActions
from flinkstate.runtime.events import (
    BARRIER,
    END_OF_FETCHED_STATE,
    END_OF_INPUT_STATE,
    END_OF_OUTPUT_STATE,
    RECOVERY_BARRIER,
    SUBTASK_CONNECTION,
)
from flinkstate.runtime.execution_state import ExecutionState
from flinkstate.runtime.jobgraph import OperatorKind
from flinkstate.runtime.options import Fault
from flinkstate.runtime.partition import record_writer
from flinkstate.runtime.partition.consumer import recycling, result_subpartition_view
from flinkstate.runtime.partition.consumer.deserializer import Framing, reassemble
from flinkstate.runtime.partition.consumer.input_gate import Channel, DataHeads
from flinkstate.runtime.partition.record_writer import IN_FLIGHT, EmissionLog, hash_text
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.tasks import barrier_handler
from flinkstate.runtime.tasks.barrier_handler import BarrierHandlerWorld
from flinkstate.runtime.tasks.happenings import (
    EventPolled,
    RecordEmitted,
    RecordProcessed,
    RecordsDeserialized,
    StaleRecoveryBarrierSkipped,
)
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.watermark import watermarks
from flinkstate.runtime.watermark.event_time import EventTimeState
from flinkstate.runtime.watermark.watermarks import EventTimeWorld
from flinkstate.sim.action import Action
from flinkstate.sim.scheduler import splitmix64


class ChannelPlaces(Protocol):
    """Where each input channel sits: its consumer task (by name), its gate's index among the
    task's gates and its own index in the gate."""

    @property
    def channel_places(self) -> dict[str, tuple[str, int, int]]: ...


class IndexedActions(EnabledActions, Protocol):
    """The enabled actions as the mailbox reads them: by the index of the world's actors."""

    @property
    def index(self) -> ChannelPlaces: ...


class RecordPaths(EmissionLog, Protocol):
    """What the order checks remember of the records processed: the path each took, and the
    last sequence number seen per path and per key."""

    @property
    def paths(self) -> dict[tuple[int, str], Path]: ...
    @property
    def path_seq(self) -> dict[tuple[str, Path], int]: ...
    @property
    def key_seq(self) -> dict[tuple[str, str, int], int]: ...
    def path_id(self, upstream: Path, channel: str) -> Path: ...


class MailboxWorld(BarrierHandlerWorld, RecoveryWorld, EventTimeWorld, Protocol):
    """What a task's mailbox reaches of the world, beside what its barrier handling and the
    recovery generations do: the event-time state, the enabled actions' index (where each
    channel sits among the task's), the order checks' memory, and which operators keep order
    per key or process in sequence. The mailbox runs every kind of step, so it reaches nearly
    all of the world. The world (``NetworkState``) is one; mypy checks it at every call."""

    @property
    def actions(self) -> IndexedActions: ...
    @property
    def order(self) -> RecordPaths: ...
    @property
    def event_time(self) -> EventTimeState: ...
    @property
    def key_ordered(self) -> frozenset[str]: ...
    @property
    def sequential(self) -> frozenset[str]: ...
    @property
    def recovered_records(self) -> frozenset[int]: ...


@functools.lru_cache(maxsize=65536)
def key_group_of(key: int, max_parallelism: int) -> int:
    """The key group of a (long) key: Flink's arithmetic, computed once per key, as keys
    repeat within a run."""
    return assign_to_key_group(key, max_parallelism, "long")


# The hot path's enum members, read once: a member read through its class costs about 45 ns on
# Python 3.11, and a step reads several.
_RUNNING = TaskPhase.RUNNING
_RESTORING_OUTPUT = TaskPhase.RESTORING_OUTPUT
_CANCELING = ExecutionState.CANCELING
_NOT_CONTINUED = Framing.NOT_CONTINUED
_CUT_OFF = Framing.CUT_OFF
_RECORD = StreamElementKind.RECORD
_CANCEL = ActionKind.CANCEL
_FAIL = ActionKind.FAIL
_INSTALL_DRAINER = ActionKind.INSTALL_DRAINER
_CONVERT = ActionKind.CONVERT
_COMPUTE = ActionKind.COMPUTE
_WRITE = ActionKind.WRITE
_REQUEST_BUFFER = ActionKind.REQUEST_BUFFER
_CHECKPOINT = ActionKind.CHECKPOINT
_BARRIER = ActionKind.BARRIER
_PROCESS = ActionKind.PROCESS
_EMIT = ActionKind.EMIT
_FINISH = ActionKind.FINISH
_POLL = ActionKind.POLL
_LOSE_RECORD = Fault.LOSE_RECORD
_DUPLICATE_RECORD = Fault.DUPLICATE_RECORD
_IGNORE_INPUT_SELECTION = Fault.IGNORE_INPUT_SELECTION
_PERSIST_MIGRATED = Fault.PERSIST_MIGRATED


def task_action(
    world: MailboxWorld,
    task: Task,
    heads: frozenset[str] | None = None,
    data: DataHeads | None = None,
    consumed: dict[str, int] | None = None,
) -> Action | None:
    """The one thing the task's mailbox thread does next, if any; ``heads`` as for
    :func:`barrier_channel`, ``data`` as for :func:`next_channel_with_data`, ``consumed`` as
    for ``classic_recovery.state_consumed``."""
    if task.finished:
        return None
    if task.failover is not None:  # a failover stopped it: it only completes its cancel
        return action(task.name, _CANCEL) if task.failover is _CANCELING else None
    if task.fail_after >= 0 and task.handled >= task.fail_after:
        return action(task.name, _FAIL)
    if task.phase is not _RUNNING:
        if task.phase is _RESTORING_OUTPUT:
            opened = _opened_chain_action(world, task)
            if opened is not None:
                return opened
            kind = classic_recovery.restore_output_action(world, task)
            return None if kind is None else action(task.name, kind)
        if task.name in world.drainers:
            mail = fetched_channel_state_drainer.task_action(world, task)
            # a priority barrier is an urgent mail: it runs before the drainer is installed
            urgent = mail == _INSTALL_DRAINER and barrier_channel(world, task, heads) is not None
            if mail is not None and not urgent:
                return action(task.name, mail)
        else:
            gate = classic_recovery.gate_to_convert(world, task, consumed)
            if gate is not None and not task.ready and not task.busy and not task.pending:
                return action(task.name, _CONVERT, gate.name)
    if task.busy or task.pending:
        return _producing_action(world, task)
    if task.kind is OperatorKind.SOURCE and task.trigger:
        return action(task.name, _CHECKPOINT)
    barrier = barrier_channel(world, task, heads)
    if barrier is not None:
        return action(task.name, _BARRIER, barrier.name)
    if task.ready:
        return action(task.name, _PROCESS)
    if task.kind is OperatorKind.SOURCE:
        total = world.graph.operator(task.operator).records_per_subtask
        if any(offset < total for offset in task.splits.values()):
            return action(task.name, _EMIT)
        if task.splits or not coordinator.sources_have_data(world):
            if watermarks.needs_final_watermark(world, task):
                return action(task.name, _EMIT)
            return action(task.name, _FINISH)
        if watermarks.goes_idle(world, task):
            return action(task.name, _EMIT)
        return None  # no split of its own: idle until the other sources are done
    channel = next_channel_with_data(world, task, data)
    if channel is not None:
        return action(task.name, _POLL, channel.name)
    if task.phase is _RUNNING and all(c.finished for gate in task.gates for c in gate.channels):
        return action(task.name, _FINISH)
    return None


def _producing_action(world: MailboxWorld, task: Task) -> Action | None:
    """What a task computing or with records to write does next: compute, write into the
    buffer its subpartition is building, or ask for one (None: its pool has none to give)."""
    if task.busy:
        return action(task.name, _COMPUTE)
    sub = world.subpartitions[task.pending[0].subpartition]
    if sub.builder is not None:
        return action(task.name, _WRITE, sub.name)
    partition = world.partition_of(task, sub)
    if world.buffer_pools.can_request(partition.pool, True):
        return action(task.name, _REQUEST_BUFFER, sub.name)
    return None


def _opened_chain_action(world: MailboxWorld, task: Task) -> Action | None:
    """What a restoring task's operator chain does before its output state is written, which
    only Flink before FLINK-19907 (``RestoreOrder.CHAIN_FIRST``) lets it do: its chain is open
    while ``readRecoveredChannelState`` has yet to run, and a source's chain emits records
    and watermarks into the subpartitions ahead of the recovered output (finishing, a
    checkpoint or input wait for the mailbox loop). The output state is written when the chain
    has nothing it can do: back-pressured, or its splits read."""
    if not world.options.restore_order.chain_first or task.kind is not OperatorKind.SOURCE:
        return None
    if task.busy or task.pending:
        return _producing_action(world, task)
    total = world.graph.operator(task.operator).records_per_subtask
    if any(offset < total for offset in task.splits.values()):
        return action(task.name, _EMIT)
    return None


def barrier_channel(
    world: MailboxWorld, task: Task, heads: frozenset[str] | None = None
) -> Channel | None:
    """A channel whose next element is a barrier the task may handle now.

    An unaligned barrier is a priority event: handled between any two records, on any
    input. An aligned one is reached in stream order, so only once the current buffer's
    records are done, and only on a selected input.

    Flink handles priority events outside the input selection: ``CheckpointedInputGate``
    processes them in an urgent mail (``processPriorityEvents``) whenever the gate
    signals one, while ``MultipleInputSelectionHandler`` only decides which input's
    ``processInput`` runs. An aligned barrier is in-band and is seen only when its input is
    read, so an unselected input would hold an aligned checkpoint forever; Flink avoids
    that by refusing checkpointing for ``InputSelectable`` operators altogether
    (``StreamingJobGraphGenerator``), and the world refuses aligned checkpoints of them.

    ``heads``, where the caller knows them, are the names of the task's channels whose head
    is a barrier (and maybe a few others): only those are looked at, in the same order, so a
    task with many channels does not look at every one at every step.
    """
    selected = selected_input(world, task)
    if heads is not None:
        if not heads:
            return None
        places = world.actions.index.channel_places
        channels = world.channels
        for name in sorted(heads, key=places.__getitem__):
            channel = channels[name]
            if _barrier_ready(world, task, channel, selected, places[name][1]):
                return channel
        return None
    for index, gate in enumerate(task.gates):
        for channel in gate.channels:
            if _barrier_ready(world, task, channel, selected, index):
                return channel
    return None


def _barrier_ready(
    world: MailboxWorld, task: Task, channel: Channel, selected: int, gate_index: int
) -> bool:
    """Whether the task may handle now a barrier at the head of ``channel`` (of its gate
    ``gate_index``, ``selected`` the input it reads: ``selected_input``)."""
    if channel.blocked:
        return False
    head = visible_head(world, channel)
    return (
        head is not None
        and head.event == BARRIER
        and (head.priority or ((selected < 0 or gate_index == selected) and not task.ready))
    )


def head_is_barrier(world: MailboxWorld, channel: Channel) -> bool:
    """Whether the channel's head, as its consumer sees it, is a barrier (handled now or
    not)."""
    head = visible_head(world, channel)
    return head is not None and head.event == BARRIER


def barrier_heads(world: MailboxWorld, task: Task) -> frozenset[str]:
    """The names of the task's channels whose head is a barrier: what ``barrier_channel``'s
    ``heads`` stand for, found by looking at every channel."""
    return frozenset(
        c.name for gate in task.gates for c in gate.channels if head_is_barrier(world, c)
    )


def data_heads(world: MailboxWorld, task: Task) -> DataHeads:
    """Per gate of the task, the indices of its channels whose head is data or an event other
    than a barrier: what ``next_channel_with_data``'s ``data`` stands for, found by looking at
    every channel."""
    heads = []
    for gate in task.gates:
        indices = []
        for channel in gate.channels:
            head = visible_head(world, channel)
            if head is not None and head.event != BARRIER:
                indices.append(channel.index)
        heads.append(tuple(indices))
    return tuple(heads)


def selected_input(world: MailboxWorld, task: Task) -> int:
    """The one input a sequential reader reads now (the first that has not ended; the
    number of inputs once all have), or -1 where every input is selected."""
    if task.operator not in world.sequential:
        return -1
    for index, gate in enumerate(task.gates):
        if not all(c.finished for c in gate.channels):
            return index
    return len(task.gates)


def visible_head(world: MailboxWorld, channel: Channel) -> Buffer | None:
    if channel.recoverable.in_recovery:
        return fetched_channel_state_drainer.recovery_head(world, channel)
    if channel.recovered:
        return channel.recovery.queue[0] if channel.recovery.queue else None
    if channel.remote:
        return channel.received[0] if channel.received else None
    sub = world.subpartitions[channel.subpartition]
    if not sub.blocked:
        return sub.queue[0] if sub.queue else None
    return result_subpartition_view.sub_head(world, channel)


def next_channel_with_data(
    world: MailboxWorld, task: Task, data: DataHeads | None = None
) -> Channel | None:
    """The next channel to poll, round robin within a gate, among the selected inputs:
    a sequential reader's unselected gates are not looked at, recovered or not.

    ``data``, where the caller knows it (``data_heads``, kept up to date by the action cache),
    names per gate the channels whose head is data, and maybe a few others: only those are
    looked at, in the same round-robin order, so a gate of many channels with data on few is
    not read channel by channel at every step (Flink's gate keeps a queue of the channels with
    data for the same reason)."""
    selected = selected_input(world, task)
    if selected >= 0 and _IGNORE_INPUT_SELECTION in world.options.faults:
        selected = -1
    first = 0 if selected < 0 else selected
    gates = task.gates if selected < 0 else task.gates[selected : selected + 1]
    for position, gate in enumerate(gates, first):
        count = len(gate.channels)
        if data is None:
            order: range | tuple[int, ...] = range(gate.next_channel, gate.next_channel + count)
        else:
            indices = data[position]
            if not indices:
                continue
            start = bisect_left(indices, gate.next_channel % count)
            order = indices[start:] + indices[:start]
        for at in order:
            channel = gate.channels[at % count]
            if channel.finished or channel.blocked:
                continue
            head = visible_head(world, channel)
            if head is not None and head.event != BARRIER:
                return channel
    return None


def do_compute(world: MailboxWorld, task: Task, action: Action) -> None:
    task.busy -= 1


def next_split(task: Task, total: int) -> str | None:
    """The split a source emits from next (round robin over those with records left out of
    ``total``); None when none has."""
    active = [split for split, offset in task.splits.items() if offset < total]
    return active[task.split_turn % len(active)] if active else None


def emits_last_record(world: MailboxWorld, task: Task) -> bool:
    """Whether the source's next emit ends its input (its last record, or none left): that
    emit is read by other sources too (``coordinator.sources_have_data``)."""
    total = world.graph.operator(task.operator).records_per_subtask
    split = next_split(task, total)
    return split is None or task.splits[split] + 1 == total


def do_emit(world: MailboxWorld, task: Task, action: Action) -> None:
    """Emit the next record of the next split with records left (round robin): a split is
    one original source subtask's sequence, so a replayed record equals the original."""
    op = world.graph.operator(task.operator)
    total = op.records_per_subtask
    split = next_split(task, total)
    if split is None:  # no record left: the source's event time idles or ends
        watermarks.end_or_idle(world, task)
        return
    task.split_turn += 1
    seq = task.splits[split]
    task.splits[split] = seq + 1
    base = splitmix64(splitmix64(world.options.seed) ^ (hash_text(split) + seq))
    low, high = op.record_size
    record = Record(
        id=world.next_record,
        key=base % op.key_space,
        size=low + (splitmix64(base) % (high - low + 1)),
        source=split,
        seq=seq,
        timestamp=seq,
    )
    world.records[record.id] = record
    world.next_record += 1
    task.emitted += 1
    if seq + 1 == total and not coordinator.sources_have_data(world):
        # "no more splits": sources that read nothing may finish now
        for other in world.tasks.values():
            if other.kind is OperatorKind.SOURCE:
                other.mail(world.journal.changes)
    world.journal.tell(RecordEmitted(record.id, record.key, record.serialized_length))
    record_writer.route(world, task, record)
    if op.watermark_interval:
        watermarks.after_emit(world, task)


def do_poll(world: MailboxWorld, task: Task, action: Action) -> None:
    channel = world.channels[action.target]
    gate = world.gate_of(channel)
    selected = selected_input(world, task)
    if selected >= 0 and (selected == len(task.gates) or task.gates[selected] is not gate):
        world.journal.violate(
            "input-selection",
            f"{task.name} polled {channel.name} while it reads input {selected} only",
        )
    gate.next_channel = (channel.index + 1) % len(gate.channels)
    changes = world.journal.changes
    local = False  # taken straight from the producer's subpartition
    if channel.recovered or channel.recoverable.in_recovery:
        buffer = channel.poll_recovered(changes)
        holder = channel.owners.recovered
    elif channel.remote:
        buffer = channel.poll_received(changes)
        holder = channel.owners.received
    else:
        sub = world.subpartitions[channel.subpartition]
        buffer = channel.poll_local(sub, changes)
        holder = sub.owners.queue
        local = True
    if buffer.is_event:
        if buffer.event == END_OF_INPUT_STATE and channel.recoverable.in_recovery:  # V1, migrated
            fetched_channel_state_drainer.on_recovered_state_consumed(world, task, channel)
            return
        if buffer.event in (SUBTASK_CONNECTION, END_OF_INPUT_STATE, END_OF_OUTPUT_STATE):
            classic_recovery.on_recovery_event(world, task, channel, buffer)
            return
        if buffer.event == END_OF_FETCHED_STATE:
            fetched_channel_state_drainer.on_recovered_state_consumed(world, task, channel)
            return
        if buffer.event == RECOVERY_BARRIER:  # one a failed checkpoint left: ignored
            world.journal.tell(StaleRecoveryBarrierSkipped(buffer.checkpoint))
            return
        channel.finished = True
        world.journal.tell(EventPolled(str(buffer.event), channel.name))
        return
    if local and channel.persister.persisting:
        barrier_handler.persist_input(world, channel, buffer)
    elif (
        channel.persister.persisting
        and channel.recoverable.in_recovery
        and _PERSIST_MIGRATED in world.options.faults
    ):
        # FLINK-40016: the consume path persists a migrated buffer that
        # checkpointStarted already persisted
        barrier_handler.persist_input(world, channel, buffer)
    if buffer.segment != HEAP:
        world.ledger.hand_over(buffer.segment, holder, task.deserializer)
    ready = _deserialize(world, channel, buffer)
    task.current = channel
    task.current_buffer = buffer
    task.ready.extend(ready)
    world.journal.tell(RecordsDeserialized(len(ready), channel.name))
    if not ready:
        recycling.release_current(world, task)


def _deserialize(world: MailboxWorld, channel: Channel, buffer: Buffer) -> list[int]:
    """Reassemble records; while a rescaled gate demultiplexes, each virtual channel
    (old subtask, old channel) has its own partial record."""
    complete = []
    vc = channel.demultiplexer.selected
    partial = channel.partial if vc is None else channel.demultiplexer.partials.get(vc)
    where = channel.name if vc is None else f"{channel.name} (virtual channel {vc})"
    restored = world.restore is not None
    for fragment in buffer.fragments:
        before = partial
        partial, framing = reassemble(partial, fragment)
        if framing is _NOT_CONTINUED:
            world.journal.violate(
                "channel-order",
                f"fragment of record {fragment.record} on {where} does not "
                "continue the record being reassembled",
            )
            continue
        if framing is _CUT_OFF:
            assert before is not None
            world.journal.violate("exactly-once", f"record {before[0]} on {where} was cut off")
        if partial is None:  # the fragment completed its record
            if not restored:
                complete.append(fragment.record)
                continue
            element = world.records[fragment.record]
            if not element.is_record:  # the demultiplexer sums up its virtual channels
                passed = watermarks.recovered_element(world, channel, vc, element, True)
                if passed is not None:
                    complete.append(passed)
            elif classic_recovery.keeps(world, channel, fragment.record):
                complete.append(fragment.record)
                if vc is not None:
                    world.recovered_via[(fragment.record, channel.task)] = (
                        f"{channel.name} from old {vc[0]}<{vc[1]}"
                    )
    if vc is None:
        channel.partial = partial
    elif partial is None:
        channel.demultiplexer.partials.pop(vc, None)
    else:
        channel.demultiplexer.partials[vc] = partial
    if _LOSE_RECORD in world.options.faults and complete and len(world.records) > 3:
        complete.pop()
    return complete


def do_process(world: MailboxWorld, task: Task, action: Action) -> None:
    record_id = task.ready.popleft()
    record = world.records[record_id]
    channel = task.current
    assert channel is not None
    if record.kind is not _RECORD:
        world.journal.delivered.append(record_id)  # what the step processed, for its caption
        watermarks.process(world, task, channel, record)
        if not task.ready:
            recycling.release_current(world, task)
        return
    if world.event_time.watermark:
        watermarks.check_late(world, task, record)
    key = (record_id, channel.gate)
    state = world.deliveries.get(key)
    if state != IN_FLIGHT:
        what = "without it being sent" if state is None else "twice"
        world.journal.violate("exactly-once", f"{task.name} processed record {record_id} {what}")
    world.deliveries[key] = world.journal.step
    world.journal.delivered.append(record_id)
    # Order holds per path: records of one source subtask that took the same channels.
    # A recovered record's path before the checkpoint is not known (Flink persists bytes,
    # not routes), so its path starts afresh here; per-key order still covers it.
    order = world.order
    upstream = order.paths.get((record_id, channel.producer))
    if upstream is None:
        upstream = -1 - record_id if record_id in world.recovered_records else 0
    hop = world.recovered_via.pop((record_id, task.name), channel.name)
    path = order.path_id(upstream, hop)
    order.paths[(record_id, task.name)] = path
    last = order.path_seq.get((record.source, path), -1)
    if record.seq <= last:
        world.journal.violate(
            "channel-order",
            f"record {record_id} (seq {record.seq} of {record.source}) overtook seq {last} "
            f"on the path ending at {channel.name}",
        )
    order.path_seq[(record.source, path)] = record.seq
    # A broadcast input feeds the operator's broadcast state, not its keyed state, and
    # (as in the ITCase's broadcast functions) emits nothing downstream.
    broadcast = world.gates[channel.gate].exchange.partitioner is Partitioner.BROADCAST
    if task.key_groups is not None and not broadcast:
        # Reached over keyBy exchanges only, a key's records from one source subtask take
        # one path: they must reach the key's owner in order, across checkpoint and
        # recovery too (live data must not overtake recovered data).
        key_order = (task.operator, record.source, record.key)
        if task.operator in world.key_ordered and record.seq <= order.key_seq.get(key_order, -1):
            world.journal.violate(
                "key-order",
                f"record {record_id} (seq {record.seq} of {record.source}, key "
                f"{record.key}) reached {task.name} after seq {order.key_seq[key_order]}",
            )
        order.key_seq[key_order] = record.seq
        op = world.graph.operator(task.operator)
        group = key_group_of(record.key, op.effective_max_parallelism)
        first, last_group = task.key_groups
        if not first <= group <= last_group:
            world.journal.violate(
                "key-group",
                f"{task.name} owns key groups [{first}, {last_group}] but got key "
                f"{record.key} of key group {group}",
            )
        task.keyed_state[record.key] = task.keyed_state.get(record.key, 0) + 1
    task.processed += 1
    op = world.graph.operator(task.operator)
    task.busy = op.cost
    world.journal.tell(RecordProcessed(record_id, record.key))
    if _DUPLICATE_RECORD in world.options.faults and record_id == 1 and state == IN_FLIGHT:
        task.ready.appendleft(record_id)
    if not broadcast:
        record_writer.route(world, task, record)
    if not task.ready:
        recycling.release_current(world, task)
