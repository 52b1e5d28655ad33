"""A subtask's state as the JobMaster sees it: Flink's ``ExecutionState``.

The checkpoint coordinator plans a checkpoint from these states
(:mod:`~flinkstate.runtime.checkpoint.checkpoint_plan`), and a failover moves a region's subtasks
through them (:mod:`~flinkstate.runtime.failover.failover`). Three of them are terminal, and only
one of those means the subtask got to the end of its input: FLINK-40482 is about that difference.
"""

from __future__ import annotations

from enum import StrEnum


class ExecutionState(StrEnum):
    """Flink's ``ExecutionState``, in its declaration order.

    Examples
    --------
    Three states are terminal, and only ``FINISHED`` means the subtask read all its input:

    >>> [state.value for state in ExecutionState if state.is_terminal]
    ['FINISHED', 'CANCELED', 'FAILED']
    >>> ExecutionState.RUNNING.is_terminal
    False
    """

    CREATED = "CREATED"
    SCHEDULED = "SCHEDULED"
    DEPLOYING = "DEPLOYING"
    RUNNING = "RUNNING"
    #: the subtask reached the end of its input and ended normally (never by a cancel)
    FINISHED = "FINISHED"
    CANCELING = "CANCELING"
    CANCELED = "CANCELED"
    FAILED = "FAILED"
    RECONCILING = "RECONCILING"
    #: restoring its state (``Task.restoreAndInvoke`` before ``RUNNING``)
    INITIALIZING = "INITIALIZING"

    @property
    def is_terminal(self) -> bool:
        """``ExecutionState.isTerminal``: FINISHED, CANCELED and FAILED; the subtask does not
        run again in this attempt. Terminal is not finished: a failed or canceled subtask never
        reached the end of its input."""
        return self in _TERMINAL


_TERMINAL = frozenset({ExecutionState.FINISHED, ExecutionState.CANCELED, ExecutionState.FAILED})
