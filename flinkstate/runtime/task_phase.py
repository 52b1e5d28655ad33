"""Where a subtask is in its restore (``Task.restoreAndInvoke``): a value the recovery, the
coordinator and the views read of a task, below them all."""

from __future__ import annotations

from enum import StrEnum


class TaskPhase(StrEnum):
    """Where a subtask is in ``Task.restoreAndInvoke``."""

    #: its recovered output state is still being written into its result partitions
    RESTORING_OUTPUT = "restoring-output"
    #: its inputs are still recovered channels (their state read, consumed, converted)
    RECOVERING = "recovering"
    #: restore is over: the task processes live data and may be checkpointed
    RUNNING = "running"
