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
    """A network buffer: a segment and the record fragments written into it, or a heap event.

    Examples
    --------
    An unaligned checkpoint's barrier is a priority event in a heap buffer (no segment): it
    overtakes the data queued before it. A data buffer fills a 32 KiB segment:

    >>> from flinkstate.runtime.events import BARRIER
    >>> barrier = Buffer(HEAP, 0, event=BARRIER, checkpoint=1, priority=True)
    >>> barrier.is_event, barrier.priority
    (True, True)
    >>> data = Buffer(segment=3, capacity=32_768, used=104, fragments=[Fragment(7, 0, 104, 104)])
    >>> data.is_event, data.space
    (False, 32664)
    """

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
    """What holds a TaskManager's free segments: its global pool.

    Examples
    --------
    >>> network_pool_owner(0)
    Owner(kind=<OwnerKind.NETWORK_POOL: 'network-pool'>, holder='tm0')
    """
    return Owner(OwnerKind.NETWORK_POOL, f"tm{task_manager}")


def network_pool_name(task_manager: int) -> str:
    """The name a TaskManager's global pool is found by: its owner's text.

    Examples
    --------
    >>> network_pool_name(0)
    'network-pool tm0'
    """
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
    (``holder``), at its minimum size until the global pool redistributes.

    Examples
    --------
    A streaming partition of 4 subpartitions with Flink's defaults: a pool of 5 to 16
    buffers (``NettyShuffleUtils``), 5 until redistribution, at most 10 per subpartition:

    >>> from flinkstate.runtime.shuffle.netty_shuffle_utils import result_partition_pool_bounds
    >>> minimum, maximum = result_partition_pool_bounds(4, 2, 8)
    >>> pool = local_pool("source[0]>keyed", "network-pool tm0", minimum, maximum, 4, 10)
    >>> pool.name, (pool.minimum, pool.size, pool.maximum)
    ('pool source[0]>keyed', (5, 5, 16))
    """
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
    """All network segments of one TaskManager (``NetworkBufferPool``).

    Examples
    --------
    Flink's 64 MiB of network memory in 32 KiB segments, none yet handed out:

    >>> from flinkstate.runtime.shuffle.config import number_of_network_buffers
    >>> total = number_of_network_buffers(64 * 2**20)
    >>> name, owner = network_pool_name(0), network_pool_owner(0)
    >>> pool = NetworkBufferPool(name, owner, total, free=list(range(total)))
    >>> pool.total, len(pool.free), pool.required
    (2048, 2048, 0)
    """

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

    Examples
    --------
    An input gate's floating pool with Flink's defaults holds 1 to 8 buffers
    (``GateBuffersSpec``); it starts at its minimum, with nothing yet requested:

    >>> pool = local_pool("keyed[0]<source", "network-pool tm0", minimum=1, maximum=8)
    >>> pool.size, pool.requested, pool.per_subpartition
    (1, 0, [])
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
