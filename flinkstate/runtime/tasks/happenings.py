"""What a task's mailbox and its teardown do in a step, as data for the step's note
(``flinkstate.runtime.happening``; the words are ``flinkstate.runtime.world.narration``'s)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from flinkstate.runtime.happening import Happening


class SpillFilesLeft(NamedTuple):
    """What a cleanup did to spill files: how many it deleted, how many it left on disk."""

    deleted: int
    left: int


@dataclass(frozen=True, slots=True)
class RecordEmitted(Happening):
    """A source emitted a record (``length``: its serialized bytes)."""

    record: int
    key: int
    length: int


@dataclass(frozen=True, slots=True)
class RecordProcessed(Happening):
    """A task's operator processed a record."""

    record: int
    key: int


@dataclass(frozen=True, slots=True)
class RecordsDeserialized(Happening):
    """A polled buffer completed ``count`` records of ``channel`` (0: only a fragment)."""

    count: int
    channel: str


@dataclass(frozen=True, slots=True)
class EventPolled(Happening):
    """A task polled a channel's event (by its Flink class name, ``flinkstate.runtime.events``)."""

    event: str
    channel: str


@dataclass(frozen=True, slots=True)
class StaleRecoveryBarrierSkipped(Happening):
    """A recovery barrier of a failed checkpoint was polled and ignored."""

    checkpoint: int


@dataclass(frozen=True, slots=True)
class Teardown:
    """What a failed or cancelled task's teardown let go of: recovered buffers, spill files
    (part of the failover's happening, told with it)."""

    released: int
    spill: SpillFilesLeft
