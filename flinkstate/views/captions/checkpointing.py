"""The captions of a checkpoint's steps outside the tasks: the channel-state writers' writes, the
coordinator's triggers, expiries and checkpoints asked for by hand, and the scheduler's restart
of a failed region from the last completed checkpoint."""

from __future__ import annotations

from flinkstate.runtime.checkpoint.happenings import ManualCheckpointNotTaken
from flinkstate.runtime.options import TerminalTaskRule
from flinkstate.views.captions.step import (
    Step,
    plural,
)


def write_channel_state(s: Step) -> str:
    written = s.removed("request")
    writer = s.world.writers[s.actor.writer]
    if not written:
        return f"{writer.name} wrote a piece of channel state."
    request = written[0]
    return (
        f"{writer.name} wrote {request['bytes']} bytes of {request['side']} state of "
        f"{request['of']} for checkpoint {request['checkpoint']}; "
        f"{plural(len(writer.requests), 'request')} left in its queue "
        "(ChannelStateWriteRequestExecutorImpl)."
    )


def trigger(s: Step) -> str:
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


def expire(s: Step) -> str:
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


def manual_checkpoint(s: Step) -> str:
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
    not_taken = next(
        (h for h in s.event.happenings if isinstance(h, ManualCheckpointNotTaken)), None
    )
    if not_taken is not None:
        return (
            f"{asked}: the model cannot carry out its plan ({not_taken.beyond}) and goes on "
            "without the checkpoint Flink would take."
        )
    return f"{asked}."


def _failed_region(s: Step) -> str:
    failover = s.world.failover
    if failover is None:
        return "a failed region"
    return f"the region of {failover.failed} ({', '.join(str(t) for t in failover.to_restart)})"


def restart(s: Step) -> str:
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
