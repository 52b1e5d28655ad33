"""A subtask that fails, and the failover of its pipelined region.

A subtask fails when its user code throws (``RunOptions.task_failure``: once it has handled its
share of records) or when recovery throws on one of its threads (the test hooks of FLINK-40345
and FLINK-40520, a refused gate conversion). It is FAILED and torn down
(:mod:`~flinkstate.runtime.tasks.task_cleanup`: its recovered channels release their buffers, its
spill files are cleaned up). In the same step, as Flink's JobMaster does on that state update,
the scheduler decides the failover (``FailureHandlingResult``: the failed subtask's pipelined
region, :mod:`~flinkstate.runtime.failover.pipelined_region`), the checkpoint scheduler stops and
aborts the pending checkpoint (``CHECKPOINT_COORDINATOR_SUSPEND``, not counted), and the region's
other subtasks are CANCELING; each then completes its cancel, torn down the same way, and is
CANCELED. The region's subtasks, their transports, readers and drainers do nothing more. Once
every cancel has completed and the restart delay has passed (or nothing else can happen
meanwhile), the scheduler restarts the region: it aborts the pending checkpoint
(``JOB_FAILOVER_REGION``, not counted) and restores the region from the last completed
checkpoint (``SchedulerBase.restoreState``). The model ends the run there, as it does when too
many checkpoint failures fail the whole job over.

Simplified: one subtask fails per run; the model does not run the restored region (the rest
of the job keeps running meanwhile, as in Flink, until the restart).
"""

from __future__ import annotations

from typing import Protocol

from flinkstate.runtime.action_kind import ActionKind, action
from flinkstate.runtime.actor_ref import SCHEDULER
from flinkstate.runtime.checkpoint import coordinator
from flinkstate.runtime.checkpoint.coordinator import CoordinatorWorld
from flinkstate.runtime.checkpoint.state_assignment import StateAssignment
from flinkstate.runtime.failover.failure_handling import FailureHandlingResult
from flinkstate.runtime.failover.happenings import RegionRestarted, TaskCanceled, TaskFailed
from flinkstate.runtime.failover.pipelined_region import pipelined_region
from flinkstate.runtime.jobgraph import SubtaskId
from flinkstate.runtime.options import CheckpointFailureReason
from flinkstate.runtime.partition.consumer.input_gate import Channel
from flinkstate.runtime.tasks import task_cleanup
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.tasks.task_cleanup import TaskCleanupWorld
from flinkstate.sim.action import Action


class FailoverWorld(TaskCleanupWorld, CoordinatorWorld, Protocol):
    """What a failover reaches of the world, beside what the coordinator does (it aborts the
    pending checkpoint): the failover under way, which it starts and ends, and the restore this
    run came from (what a region restarts from without a completed checkpoint). The world
    (``NetworkState``) is one; mypy checks it at every call."""

    failover: FailureHandlingResult | None

    @property
    def restore(self) -> StateAssignment | None: ...
    @property
    def tasks(self) -> dict[str, Task]: ...


def do_fail(world: FailoverWorld, task: Task, action: Action) -> None:
    """The subtask's user code throws once it has handled its records (``task_failure``)."""
    fail_task(world, task, f"its user code threw after {task.handled} record(s)")


def fail_task(world: FailoverWorld, task: Task, cause: str) -> None:
    """``task`` fails for ``cause``: it is FAILED and torn down, and its region fails over.
    The step tells it after what it told already (which may say what went wrong)."""
    failed = SubtaskId(task.operator, task.index)
    region = pipelined_region(world.graph, failed)
    world.failover = FailureHandlingResult(
        failed, cause, world.journal.step + 1, region, world.options.restart_delay
    )
    task.mark_failed(world.journal.changes)
    coordinator.abort_pending(
        world,
        CheckpointFailureReason.CHECKPOINT_COORDINATOR_SUSPEND,
        f"{task.key} is FAILED: the periodic checkpoint scheduler stops",
    )
    teardown = task_cleanup.clean_up_task(world, task)
    canceling = []
    for subtask in region:
        other = world.tasks[subtask.name]
        if other is not task and not other.finished:
            other.cancel(world.journal.changes)
            canceling.append(other.key)
    world.actions.invalidate()  # the region's actors stop; the coordinator's plan changes
    world.journal.tell_also(TaskFailed(task.key, cause, teardown, tuple(canceling)))


def do_cancel(world: FailoverWorld, task: Task, action: Action) -> None:
    """A CANCELING subtask of the failing region has stopped: torn down, CANCELED."""
    task.complete_cancelling(world.journal.changes)
    teardown = task_cleanup.clean_up_task(world, task)
    down = coordinator.failed_region_down(world)
    world.journal.tell(TaskCanceled(task.key, teardown, down))


def channel_stopped(world: FailoverWorld, channel: Channel) -> bool:
    """Whether either end of a channel was stopped by the failover: its transport stops."""
    sub = world.subpartitions[channel.subpartition]
    return (
        world.tasks[sub.producer].failover is not None
        or world.tasks[sub.consumer].failover is not None
    )


def scheduler_actions(world: FailoverWorld, idle: bool) -> tuple[Action, ...]:
    """The scheduler restarts the failed region once all its cancels have completed and the
    restart delay has passed; ``idle`` (no other actor can act) lets the delay pass at once,
    since the model's clock advances only with actions."""
    failover = world.failover
    if failover is None or world.checkpoints.job_failed:
        return ()
    if not coordinator.failed_region_down(world):
        return ()
    if idle or failover.restart_due(world.journal.step + 1):
        return (action(SCHEDULER, ActionKind.RESTART),)
    return ()


def restart(world: FailoverWorld) -> None:
    """``restartTasks``: the pending checkpoint is aborted (``JOB_FAILOVER_REGION``) and the
    region restores from the last completed checkpoint; the run ends here."""
    failover = world.failover
    assert failover is not None
    coordinator.abort_pending(
        world, CheckpointFailureReason.JOB_FAILOVER_REGION, "the failed region restarts"
    )
    step = world.journal.step + 1
    world.checkpoints.job_failed = (
        f"{failover.describe()}; restarted at step {step} from {_restored_from(world)}"
    )
    world.actions.invalidate()
    world.journal.tell(RegionRestarted(failover.failed))


def _restored_from(world: FailoverWorld) -> str:
    """What the restarted region restores: the last checkpoint completed, and whether it
    holds the region's state."""
    failover = world.failover
    assert failover is not None
    if not world.checkpoints.completed:
        if world.restore is not None:
            return "the checkpoint this run was restored from"
        return "no checkpoint (the region starts its input over)"
    latest = world.checkpoints.completed[-1]
    region = {s.name for s in failover.to_restart}
    lost = [key for key in latest.finished_subtasks if key in region]
    if not lost:
        return f"checkpoint {latest.id}"
    return (
        f"checkpoint {latest.id}, which records {', '.join(lost)} as finished: they would "
        "restart without their state"
    )


def failover_summary(world: FailoverWorld) -> dict[str, object]:
    """The task failure and every checkpoint failure of the run, for the summaries of a run
    that had a failure (none otherwise, so that other runs' summaries stay as they were)."""
    if world.failover is None:
        return {}
    not_taken = world.checkpoints.manual_not_taken
    return {
        "task_failure": world.failover.describe(),
        "checkpoint_failures": [f.describe() for f in world.checkpoints.failures],
        **({"manual_checkpoint_not_taken": not_taken} if not_taken else {}),
    }
