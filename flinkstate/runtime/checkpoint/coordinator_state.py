"""What the checkpoint coordinator keeps about a run's checkpoints.

Flink's ``CheckpointCoordinator`` holds the pending checkpoint, the store of completed ones and,
through its ``CheckpointFailureManager``, the failed ones and the verdict that fails the job.
This is that state as one component, so that the coordinator's behaviour
(:mod:`~flinkstate.runtime.checkpoint.coordinator`) and the tasks' acknowledgements
(:mod:`~flinkstate.runtime.tasks.barrier_handler`) change it in one place and a copy of a run
copies it on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.runtime.checkpoint.checkpoint import Checkpoint, CheckpointInProgress
from flinkstate.runtime.copying import NotState, StateKey
from flinkstate.runtime.options import CheckpointFailure


@dataclass(slots=True)
class CoordinatorState:
    """The pending checkpoint (``PendingCheckpoint``), the completed ones, the failed ones and
    whether the job failed.

    Examples
    --------
    A run starts with no checkpoint pending or completed; a copy is a state of its own:

    >>> state = CoordinatorState()
    >>> state.pending is None, state.completed, state.job_failed
    (True, [], '')
    >>> twin = state.copy()
    >>> twin.expired.append(1)
    >>> state.expired, twin.state_key() == state.state_key()
    ([], False)
    """

    #: the checkpoint in progress (at most one: concurrent checkpoints are not modelled)
    pending: CheckpointInProgress | None = None
    completed: list[Checkpoint] = field(default_factory=list)
    #: ids of checkpoints that expired
    expired: list[int] = field(default_factory=list)
    #: every failed checkpoint with its reason (expired ones too)
    failures: list[CheckpointFailure] = field(default_factory=list)
    #: why the job failed over (the run ends; Flink would restart it, or the failed task's
    #: region, from its last completed checkpoint): too many counted checkpoint failures, or a
    #: task failure whose region restarts
    job_failed: str = ""
    #: step the last checkpoint completed or failed at (0 before any): the next is triggered
    #: ``checkpoint_interval`` steps later, as Flink's timer fires an interval after a failure
    last_end: int = 0
    #: the checkpoint asked for by hand during a failover was asked for (once per run)
    manual_requested: bool = False
    #: why the model could not carry out the plan of that checkpoint ("" if it could, or none
    #: was asked for): Flink would have taken it, so a run's report says so
    manual_not_taken: str = ""

    NOT_STATE: ClassVar[NotState] = {}

    def state_key(self) -> StateKey:
        pending = self.pending
        return (
            None if pending is None else pending.state_key(),
            tuple(self.completed),
            tuple(self.expired),
            tuple(self.failures),
            self.job_failed,
            self.last_end,
            self.manual_requested,
            self.manual_not_taken,
        )

    def copy(self) -> CoordinatorState:
        return CoordinatorState(
            None if self.pending is None else self.pending.copy(),
            list(self.completed),
            list(self.expired),
            list(self.failures),
            self.job_failed,
            self.last_end,
            self.manual_requested,
            self.manual_not_taken,
        )
