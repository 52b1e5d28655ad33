"""What record writers, the transport and recovered channels do in a step, as data for the
step's note (``flinkstate.runtime.happening``; the words are
``flinkstate.runtime.world.narration``'s)."""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.runtime.happening import Happening


@dataclass(frozen=True, slots=True)
class EndOfPartitionSent(Happening):
    """A task's input ended: its writers flushed and sent ``EndOfPartitionEvent``."""


@dataclass(frozen=True, slots=True)
class EventSent(Happening):
    """The transport carried an event (by its Flink class name) to a channel."""

    event: str
    channel: str


@dataclass(frozen=True, slots=True)
class BufferSent(Happening):
    """The transport carried ``used`` bytes; the consumer now knows the producer's backlog."""

    used: int
    backlog: int


@dataclass(frozen=True, slots=True)
class RecoveredExclusiveBuffersTaken(Happening):
    """A recovered channel took its exclusive buffers from the global pool."""

    count: int
    channel: str
