"""The checkpoint coordinator: when a checkpoint is triggered, expires, is declined or fails.

Flink's ``CheckpointCoordinator`` triggers a checkpoint at the sources once every task is
RUNNING (``DefaultCheckpointPlanCalculator``), an interval after the last one ended; aborts it
when it expires (``execution.checkpointing.timeout``) or a task declines it; and counts the
failures towards the tolerable ones (``CheckpointFailureManager``), failing the job beyond.

During a failover the periodic scheduler is stopped (a task left RUNNING:
``ExecutionTrackingCheckpointCoordinatorDeActivator``), but a checkpoint asked for by hand
still reaches the plan calculator (:mod:`~flinkstate.runtime.checkpoint.checkpoint_plan`), whose
rule for FAILED and CANCELED subtasks is FLINK-40482.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from flinkstate.runtime.action_kind import ActionKind, action
from flinkstate.runtime.actor_ref import COORDINATOR
from flinkstate.runtime.buffer.buffer import HEAP
from flinkstate.runtime.buffer.ledger import Changes
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.checkpoint.checkpoint import (
    CheckpointInProgress,
)
from flinkstate.runtime.checkpoint.checkpoint_plan import (
    CheckpointPlan,
    PlanRefusal,
    calculate_plan,
)
from flinkstate.runtime.checkpoint.coordinator_state import CoordinatorState
from flinkstate.runtime.checkpoint.happenings import (
    CheckpointDeclined,
    CheckpointExpired,
    CheckpointTriggered,
    ManualCheckpointFailed,
    ManualCheckpointNotTaken,
    ManualCheckpointPlanned,
    ManualCheckpointRefused,
)
from flinkstate.runtime.execution_state import ExecutionState
from flinkstate.runtime.jobgraph import JobGraph, OperatorKind, SubtaskId
from flinkstate.runtime.options import (
    CheckpointFailure,
    CheckpointFailureReason,
    job_fails,
)
from flinkstate.runtime.partition.consumer import recycling
from flinkstate.runtime.partition.consumer.input_gate import Gate
from flinkstate.runtime.partition.consumer.recycling import RecyclingWorld
from flinkstate.runtime.partition.record_writer import ProducingTask
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.sim.action import Action


class DroppedWrite(Protocol):
    """A write request an abort drops: the segment it retained and the spill reference it
    held."""

    @property
    def segment(self) -> int: ...
    @property
    def release_spill(self) -> str: ...


class AbortedWriter(Protocol):
    """A channel-state writer as the coordinator's abort sees it (``ChannelStateWriter.abort``):
    it drops an aborted checkpoint's requests, which let go of what they held."""

    @property
    def owner(self) -> Owner: ...
    def abort(self, checkpoint: int) -> Sequence[DroppedWrite]: ...


class FailoverUnderWay(Protocol):
    """A failover under way as the coordinator sees it (the scheduler's
    ``FailureHandlingResult``): the subtasks it cancels and restarts."""

    @property
    def to_restart(self) -> tuple[SubtaskId, ...]: ...


class CheckpointableTask(ProducingTask, Protocol):
    """A subtask as the coordinator sees it (Flink's ``CheckpointableTask``, as the
    coordinator reaches it through its ``Execution``): what it is, where it is in its restore
    and run, and the checkpoints it is told to trigger and abort, beside the partitions it
    writes. The task (``Task``) is one; mypy checks it at every call."""

    @property
    def key(self) -> str: ...
    @property
    def operator(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def kind(self) -> OperatorKind: ...
    @property
    def phase(self) -> TaskPhase: ...
    @property
    def splits(self) -> dict[str, int]: ...
    @property
    def execution_state(self) -> ExecutionState: ...
    def trigger_checkpoint(self, checkpoint: int, changes: Changes) -> None: ...
    def abort_checkpoint(self, checkpoint: int) -> None: ...


class EnabledActions(Protocol):
    """The world's cache of enabled actions, as the coordinator and a teardown see it: told
    when what every actor may do changes at once."""

    def invalidate(self) -> None: ...


class CoordinatorWorld(RecyclingWorld, Protocol):
    """What the checkpoint coordinator reaches of the world, beside what recycling (an
    aborted checkpoint's buffers) does: its own state, the cache of enabled actions, a job that
    fails (Flink's ``CheckpointFailureManager.FailJobCallback``), the job graph and its gates
    (a checkpoint's plan), a failover under way (it stops the periodic trigger), the
    channel-state writers (an abort drops their requests), V2's spill files, the sources, and
    where it looks first to see the restore over. The world (``NetworkState``) is one; mypy
    checks it at every call."""

    @property
    def checkpoints(self) -> CoordinatorState: ...
    @property
    def actions(self) -> EnabledActions: ...
    def fail_job(self, why: str) -> None: ...
    @property
    def graph(self) -> JobGraph: ...
    @property
    def tasks(self) -> Mapping[str, CheckpointableTask]: ...
    @property
    def gates(self) -> dict[str, Gate]: ...
    @property
    def failover(self) -> FailoverUnderWay | None: ...
    @property
    def writers(self) -> Mapping[str, AbortedWriter]: ...
    def release_spill(self, task: str) -> bool: ...
    @property
    def source_keys(self) -> tuple[str, ...]: ...

    restore_over: bool
    restore_hint: tuple[str, str] | None


# The hot path's enum members, read once: a member read through its class costs about 45 ns on
# Python 3.11, and a step reads several.
_RUNNING = TaskPhase.RUNNING


def coordinator_actions(world: CoordinatorWorld) -> tuple[Action, ...]:
    if world.checkpoints.pending is None:
        if world.failover is not None:
            if manual_checkpoint_due(world):
                return (action(COORDINATOR, ActionKind.MANUAL_CHECKPOINT),)
        elif can_trigger(world):
            number = next_checkpoint_id(world)
            return (action(COORDINATOR, ActionKind.TRIGGER, f"checkpoint {number}"),)
    elif can_expire(world):
        pending = world.checkpoints.pending.id
        return (action(COORDINATOR, ActionKind.EXPIRE, f"checkpoint {pending}"),)
    return ()


def next_checkpoint_id(world: CoordinatorWorld) -> int:
    """One more than every id drawn: completed and failed checkpoints, not counting plans
    refused before an id was drawn (id 0)."""
    drawn = sum(1 for f in world.checkpoints.failures if f.checkpoint)
    return len(world.checkpoints.completed) + drawn + 1


def can_expire(world: CoordinatorWorld) -> bool:
    return (
        world.checkpoints.pending is not None
        and world.options.checkpoint_timeout > 0
        and world.journal.step - world.checkpoints.pending.trigger_step
        >= world.options.checkpoint_timeout
    )


def expire(world: CoordinatorWorld) -> None:
    """``execution.checkpointing.timeout``: the coordinator aborts the checkpoint; tasks
    stop persisting for it, drop what their writers have not written, unblock aligned
    channels; its barriers still in flight are ignored where they arrive."""
    progress = world.checkpoints.pending
    assert progress is not None
    world.checkpoints.expired.append(progress.id)
    abort(world, progress)
    waiting = sorted(
        t.name
        for t in world.tasks.values()
        if progress.waits_for(t.name) and t.name not in progress.acknowledged
    )
    fail(
        world,
        CheckpointFailure(
            progress.id,
            CheckpointFailureReason.CHECKPOINT_EXPIRED,
            world.journal.step + 1,  # the step this action makes, as the stepper counts
            detail=f"after {world.options.checkpoint_timeout} steps",
        ),
    )
    world.journal.tell(
        CheckpointExpired(progress.id, world.options.checkpoint_timeout, tuple(waiting))
    )


def abort(world: CoordinatorWorld, progress: CheckpointInProgress) -> None:
    """The coordinator aborts a checkpoint: tasks stop persisting for it, writers drop
    what they have not written (and the spill references it held), aligned channels
    unblock; its barriers still in flight are ignored where they arrive."""
    world.checkpoints.pending = None
    for writer in world.writers.values():
        for request in writer.abort(progress.id):
            if request.segment != HEAP:
                recycling.drop(world, request.segment, writer.owner, None)
            if request.release_spill:
                world.release_spill(request.release_spill)
    for channel in world.channels.values():
        channel.abort_checkpoint(progress.id)
    for task in world.tasks.values():
        task.abort_checkpoint(progress.id)
    world.actions.invalidate()


def abort_pending(world: CoordinatorWorld, reason: CheckpointFailureReason, why: str) -> None:
    """The coordinator aborts the pending checkpoint, if any, for ``reason``: the periodic
    scheduler stopping (``stopCheckpointScheduler``) or a failover restoring its region
    (``SchedulerBase.restoreState``)."""
    progress = world.checkpoints.pending
    if progress is None:
        return
    abort(world, progress)
    fail(world, CheckpointFailure(progress.id, reason, world.journal.step + 1, detail=why))


def fail(world: CoordinatorWorld, failure: CheckpointFailure) -> None:
    """Record a failed checkpoint; too many counted ones in a row fail the job
    (``CheckpointFailureManager``)."""
    world.checkpoints.failures.append(failure)
    world.checkpoints.last_end = world.journal.step
    last = max((c.id for c in world.checkpoints.completed), default=0)
    since = [f for f in world.checkpoints.failures if f.checkpoint > last]
    if job_fails(since, world.options.tolerable_failed_checkpoints):
        world.fail_job(
            f"{failure.describe()}; more than {world.options.tolerable_failed_checkpoints} counted "
            "checkpoint failure(s) in a row fail the job "
            "(execution.checkpointing.tolerable-failed-checkpoints)",
        )


def decline(
    world: CoordinatorWorld,
    task: CheckpointableTask,
    progress: CheckpointInProgress,
    reason: CheckpointFailureReason,
    why: str,
) -> None:
    """A task declines the checkpoint: the coordinator aborts it everywhere."""
    abort(world, progress)
    fail(world, CheckpointFailure(progress.id, reason, world.journal.step + 1, task.name, why))
    world.journal.tell(CheckpointDeclined(progress.id, task.name, reason, why))


def sources_have_data(world: CoordinatorWorld) -> bool:
    tasks = world.tasks
    for key in world.source_keys:
        task = tasks[key]
        total = world.graph.operator(task.operator).records_per_subtask
        if any(offset < total for offset in task.splits.values()):
            return True
    return False


def can_trigger(world: CoordinatorWorld) -> bool:
    """Whether the periodic scheduler triggers now (never during a failover: it is stopped)."""
    return (
        world.failover is None
        and world.options.checkpoint_interval > 0
        and world.checkpoints.pending is None
        and len(world.checkpoints.completed) < world.options.checkpoints
        and world.journal.step >= world.checkpoints.last_end + world.options.checkpoint_interval
        # Flink triggers once every task is RUNNING (restore over); a rescaled input still
        # demultiplexing recovered data would decline as not ready, so wait for it too
        and (not world.options.coordinator_waits_for_running or restore_over(world))
        and not any(world.tasks[key].finished for key in world.source_keys)
        and sources_have_data(world)
    )


def restore_over(world: CoordinatorWorld) -> bool:
    """Every task RUNNING and no rescaled input demultiplexing recovered data any more.

    A coordinator asks every step, and a big job has hundreds of tasks and gates, so the
    answer is kept: once true it never turns false again (a task's phase only moves forward,
    a gate ends its demultiplexing for good), and until then the task or gate that made it
    false is looked at first (``restore_hint``): while it still does, nothing else is read."""
    if world.restore_over:
        return True
    hint = world.restore_hint
    if hint is not None and _holds_restore(world, hint):
        return False
    for key, task in world.tasks.items():
        if task.phase is not _RUNNING:
            world.restore_hint = ("tasks", key)
            return False
    for name, gate in world.gates.items():
        if gate.demultiplexing:
            world.restore_hint = ("gates", name)
            return False
    world.restore_over, world.restore_hint = True, None
    return True


def _holds_restore(world: CoordinatorWorld, hint: tuple[str, str]) -> bool:
    """Whether the task or gate of ``hint`` still keeps the restore from being over."""
    where, key = hint
    if where == "tasks":
        return world.tasks[key].phase is not _RUNNING
    return world.gates[key].demultiplexing


def trigger(world: CoordinatorWorld) -> None:
    number = next_checkpoint_id(world)
    # ``CheckpointOptions.forConfig``: with unaligned checkpoints and an aligned checkpoint
    # timeout, barriers start aligned and time out into unaligned ones
    options = world.options
    timeout = options.aligned_checkpoint_timeout if options.unaligned else 0
    pending = CheckpointInProgress(
        number, options.unaligned and not timeout, world.journal.step, alignment_timeout=timeout
    )
    world.checkpoints.pending = pending
    restoring = next(
        (
            t
            for t in world.tasks.values()
            if t.kind is OperatorKind.SOURCE and t.phase is not _RUNNING and not t.finished
        ),
        None,
    )
    if restoring is not None:  # ``triggerCheckpointBarrier`` on a task not yet running
        decline(
            world,
            restoring,
            pending,
            CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY,
            "the source is still restoring",
        )
        return
    for task in world.tasks.values():
        if task.kind is OperatorKind.SOURCE:
            task.trigger_checkpoint(number, world.journal.changes)
    world.journal.tell(CheckpointTriggered(number, pending.unaligned))


def failed_region_down(world: CoordinatorWorld) -> bool:
    """Whether every subtask of the failing region has stopped (FAILED, CANCELED, or FINISHED
    before the failure): the scheduler's cancels are complete."""
    failover = world.failover
    return failover is not None and all(
        world.tasks[s.name].execution_state.is_terminal for s in failover.to_restart
    )


def manual_checkpoint_due(world: CoordinatorWorld) -> bool:
    """A checkpoint asked for by hand (``checkpoint_during_failover``) once the failing region
    is down, before its restart: the window in which FLINK-40482's plan went wrong."""
    return (
        world.options.checkpoint_during_failover
        and not world.checkpoints.manual_requested
        and world.checkpoints.pending is None
        and failed_region_down(world)
    )


def trigger_manual(world: CoordinatorWorld) -> None:
    """``CheckpointCoordinator.triggerCheckpoint(CheckpointType)`` (REST ``POST
    /jobs/:jobid/checkpoints``): not stopped with the periodic scheduler, so it reaches the plan
    calculator with the failed region's subtasks FAILED and CANCELED. A refused plan fails
    before an id is drawn; a plan that waits for no subtask fails after it
    (``PendingCheckpoint`` needs one to wait for); otherwise the checkpoint starts at the
    plan's subtasks to trigger and completes with the acknowledgements it waits for."""
    world.checkpoints.manual_requested = True
    step = world.journal.step + 1
    states = {SubtaskId(t.operator, t.index): t.execution_state for t in world.tasks.values()}
    plan = calculate_plan(world.graph, states, world.options.terminal_tasks)
    if isinstance(plan, PlanRefusal):
        fail(world, CheckpointFailure(0, plan.reason, step, detail=plan.why))
        world.journal.tell(ManualCheckpointRefused(plan.reason, plan.why))
        return
    number = next_checkpoint_id(world)
    if not plan.to_wait_for:
        why = "the plan waits for no subtask (a pending checkpoint needs at least one)"
        reason = CheckpointFailureReason.TRIGGER_CHECKPOINT_FAILURE
        fail(world, CheckpointFailure(number, reason, step, detail=why))
        world.journal.tell(ManualCheckpointFailed(number, reason, why))
        return
    beyond = _beyond_the_model(world, plan)
    if beyond:
        world.checkpoints.manual_not_taken = beyond
        world.journal.tell(ManualCheckpointNotTaken(beyond))
        return
    triggered = [world.tasks[s.name] for s in plan.to_trigger]
    world.checkpoints.pending = CheckpointInProgress(
        number,
        world.options.unaligned,
        world.journal.step,
        waiting_for=frozenset(world.tasks[s.name].name for s in plan.to_wait_for),
        finished=tuple(s.name for s in plan.finished),
        manual=True,
    )
    for task in triggered:
        task.trigger_checkpoint(number, world.journal.changes)
    world.journal.tell(
        ManualCheckpointPlanned(number, plan.to_trigger, plan.to_wait_for, plan.finished)
    )


def _beyond_the_model(world: CoordinatorWorld, plan: CheckpointPlan) -> str:
    """Why the model cannot carry out a plan made after some subtasks finished ("" if it
    can): Flink triggers a running subtask whose predecessors have all finished and aligns
    barriers over the channels still open only; the model triggers sources and waits for a
    barrier on every channel."""
    for subtask in plan.to_trigger:
        if world.tasks[subtask.name].kind is not OperatorKind.SOURCE:
            return f"the plan triggers {subtask}, whose predecessors have finished"
    waited = set(plan.to_wait_for)
    graph = world.graph
    for subtask in plan.to_wait_for:
        for exchange in graph.inputs_of(subtask.operator):
            for producer in graph.producers(exchange, subtask.index):
                upstream = SubtaskId(exchange.upstream, producer)
                if upstream not in waited:
                    return f"{subtask} reads from {upstream}, which the plan does not wait for"
    return ""
