"""What a failover does in a step, as data for the step's note
(``flinkstate.runtime.happening``; the words are ``flinkstate.runtime.world.narration``'s)."""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.runtime.happening import Happening
from flinkstate.runtime.jobgraph import SubtaskId
from flinkstate.runtime.tasks.happenings import Teardown


@dataclass(frozen=True, slots=True)
class TaskFailed(Happening):
    """A subtask failed for ``cause`` and was torn down; ``cancelling``: the other subtasks of
    its pipelined region."""

    task: str
    cause: str
    teardown: Teardown
    cancelling: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TaskCanceled(Happening):
    """A subtask of the failing region stopped and was torn down; ``region_down``: it was the
    last one."""

    task: str
    teardown: Teardown
    region_down: bool


@dataclass(frozen=True, slots=True)
class RegionRestarted(Happening):
    """The scheduler restarts the failed subtask's region."""

    failed: SubtaskId
