"""What barriers, channel-state writers and the checkpoint coordinator do in a step, as data
for the step's note (``flinkstate.runtime.happening``; the words are
``flinkstate.runtime.world.narration``'s)."""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.runtime.happening import Happening
from flinkstate.runtime.jobgraph import SubtaskId
from flinkstate.runtime.options import CheckpointFailureReason


@dataclass(frozen=True, slots=True)
class StaleBarrierDropped(Happening):
    """A barrier of a checkpoint no longer pending was dropped."""

    checkpoint: int


@dataclass(frozen=True, slots=True)
class BarrierReceived(Happening):
    """A task took a barrier of the pending checkpoint from a channel."""

    checkpoint: int
    channel: str


@dataclass(frozen=True, slots=True)
class AlignmentTimedOut(Happening):
    """A task's aligned checkpoint timed out: it took an unaligned snapshot while still
    aligning (``inputs``), or turned its aligned barriers still queued in ``converted``
    subpartitions into priority events (``PipelinedSubpartition.alignedBarrierTimeout``)."""

    checkpoint: int
    task: str
    inputs: bool
    converted: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ChannelStateWritten(Happening):
    """A channel-state writer persisted ``fragments`` fragments of a channel's output or
    input state."""

    output: bool
    channel: str
    fragments: int


@dataclass(frozen=True, slots=True)
class CheckpointTriggered(Happening):
    """The coordinator triggered a periodic checkpoint at the sources."""

    checkpoint: int
    unaligned: bool


@dataclass(frozen=True, slots=True)
class CheckpointExpired(Happening):
    """The pending checkpoint timed out; ``waiting``: the tasks that had not acknowledged it."""

    checkpoint: int
    timeout: int
    waiting: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CheckpointDeclined(Happening):
    """A task declined the pending checkpoint, which the coordinator then aborted."""

    checkpoint: int
    task: str
    reason: CheckpointFailureReason
    why: str


@dataclass(frozen=True, slots=True)
class ManualCheckpointRefused(Happening):
    """The plan calculator refused a checkpoint triggered by hand (before it got an id)."""

    reason: CheckpointFailureReason
    why: str


@dataclass(frozen=True, slots=True)
class ManualCheckpointFailed(Happening):
    """A checkpoint triggered by hand failed after it got its id."""

    checkpoint: int
    reason: CheckpointFailureReason
    why: str


@dataclass(frozen=True, slots=True)
class ManualCheckpointNotTaken(Happening):
    """A plan the model cannot carry out (``beyond``: why); the checkpoint is not taken."""

    beyond: str


@dataclass(frozen=True, slots=True)
class ManualCheckpointPlanned(Happening):
    """A checkpoint triggered by hand started with its plan's subtasks."""

    checkpoint: int
    triggered: tuple[SubtaskId, ...]
    waits_for: tuple[SubtaskId, ...]
    finished: tuple[SubtaskId, ...]
