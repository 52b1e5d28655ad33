"""V2 recovery after the fetch: partitions requested with recovery, the drainer, the trigger.

Current Flink (``StreamTask.recoverChannelsWithCheckpointing``) goes on from the spill files
(``spilling_handler``) in three mails and one IO-thread job:

1. *Request partitions* (one mail for every gate): the empty recovered channels become local
   and remote channels. With state to drain they are built ``needsRecovery``: *in recovery*,
   each takes its exclusive buffers (a local channel too, which otherwise has none), a remote
   one announces no credit, so its producer can send events only: priority ones (unaligned
   barriers) go ahead, ordinary ones (``EndOfOutputChannelStateEvent``) are stashed until the
   recovered state is consumed; a local one reads its subpartition only for a priority event.
2. *Install the drainer as the recovery checkpoint trigger*: the restore future completes, the
   task is RUNNING. Until here the trigger is NOT_READY: a checkpoint that reaches the task is
   declined as ``CHECKPOINT_DECLINED_TASK_NOT_READY``.
3. *Drain* (``FetchedChannelStateDrainer``, IO thread): per segment, a buffer of the physical
   channel (exclusive first, then a floating one of the gate), filled with at most the rest of
   the segment, delivered into the channel's recovered queue, position committed. At the end an
   ``EndOfFetchedChannelStateEvent`` on every channel, and the files' last reference released.
4. The task consumes the recovered buffers like live ones; polling the end event takes the
   channel out of recovery (``onRecoveredStateConsumed``: stashed events released, credit
   announced). Once no channel is in recovery, the trigger is NO_OP.

A checkpoint meanwhile (``snapshot_and_insert_barriers``): a ``RecoveryCheckpointBarrier``
into every channel still in recovery and the drainer's committed position as a
``FetchedChannelStateSnapshot``, in one step (Flink: under the drainer's lock).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorRef, by_name, request_partitions
from flinkstate.runtime.buffer.buffer import HEAP, Buffer, BufferFactory
from flinkstate.runtime.buffer.ledger import Changes
from flinkstate.runtime.checkpoint.channel.fetched_channel_state import (
    EMPTY_SNAPSHOT,
    FetchedChannelStateDrainer,
    FetchedChannelStateSnapshot,
)
from flinkstate.runtime.checkpoint.channel.happenings import (
    BytesDrained,
    DrainerInstalled,
    DrainFinished,
    GatesConverted,
    InstallDrainerFailed,
    RecoveredStateConsumed,
    RequestPartitionsFailed,
    TriggerNoOpInRecovery,
)
from flinkstate.runtime.checkpoint.coordinator import CoordinatorWorld
from flinkstate.runtime.events import END_OF_FETCHED_STATE, RECOVERY_BARRIER
from flinkstate.runtime.options import (
    Fault,
    NoOpTriggerAfter,
    RecoveryAbort,
    RecoveryCheckpointTrigger,
)
from flinkstate.runtime.partition.consumer.recovered_channel import (
    RecoveringTask,
    buffer_holders,
    convert_gate,
    refuse_conversion,
)
from flinkstate.runtime.shuffle.config import NetworkConfig
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.sim.deadlock import Wait

if TYPE_CHECKING:
    from flinkstate.runtime.partition.consumer.input_gate import Channel, Gate


class DrainingTask(RecoveringTask, Protocol):
    """A restored task as V2's drain sees it (Flink's ``StreamTask`` in
    ``recoverChannelsWithCheckpointing``). The task (``Task``) is one; mypy checks it at every
    call."""

    @property
    def key(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def gates(self) -> list[Gate]: ...

    phase: TaskPhase
    recovery_trigger: RecoveryCheckpointTrigger

    def set_recovery_trigger(
        self, trigger: RecoveryCheckpointTrigger, changes: Changes
    ) -> None: ...


class DrainerWorld(CoordinatorWorld, BufferFactory, Protocol):
    """What V2's drainer reaches of the world, beside what the coordinator does: a task's
    failure (a drain that fails fails the task), the network configuration (the buffers it
    drains into) and the world's buffer factory. The world (``NetworkState``) is one; mypy
    checks it at every call."""

    def fail_externally(self, task: str, cause: str) -> None: ...
    def task_named(self, name: str) -> DrainingTask: ...
    @property
    def drainers(self) -> dict[str, FetchedChannelStateDrainer]: ...
    @property
    def config(self) -> NetworkConfig: ...


# The hot path's enum members, read once: a member read through its class costs about 45 ns on
# Python 3.11, and a step reads several.
_REQUEST_PARTITIONS = ActionKind.REQUEST_PARTITIONS
_INSTALL_DRAINER = ActionKind.INSTALL_DRAINER
_DRAIN = ActionKind.DRAIN
_FINISH_DRAIN = ActionKind.FINISH_DRAIN
_MISSING_RECOVERY_BARRIER = Fault.MISSING_RECOVERY_BARRIER

# -- task mails


def conversion_buffers(world: DrainerWorld, task: DrainingTask, needs_recovery: bool) -> int:
    """Exclusive buffers the conversion takes: every channel's with recovery (local ones have a
    buffer manager only then), else the remote ones'."""
    return sum(
        gate.exclusive_per_channel
        for gate in task.gates
        for channel in gate.channels
        if channel.remote or needs_recovery
    )


def _held_for_fetch(task: DrainingTask) -> int:
    return sum(len(c.recovery.exclusive) for gate in task.gates for c in gate.channels)


def task_action(world: DrainerWorld, task: DrainingTask) -> ActionKind | None:
    """The task's next V2 recovery mail, if one may run now."""
    drainer = world.drainers[task.name]
    reader = world.readers[task.name]
    if not reader.finished:
        return None
    if not all(g.converted for g in task.gates):
        needed = conversion_buffers(world, task, drainer.state is not None)
        free = world.buffer_pools.free_in(task.gates[0].pool.global_pool)
        return _REQUEST_PARTITIONS if free + _held_for_fetch(task) >= needed else None
    if drainer.state is not None and not drainer.installed:
        return _INSTALL_DRAINER
    return None


def do_request_partitions(world: DrainerWorld, task: DrainingTask) -> None:
    """Convert every gate; with state to drain, every channel starts in recovery."""
    drainer = world.drainers[task.name]
    needs_recovery = drainer.state is not None
    if needs_recovery and world.options.abort_recovery is RecoveryAbort.REQUEST_PARTITIONS:
        world.journal.tell(RequestPartitionsFailed())
        world.fail_externally(task.key, "its request-partitions mail failed (abort_recovery)")
        return
    for gate in task.gates:
        cause = refuse_conversion(world, gate)  # the channels stayed empty: never refused
        if cause is not None:
            world.fail_externally(task.key, cause)
            return
    for gate in task.gates:
        convert_gate(world, gate, lambda channel: channel.remote or needs_recovery)
        for channel in gate.channels:
            channel.recoverable.in_recovery = needs_recovery
            channel.recovery.state_consumed = not needs_recovery
    if needs_recovery:
        world.journal.tell(GatesConverted(needs_recovery=True))
    else:
        task.recovery_trigger = RecoveryCheckpointTrigger.NO_OP
        task.phase = TaskPhase.RUNNING
        world.journal.tell(GatesConverted(needs_recovery=False))


def do_install_drainer(world: DrainerWorld, task: DrainingTask) -> None:
    """The drainer becomes the trigger; restore() returns: the task is RUNNING."""
    drainer = world.drainers[task.name]
    assert drainer.state is not None
    if world.options.abort_recovery is RecoveryAbort.INSTALL_DRAINER:
        world.journal.tell(InstallDrainerFailed())
        world.fail_externally(task.key, "its drainer-installing mail failed (abort_recovery)")
        return
    drainer.install(world.journal.changes)
    task.recovery_trigger = RecoveryCheckpointTrigger.DRAINER
    task.phase = TaskPhase.RUNNING
    world.journal.tell(DrainerInstalled())


# -- the drainer (IO thread)


def _physical(world: DrainerWorld, drainer: FetchedChannelStateDrainer) -> Channel | None:
    """The channel of the next buffer, or None when everything is delivered."""
    assert drainer.state is not None
    assert drainer.cursor is not None
    segments = drainer.state.segments
    if drainer.cursor.segment >= len(segments):
        return None
    info = segments[drainer.cursor.segment].channel
    task = world.task_named(drainer.task)
    return task.gates[info.gate].channels[info.channel]


def _can_take(world: DrainerWorld, channel: Channel) -> bool:
    return bool(channel.buffers.exclusive) or world.buffer_pools.can_request(
        world.gate_of(channel).pool, False
    )


def drainer_action(
    world: DrainerWorld, drainer: FetchedChannelStateDrainer
) -> tuple[ActionKind, str] | None:
    if not drainer.installed or drainer.finished:
        return None
    channel = _physical(world, drainer)
    if channel is None:
        return (_FINISH_DRAIN, "")
    return (_DRAIN, channel.name) if _can_take(world, channel) else None


def drain_step(world: DrainerWorld, drainer: FetchedChannelStateDrainer) -> None:
    """Request a buffer of the physical channel, fill it from the segment, deliver, commit."""
    state, cursor = drainer.state, drainer.cursor
    assert state is not None
    assert cursor is not None
    if not drainer.draining:
        drainer.draining = True
        world.release_spill(drainer.task)  # the fetch's reference: the root reader's now
    channel = _physical(world, drainer)
    assert channel is not None
    taken = cursor.next_buffer(state, world.config.segment_size)
    assert taken is not None
    _, fragments = taken
    holder = channel.owners.recovered
    changes = world.journal.changes
    exclusive = channel.request_exclusive_buffer(changes)
    if exclusive is not None:
        segment = exclusive
        world.ledger.move(segment, channel.owners.exclusive, holder)
    else:
        floating = world.buffer_pools.request(world.gate_of(channel).pool, holder)
        assert floating is not None
        segment = floating
    used = sum(f.length for f in fragments)
    channel.on_recovered_state_buffer(
        world.new_buffer(segment, world.config.segment_size, used, list(fragments), recovered=True),
        changes,
    )
    cursor.commit(state, used)
    world.journal.tell(BytesDrained(used, channel.name))


def finish_drain(world: DrainerWorld, drainer: FetchedChannelStateDrainer) -> None:
    """Every channel gets its end event; the root reader's reference is released."""
    assert drainer.state is not None
    drainer.finished = True
    task = world.task_named(drainer.task)
    for gate in task.gates:
        for channel in gate.channels:
            channel.on_recovered_state_buffer(
                world.new_buffer(HEAP, 0, event=END_OF_FETCHED_STATE), world.journal.changes
            )
    if not drainer.draining:  # nothing was delivered: the fetch's reference is still held
        drainer.draining = True
        world.release_spill(drainer.task)
    deleted = world.release_spill(drainer.task)
    world.journal.tell(DrainFinished(bool(deleted)))
    if world.options.no_op_trigger_after is NoOpTriggerAfter.DRAIN_DONE:
        # PR #28554 before its review: the trigger is reset when the drain's future completes,
        # while every channel is still in recovery until the task polls its end event
        task.set_recovery_trigger(RecoveryCheckpointTrigger.NO_OP, world.journal.changes)
        world.journal.tell_also(TriggerNoOpInRecovery())


# -- the consumer


def recovery_head(world: DrainerWorld, channel: Channel) -> Buffer | None:
    """What a task sees first on a channel in recovery: a pending priority event of the live
    side (an unaligned barrier), else the next recovered buffer."""
    if channel.remote:
        live = channel.received[0] if channel.received else None
    else:
        sub = world.subpartitions[channel.subpartition]
        live = sub.queue[0] if sub.queue else None
    if live is not None and live.priority:
        return live
    return channel.recovery.queue[0] if channel.recovery.queue else None


def on_recovered_state_consumed(world: DrainerWorld, task: DrainingTask, channel: Channel) -> None:
    """``onRecoveredStateConsumed``: out of recovery, stashed events released, credit open."""
    channel.on_recovered_state_consumed(world.journal.changes)
    reset_at_drain = (
        world.options.no_op_trigger_after is NoOpTriggerAfter.DRAIN_DONE
        and task.name in world.drainers
    )
    if not reset_at_drain and all(
        not c.recoverable.in_recovery for gate in task.gates for c in gate.channels
    ):
        task.recovery_trigger = RecoveryCheckpointTrigger.NO_OP
        world.journal.tell(RecoveredStateConsumed(channel.name, trigger_no_op=True))
    else:
        world.journal.tell(RecoveredStateConsumed(channel.name, trigger_no_op=False))


def snapshot_and_insert_barriers(
    world: DrainerWorld, task: DrainingTask, checkpoint: int
) -> FetchedChannelStateSnapshot:
    """A sentinel into every channel still in recovery and the committed position, together."""
    drainer = world.drainers.get(task.name)
    for gate in task.gates:
        for channel in gate.channels:
            if (
                channel.recoverable.in_recovery
                and _MISSING_RECOVERY_BARRIER not in world.options.faults
            ):
                channel.on_recovered_state_buffer(
                    world.new_buffer(HEAP, 0, event=RECOVERY_BARRIER, checkpoint=checkpoint),
                    world.journal.changes,
                )
    if drainer is None or drainer.finished or drainer.state is None or drainer.cursor is None:
        return EMPTY_SNAPSHOT
    drainer.state.acquire()  # released by the channel-state writer once it read the slice
    return drainer.cursor.snapshot(drainer.state)


# -- waits for deadlock reports


def waits(world: DrainerWorld, task: DrainingTask) -> list[Wait[ActorRef]]:
    """The V2 mail that cannot run: request partitions without the exclusive buffers."""
    drainer = world.drainers.get(task.name)
    reader = world.readers.get(task.name)
    if drainer is None or reader is None or not reader.finished:
        return []
    if all(g.converted for g in task.gates):
        return []
    needed = conversion_buffers(world, task, drainer.state is not None)
    nbp = task.gates[0].pool.global_pool
    return [
        Wait(
            request_partitions(task.key),
            f"{needed} exclusive buffers of {nbp} for the channels it converts",
        )
    ]


def drainer_wait(world: DrainerWorld, drainer: FetchedChannelStateDrainer) -> Wait[ActorRef] | None:
    """A drainer without a buffer for its channel waits for whoever holds that channel's."""
    if not drainer.installed or drainer.finished or drainer_action(world, drainer) is not None:
        return None
    channel = _physical(world, drainer)
    assert channel is not None
    holders = buffer_holders(world, world.gate_of(channel), received=True)
    return Wait(world.actor(drainer.name), f"a buffer of {channel.name}", by_name(holders))
