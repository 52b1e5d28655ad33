"""Network buffers and the pools they come from.

Every memory segment has an integer id and exactly one owner at every step; the world keeps
that owner in one array and checks each move against it. A :class:`Buffer` is a segment
carrying record fragments (or, with no segment, a small heap event such as end-of-partition).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from flinkstate.errors import InvalidParameterError
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


class BufferFactory(Protocol):
    """Whoever makes the run's buffers (the world): each gets the next uid, by which the canvas
    follows it as it travels."""

    def new_buffer(
        self,
        segment: int,
        capacity: int,
        used: int = 0,
        fragments: list[Fragment] | None = None,
        *,
        event: str | None = None,
        checkpoint: int = -1,
        priority: bool = False,
        descriptor: tuple[int, int] | None = None,
        recovered: bool = False,
    ) -> Buffer: ...


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

    def redistribution(self, pools: Iterable[LocalBufferPool]) -> list[tuple[LocalBufferPool, int]]:
        """The size ``NetworkBufferPool.redistributeBuffers`` gives each of its resizable pools
        (one whose maximum is above its minimum) among ``pools``, in their order: the
        unreserved segments shared in proportion to what each pool could still take, the
        rounding left to the pools that come later; every pool at its minimum when nothing is
        unreserved.

        Examples
        --------
        Ten segments, four reserved for two gates' minimums of two; the six unreserved go to
        the gates in proportion to their room (4 and 8), the first rounded down:

        >>> nbp = NetworkBufferPool("network-pool tm0", network_pool_owner(0), 10, [], 4)
        >>> a = local_pool("gate a", nbp.name, minimum=2, maximum=6)
        >>> b = local_pool("gate b", nbp.name, minimum=2, maximum=10)
        >>> [(pool.name, size) for pool, size in nbp.redistribution([a, b])]
        [('pool gate a', 4), ('pool gate b', 6)]
        """
        mine = [p for p in pools if p.global_pool == self.name and p.maximum > p.minimum]
        if not mine:
            return []
        available = self.total - self.required
        if available <= 0:
            return [(pool, pool.minimum) for pool in mine]
        capacity = sum(min(available, p.maximum - p.minimum) for p in mine)
        to_distribute = min(available, capacity)
        sizes = []
        used = distributed = 0
        for pool in mine:
            used += min(available, pool.maximum - pool.minimum)
            share = to_distribute * used // capacity - distributed
            distributed += share
            sizes.append((pool, pool.minimum + share))
        return sizes


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

    def can_serve(self, global_has_free: bool, for_subpartition: bool) -> bool:
        """Whether a request would get a segment now: a free one here, or one of the global
        pool's while below the pool's size; for a subpartition's writer, not while any
        subpartition is at its maximum (the pool is unavailable then: FLINK-27522).

        Examples
        --------
        >>> pool = local_pool("partition p", "network-pool tm0", 2, 4, subpartitions=2,
        ...                   max_per_subpartition=1)
        >>> pool.can_serve(global_has_free=True, for_subpartition=True)
        True
        >>> pool.count_out(0)
        >>> pool.can_serve(global_has_free=True, for_subpartition=True)
        False
        >>> pool.can_serve(global_has_free=True, for_subpartition=False)
        True
        """
        if for_subpartition and self.saturated_subpartitions:
            return False
        return bool(self.free) or (self.requested < self.size and global_has_free)

    def count_out(self, subpartition: int) -> None:
        """A segment handed to ``subpartition``: counted against it, and the pool saturated
        while it holds its maximum (``LocalBufferPool.requestMemorySegment``)."""
        self.per_subpartition[subpartition] += 1
        if self.per_subpartition[subpartition] == self.max_per_subpartition:
            self.saturated_subpartitions += 1

    def count_back(self, subpartition: int) -> None:
        """A segment of ``subpartition`` recycled: counted off it (``LocalBufferPool.recycle``).

        Examples
        --------
        >>> pool = local_pool("partition p", "network-pool tm0", 2, 4, subpartitions=1,
        ...                   max_per_subpartition=1)
        >>> pool.count_out(0); pool.saturated_subpartitions
        1
        >>> pool.count_back(0); pool.saturated_subpartitions, pool.per_subpartition
        (0, [0])
        """
        if self.per_subpartition[subpartition] == self.max_per_subpartition:
            self.saturated_subpartitions -= 1
        self.per_subpartition[subpartition] -= 1

    @property
    def should_be_available(self) -> bool:
        """Available to its writers and readers: a free segment here and no subpartition at
        its maximum (``LocalBufferPool.shouldBeAvailable``)."""
        return bool(self.free) and not self.saturated_subpartitions

    @property
    def over_size(self) -> bool:
        """A recycled segment goes back to the global pool rather than to the free list: the
        pool holds more than its size, or is destroyed (``LocalBufferPool.recycle``)."""
        return self.requested > self.size or self.destroyed

    def resize(self, size: int) -> None:
        """The pool's size becomes ``size``, at most its maximum; below its minimum is refused
        as ``LocalBufferPool.setNumBuffers`` refuses it. The caller returns the free segments
        beyond it.

        Examples
        --------
        >>> pool = local_pool("gate g", "network-pool tm0", minimum=2, maximum=6)
        >>> pool.resize(9); pool.size
        6
        >>> pool.resize(1)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        flinkstate.errors.InvalidParameterError: Buffer pool needs at least 2 buffers, but ...
        """
        if size < self.minimum:
            raise InvalidParameterError(
                f"Buffer pool needs at least {self.minimum} buffers, but tried to set to {size}"
            )
        self.size = min(size, self.maximum)

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
