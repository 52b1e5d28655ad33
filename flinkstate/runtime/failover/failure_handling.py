"""What the scheduler decided when a subtask failed: which subtasks restart, and when.

Flink's ``DefaultScheduler`` hands a task failure to its ``ExecutionFailureHandler``, whose
``FailureHandlingResult`` names the subtasks to restart (the failed subtask's pipelined region,
:mod:`~flinkstate.runtime.failover.pipelined_region`) and the restart delay of the restart strategy.
The scheduler then cancels those subtasks and restarts them once every cancel has completed and
the delay has passed (``restartTasksWithDelay``). One value per run: the model fails one subtask
and ends the run at the restart (:mod:`~flinkstate.runtime.failover.failover`).
"""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.runtime.jobgraph import SubtaskId


@dataclass(frozen=True)
class FailureHandlingResult:
    """A failed subtask and the region its failover restarts.

    Examples
    --------
    ``sink[1]`` of a forward pipeline fails at step 40; its region restarts once the model's
    default restart delay has passed:

    >>> from flinkstate.runtime.options import DEFAULT_RESTART_DELAY
    >>> region = (SubtaskId("source", 1), SubtaskId("sink", 1))
    >>> result = FailureHandlingResult(
    ...     SubtaskId("sink", 1), "it threw", 40, region, DEFAULT_RESTART_DELAY
    ... )
    >>> result.restart_due(539), result.restart_due(540)
    (False, True)
    >>> print(result.describe())
    sink[1] failed at step 40: it threw; its pipelined region (source[1], sink[1]) fails over
    """

    failed: SubtaskId
    #: why it failed, in words ("its user code threw after 30 record(s)")
    cause: str
    #: the step of the failure, counted as the stepper counts (the ``step``-th action)
    step: int
    #: every subtask the failover cancels and restarts, the failed one included
    to_restart: tuple[SubtaskId, ...]
    #: steps from the failure to the earliest restart
    restart_delay: int

    def restart_due(self, step: int) -> bool:
        """Whether the delay has passed at the ``step``-th action."""
        return step >= self.step + self.restart_delay

    def describe(self) -> str:
        region = ", ".join(str(s) for s in self.to_restart)
        return (
            f"{self.failed} failed at step {self.step}: {self.cause}; "
            f"its pipelined region ({region}) fails over"
        )
