"""One TaskManager's ``NetworkBufferPool`` as a user drives it, call by call, with Flink's
answers: how many segments are free, used and reserved, whether the pool is available, the
sizes redistribution gives its local pools, and Flink's refusals to the word.

It is a facade over the simulator's own pool code
(:class:`~flinkstate.runtime.buffer.pools.BufferPools` over a
:class:`~flinkstate.runtime.buffer.ledger.SegmentLedger`): reserving, redistributing, a local pool's
requests and recycles are the functions a simulated run calls. What only a pool driven by hand needs
lives here:

* availability as Flink tracks it: a flag per pool, the global one cleared when a request takes
  its last free segment and set when a recycle fills it again, a local one set and cleared where
  ``LocalBufferPool`` checks it;
* a local pool keeping one free segment ahead: after each request, and when created or resized,
  it fetches one from the global pool if it has none and is below its size
  (``checkAndUpdateAvailability``); the simulator takes a segment only when one is asked for;
* local pools waiting for the global pool: one that found it empty is told when a recycle fills
  it, the last to start waiting first (the order ``CompletableFuture`` runs what depends on it);
* blocking requests: nothing else runs while the model is driven, so a request that the free
  segments cannot serve waits its whole timeout and fails as Flink's does then;
* destruction of local pools and of the global pool.

Segments are ``int`` ids. A segment goes back through the call that matches the one that gave it
out (a local pool's, or the global pool's pooled or unpooled recycle); the model remembers
which, as Flink's buffers know their recycler, and refuses any other. Not modelled: overdraft
buffers (``maxOverdraftBuffersPerGate`` is 0, as ``createBufferPool(required, max)`` has it),
buffer listeners (a channel's wait for a floating buffer), and the order of Flink's ``HashSet``
of pools, which the model replaces with creation order (redistribution's rounding depends on it).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from flinkstate.errors import (
    BufferPoolDestroyedError,
    BufferRequestTimeoutError,
    InvalidParameterError,
)
from flinkstate.memory_size import to_human_readable
from flinkstate.runtime.buffer.buffer import LocalBufferPool, local_pool
from flinkstate.runtime.buffer.ledger import Marks, ReadersOf, SegmentLedger, StepJournal
from flinkstate.runtime.buffer.owners import Owner, OwnerKind
from flinkstate.runtime.buffer.pools import BufferPools, config_description
from flinkstate.runtime.shuffle.netty_shuffle_utils import UNBOUNDED_POOL_SIZE

#: ``taskmanager.network.memory.buffers-request-timeout`` and its default
REQUEST_TIMEOUT_KEY = "taskmanager.network.memory.buffers-request-timeout"
DEFAULT_REQUEST_TIMEOUT_MS = 30_000
#: ``NetworkBufferPool.USAGE_WARNING_THRESHOLD``: percent of the segments the pools may ask for
USAGE_WARNING_THRESHOLD = 100
#: ``Integer.MAX_VALUE``: counts are Java ints
JAVA_INT_MAX = 2**31 - 1

#: who holds what the model hands out: a segment of a local pool or a pooled one of the global
#: pool (in Flink a buffer or a buffer builder), and an unpooled one (a channel's exclusive
#: buffers, Flink's use of unpooled segments)
CALLER = Owner(OwnerKind.BUILDER, "caller")
UNPOOLED_CALLER = Owner(OwnerKind.EXCLUSIVE, "caller")


class Source(Enum):
    """Which call gave a segment out (its value), so which call takes it back."""

    POOLED = "requestPooledMemorySegment"
    UNPOOLED = "requestUnpooledMemorySegments"
    LOCAL = "a local pool's request"

    @property
    def recycler(self) -> str:
        """The call that takes such a segment back (a local pool's: its ``recycle``)."""
        return _RECYCLERS[self]


_RECYCLERS = {
    Source.POOLED: "recyclePooledMemorySegment",
    Source.UNPOOLED: "recycleUnpooledMemorySegments",
    Source.LOCAL: "the pool's recycle",
}


class Handout(NamedTuple):
    """A segment given out: by which call, from which local pool, for which subpartition."""

    source: Source
    pool: str = ""
    subpartition: int = -1


def _java_int(name: str, value: int, minimum: int = -JAVA_INT_MAX - 1) -> int:
    """The model's check at its boundary: a whole number that fits Flink's Java ``int``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParameterError(f"{name} must be a whole number, got {value!r}")
    if not minimum <= value <= JAVA_INT_MAX:
        raise InvalidParameterError(
            f"{name} must be between {minimum} and {JAVA_INT_MAX} (a Java int), got {value}"
        )
    return value


def _nobody() -> defaultdict[str, tuple[int, ...]]:
    """Readers of every container: none."""
    return defaultdict(tuple)


def _destroyed(message: str) -> BufferPoolDestroyedError:
    return BufferPoolDestroyedError(message)


class NetworkBufferPoolModel:
    """A ``NetworkBufferPool`` of ``segments`` segments of ``segment_size`` bytes, with the
    local pools created from it. Method names are Flink's, in Python's spelling."""

    def __init__(
        self,
        segments: int,
        segment_size: int,
        request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS,
        task_manager: int = 0,
    ) -> None:
        _java_int("the number of segments", segments, 0)
        _java_int("the segment size", segment_size, 1)
        _java_int("the request timeout", request_timeout_ms)
        if request_timeout_ms <= 0:
            raise InvalidParameterError(
                "The timeout for requesting exclusive buffers should be positive."
            )
        journal = StepJournal()
        # no actors read this pool: every change is noted against nobody
        none = _nobody()
        nobody = ReadersOf(none, none, none, none, none, none, none, none, defaultdict(str))
        journal.changes.attach(Marks(set(), set(), {}, {}, set()), nobody)
        self._pools = BufferPools(SegmentLedger(journal))
        self._nbp = self._pools.add_network_pool(task_manager, segments)
        self._pools.available_listener = self._filled
        self.segment_size = segment_size
        self.request_timeout_ms = request_timeout_ms
        self._destroyed = False
        # Flink marks a new pool available, whatever its number of segments
        self._available = True
        # local pools waiting for the global pool, by name, in the order they started
        self._waiting: list[str] = []
        # every local pool created (destroyed ones too), and whether each is available
        self._local: dict[str, LocalBufferPool] = {}
        self._local_available: dict[str, bool] = {}
        self._handouts: dict[int, Handout] = {}
        # segments freed by destroy(), out of every pool
        self._freed: list[int] = []
        self._last_usage = -1

    # -- what Flink's getters answer

    @property
    def is_destroyed(self) -> bool:
        return self._destroyed

    @property
    def total_segments(self) -> int:
        """``getTotalNumberOfMemorySegments``: 0 once destroyed."""
        return 0 if self._destroyed else self._nbp.total

    @property
    def total_memory(self) -> int:
        return self.total_segments * self.segment_size

    @property
    def available_segments(self) -> int:
        """``getNumberOfAvailableMemorySegments``: free in the global pool."""
        return len(self._nbp.free)

    @property
    def available_memory(self) -> int:
        return self.available_segments * self.segment_size

    @property
    def used_segments(self) -> int:
        """``getNumberOfUsedMemorySegments``: total less free (below 0 if segments are
        recycled into a destroyed pool, as in Flink)."""
        return self.total_segments - self.available_segments

    @property
    def used_memory(self) -> int:
        return self.used_segments * self.segment_size

    @property
    def required_segments(self) -> int:
        """``numTotalRequiredBuffers``: segments reserved for local pools' minimums and for
        unpooled requests, what every new reservation is checked against."""
        return self._nbp.required

    @property
    def registered_pools(self) -> int:
        """``getNumberOfRegisteredBufferPools``: local pools created and not destroyed."""
        return len(self._pools.local)

    @property
    def is_available(self) -> bool:
        """Whether the availability future is complete (``isAvailable``): cleared when a
        request takes the last free segment, set when a recycle brings one back."""
        return self._available

    def count_buffers(self) -> int:
        """``countBuffers``: the sizes of the registered local pools added up."""
        return sum(p.size for p in self._pools.local.values())

    @property
    def estimated_requested_segments(self) -> int:
        """``getEstimatedNumberOfRequestedMemorySegments``: each registered pool's maximum, or
        twice its minimum when it has none."""
        return sum(_estimated(p) for p in self._pools.local.values())

    @property
    def estimated_requested_usage(self) -> int:
        """``getEstimatedRequestedSegmentsUsage``: that estimate in percent of the total."""
        total = self.total_segments
        return 0 if total == 0 else 100 * self.estimated_requested_segments // total

    def usage_warning(self) -> str | None:
        """``getUsageWarning``: Flink's warning when the pools may ask for every segment or
        more, and its all-clear when they no longer do; said once per change of the usage."""
        usage = self.estimated_requested_usage
        message = None
        if usage >= USAGE_WARNING_THRESHOLD and usage != self._last_usage:
            total = self.total_memory
            requested = self.estimated_requested_segments * self.segment_size
            message = (
                f"Memory usage [{usage}%] is too high to satisfy all of the requests. This can "
                "severely impact network throughput. Please consider increasing available "
                "network memory, or decreasing configured size of network buffer pools. "
                f"(totalMemory={to_human_readable(total)}, "
                f"requestedMemory={to_human_readable(requested)}, "
                f"missingMemory={to_human_readable(requested - total)})"
            )
        elif usage < USAGE_WARNING_THRESHOLD <= self._last_usage:
            message = f"Memory usage [{usage}%] went back to normal"
        self._last_usage = usage
        return message

    # -- the global pool's segments

    def request_pooled_segment(self) -> int | None:
        """``requestPooledMemorySegment``: a free segment, or None."""
        segment = self._take_one(CALLER)
        if segment is not None:
            self._handouts[segment] = Handout(Source.POOLED)
        self._settle()
        return segment

    def recycle_pooled_segment(self, segment: int) -> None:
        """``recyclePooledMemorySegment``."""
        self._hand_back(segment, Source.POOLED)
        self._pools.give_back(self._nbp.name, segment, CALLER)
        self._settle()

    def request_unpooled_segments(self, count: int) -> list[int]:
        """``requestUnpooledMemorySegments``: ``count`` segments at once, reserved like a
        pool's minimum (refused with Flink's message when the reservation exceeds the total),
        after the local pools are resized to the smaller remainder; all or nothing."""
        _java_int("the number of segments", count)
        if count < 0:
            raise InvalidParameterError("Number of buffers to request must be non-negative.")
        if self._destroyed:
            raise _destroyed("Network buffer pool has already been destroyed.")
        if count == 0:
            return []
        self._pools.reserve(self._nbp.name, count, self.segment_size)
        self._redistribute()
        try:
            segments = self._request_blocking(count, UNPOOLED_CALLER)
        except BufferRequestTimeoutError:
            self._release(count)
            self._settle()
            raise
        for segment in segments:
            self._handouts[segment] = Handout(Source.UNPOOLED)
        self._settle()
        return segments

    def recycle_unpooled_segments(self, segments: list[int]) -> None:
        """``recycleUnpooledMemorySegments``: the segments return together, their
        reservation ends and the local pools are resized to the larger remainder."""
        if len(set(segments)) != len(segments):
            raise InvalidParameterError(f"segments {segments} name a segment twice")
        for segment in segments:
            self._hand_back(segment, Source.UNPOOLED, check_only=True)
        for segment in segments:
            del self._handouts[segment]
        self._pools.give_back_all(self._nbp.name, tuple(segments), UNPOOLED_CALLER)
        self._release(len(segments))
        self._settle()

    # -- local pools

    def create_buffer_pool(
        self,
        required: int,
        maximum: int,
        subpartitions: int = 0,
        max_buffers_per_channel: int = UNBOUNDED_POOL_SIZE,
        name: str | None = None,
    ) -> LocalPool:
        """``createBufferPool``: a local pool of at least ``required`` and at most ``maximum``
        segments (``UNBOUNDED_POOL_SIZE`` for none), a result partition's with
        ``subpartitions`` of at most ``max_buffers_per_channel`` buffers each, named
        ``pool <name>`` (``name`` defaults to its number from 0). Its minimum is
        reserved first, refused with Flink's message beyond the total; then the pool's own
        checks run, so a pool they refuse keeps its reservation, as in Flink."""
        for what, value in (
            ("the required segments", required),
            ("the maximum segments", maximum),
            ("the subpartitions", subpartitions),
            ("the maximum buffers per channel", max_buffers_per_channel),
        ):
            _java_int(what, value)
        holder = str(len(self._local)) if name is None else name
        pool = local_pool(
            holder, self._nbp.name, required, maximum, subpartitions, max_buffers_per_channel
        )
        if pool.name in self._local:
            raise InvalidParameterError(f"there is a local pool named {holder!r} already")
        if self._destroyed:
            raise _destroyed("Network buffer pool has already been destroyed.")
        self._pools.reserve(self._nbp.name, required, self.segment_size)
        if required <= 0:
            raise InvalidParameterError(
                f"Required number of memory segments ({required}) should be larger than 0."
            )
        if maximum < required:
            raise InvalidParameterError(
                f"Maximum number of memory segments ({maximum}) should not be smaller than "
                f"minimum ({required})."
            )
        if subpartitions > 0 and max_buffers_per_channel <= 0:
            raise InvalidParameterError(
                f"Maximum number of buffers for each channel ({max_buffers_per_channel}) "
                "should be larger than 0."
            )
        if subpartitions < 0:
            raise InvalidParameterError(
                f"the number of subpartitions must not be negative, got {subpartitions} "
                "(Flink fails with NegativeArraySizeException)"
            )
        self._local[pool.name] = pool
        self._local_available[pool.name] = False
        self._check_and_update(pool)
        self._pools.add_local_pool(pool)
        self._redistribute()
        self._settle()
        return LocalPool(self, pool.name)

    def destroy_all_buffer_pools(self) -> None:
        """``destroyAllBufferPools``: every registered pool destroyed, in creation order;
        refused as Flink refuses it if segments are still reserved afterwards (the
        reservation of a pool whose creation failed, or unpooled segments not returned)."""
        for pool in list(self._pools.local.values()):
            self._lazy_destroy(pool)
        self._settle()
        if self._pools.local or self._nbp.required > 0:
            raise InvalidParameterError(
                "NetworkBufferPool is not empty after destroying all LocalBufferPools"
            )

    def destroy(self) -> None:
        """``destroy``: no more pools or unpooled requests; the free segments are freed.
        Its availability stays as it was, as Flink leaves it."""
        self._destroyed = True
        self._freed += self._pools.discard_free(self._nbp.name)
        self._settle()

    # -- a local pool's operations (called through its LocalPool)

    def pool_named(self, name: str) -> LocalBufferPool:
        """The local pool's state (a copy: change it only through its :class:`LocalPool`)."""
        return self._local[name].copy()

    def local_available(self, name: str) -> bool:
        return self._local_available[name]

    def request_segment(self, name: str, subpartition: int = -1) -> int | None:
        pool = self._local[name]
        if subpartition != -1 and not 0 <= subpartition < len(pool.per_subpartition):
            raise InvalidParameterError(
                f"{name} has {len(pool.per_subpartition)} subpartitions; "
                f"there is no subpartition {subpartition}"
            )
        if pool.destroyed:
            raise _destroyed("Buffer pool has already been destroyed.")
        if not pool.free:  # without overdraft buffers, Flink hands out only free segments
            return None
        segment = self._pools.request(pool, CALLER, subpartition)
        assert segment is not None
        self._handouts[segment] = Handout(Source.LOCAL, name, subpartition)
        self._check_and_update(pool)
        self._settle()
        return segment

    def recycle_segment(self, name: str, segment: int) -> None:
        pool = self._local[name]
        handout = self._hand_back(segment, Source.LOCAL, name)
        to_global = pool.over_size
        self._pools.recycle(pool, segment, CALLER, handout.subpartition)
        if not to_global and not self._local_available[name] and pool.should_be_available:
            self._local_available[name] = True
        self._settle()

    def set_num_buffers(self, name: str, size: int) -> None:
        _java_int("the number of buffers", size)
        self._set_num_buffers(self._local[name], size)
        self._settle()

    def reserve_segments(self, name: str, count: int) -> None:
        pool = self._local[name]
        _java_int("the number of segments", count)
        if count > pool.minimum:
            raise InvalidParameterError(
                "Can not reserve more segments than number of required segments."
            )
        if pool.destroyed:
            raise _destroyed("Buffer pool has already been destroyed.")
        if pool.requested < count:
            taken = self._request_blocking(count - pool.requested, pool.owner)
            self._pools.stock(pool, taken)
            self._local_available[name] = True
        self._settle()

    def lazy_destroy(self, name: str) -> None:
        self._lazy_destroy(self._local[name])
        self._settle()

    # -- Flink's mechanisms

    def _settle(self) -> None:
        """End of a call: its moves are not kept, and none of them broke ownership."""
        journal = self._pools.ledger.journal
        journal.moves.clear()
        assert not journal.violations, journal.violations

    def _hand_back(
        self, segment: int, source: Source, pool: str = "", *, check_only: bool = False
    ) -> Handout:
        """The record of ``segment`` given out by ``source`` (and ``pool``), refused with
        one line for a segment given out otherwise, or not at all."""
        handout = self._handouts.get(segment)
        if handout is None or handout.source is not source or handout.pool != pool:
            recycler = f"{pool}'s recycle" if source is Source.LOCAL else source.recycler
            held = "not given out" if handout is None else f"given out by {_origin(handout)}"
            raise InvalidParameterError(
                f"segment {segment} is {held}, so {recycler} cannot take it back"
            )
        if not check_only:
            del self._handouts[segment]
        return handout

    def _take_one(self, owner: Owner) -> int | None:
        """``internalRequestMemorySegment``: a free segment for ``owner``; the pool becomes
        unavailable when it is the last."""
        if not self._nbp.free:
            return None
        (segment,) = self._pools.take(self._nbp.name, 1, owner)
        if not self._nbp.free:
            self._available = False
        return segment

    def _request_blocking(self, count: int, owner: Owner) -> list[int]:
        """``internalRequestMemorySegments``: ``count`` segments, taken one by one. Nothing
        returns any while the model is driven, so if the free ones run out the request waits
        its whole timeout: what it took goes back together, and it fails with Flink's
        message."""
        taken: list[int] = []
        while len(taken) < count:
            if self._destroyed:
                self._give_back(taken, owner)
                raise _destroyed("Buffer pool is destroyed.")
            segment = self._take_one(owner)
            if segment is None:
                self._give_back(taken, owner)
                raise BufferRequestTimeoutError(
                    "Timeout triggered when requesting exclusive buffers: "
                    f"{config_description(self._nbp.total, self.segment_size)}, "
                    f" or you may increase the timeout which is {self.request_timeout_ms}ms "
                    f"by setting the key '{REQUEST_TIMEOUT_KEY}'."
                )
            taken.append(segment)
        return taken

    def _give_back(self, segments: list[int], owner: Owner) -> None:
        if segments:
            self._pools.give_back_all(self._nbp.name, tuple(segments), owner)

    def _release(self, count: int) -> None:
        """``revertRequiredBuffers``: the reservation ends, and the pools are resized."""
        self._pools.release(self._nbp.name, count)
        self._redistribute()

    def _redistribute(self) -> None:
        """``redistributeBuffers``: each resizable pool resized in turn, each checking its
        availability before the next is resized."""
        for pool, size in self._pools.redistribution(self._nbp):
            self._set_num_buffers(pool, size)

    def _set_num_buffers(self, pool: LocalBufferPool, size: int) -> None:
        """``setNumBuffers``: resized, free segments beyond the size returned one at a time,
        then (unless destroyed) its availability checked."""
        self._pools.set_size(pool, size)
        if not pool.destroyed:
            self._check_and_update(pool)

    def _filled(self, global_name: str) -> None:
        """A recycle put segments into the empty global pool: it is available again, and the
        local pools waiting for it take their turn, the last to start waiting first."""
        if self._available:
            return  # the future was complete already: nobody waits on it
        self._available = True
        waiting, self._waiting = self._waiting, []
        for name in reversed(waiting):
            pool = self._local[name]
            if not pool.destroyed and not self._local_available[name]:
                self._check_and_update(pool)

    def _check_and_update(self, pool: LocalBufferPool) -> None:
        """``checkAndUpdateAvailability``: with no free segment and room below its size, the
        pool fetches one from the global pool, or waits for it if it is empty; then it is
        available if it has a free segment and no subpartition at its maximum."""
        wait = False
        if not pool.free and pool.requested < pool.size:
            if self._nbp.free:
                self._pools.fetch(pool)
                if not self._nbp.free:
                    self._available = False
            else:
                wait = pool.name not in self._waiting
        self._local_available[pool.name] = pool.should_be_available
        if wait:
            if self._available:
                # only a destroyed pool is empty and still available
                raise _destroyed(
                    f"{pool.name} asks the destroyed NetworkBufferPool for a segment: "
                    "its availability future stays complete after destroy(), so Flink's "
                    "LocalBufferPool would ask again without end"
                )
            self._waiting.append(pool.name)

    def _lazy_destroy(self, pool: LocalBufferPool) -> None:
        """``lazyDestroy``: its free segments back to the global pool, the pool available
        (nobody may wait on it), destroyed; then unregistered and the others resized."""
        if not pool.destroyed:
            self._pools.destroy(pool)
            self._local_available[pool.name] = True
        if self._pools.remove_local_pool(pool):
            self._redistribute()


def _estimated(pool: LocalBufferPool) -> int:
    """``LocalBufferPool.getEstimatedNumberOfRequestedMemorySegments``."""
    return pool.maximum if pool.maximum < UNBOUNDED_POOL_SIZE else 2 * pool.minimum


def _origin(handout: Handout) -> str:
    return handout.pool if handout.source is Source.LOCAL else handout.source.value


@dataclass(frozen=True)
class LocalPool:
    """A local buffer pool as ``createBufferPool`` returns it: its name in its
    :class:`NetworkBufferPoolModel` (``pool <name>``, its owner's text), through which it reads
    and changes its state there."""

    model: NetworkBufferPoolModel = field(repr=False)
    name: str

    def request_segment(self, subpartition: int = -1) -> int | None:
        """``requestMemorySegment``: a free segment (counted against ``subpartition`` if
        given), or None; one at its maximum makes the pool unavailable but does not stop a
        free segment being handed out (FLINK-27522). Refused once destroyed."""
        return self.model.request_segment(self.name, subpartition)

    def recycle(self, segment: int) -> None:
        """``recycle``: back to the pool, or to the global pool while it holds more than its
        size or is destroyed."""
        self.model.recycle_segment(self.name, segment)

    def set_num_buffers(self, size: int) -> None:
        """``setNumBuffers``: what redistribution does, asked directly."""
        self.model.set_num_buffers(self.name, size)

    def reserve_segments(self, count: int) -> None:
        """``reserveSegments``: up to ``count`` segments fetched now (at most the minimum),
        waiting for them as an unpooled request waits. As in Flink, the segments it fetches
        are not counted as requested."""
        self.model.reserve_segments(self.name, count)

    def lazy_destroy(self) -> None:
        """``lazyDestroy``."""
        self.model.lazy_destroy(self.name)

    @property
    def is_available(self) -> bool:
        return self.model.local_available(self.name)

    @property
    def is_destroyed(self) -> bool:
        return self.model.pool_named(self.name).destroyed

    @property
    def num_buffers(self) -> int:
        """``getNumBuffers``: the pool's current size."""
        return self.model.pool_named(self.name).size

    @property
    def required_segments(self) -> int:
        return self.model.pool_named(self.name).minimum

    @property
    def max_segments(self) -> int:
        return self.model.pool_named(self.name).maximum

    @property
    def requested_segments(self) -> int:
        """``getNumberOfRequestedMemorySegments``: taken from the global pool and not
        returned, free here or handed out."""
        return self.model.pool_named(self.name).requested

    @property
    def available_segments(self) -> int:
        """``getNumberOfAvailableMemorySegments``: free in this pool."""
        return len(self.model.pool_named(self.name).free)

    @property
    def used_buffers(self) -> int:
        """``bestEffortGetNumOfUsedBuffers``: requested less free, never below 0."""
        pool = self.model.pool_named(self.name)
        return max(0, pool.requested - len(pool.free))

    @property
    def estimated_requested_segments(self) -> int:
        return _estimated(self.model.pool_named(self.name))

    def buffers_in(self, subpartition: int) -> int:
        """``getBuffersCountUnsafe``: buffers handed out for ``subpartition`` and not back."""
        return self.model.pool_named(self.name).per_subpartition[subpartition]
