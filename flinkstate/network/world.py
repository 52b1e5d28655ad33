"""The network world: every piece of mutable state of a running job, and its actors' actions.

Actors:

* ``task X[i]`` -- a subtask's mailbox thread: emit (sources), poll a buffer from an input
  channel, process one record (keyed state, routing to outputs), spend processing cost, request
  an output buffer, write record bytes into it, finish at end of input.
* ``netty X[i]<Y[j]`` -- the transport of one remote channel: send one buffer when the consumer
  has credit (events need none), and request floating buffers when the announced backlog needs
  more than the channel holds.

Local channels have no transport: the consumer task reads the producer's subpartition and
recycles the producer's buffer itself. Every segment move is checked against the owner array;
the other invariants are checked where the event that could break them happens.
"""

from __future__ import annotations

import copy
import functools
import itertools
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Self

from flinkstate.errors import InvalidParameterError
from flinkstate.keygroups import KeyGroupRange
from flinkstate.network import (
    builder,
    fetched_channel_state_drainer,
    invariants,
    recovered_channel,
    recovery,
)
from flinkstate.network.actors import (
    COORDINATOR,
    ActorKind,
    ActorRef,
    action,
)
from flinkstate.network.buffer import HEAP, Buffer
from flinkstate.network.channel_state_reader import ChannelStateReader
from flinkstate.network.channel_state_writer import (
    ChannelStateWriter,
    WriteRequest,
)
from flinkstate.network.checkpoint import (
    ChannelState,
    Checkpoint,
    CheckpointInProgress,
    InputChannelInfo,
    PersistedBuffer,
    ResultSubpartitionInfo,
    SubtaskState,
)
from flinkstate.network.consumer import Channel, Gate
from flinkstate.network.deserializer import Framing, reassemble
from flinkstate.network.events import (
    BARRIER,
    END_OF_FETCHED_STATE,
    END_OF_INPUT_STATE,
    END_OF_OUTPUT_STATE,
    END_OF_PARTITION,
    RECOVERY_BARRIER,
    SUBTASK_CONNECTION,
)
from flinkstate.network.graph import OperatorKind
from flinkstate.network.ledger import ReturnKind, ReturnTo
from flinkstate.network.options import (
    CheckpointFailure,
    CheckpointFailureReason,
    RecoveryCheckpointTrigger,
    job_fails,
)
from flinkstate.network.partition import ResultPartition, Subpartition
from flinkstate.network.records import Fragment, Record
from flinkstate.network.recovery import REQUEST_PARTITIONS
from flinkstate.network.state import IN_FLIGHT, NetworkState, key_group_of
from flinkstate.network.task import Output, Task, TaskPhase
from flinkstate.rescale.owner_rule import OwnerRule
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.sim.action import Action
from flinkstate.sim.core import Event
from flinkstate.sim.deadlock import Wait
from flinkstate.sim.scheduler import splitmix64

#: every how many consistency scans the network pools' free segments are checked one by one
#: (in between, they are counted)
IDLE_POOL_SCAN_EVERY = 16

# The hot path's enum members, read once: a member read through its class costs about 45 ns on
# Python 3.11, and a step reads several.
_RUNNING = TaskPhase.RUNNING
_RESTORING_OUTPUT = TaskPhase.RESTORING_OUTPUT
_TO_CHANNEL = ReturnKind.CHANNEL
_TO_SUBPARTITION = ReturnKind.SUBPARTITION
_NOT_CONTINUED = Framing.NOT_CONTINUED
_CUT_OFF = Framing.CUT_OFF
_NETTY = ActorKind.NETTY
_WRITER = ActorKind.WRITER


@dataclass
class NetworkWorld(NetworkState):
    """A run of the job: the state and what its actors do to it; implements the simulation
    core's ``Model`` protocol."""

    # ------------------------------------------------------------------ building

    def __post_init__(self) -> None:
        builder.build(self)

    def clone(self) -> Self:
        """A copy for snapshots and for exploring another interleaving.

        Copies every mutable container and component, shares what never changes: the graph,
        the config, records, the actor index, and buffers once queued (only a builder is ever
        written to). Links between components (a gate's channels, a task's current channel)
        point into the copy.
        """
        twin = copy.copy(self)
        twin.journal = self.journal.copy()
        twin.violations = twin.journal.violations
        twin.ledger = self.ledger.copy(twin.journal)
        twin.buffer_pools = self.buffer_pools.copy(twin.ledger)
        pools = twin.buffer_pools.local
        subs = twin.subpartitions = {n: s.copy() for n, s in self.subpartitions.items()}
        channels = twin.channels = {n: c.copy() for n, c in self.channels.items()}
        gates = twin.gates = {
            n: Gate(
                g.name,
                g.exchange,
                g.task,
                [channels[c.name] for c in g.channels],
                pools[g.pool.name],
                g.exclusive_per_channel,
                g.next_channel,
                g.converted,
                g.demultiplexing,
                g.plan,
            )
            for n, g in self.gates.items()
        }
        twin.tasks = {
            n: t.copy(
                [gates[g.name] for g in t.gates],
                [
                    ResultPartition(
                        p.name,
                        p.exchange,
                        p.task,
                        [subs[s.name] for s in p.subpartitions],
                        pools[p.pool.name],
                        p.next_channel,
                    )
                    for p in t.partitions
                ],
                None if t.current is None else channels[t.current.name],
            )
            for n, t in self.tasks.items()
        }
        twin.records = dict(self.records)
        twin.deliveries = dict(self.deliveries)
        twin.paths = dict(self.paths)
        twin.path_ids = dict(self.path_ids)
        twin.path_seq = dict(self.path_seq)
        twin.emitted_at = dict(self.emitted_at)
        twin.checkpoint = None if self.checkpoint is None else self.checkpoint.copy()
        twin.completed = list(self.completed)
        twin.expired = list(self.expired)
        twin.failures = list(self.failures)
        twin.writers = {n: w.copy() for n, w in self.writers.items()}
        twin.readers = {n: r.copy() for n, r in self.readers.items()}
        twin.drainers = {n: d.copy() for n, d in self.drainers.items()}
        twin.filtered = dict(self.filtered)
        twin.key_seq = dict(self.key_seq)
        twin.recovered_via = dict(self.recovered_via)
        twin.actions = self.actions.copy()
        twin.actions.listen(twin.journal.changes)
        return twin

    # ------------------------------------------------------------------ moving segments

    def _violate(self, invariant: str, message: str) -> None:
        self.journal.violate(invariant, message)

    # ------------------------------------------------------------------ actions

    def actor(self, name: str) -> ActorRef | None:
        """The typed reference of an actor named in an action or a wait (None for the
        stand-ins of waits-for reports, such as a gate's request-partitions mail)."""
        return self.actions.index.refs.get(name)

    def invalidate_actions(self) -> None:
        """Forget every cached action: for code that changed the world's state directly."""
        self.actions.invalidate()

    def enabled_actions(self) -> Sequence[Action]:
        """The actions enabled now, in a fixed order: tasks, transports, the coordinator.

        Each actor's actions are cached and recomputed only when a step touched what they
        depend on (the actor itself, a subpartition, a channel or a pool it reads), so a step
        costs the same however many actors are idle.
        """
        if self.job_failed:
            return []
        cache = self.actions
        index = cache.index
        cached = cache.cached
        for slot in cache.stale:
            name = index.actors[slot]
            if slot < index.task_count:
                action = self._task_action(self.tasks[name])
                cached[slot] = () if action is None else (action,)
            elif slot < index.transport_end:
                cached[slot] = tuple(self._transport_actions(self.channels[name]))
            elif slot < index.writer_end:
                cached[slot] = self._writer_actions(self.writers[name])
            elif slot < index.reader_end:
                cached[slot] = self._reader_action(name)
            else:
                cached[slot] = self._drainer_action(name)
        cache.stale.clear()
        actions = list(itertools.chain.from_iterable(cached))
        actions.extend(self._coordinator_actions())
        if self.check_actions:
            full = self._scan_actions()
            if full != actions:
                raise AssertionError(
                    f"step {self.journal.step}: cached actions {actions} differ from a full "
                    f"scan {full}"
                )
        return actions

    def _coordinator_actions(self) -> tuple[Action, ...]:
        if self.checkpoint is None:
            if self._can_trigger():
                number = self._next_checkpoint_id()
                return (action(COORDINATOR, "trigger", f"checkpoint {number}"),)
        elif self._can_expire():
            return (action(COORDINATOR, "expire", f"checkpoint {self.checkpoint.id}"),)
        return ()

    def _writer_actions(self, writer: ChannelStateWriter) -> tuple[Action, ...]:
        if not writer.requests:
            return ()
        return (action(writer.name, "write", writer.requests[0].channel),)

    def _reader_action(self, name: str) -> tuple[Action, ...]:
        reader = self.readers[self.tasks[self.actions.index.refs[name].task].name]
        step = recovery.reader_actions(self, reader)
        return () if step is None else (action(reader.name, *step),)

    def _drainer_action(self, name: str) -> tuple[Action, ...]:
        drainer = self.drainers[self.tasks[self.actions.index.refs[name].task].name]
        step = fetched_channel_state_drainer.drainer_action(self, drainer)
        return () if step is None else (action(drainer.name, *step),)

    def _scan_actions(self) -> list[Action]:
        actions: list[Action] = []
        for task in self.tasks.values():
            action = self._task_action(task)
            if action is not None:
                actions.append(action)
        for channel in self.channels.values():
            if channel.remote:
                actions.extend(self._transport_actions(channel))
        for writer in self.writers.values():
            actions.extend(self._writer_actions(writer))
        for reader in self.readers.values():
            actions.extend(self._reader_action(reader.name))
        for drainer in self.drainers.values():
            actions.extend(self._drainer_action(drainer.name))
        actions.extend(self._coordinator_actions())
        return actions

    def _next_checkpoint_id(self) -> int:
        return len(self.completed) + len(self.failures) + 1

    def _can_expire(self) -> bool:
        return (
            self.checkpoint is not None
            and self.checkpoint_timeout > 0
            and self.journal.step - self.checkpoint.trigger_step >= self.checkpoint_timeout
        )

    def _expire(self) -> None:
        """``execution.checkpointing.timeout``: the coordinator aborts the checkpoint; tasks
        stop persisting for it, drop what their writers have not written, unblock aligned
        channels; its barriers still in flight are ignored where they arrive."""
        progress = self.checkpoint
        assert progress is not None
        self.expired.append(progress.id)
        self._abort(progress)
        waiting = sorted(t.name for t in self.tasks.values() if t.name not in progress.acknowledged)
        self._fail(
            CheckpointFailure(
                progress.id,
                CheckpointFailureReason.CHECKPOINT_EXPIRED,
                self.journal.step + 1,  # the step this action makes, as the stepper counts
                detail=f"after {self.checkpoint_timeout} steps",
            )
        )
        self.journal.note = (
            f"checkpoint {progress.id} expired after {self.checkpoint_timeout} steps; "
            f"not acknowledged by {', '.join(waiting)}"
        )

    def _abort(self, progress: CheckpointInProgress) -> None:
        """The coordinator aborts a checkpoint: tasks stop persisting for it, writers drop
        what they have not written (and the spill references it held), aligned channels
        unblock; its barriers still in flight are ignored where they arrive."""
        self.checkpoint = None
        for writer in self.writers.values():
            keep = deque(r for r in writer.requests if r.checkpoint != progress.id)
            dropped = [r for r in writer.requests if r.checkpoint == progress.id]
            writer.requests = keep
            for request in dropped:
                if request.segment != HEAP:
                    self._drop(request.segment, writer.name, None)
                if request.release_spill:
                    self.release_spill(request.release_spill)
        for channel in self.channels.values():
            if channel.persisting == progress.id:
                channel.persisting = 0
            channel.blocked = False
            channel.upstream_blocked = False
        for task in self.tasks.values():
            if task.trigger == progress.id:
                task.trigger = 0
        self.invalidate_actions()

    def _fail(self, failure: CheckpointFailure) -> None:
        """Record a failed checkpoint; too many counted ones in a row fail the job
        (``CheckpointFailureManager``)."""
        self.failures.append(failure)
        self.last_checkpoint_end = self.journal.step
        last = max((c.id for c in self.completed), default=0)
        since = [f for f in self.failures if f.checkpoint > last]
        if job_fails(since, self.tolerable_failed_checkpoints):
            self.job_failed = (
                f"{failure.describe()}; more than {self.tolerable_failed_checkpoints} counted "
                "checkpoint failure(s) in a row fail the job "
                "(execution.checkpointing.tolerable-failed-checkpoints)"
            )
            self.invalidate_actions()

    def _decline(
        self, task: Task, progress: CheckpointInProgress, reason: CheckpointFailureReason, why: str
    ) -> None:
        """A task declines the checkpoint: the coordinator aborts it everywhere."""
        self._abort(progress)
        self._fail(CheckpointFailure(progress.id, reason, self.journal.step + 1, task.name, why))
        self.journal.note = (
            f"checkpoint {progress.id} declined by {task.name} ({reason.name}): {why}"
        )

    def _sources_have_data(self) -> bool:
        for task in self.tasks.values():
            if task.kind is OperatorKind.SOURCE:
                total = self.graph.operator(task.operator).records_per_subtask
                if any(offset < total for offset in task.splits.values()):
                    return True
        return False

    def _can_trigger(self) -> bool:
        return (
            self.checkpoint_interval > 0
            and self.checkpoint is None
            and len(self.completed) < self.max_checkpoints
            and self.journal.step >= self.last_checkpoint_end + self.checkpoint_interval
            # Flink triggers once every task is RUNNING (restore over); a rescaled input still
            # demultiplexing recovered data would decline as not ready, so wait for it too
            and (
                not self.coordinator_waits_for_running
                or (
                    all(t.phase is _RUNNING for t in self.tasks.values())
                    and not any(g.demultiplexing for g in self.gates.values())
                )
            )
            and all(not t.finished for t in self.tasks.values() if t.kind is OperatorKind.SOURCE)
            and self._sources_have_data()
        )

    def _task_action(self, task: Task) -> Action | None:
        if task.finished:
            return None
        if task.phase is not _RUNNING:
            if task.phase is _RESTORING_OUTPUT:
                kind = recovery.restore_output_action(self, task)
                return None if kind is None else action(task.name, kind)
            if task.name in self.drainers:
                mail = fetched_channel_state_drainer.task_action(self, task)
                # a priority barrier is an urgent mail: it runs before the drainer is installed
                urgent = mail == "install-drainer" and self._barrier_channel(task) is not None
                if mail is not None and not urgent:
                    return action(task.name, mail)
            else:
                gate = recovery.gate_to_convert(self, task)
                if gate is not None and not task.ready and not task.busy and not task.pending:
                    return action(task.name, "convert", gate.name)
        if task.busy:
            return action(task.name, "compute")
        if task.pending:
            out = task.pending[0]
            sub = self.subpartitions[out.subpartition]
            if sub.builder is not None:
                return action(task.name, "write", sub.name)
            partition = self.partition_of(task, sub)
            if self.buffer_pools.can_request(partition.pool, True):
                return action(task.name, "request-buffer", sub.name)
            return None
        if task.kind is OperatorKind.SOURCE and task.trigger:
            return action(task.name, "checkpoint")
        barrier = self._barrier_channel(task)
        if barrier is not None:
            return action(task.name, "barrier", barrier.name)
        if task.ready:
            return action(task.name, "process")
        if task.kind is OperatorKind.SOURCE:
            total = self.graph.operator(task.operator).records_per_subtask
            if any(offset < total for offset in task.splits.values()):
                return action(task.name, "emit")
            if task.splits or not self._sources_have_data():
                return action(task.name, "finish")
            return None  # no split of its own: idle until the other sources are done
        channel = self._next_channel_with_data(task)
        if channel is not None:
            return action(task.name, "poll", channel.name)
        if task.phase is _RUNNING and all(c.finished for gate in task.gates for c in gate.channels):
            return action(task.name, "finish")
        return None

    def _barrier_channel(self, task: Task) -> Channel | None:
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
        """
        selected = self._selected_input(task)
        for index, gate in enumerate(task.gates):
            in_order = selected < 0 or index == selected
            for channel in gate.channels:
                if channel.blocked:
                    continue
                head = self.visible_head(channel)
                if (
                    head is not None
                    and head.event == BARRIER
                    and (head.priority or (in_order and not task.ready))
                ):
                    return channel
        return None

    def _selected_input(self, task: Task) -> int:
        """The one input a sequential reader reads now (the first that has not ended; the
        number of inputs once all have), or -1 where every input is selected."""
        if task.operator not in self.sequential:
            return -1
        for index, gate in enumerate(task.gates):
            if not all(c.finished for c in gate.channels):
                return index
        return len(task.gates)

    def visible_head(self, channel: Channel) -> Buffer | None:
        if channel.in_recovery:
            return fetched_channel_state_drainer.recovery_head(self, channel)
        if channel.recovered:
            return channel.recovered_queue[0] if channel.recovered_queue else None
        if channel.remote:
            return channel.received[0] if channel.received else None
        sub = self.subpartitions[channel.subpartition]
        if not sub.blocked:
            return sub.queue[0] if sub.queue else None
        return recovery.sub_head(self, channel)

    def _next_channel_with_data(self, task: Task) -> Channel | None:
        """The next channel to poll, round robin within a gate, among the selected inputs:
        a sequential reader's unselected gates are not looked at, recovered or not."""
        selected = self._selected_input(task)
        if selected >= 0 and "ignore-input-selection" in self.faults:
            selected = -1
        gates = task.gates if selected < 0 else task.gates[selected : selected + 1]
        for gate in gates:
            count = len(gate.channels)
            for offset in range(count):
                channel = gate.channels[(gate.next_channel + offset) % count]
                if channel.finished or channel.blocked:
                    continue
                head = self.visible_head(channel)
                if head is not None and head.event != BARRIER:
                    return channel
        return None

    def _transport_actions(self, channel: Channel) -> list[Action]:
        if channel.recovered:
            return []  # the subpartition is requested only when the gate is converted
        if channel.in_recovery:  # no credit: events only, and no floating buffers asked for
            sub = self.subpartitions[channel.subpartition]
            head = (
                recovery.sub_head(self, channel)
                if sub.blocked
                else (sub.queue[0] if sub.queue else None)
            )
            if head is not None and head.is_event:
                return [action(f"netty {channel.name}", "send")]
            return []
        actions = []
        sub = self.subpartitions[channel.subpartition]
        if sub.blocked:
            head = recovery.sub_head(self, channel)
        else:
            head = sub.queue[0] if sub.queue else None
        if head is not None and (
            head.is_event or (channel.available and not channel.upstream_blocked)
        ):
            actions.append(action(f"netty {channel.name}", "send"))
        gate = self.gate_of(channel)
        if channel.available < channel.backlog_seen + gate.exclusive_per_channel and (
            self.buffer_pools.can_request(gate.pool, False)
        ):
            actions.append(action(f"netty {channel.name}", "request-floating"))
        return actions

    def apply(self, action: Action) -> Event:
        actor = action.actor
        task_actor = self.actions.index.by_task_actor.get(actor)
        if task_actor is not None:
            self.actions.stale.add(task_actor[0])  # the task that acts
            _TASK_HANDLERS[action.kind](self, self.tasks[task_actor[1]], action)
        else:
            self._apply_other(actor, action)
        event = self.journal.event(action)
        if self.full_check_every and self.journal.step % self.full_check_every == 0:
            scan = self.journal.step // self.full_check_every
            self.check_consistency(idle_pools=scan % IDLE_POOL_SCAN_EVERY == 0)
        return event

    # -- task actions

    def _apply_other(self, actor: str, action: Action) -> None:
        """An action of an actor other than a task: the coordinator, a transport, a writer,
        a reader or a drainer, found by its typed reference."""
        ref = self.actions.index.refs.get(actor)
        if ref is None:
            raise InvalidParameterError(f"no actor {actor!r} in this world")
        kind = ref.kind
        if kind is _NETTY:
            channel = self.channels[ref.channel]
            self.journal.changes.channel(channel.name)
            if action.kind == "send":
                self._send(channel)
            else:
                self._request_floating(channel)
        elif kind is _WRITER:
            self.journal.changes.writer(actor)
            self._write_channel_state(self.writers[ref.writer])
        elif kind is ActorKind.COORDINATOR:
            if action.kind == "expire":
                self._expire()
            else:
                self._trigger()
        elif kind is ActorKind.READER:
            self.journal.changes.reader(actor)
            reader = self.readers[self.tasks[ref.task].name]
            recovery.reader_step(self, reader, action.kind)
        else:
            self.journal.changes.drainer(actor)
            drainer = self.drainers[self.tasks[ref.task].name]
            if action.kind == "drain":
                fetched_channel_state_drainer.drain_step(self, drainer)
            else:
                fetched_channel_state_drainer.finish_drain(self, drainer)

    def _do_compute(self, task: Task, action: Action) -> None:
        task.busy -= 1

    def _do_emit(self, task: Task, action: Action) -> None:
        """Emit the next record of the next split with records left (round robin): a split is
        one original source subtask's sequence, so a replayed record equals the original."""
        op = self.graph.operator(task.operator)
        total = op.records_per_subtask
        active = [split for split, offset in task.splits.items() if offset < total]
        split = active[task.split_turn % len(active)]
        task.split_turn += 1
        seq = task.splits[split]
        task.splits[split] = seq + 1
        base = splitmix64(splitmix64(self.seed) ^ (hash_text(split) + seq))
        low, high = op.record_size
        record = Record(
            id=self.next_record,
            key=base % op.key_space,
            size=low + (splitmix64(base) % (high - low + 1)),
            source=split,
            seq=seq,
        )
        self.records[record.id] = record
        self.next_record += 1
        task.emitted += 1
        if seq + 1 == total and not self._sources_have_data():
            # "no more splits": sources that read nothing may finish now
            for other in self.tasks.values():
                if other.kind is OperatorKind.SOURCE:
                    self.journal.changes.task(other.name)
        self.journal.note = (
            f"record {record.id} key {record.key} ({record.serialized_length} bytes)"
        )
        self._route(task, record)

    def _route(self, task: Task, record: Record) -> None:
        for partition in task.partitions:
            for sub in self._select(partition, record):
                task.pending.append(Output(sub.name, record.id, 0, record.serialized_length))

    def _select(self, partition: ResultPartition, record: Record) -> list[Subpartition]:
        subs = partition.subpartitions
        kind = partition.exchange.partitioner
        count = len(subs)
        if kind is Partitioner.BROADCAST:
            return list(subs)
        if kind is Partitioner.HASH or kind is Partitioner.CUSTOM:
            down = self.graph.operator(partition.exchange.downstream)
            rule = OwnerRule.KEY_GROUP if kind is Partitioner.HASH else OwnerRule.KEY
            target = rule.owner(record.key, down.effective_max_parallelism, count)
            if "wrong-key-group" in self.faults:
                target = (target + 1) % count
            return [subs[target]]
        if kind is Partitioner.REBALANCE:
            if partition.next_channel < 0:
                partition.next_channel = splitmix64(self.seed ^ hash_text(partition.name)) % count
            partition.next_channel = (partition.next_channel + 1) % count
            return [subs[partition.next_channel]]
        if kind is Partitioner.RESCALE:
            partition.next_channel = (partition.next_channel + 1) % count
            return [subs[partition.next_channel]]
        if kind is Partitioner.SHUFFLE:
            return [subs[splitmix64(self.seed ^ (record.id << 8)) % count]]
        return [subs[0]]  # FORWARD (one subpartition) and GLOBAL

    def _do_request_buffer(self, task: Task, action: Action) -> None:
        sub = self.subpartitions[action.target]
        pool = self.partition_of(task, sub).pool
        segment = self.buffer_pools.request(pool, f"builder {sub.name}", sub.index)
        if segment is None:
            raise AssertionError(f"{action} was enabled but the pool is empty")
        sub.builder = self.new_buffer(segment, self.config.segment_size)
        self.journal.changes.subpartition(sub.name)

    def _do_write(self, task: Task, action: Action) -> None:
        out = task.pending[0]
        sub = self.subpartitions[out.subpartition]
        builder = sub.builder
        assert builder is not None
        length = min(builder.space, out.total - out.written)
        builder.fragments.append(Fragment(out.record, out.written, length, out.total))
        builder.used += length
        out.written += length
        if out.written == out.total:
            task.pending.popleft()
            gate = self.channels[sub.channel].gate
            self._start_delivery(out.record, gate)
            self.emitted_at[(out.record, gate)] = (self.journal.step, task.name)
        if builder.space == 0 or (self.flush_every_record and out.written == out.total):
            self._finish_builder(sub)

    def _start_delivery(self, record: int, gate: str) -> None:
        key = (record, gate)
        if key in self.deliveries:
            self._violate("exactly-once", f"record {record} emitted twice towards {gate}")
        self.deliveries[key] = IN_FLIGHT
        self.journal.emitted.append(record)

    def _finish_builder(self, sub: Subpartition) -> None:
        builder = sub.builder
        assert builder is not None
        self.ledger.move(builder.segment, f"builder {sub.name}", f"queue {sub.name}")
        sub.queue.append(builder)
        sub.builder = None
        self.journal.changes.subpartition(sub.name)
        if "reorder-buffers" in self.faults and len(sub.queue) >= 2 and not sub.queue[-2].is_event:
            sub.queue[-1], sub.queue[-2] = sub.queue[-2], sub.queue[-1]

    def _do_finish(self, task: Task, action: Action) -> None:
        for partition in task.partitions:
            for sub in partition.subpartitions:
                if sub.builder is not None:
                    if sub.builder.used:
                        self._finish_builder(sub)
                    else:
                        segment = sub.builder.segment
                        sub.builder = None
                        self.buffer_pools.recycle(
                            partition.pool, segment, f"builder {sub.name}", sub.index
                        )
                sub.queue.append(self.new_buffer(HEAP, 0, event=END_OF_PARTITION))
                self.journal.changes.subpartition(sub.name)
        task.finished = True
        self.journal.note = "end of input: flushed and sent EndOfPartitionEvent"

    def _do_poll(self, task: Task, action: Action) -> None:
        channel = self.channels[action.target]
        gate = self.gate_of(channel)
        selected = self._selected_input(task)
        if selected >= 0 and (selected == len(task.gates) or task.gates[selected] is not gate):
            self._violate(
                "input-selection",
                f"{task.name} polled {channel.name} while it reads input {selected} only",
            )
        gate.next_channel = (channel.index + 1) % len(gate.channels)
        self.journal.changes.channel(channel.name)
        self.journal.changes.subpartition(channel.subpartition)
        if channel.recovered or channel.in_recovery:
            buffer = channel.recovered_queue.popleft()
            holder = f"recovered {channel.name}"
        elif channel.remote:
            buffer = channel.received.popleft()
            holder = f"received {channel.name}"
        else:
            sub = self.subpartitions[channel.subpartition]
            buffer = sub.queue.popleft()
            holder = f"queue {sub.name}"
        if buffer.is_event:
            if buffer.event == END_OF_INPUT_STATE and channel.in_recovery:  # V1, migrated
                fetched_channel_state_drainer.on_recovered_state_consumed(self, task, channel)
                return
            if buffer.event in (SUBTASK_CONNECTION, END_OF_INPUT_STATE, END_OF_OUTPUT_STATE):
                recovery.on_recovery_event(self, task, channel, buffer)
                return
            if buffer.event == END_OF_FETCHED_STATE:
                fetched_channel_state_drainer.on_recovered_state_consumed(self, task, channel)
                return
            if buffer.event == RECOVERY_BARRIER:  # one a failed checkpoint left: ignored
                self.journal.note = (
                    f"stale {RECOVERY_BARRIER} of checkpoint {buffer.checkpoint} skipped"
                )
                return
            channel.finished = True
            self.journal.note = f"{buffer.event} on {channel.name}"
            return
        if not channel.remote and channel.persisting and holder.startswith("queue "):
            self._persist_input(channel, buffer)
        elif channel.persisting and channel.in_recovery and "persist-migrated" in self.faults:
            # FLINK-40016: the consume path persists a migrated buffer that
            # checkpointStarted already persisted
            self._persist_input(channel, buffer)
        if buffer.segment != HEAP:
            self.ledger.hand_over(buffer.segment, holder, f"deserializer {task.name}")
        ready = self._deserialize(channel, buffer)
        task.current = channel
        task.current_buffer = buffer
        task.ready.extend(ready)
        self.journal.note = f"{len(ready)} complete record(s) from {channel.name}"
        if not ready:
            self._release_current(task)

    def _deserialize(self, channel: Channel, buffer: Buffer) -> list[int]:
        """Reassemble records; while a rescaled gate demultiplexes, each virtual channel
        (old subtask, old channel) has its own partial record."""
        complete = []
        vc = channel.selected
        partial = channel.partial if vc is None else channel.partials.get(vc)
        where = channel.name if vc is None else f"{channel.name} (virtual channel {vc})"
        restored = self.restore is not None
        for fragment in buffer.fragments:
            before = partial
            partial, framing = reassemble(partial, fragment)
            if framing is _NOT_CONTINUED:
                self._violate(
                    "channel-order",
                    f"fragment of record {fragment.record} on {where} does not "
                    "continue the record being reassembled",
                )
                continue
            if framing is _CUT_OFF:
                assert before is not None
                self._violate("exactly-once", f"record {before[0]} on {where} was cut off")
            if partial is None:  # the fragment completed its record
                if not restored:
                    complete.append(fragment.record)
                elif recovery.keeps(self, channel, fragment.record):
                    complete.append(fragment.record)
                    if vc is not None:
                        self.recovered_via[(fragment.record, channel.task)] = (
                            f"{channel.name} from old {vc[0]}<{vc[1]}"
                        )
        if vc is None:
            channel.partial = partial
        elif partial is None:
            channel.partials.pop(vc, None)
        else:
            channel.partials[vc] = partial
        if "lose-record" in self.faults and complete and len(self.records) > 3:
            complete.pop()
        return complete

    def _release_current(self, task: Task) -> None:
        channel, buffer = task.current, task.current_buffer
        assert channel is not None
        assert buffer is not None
        holder = f"deserializer {task.name}"
        if buffer.segment == HEAP:  # a heap fallback buffer: freed, nothing to recycle
            self.ledger.heap(-buffer.capacity)
            self.journal.changes.channel(channel.name)
            task.current = None
            task.current_buffer = None
            return
        self._recycle_consumed(channel, buffer.segment, holder)
        if "double-recycle" in self.faults:
            self._recycle_consumed(channel, buffer.segment, holder)
        task.current = None
        task.current_buffer = None

    def _recycle_consumed(self, channel: Channel, segment: int, holder: str) -> None:
        if "leak-buffer" in self.faults:
            return
        self.journal.changes.channel(channel.name)
        if channel.recovered or channel.in_recovery:
            self._drop(segment, holder, ReturnTo(_TO_CHANNEL, channel.name))
        elif not channel.remote:
            self._drop(segment, holder, ReturnTo(_TO_SUBPARTITION, channel.subpartition))
        else:
            self._drop(segment, holder, ReturnTo(_TO_CHANNEL, channel.name))

    def _recycle_to_channel(self, channel: Channel, segment: int, holder: str) -> None:
        self.journal.changes.channel(channel.name)
        if channel.recovered:
            recovered_channel.recycle(self, channel, segment, holder)
            return
        gate = self.gate_of(channel)
        if segment in channel.recovery_segments:  # V1: a migrated buffer of the recovered
            channel.recovery_segments -= {segment}  # channel, whose manager is gone
            self.buffer_pools.give_back(gate.pool.global_pool, segment, holder)
            return
        if channel.in_recovery:  # no credit is announced: back where the drainer takes it
            if segment in channel.exclusive_segments:
                self.ledger.move(segment, holder, f"exclusive {channel.name}")
                channel.exclusive.append(segment)
            else:
                self.buffer_pools.recycle(gate.pool, segment, holder)
            return
        if segment in channel.exclusive_segments:
            self.ledger.move(segment, holder, f"exclusive {channel.name}")
            channel.exclusive.append(segment)
            required = channel.backlog_seen + gate.exclusive_per_channel
            if channel.floating and channel.available > required:
                extra = channel.floating.pop()
                self.buffer_pools.recycle(gate.pool, extra, f"floating {channel.name}")
        elif not channel.remote or (
            channel.available >= channel.backlog_seen + gate.exclusive_per_channel
        ):  # a local channel keeps no floating buffers (a recovered one came from the gate)
            self.buffer_pools.recycle(gate.pool, segment, holder)
        else:
            self.ledger.move(segment, holder, f"floating {channel.name}")
            channel.floating.append(segment)

    def _path_id(self, upstream: int, channel: str) -> int:
        key = (upstream, channel)
        path = self.path_ids.get(key)
        if path is None:
            path = self.path_ids[key] = len(self.path_ids) + 1
        return path

    def _do_process(self, task: Task, action: Action) -> None:
        record_id = task.ready.popleft()
        record = self.records[record_id]
        channel = task.current
        assert channel is not None
        key = (record_id, channel.gate)
        state = self.deliveries.get(key)
        if state != IN_FLIGHT:
            what = "without it being sent" if state is None else "twice"
            self._violate("exactly-once", f"{task.name} processed record {record_id} {what}")
        self.deliveries[key] = self.journal.step
        self.journal.delivered.append(record_id)
        # Order holds per path: records of one source subtask that took the same channels.
        # A recovered record's path before the checkpoint is not known (Flink persists bytes,
        # not routes), so its path starts afresh here; per-key order still covers it.
        upstream = self.paths.get((record_id, channel.producer))
        if upstream is None:
            upstream = -1 - record_id if record_id in self.recovered_records else 0
        hop = self.recovered_via.pop((record_id, task.name), channel.name)
        path = self._path_id(upstream, hop)
        self.paths[(record_id, task.name)] = path
        last = self.path_seq.get((record.source, path), -1)
        if record.seq <= last:
            self._violate(
                "channel-order",
                f"record {record_id} (seq {record.seq} of {record.source}) overtook seq {last} "
                f"on the path ending at {channel.name}",
            )
        self.path_seq[(record.source, path)] = record.seq
        # A broadcast input feeds the operator's broadcast state, not its keyed state, and
        # (as in the ITCase's broadcast functions) emits nothing downstream.
        broadcast = self.gates[channel.gate].exchange.partitioner is Partitioner.BROADCAST
        if task.key_groups is not None and not broadcast:
            # Reached over keyBy exchanges only, a key's records from one source subtask take
            # one path: they must reach the key's owner in order, across checkpoint and
            # recovery too (live data must not overtake recovered data).
            key_order = (task.operator, record.source, record.key)
            if task.operator in self.key_ordered and record.seq <= self.key_seq.get(key_order, -1):
                self._violate(
                    "key-order",
                    f"record {record_id} (seq {record.seq} of {record.source}, key "
                    f"{record.key}) reached {task.name} after seq {self.key_seq[key_order]}",
                )
            self.key_seq[key_order] = record.seq
            op = self.graph.operator(task.operator)
            group = key_group_of(record.key, op.effective_max_parallelism)
            first, last_group = task.key_groups
            if not first <= group <= last_group:
                self._violate(
                    "key-group",
                    f"{task.name} owns key groups [{first}, {last_group}] but got key "
                    f"{record.key} of key group {group}",
                )
            task.keyed_state[record.key] = task.keyed_state.get(record.key, 0) + 1
        task.processed += 1
        op = self.graph.operator(task.operator)
        task.busy = op.cost
        self.journal.note = f"record {record_id} key {record.key}"
        if "duplicate-record" in self.faults and record_id == 1 and state == IN_FLIGHT:
            task.ready.appendleft(record_id)
        if not broadcast:
            self._route(task, record)
        if not task.ready:
            self._release_current(task)

    # -- transport actions

    def _send(self, channel: Channel) -> None:
        sub = self.subpartitions[channel.subpartition]
        buffer = sub.queue.popleft()
        self.journal.changes.subpartition(sub.name)
        if buffer.is_event:
            current = self.checkpoint is not None and self.checkpoint.id == buffer.checkpoint
            if buffer.event == BARRIER and current:
                # The channel sees the barrier on arrival: persisting stops here.
                channel.barrier_arrived = buffer.checkpoint
                channel.pre_barrier = sum(1 for b in channel.received if not b.is_event)
                if channel.persisting == buffer.checkpoint:
                    channel.persisting = 0
                if not buffer.priority:
                    channel.upstream_blocked = True
            elif buffer.event == END_OF_OUTPUT_STATE:
                # PipelinedSubpartition: handing out a recovery-completion event blocks
                sub.blocked = "no-upstream-block" not in self.faults
            if buffer.priority:
                channel.received.appendleft(buffer)  # priority events overtake received data
            elif channel.in_recovery:
                channel.stash.append(buffer)  # consumed after the recovered buffers
            else:
                channel.received.append(buffer)
            self.journal.note = f"{buffer.event} to {channel.name}"
            return
        if channel.exclusive:
            target = channel.exclusive.pop()
            source = f"exclusive {channel.name}"
        else:
            target = channel.floating.pop()
            source = f"floating {channel.name}"
        self.ledger.move(target, source, f"received {channel.name}")
        # the same buffer, travelled: netty copies its bytes into the receiver's segment
        received = Buffer(
            target,
            buffer.capacity,
            buffer.used,
            list(buffer.fragments),
            uid=buffer.uid,
            recovered=buffer.recovered,
        )
        channel.received.append(received)
        if channel.persisting:
            self._persist_input(channel, received)
        self._drop(buffer.segment, f"queue {sub.name}", ReturnTo(_TO_SUBPARTITION, sub.name))
        channel.backlog_seen = sub.backlog
        self.journal.note = f"{buffer.used} bytes, backlog {channel.backlog_seen}"

    def _request_floating(self, channel: Channel) -> None:
        gate = self.gate_of(channel)
        segment = self.buffer_pools.request(gate.pool, f"floating {channel.name}")
        assert segment is not None
        channel.floating.append(segment)
        self.journal.changes.channel(channel.name)

    # ------------------------------------------------------------------ checkpoints

    def _trigger(self) -> None:
        number = self._next_checkpoint_id()
        self.checkpoint = CheckpointInProgress(number, self.unaligned, self.journal.step)
        restoring = next(
            (
                t
                for t in self.tasks.values()
                if t.kind is OperatorKind.SOURCE and t.phase is not _RUNNING and not t.finished
            ),
            None,
        )
        if restoring is not None:  # ``triggerCheckpointBarrier`` on a task not yet running
            self._decline(
                restoring,
                self.checkpoint,
                CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY,
                "the source is still restoring",
            )
            return
        for task in self.tasks.values():
            if task.kind is OperatorKind.SOURCE:
                task.trigger = number
                self.journal.changes.task(task.name)
        kind = "unaligned" if self.unaligned else "aligned"
        self.journal.note = f"{kind} checkpoint {number} triggered at the sources"

    def _do_checkpoint(self, task: Task, action: Action) -> None:
        checkpoint = self.checkpoint
        assert checkpoint is not None
        task.trigger = 0
        self._snapshot(task, checkpoint)
        self._broadcast_barrier(task, checkpoint)
        self._acknowledge(task, checkpoint)

    def _do_barrier(self, task: Task, action: Action) -> None:
        channel = self.channels[action.target]
        for c in (c for gate in task.gates for c in gate.channels):
            self.journal.changes.channel(c.name)  # a barrier may block or unblock every input
        if channel.remote:
            barrier = channel.received.popleft()
        else:
            barrier = self.subpartitions[channel.subpartition].queue.popleft()
            self.journal.changes.subpartition(channel.subpartition)
        checkpoint = self.checkpoint
        if checkpoint is None or barrier.checkpoint != checkpoint.id:
            self.journal.note = f"stale barrier of checkpoint {barrier.checkpoint} dropped"
            return
        channel.barrier_seen = checkpoint.id
        channel.persisting = 0
        # Flink's alternating barrier handler: an unaligned (priority) barrier starts an
        # unaligned snapshot of every input; an aligned one (the inputs of an operator fed by a
        # pointwise or broadcast exchange) blocks its channel until all barriers are in.
        if barrier.priority:
            if task.name not in checkpoint.snapshots:
                self._start_unaligned(task, checkpoint, channel)
                if self.checkpoint is not checkpoint:
                    return  # declined: the coordinator aborted it
        else:
            channel.blocked = True
        channels = [c for gate in task.gates for c in gate.channels]
        if all(c.barrier_seen == checkpoint.id for c in channels):
            if task.name not in checkpoint.snapshots:
                self._snapshot(task, checkpoint)
                self._broadcast_barrier(task, checkpoint)
            for c in channels:
                c.blocked = False
                c.upstream_blocked = False
            self._acknowledge(task, checkpoint)
        self.journal.note = f"barrier of checkpoint {checkpoint.id} on {channel.name}"

    def _start_unaligned(
        self, task: Task, checkpoint: CheckpointInProgress, arrived: Channel
    ) -> None:
        """Persist every input's in-flight data, snapshot state, pass the barrier on.

        A task recovering with V2 first cuts its recovered state
        (``ChannelState.onCheckpointStartedForAllInputs``): recovery barriers and the drainer's
        position; each channel in recovery persists its recovered buffers queued before its
        barrier; the undrained rest of the spill files follows on the writer.
        """
        not_ready = self._not_ready(task)
        if not_ready:
            self._decline(
                task,
                checkpoint,
                CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY,
                not_ready,
            )
            return
        cut = None
        if task.recovery_trigger is RecoveryCheckpointTrigger.DRAINER:
            cut = fetched_channel_state_drainer.snapshot_and_insert_barriers(
                self, task, checkpoint.id
            )
        for gate in task.gates:
            for channel in gate.channels:
                unconsumed = []
                if task.current is channel:
                    unconsumed += [self._whole(r) for r in task.ready]
                if channel.partial is not None:
                    record, received = channel.partial
                    total = self.records[record].serialized_length
                    unconsumed.append(Fragment(record, 0, received, total))
                if unconsumed:
                    self._persist(task, checkpoint, False, channel.name, tuple(unconsumed))
                if channel.in_recovery:
                    if cut is None:  # V1: every migrated buffer precedes the barrier
                        queued: list[Buffer] | None = [
                            b for b in channel.recovered_queue if not b.is_event
                        ]
                    else:
                        queued = fetched_channel_state_drainer.collect_pre_recovery_barrier(
                            channel, checkpoint.id
                        )
                    if queued is None:
                        if cut is not None and not cut.empty:
                            self.release_spill(task.name)
                        self._decline_missing_barrier(task, checkpoint, channel)
                        return
                    for buffer in queued:
                        self._persist(
                            task,
                            checkpoint,
                            False,
                            channel.name,
                            tuple(buffer.fragments),
                            buffer.segment,
                            buffer=buffer.uid,
                        )
                elif channel.remote:
                    data = [b for b in channel.received if not b.is_event]
                    if channel.barrier_arrived == checkpoint.id:
                        data = data[: channel.pre_barrier]  # later ones came after the barrier
                    if "forget-in-flight" in self.faults:
                        data = []
                    for buffer in data:
                        fragments = tuple(buffer.fragments)
                        self._persist(
                            task,
                            checkpoint,
                            False,
                            channel.name,
                            fragments,
                            buffer.segment,
                            buffer=buffer.uid,
                        )
                if channel is not arrived and checkpoint.id not in (
                    channel.barrier_seen,
                    channel.barrier_arrived if channel.remote else 0,
                ):
                    channel.persisting = checkpoint.id
        if cut is not None and not cut.empty:
            state = self.drainers[task.name].state
            assert state is not None
            chunks = cut.remaining_slice(state)
            if "forget-spill-slice" in self.faults:
                chunks = ()
            for position, (info, fragments) in enumerate(chunks):
                channel = task.gates[info.gate].channels[info.channel]
                last = position == len(chunks) - 1
                self._persist(
                    task,
                    checkpoint,
                    False,
                    channel.name,
                    fragments,
                    release_spill=task.name if last else "",
                )
            if not chunks:
                self.release_spill(task.name)
        self._snapshot(task, checkpoint)
        self._broadcast_barrier(task, checkpoint)

    def _not_ready(self, task: Task) -> str:
        """Why a task still restoring cannot take an unaligned snapshot ("" if it can)."""
        if task.recovery_trigger is RecoveryCheckpointTrigger.NOT_READY:
            return "recovery checkpoint trigger NOT_READY: the drainer is not installed yet"
        for gate in task.gates:
            if gate.demultiplexing:
                return f"{gate.name} still demultiplexes recovered data"
            for channel in gate.channels:
                if channel.recovered:
                    return f"{channel.name} is still a RecoveredInputChannel"
        return ""

    def _decline_missing_barrier(
        self, task: Task, checkpoint: CheckpointInProgress, channel: Channel
    ) -> None:
        """``collectPreRecoveryBarrier`` found no recovery barrier of this checkpoint."""
        why = f"no {RECOVERY_BARRIER} of checkpoint {checkpoint.id} in {channel.name}"
        self._decline(task, checkpoint, self.recovery_barrier_decline.reason, why)

    def _whole(self, record: int) -> Fragment:
        total = self.records[record].serialized_length
        return Fragment(record, 0, total, total)

    def _persist(
        self,
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
        writer = self.writers[self.writer_of[task.name]]
        uid = self.next_uid
        self.next_uid += 1
        writer.requests.append(
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
            )
        )
        if buffer >= 0:
            checkpoint.persisted_buffers.add(buffer)
        checkpoint.pending_writes[task.name] = checkpoint.pending_writes.get(task.name, 0) + 1
        if segment != HEAP:
            self.ledger.share(segment, writer.name)
        self.journal.changes.writer(writer.name)

    def _persist_input(self, channel: Channel, buffer: Buffer) -> None:
        checkpoint = self.checkpoint
        assert checkpoint is not None
        assert checkpoint.id == channel.persisting
        task = self.task_named(channel.task)
        fragments = tuple(buffer.fragments)
        self._persist(
            task, checkpoint, False, channel.name, fragments, buffer.segment, buffer=buffer.uid
        )
        if "persist-twice" in self.faults:  # FLINK-40016: a buffer persisted a second time
            self._persist(
                task, checkpoint, False, channel.name, fragments, buffer.segment, buffer=buffer.uid
            )

    def _drop(self, segment: int, holder: str, release: ReturnTo | None) -> None:
        """``holder`` is done with a segment; if it was the last holder, the segment is
        recycled to where it belongs."""
        destination = self.ledger.let_go(segment, holder, release)
        if destination is None:
            return
        if destination.kind is _TO_CHANNEL:
            self._recycle_to_channel(self.channels[destination.name], segment, holder)
            return
        if destination.kind is _TO_SUBPARTITION:
            sub = self.subpartitions[destination.name]
            partition = self.partition_of(self.tasks[sub.producer], sub)
            self.buffer_pools.recycle(partition.pool, segment, holder, sub.index)
        else:
            partition = self.partition_named(destination.name)
            self.buffer_pools.recycle(partition.pool, segment, holder, -1)

    def _write_channel_state(self, writer: ChannelStateWriter) -> None:
        request = writer.requests.popleft()
        checkpoint = self.checkpoint
        # a task acknowledges only after its writes, so its checkpoint is still in progress
        assert checkpoint is not None
        assert checkpoint.id == request.checkpoint
        into = checkpoint.outputs if request.output else checkpoint.inputs
        into.setdefault(request.channel, []).append(PersistedBuffer(request.fragments))
        self.journal.persisted.extend(f.record for f in request.fragments)
        checkpoint.pending_writes[request.task] -= 1
        side = "output" if request.output else "input"
        self.journal.note = (
            f"{side} state of {request.channel}: {len(request.fragments)} fragment(s)"
        )
        if request.segment != HEAP:
            self._drop(request.segment, writer.name, None)
        if request.release_spill:
            self.release_spill(request.release_spill)
        self._maybe_acknowledge(self.task_named(request.task), checkpoint)

    def _snapshot(self, task: Task, checkpoint: CheckpointInProgress) -> None:
        op = self.graph.operator(task.operator)
        name = self.task_keys[task.name]
        checkpoint.snapshots[task.name] = SubtaskState(
            subtask=name,
            operator=op.name,
            index=task.index,
            snapshot_step=self.journal.step,
            key_groups=None if task.key_groups is None else KeyGroupRange(*task.key_groups),
            keyed_state=tuple(sorted(task.keyed_state.items())),
            source_splits=tuple(task.splits.items()),
        )

    def _broadcast_barrier(self, task: Task, checkpoint: CheckpointInProgress) -> None:
        """Finish open buffers, then put the barrier into every subpartition: at the head,
        persisting the data it overtakes, on exchanges Flink checkpoints unaligned; at the
        tail on the others (pointwise and broadcast exchanges, and every input of an operator
        that has one, are always aligned)."""
        for partition in task.partitions:
            overtakes = checkpoint.unaligned and self.graph.checkpoints_unaligned(
                partition.exchange
            )
            for sub in partition.subpartitions:
                self.journal.changes.subpartition(sub.name)
                if sub.builder is not None and sub.builder.used:
                    self._finish_builder(sub)
                barrier = self.new_buffer(
                    HEAP, 0, event=BARRIER, checkpoint=checkpoint.id, priority=overtakes
                )
                if overtakes:
                    for buffer in sub.queue:
                        if not buffer.is_event:
                            fragments = tuple(buffer.fragments)
                            self._persist(
                                task,
                                checkpoint,
                                True,
                                sub.name,
                                fragments,
                                buffer.segment,
                                buffer=buffer.uid,
                            )
                    sub.queue.appendleft(barrier)
                else:
                    sub.queue.append(barrier)

    def _acknowledge(self, task: Task, checkpoint: CheckpointInProgress) -> None:
        """The task has its snapshot and every barrier; it acknowledges once its writer has
        written all the channel state it was given."""
        checkpoint.barriers_complete.add(task.name)
        self._maybe_acknowledge(task, checkpoint)

    def _maybe_acknowledge(self, task: Task, checkpoint: CheckpointInProgress) -> None:
        if (
            task.name in checkpoint.barriers_complete
            and not checkpoint.pending_writes.get(task.name)
            and task.name not in checkpoint.acknowledged
        ):
            checkpoint.acknowledged.add(task.name)
            if len(checkpoint.acknowledged) == len(self.tasks):
                self._complete(checkpoint)

    def _complete(self, progress: CheckpointInProgress) -> None:
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
                into.append(ChannelState(self.task_keys[task.name], name, info, tuple(buffers)))

        for task in self.tasks.values():
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
            unaligned=progress.unaligned,
            trigger_step=progress.trigger_step,
            completion_step=self.journal.step,
            subtasks=tuple(
                progress.snapshots[t.name]
                for t in self.tasks.values()
                if t.name in progress.snapshots
            ),
            input_channel_state=tuple(inputs),
            result_subpartition_state=tuple(outputs),
            graph=self.graph,
            records=tuple(
                self.records[r]
                for r in sorted(
                    {f.record for state in (*inputs, *outputs) for f in state.fragments}
                )
            ),
            persisted_buffers=frozenset(progress.persisted_buffers),
        )
        self.completed.append(checkpoint)
        self.checkpoint = None
        self.last_checkpoint_end = self.journal.step
        invariants.check_checkpoint(self, checkpoint, progress)

    # ------------------------------------------------------------------ status

    def is_finished(self) -> bool:
        if self.job_failed:
            return True  # Flink restarts the job from its last completed checkpoint
        return (
            all(task.finished for task in self.tasks.values())
            and all(not sub.queue for sub in self.subpartitions.values())
            and all(not c.received for c in self.channels.values())
            and all(not w.requests for w in self.writers.values())
            and all(r.finished for r in self.readers.values())
            and all(d.finished or d.state is None for d in self.drainers.values())
        )

    def waits(self) -> list[Wait]:
        waits = []
        for task in self.tasks.values():
            if task.finished or self._task_action(task) is not None:
                continue
            if task.pending:
                sub = self.subpartitions[task.pending[0].subpartition]
                partition = self.partition_of(task, sub)
                holders = self._holders_of_pool(partition)
                waits.append(Wait(task.name, f"a buffer of {partition.pool.name}", holders))
            else:
                waits += self._input_waits(task)
            if task.phase is not _RUNNING:
                if task.name in self.drainers:
                    waits += fetched_channel_state_drainer.waits(self, task)
                else:
                    waits += recovery.conversion_waits(self, task)
        for reader in self.readers.values():
            wait = self._reader_wait(reader)
            if wait is not None:
                waits.append(wait)
        for drainer in self.drainers.values():
            wait = fetched_channel_state_drainer.drainer_wait(self, drainer)
            if wait is not None:
                waits.append(wait)
        for channel in self.channels.values():
            sub = self.subpartitions[channel.subpartition]
            if channel.remote and sub.queue and not self._transport_actions(channel):
                if channel.recovered:
                    what = f"{channel.name} to be requested (its gate is still recovering)"
                    holder = self._producer_actor(channel)
                    if not channel.state_consumed:
                        holder = channel.task  # it has recovered state to consume first
                else:
                    what, holder = f"credit of {channel.name}", channel.task
                waits.append(Wait(f"netty {channel.name}", what, (holder,)))
        return waits

    def _input_waits(self, task: Task) -> list[Wait]:
        """A task with nothing to read waits for data on its unfinished channels, from their
        producers; a recovered channel whose state is consumed waits for its gate's conversion.

        A sequential reader waits on its selected input only, whatever the others hold: that
        is how it can wait for the conversion of input 0 while the conversion (``all-gates``)
        waits for input 1's recovered state, which the reader leaves unread.
        """
        selected = self._selected_input(task)
        if selected < 0:
            producers = {
                self._producer_actor(c)
                for gate in task.gates
                for c in gate.channels
                if not c.finished
            }
            return [Wait(task.name, "input data", tuple(sorted(producers)))]
        gate = task.gates[selected]
        live = {self._producer_actor(c) for c in gate.channels if not c.finished}
        conversion = {h for h in live if h.startswith(REQUEST_PARTITIONS + " ")}
        waits = []
        if conversion:
            waits.append(
                Wait(
                    task.name,
                    f"the conversion of {gate.name}, whose recovered state it has consumed: "
                    f"input {selected} ends only with live data and EndOfPartitionEvent, and "
                    "no other input is read until it does (InputSelectable)",
                    tuple(sorted(conversion)),
                )
            )
        if live - conversion:
            waits.append(
                Wait(
                    task.name,
                    f"input data on {gate.name} (input {selected}, the only one read until it "
                    "ends: InputSelectable)",
                    tuple(sorted(live - conversion)),
                )
            )
        return waits

    def _reader_wait(self, reader: ChannelStateReader) -> Wait | None:
        """A blocked reader waits for a buffer of the channel it recovers into; the holders are
        whoever has that channel's recovery buffers or the gate's floating ones."""
        task = self.task_named(reader.task)
        if reader.finished or task.phase is _RESTORING_OUTPUT:
            return None
        if recovery.reader_actions(self, reader) is not None:
            return None
        if reader.pre_channel:
            channel = self.channels[reader.pre_channel]
        elif reader.chunks:
            chunk = reader.chunks[0]
            channel = task.gates[chunk.index].channels[chunk.targets[0]]
        else:
            return None
        gate = self.gate_of(channel)
        if not channel.recovery_segments and gate.exclusive_per_channel:
            return Wait(reader.name, f"{gate.exclusive_per_channel} exclusive buffers", ())
        names = {c.name for c in gate.channels}
        holders = set()
        for owner in self.owner:
            kind, _, name = owner.partition(" ")
            if kind in ("pre-filter", "post-filter") and name in names:
                holders.add(reader.name)
            elif kind == "recovered" and name in names:
                holders.add(self.channels[name].task)
            elif kind == "deserializer" and name == task.name:
                holders.add(task.name)
        return Wait(
            reader.name, f"a buffer of recovered channel {channel.name}", tuple(sorted(holders))
        )

    def _producer_actor(self, channel: Channel) -> str:
        if channel.in_recovery and channel.task in self.drainers:
            return self.drainers[channel.task].name
        if channel.recovered:
            if channel.state_consumed:  # nothing more until the gate is converted
                return f"{REQUEST_PARTITIONS} {channel.gate}"
            return self.readers[channel.task].name
        return f"netty {channel.name}" if channel.remote else channel.producer

    def _holders_of_pool(self, partition: ResultPartition) -> tuple[str, ...]:
        """Who holds the buffers of a result partition's pool: the holders of shared ones
        that return to it, and the consumers (or transports) of its queued buffers."""
        holders = set()
        name = partition.name
        for segment, returns in self.ledger.returns.items():
            kind = returns.kind
            if (kind is ReturnKind.PARTITION and returns.name == name) or (
                kind is ReturnKind.SUBPARTITION
                and self.subpartitions[returns.name].partition == name
            ):
                holders.add(self.owner[segment])  # e.g. the writer that has yet to write it
        owner, home, global_pool = self.owner, self.home, partition.pool.global_pool
        for sub in partition.subpartitions:
            queued = f"queue {sub.name}"
            if any(
                owner[b.segment] == queued and home[b.segment] == global_pool
                for b in sub.queue
                if b.event is None
            ):
                channel = self.channels[sub.channel]
                holders.add(self._producer_actor(channel) if channel.remote else channel.task)
        return tuple(sorted(holders))

    # ------------------------------------------------------------------ invariants

    def check_consistency(self, *, idle_pools: bool = True) -> None:
        """Every segment is where the ledger says (``invariants.check_consistency``)."""
        invariants.check_consistency(self, idle_pools=idle_pools)

    def check_end(self) -> None:
        """At the end of a finished run: nothing lost, nothing leaked."""
        invariants.check_end(self)

    def fingerprint(self) -> Hashable:
        return (
            tuple(self.owner),
            tuple(
                (
                    n,
                    tuple(
                        (b.segment, b.used, tuple(b.fragments), b.event, b.checkpoint)
                        for b in s.queue
                    ),
                    None if s.builder is None else (s.builder.segment, s.builder.used),
                )
                for n, s in self.subpartitions.items()
            ),
            tuple(
                (
                    n,
                    tuple((b.segment, b.event) for b in c.received),
                    c.backlog_seen,
                    c.finished,
                    c.partial,
                    c.barrier_seen,
                    c.barrier_arrived,
                    c.persisting,
                    c.blocked,
                    c.upstream_blocked,
                    c.recovered,
                    c.state_consumed,
                    c.in_recovery,
                    len(c.recovered_queue),
                    len(c.stash),
                )
                for n, c in self.channels.items()
            ),
            self.gate_conversion.value,
            tuple(g.converted for g in self.gates.values()),
            tuple(
                (
                    n,
                    t.busy,
                    t.emitted,
                    tuple(t.splits.items()),
                    t.processed,
                    t.finished,
                    tuple(t.ready),
                    tuple((o.subpartition, o.record, o.written) for o in t.pending),
                    t.trigger,
                )
                for n, t in self.tasks.items()
            ),
            tuple((n, tuple(w.requests)) for n, w in self.writers.items()),
            tuple(sorted((k, tuple(v)) for k, v in self.shares.items())),
            tuple(
                (
                    n,
                    tuple(r.chunks),
                    r.finished,
                    r.pre,
                    tuple(r.pending),
                    tuple((b.segment, b.used) for b in r.posts),
                    r.heap_segment_in_use,
                )
                for n, r in self.readers.items()
            ),
            tuple(
                (n, d.finished, None if d.cursor is None else (d.cursor.segment, d.cursor.consumed))
                for n, d in self.drainers.items()
            ),
            len(self.completed),
            tuple(self.expired),
            None
            if self.checkpoint is None
            else (self.checkpoint.id, tuple(sorted(self.checkpoint.acknowledged))),
        )


#: what a task's action of each kind does, by its kind as actions and traces name it
_TASK_HANDLERS: dict[str, Callable[[NetworkWorld, Task, Action], None]] = {
    "compute": NetworkWorld._do_compute,
    "emit": NetworkWorld._do_emit,
    "request-buffer": NetworkWorld._do_request_buffer,
    "write": NetworkWorld._do_write,
    "finish": NetworkWorld._do_finish,
    "poll": NetworkWorld._do_poll,
    "process": NetworkWorld._do_process,
    "checkpoint": NetworkWorld._do_checkpoint,
    "barrier": NetworkWorld._do_barrier,
    "recover-output": recovery.do_recover_output,
    "finish-output": recovery.do_finish_output,
    "convert": recovery.do_convert,
    "request-partitions": lambda world, task, action: (
        fetched_channel_state_drainer.do_request_partitions(world, task)
    ),
    "install-drainer": lambda world, task, action: fetched_channel_state_drainer.do_install_drainer(
        world, task
    ),
}


@functools.lru_cache(maxsize=4096)
def hash_text(text: str) -> int:
    """A stable (not per-process salted) hash of a name, for seeding."""
    value = 0
    for char in text.encode():
        value = (value * 131 + char) & 0xFFFFFFFFFFFF
    return value
