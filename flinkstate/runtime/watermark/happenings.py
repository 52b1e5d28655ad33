"""What event time does in a step, as data for the step's note (``flinkstate.runtime.happening``;
the words are ``flinkstate.runtime.world.narration``'s). Timestamps are the model's, with
``MIN_WATERMARK`` and ``MAX_WATERMARK`` among them."""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.runtime.happening import Happening


@dataclass(frozen=True, slots=True)
class SourceIdle(Happening):
    """A source with no split to read marked its output idle."""


@dataclass(frozen=True, slots=True)
class SourceEnded(Happening):
    """A source's input ended: it emitted ``MAX_WATERMARK``."""


@dataclass(frozen=True, slots=True)
class WatermarkRead(Happening):
    """A task read a watermark from a channel."""

    timestamp: int
    channel: str


@dataclass(frozen=True, slots=True)
class WatermarkStatusRead(Happening):
    """A task read a watermark status (idle or active) from a channel."""

    idle: bool
    channel: str


@dataclass(frozen=True, slots=True)
class WatermarkAdvanced(Happening):
    """A task's watermark moved forward to ``watermark``."""

    task: str
    watermark: int


@dataclass(frozen=True, slots=True)
class RecoveredWatermarkHeld(Happening):
    """A recovered watermark of a virtual channel (old subtask, old channel) was held back:
    another virtual channel of the same new channel has no watermark yet."""

    timestamp: int
    old_subtask: int
    old_channel: int
