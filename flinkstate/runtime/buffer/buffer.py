"""Network buffers and the pools they come from.

Every memory segment has an integer id and exactly one owner at every step; the world keeps
that owner in one array and checks each move against it. A :class:`Buffer` is a segment
carrying record fragments (or, with no segment, a small heap event such as end-of-partition).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.runtime.buffer.owners import Owner, OwnerKind
from flinkstate.runtime.buffer.records import Fragment
from flinkstate.runtime.copying import FIXED, NotState, StateKey

#: Events live in small heap buffers, not network segments.
HEAP = -1


@dataclass(slots=True)
class Buffer:
    segment: int
    capacity: int
    used: int = 0
    fragments: list[Fragment] = field(default_factory=list)
    event: str | None = None
    #: for a checkpoint barrier: its checkpoint id, and whether it overtakes data (unaligned)
    checkpoint: int = -1
    priority: bool = False
    #: for a ``SubtaskConnectionDescriptor``: (old downstream subtask, old upstream subtask)
    descriptor: tuple[int, int] | None = None
    #: which buffer this is, for drawing it: stable while it travels (a remote send copies the
    #: bytes into the receiver's segment but keeps the uid), never part of the state's
    #: equality, so two runs that differ only in numbering are the same state
    uid: int = field(default=-1, compare=False)
    #: made by recovery from channel state (drawn apart from live data); presentation only
    recovered: bool = field(default=False, compare=False)

    NOT_STATE: ClassVar[NotState] = {
        "uid": "presentation: the canvas follows a buffer by it",
        "recovered": "presentation: drawn apart from live data",
    }

    def state_key(self) -> StateKey:
        return (
            self.segment,
            self.capacity,
            self.used,
            tuple(self.fragments),
            self.event,
            self.checkpoint,
            self.priority,
            self.descriptor,
        )

    def copy(self) -> Buffer:
        return Buffer(
            self.segment,
            self.capacity,
            self.used,
            list(self.fragments),
            self.event,
            self.checkpoint,
            self.priority,
            self.descriptor,
            self.uid,
            self.recovered,
        )

    @property
    def is_event(self) -> bool:
        return self.event is not None

    @property
    def space(self) -> int:
        return self.capacity - self.used


def network_pool_owner(task_manager: int) -> Owner:
    """What holds a TaskManager's free segments: its global pool."""
    return Owner(OwnerKind.NETWORK_POOL, f"tm{task_manager}")


def network_pool_name(task_manager: int) -> str:
    """The name a TaskManager's global pool is found by: its owner's text."""
    return str(network_pool_owner(task_manager))


def local_pool(
    holder: str,
    global_pool: str,
    minimum: int,
    maximum: int,
    subpartitions: int = 0,
    max_per_subpartition: int = 0,
) -> LocalBufferPool:
    """The local pool of a result partition (with its ``subpartitions``) or an input gate
    (``holder``), at its minimum size until the global pool redistributes."""
    owner = Owner(OwnerKind.POOL, holder)
    return LocalBufferPool(
        str(owner),
        owner,
        global_pool,
        minimum,
        maximum,
        minimum,
        per_subpartition=[0] * subpartitions,
        max_per_subpartition=max_per_subpartition,
    )


@dataclass(slots=True)
class NetworkBufferPool:
    """All network segments of one TaskManager (``NetworkBufferPool``)."""

    name: str
    #: what holds its free segments
    owner: Owner
    total: int
    free: list[int]
    required: int = 0

    NOT_STATE: ClassVar[NotState] = {"name": FIXED, "owner": FIXED, "total": FIXED}

    def state_key(self) -> StateKey:
        return (tuple(self.free), self.required)


@dataclass(slots=True)
class LocalBufferPool:
    """A result partition's or an input gate's share of the network pool (``LocalBufferPool``).

    ``requested`` counts segments taken from the global pool and not yet returned (free here
    or in use); ``size`` is the current pool size after redistribution. For a result partition
    ``per_subpartition`` counts the buffers each subpartition holds: one reaching
    ``max_per_subpartition`` makes the whole pool unavailable, which is how one slow consumer
    back-pressures its producer.
    """

    name: str
    #: what holds its free segments
    owner: Owner
    global_pool: str
    minimum: int
    maximum: int
    size: int
    free: list[int] = field(default_factory=list)
    requested: int = 0
    per_subpartition: list[int] = field(default_factory=list)
    max_per_subpartition: int = 0
    saturated_subpartitions: int = 0
    #: destroyed (``lazyDestroy``): every segment recycled to it goes back to the global pool
    #: (only a standalone pool is ever destroyed; the simulator's live as long as the run)
    destroyed: bool = False

    NOT_STATE: ClassVar[NotState] = {
        "name": FIXED,
        "owner": FIXED,
        "global_pool": FIXED,
        "minimum": FIXED,
        "maximum": FIXED,
        "max_per_subpartition": FIXED,
    }

    def state_key(self) -> StateKey:
        return (
            self.size,
            tuple(self.free),
            self.requested,
            tuple(self.per_subpartition),
            self.saturated_subpartitions,
            self.destroyed,
        )

    def copy(self) -> LocalBufferPool:
        return LocalBufferPool(
            self.name,
            self.owner,
            self.global_pool,
            self.minimum,
            self.maximum,
            self.size,
            list(self.free),
            self.requested,
            list(self.per_subpartition),
            self.max_per_subpartition,
            self.saturated_subpartitions,
            self.destroyed,
        )
