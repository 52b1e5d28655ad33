"""A TaskManager's network buffer pool driven by hand, held to the values of Flink's
``NetworkBufferPoolTest`` and ``LocalBufferPoolTest`` (each test names the Flink test it
reproduces). Flink's concurrent tests are played in one order their threads can take: what a
second thread recycles while a request waits is recycled before or after it here."""

from __future__ import annotations

import pytest

from flinkstate.errors import (
    BufferPoolDestroyedError,
    BufferRequestTimeoutError,
    InsufficientNetworkBuffersError,
    InvalidParameterError,
)
from flinkstate.runtime.buffer.network_buffer_pool import LocalPool, NetworkBufferPoolModel
from flinkstate.runtime.shuffle.netty_shuffle_utils import UNBOUNDED_POOL_SIZE

UNBOUNDED = UNBOUNDED_POOL_SIZE
CONFIG_KEYS = (
    "You can increase this number by setting the configuration keys "
    "'taskmanager.memory.network.fraction', 'taskmanager.memory.network.min', and "
    "'taskmanager.memory.network.max'"
)


def unregistered(
    model: NetworkBufferPoolModel, required: int, maximum: int = UNBOUNDED
) -> LocalPool:
    """What ``new LocalBufferPool(networkBufferPool, required[, maximum])`` makes in Flink's
    tests: a pool of size ``required``, one segment fetched (here created through the pool,
    then set back to its minimum, which no later redistribution undoes in these tests)."""
    pool = model.create_buffer_pool(required, maximum)
    pool.set_num_buffers(required)
    return pool


# -- NetworkBufferPoolTest


def test_no_pool_is_created_after_destroy() -> None:
    """testCreatePoolAfterDestroy"""
    model = NetworkBufferPoolModel(10, 128)
    assert model.registered_pools == 0
    model.destroy()
    assert model.is_destroyed
    for maximum in (2, 10, UNBOUNDED):
        with pytest.raises(BufferPoolDestroyedError, match="has already been destroyed"):
            model.create_buffer_pool(2, maximum)


def test_memory_of_a_new_pool() -> None:
    """testMemoryUsageInTheContextOfMemoryPoolCreation"""
    model = NetworkBufferPoolModel(10, 128)
    assert (model.total_segments, model.available_segments, model.used_segments) == (10, 10, 0)
    assert (model.total_memory, model.available_memory, model.used_memory) == (1280, 1280, 0)


def test_memory_after_one_segment_is_requested() -> None:
    """testMemoryUsageInTheContextOfMemorySegmentAllocation"""
    model = NetworkBufferPoolModel(10, 128)
    assert model.request_pooled_segment() is not None
    assert (model.total_segments, model.available_segments, model.used_segments) == (10, 9, 1)
    assert (model.total_memory, model.available_memory, model.used_memory) == (1280, 1152, 128)


def test_memory_of_a_destroyed_pool() -> None:
    """testMemoryUsageInTheContextOfMemoryPoolDestruction"""
    model = NetworkBufferPoolModel(10, 128)
    model.destroy()
    assert (model.total_segments, model.available_segments, model.used_segments) == (0, 0, 0)
    assert (model.total_memory, model.available_memory, model.used_memory) == (0, 0, 0)


def test_destroying_all_local_pools() -> None:
    """testDestroyAll: a fixed, a bounded and an unbounded pool share all 10 segments (the
    unbounded one gets the 2 unreserved); once destroyed, what they handed out returns to the
    global pool, they refuse requests, and a pool of all 10 can be created."""
    model = NetworkBufferPoolModel(10, 128)
    fixed = model.create_buffer_pool(2, 2)
    bounded = model.create_buffer_pool(1, 1)
    unbounded = model.create_buffer_pool(5, UNBOUNDED)
    pools = (fixed, bounded, unbounded)
    assert [p.required_segments for p in pools] == [2, 1, 5]
    assert [p.num_buffers for p in pools] == [2, 1, 7]
    taken = []
    for _ in range(10):
        for pool in pools:
            segment = pool.request_segment()
            if segment is not None:
                taken.append((pool, segment))
                break
    assert len(taken) == model.total_segments == 10
    assert [p.request_segment() for p in pools] == [None, None, None]
    model.destroy_all_buffer_pools()
    assert not model.is_destroyed
    assert all(p.is_destroyed for p in pools)
    assert model.registered_pools == 0
    assert model.available_segments == 0  # handed out, not yet recycled
    for pool, segment in taken:
        pool.recycle(segment)
    assert model.available_segments == model.total_segments
    for pool in pools:
        with pytest.raises(BufferPoolDestroyedError, match="Buffer pool has already been"):
            pool.request_segment()
    assert model.create_buffer_pool(10, UNBOUNDED).num_buffers == 10


def test_unpooled_segments_fewer_than_the_total() -> None:
    """testRequestMemorySegmentsLessThanTotalBuffers"""
    model = NetworkBufferPoolModel(10, 128)
    segments = model.request_unpooled_segments(5)
    assert len(segments) == 5
    model.recycle_unpooled_segments(segments)
    assert model.available_segments == 10
    assert model.required_segments == 0


def test_unpooled_segments_more_than_the_total() -> None:
    """testRequestMemorySegmentsMoreThanTotalBuffers, with the figures of Flink's message."""
    model = NetworkBufferPoolModel(10, 128)
    with pytest.raises(InsufficientNetworkBuffersError) as refused:
        model.request_unpooled_segments(11)
    assert str(refused.value) == (
        "Insufficient number of network buffers: required 11, but only 10 available. The total "
        f"number of network buffers is currently set to 10 of 128 bytes each. {CONFIG_KEYS}."
    )
    assert model.available_segments == 10
    assert model.required_segments == 0


def test_insufficient_buffers_for_a_second_request() -> None:
    """testInsufficientNumberOfBuffers"""
    model = NetworkBufferPoolModel(5, 128)
    assert model.is_available
    first = model.request_unpooled_segments(5)
    assert not model.is_available
    assert len(first) == 5
    with pytest.raises(InsufficientNetworkBuffersError, match="required 1, but only 0 available"):
        model.request_unpooled_segments(1)
    model.recycle_unpooled_segments(first)
    assert model.is_available
    assert len(model.request_unpooled_segments(5)) == 5
    assert not model.is_available


def test_usage_of_an_empty_pool() -> None:
    """testEmptyPoolSegmentsUsage"""
    assert NetworkBufferPoolModel(0, 128).estimated_requested_usage == 0


def test_usage_and_its_warnings() -> None:
    """testSegmentsUsage: bounded pools count their maximum, unbounded ones twice their
    minimum; Flink warns once per change at 100% and more, and once when usage is back below."""
    model = NetworkBufferPoolModel(50, 128)
    first = model.create_buffer_pool(10, 20)
    assert (model.estimated_requested_segments, model.estimated_requested_usage) == (20, 40)
    assert model.usage_warning() is None
    model.create_buffer_pool(5, UNBOUNDED)
    assert (model.estimated_requested_segments, model.estimated_requested_usage) == (30, 60)
    assert model.usage_warning() is None
    model.create_buffer_pool(10, 30)
    assert (model.estimated_requested_segments, model.estimated_requested_usage) == (60, 120)
    assert model.usage_warning() == (
        "Memory usage [120%] is too high to satisfy all of the requests. This can severely "
        "impact network throughput. Please consider increasing available network memory, or "
        "decreasing configured size of network buffer pools. (totalMemory=6.250kb (6400 bytes), "
        "requestedMemory=7.500kb (7680 bytes), missingMemory=1.250kb (1280 bytes))"
    )
    assert model.usage_warning() is None
    second = model.create_buffer_pool(10, 20)
    assert (model.estimated_requested_segments, model.estimated_requested_usage) == (80, 160)
    assert model.usage_warning() == (
        "Memory usage [160%] is too high to satisfy all of the requests. This can severely "
        "impact network throughput. Please consider increasing available network memory, or "
        "decreasing configured size of network buffer pools. (totalMemory=6.250kb (6400 bytes), "
        "requestedMemory=10.000kb (10240 bytes), missingMemory=3.750kb (3840 bytes))"
    )
    second.lazy_destroy()
    first.lazy_destroy()
    assert model.estimated_requested_segments == 40
    assert model.estimated_requested_segments * model.segment_size == 40 * 128
    assert model.estimated_requested_usage == 80
    assert model.usage_warning() == "Memory usage [80%] went back to normal"
    assert model.usage_warning() is None


def test_a_negative_number_of_unpooled_segments_is_refused() -> None:
    """testRequestMemorySegmentsWithInvalidArgument"""
    model = NetworkBufferPoolModel(10, 128)
    with pytest.raises(InvalidParameterError, match="must be non-negative"):
        model.request_unpooled_segments(-1)
    assert model.request_unpooled_segments(0) == []


def test_unpooled_segments_a_local_pool_holds_come_back_when_it_shrinks() -> None:
    """testRequestMemorySegmentsWithBuffersTaken, its recycling thread done first: the pool
    of 5 to 10 holds all 10 segments; reserving 5 for unpooled segments shrinks it to 5, so it
    returns the 5 beyond and the request is served."""
    model = NetworkBufferPoolModel(10, 128)
    pool = model.create_buffer_pool(5, 10)
    taken = [pool.request_segment() for _ in range(10)]
    assert None not in taken
    for segment in taken:
        assert segment is not None
        pool.recycle(segment)
    segments = model.request_unpooled_segments(5)
    assert len(segments) == 5
    assert (pool.num_buffers, pool.requested_segments, pool.available_segments) == (5, 5, 5)


def test_an_unpooled_request_after_destroy_is_refused() -> None:
    """testRequestMemorySegmentsInterruptable, destroy() coming before the request."""
    model = NetworkBufferPoolModel(10, 128)
    assert model.request_pooled_segment() is not None
    model.destroy()
    with pytest.raises(BufferPoolDestroyedError, match="destroyed"):
        model.request_unpooled_segments(10)


def test_a_failed_unpooled_request_gives_its_reservation_back() -> None:
    """testRequestMemorySegmentsInterruptable2: the request of all 10 while one is out ends
    (here by its timeout) and gives back both the 9 it took and its reservation, so a pool
    requiring all 10 can be created."""
    model = NetworkBufferPoolModel(10, 128)
    segment = model.request_pooled_segment()
    assert segment is not None
    with pytest.raises(BufferRequestTimeoutError):
        model.request_unpooled_segments(10)
    assert (model.available_segments, model.required_segments) == (9, 0)
    model.recycle_pooled_segment(segment)
    model.create_buffer_pool(10, 10)
    assert model.required_segments == 10


def test_an_unpooled_request_nothing_can_serve_times_out() -> None:
    """testRequestMemorySegmentsTimeout: a pool of 1 to 10 holds all 10 segments; the request
    for 2 shrinks it to 8 but nothing is recycled, so it times out with Flink's message, and
    the pool is back at 10."""
    model = NetworkBufferPoolModel(10, 128, request_timeout_ms=50)
    pool = model.create_buffer_pool(1, 10)
    for _ in range(10):
        pool.request_segment()
    assert model.available_segments == 0
    with pytest.raises(BufferRequestTimeoutError) as timed_out:
        model.request_unpooled_segments(2)
    assert str(timed_out.value) == (
        "Timeout triggered when requesting exclusive buffers: The total number of network "
        f"buffers is currently set to 10 of 128 bytes each. {CONFIG_KEYS},  or you may increase "
        "the timeout which is 50ms by setting the key "
        "'taskmanager.network.memory.buffers-request-timeout'."
    )
    assert (pool.num_buffers, model.required_segments) == (10, 1)


def test_availability_after_pooled_requests_and_recycles() -> None:
    """testIsAvailableOrNotAfterRequestAndRecycleSingleSegment"""
    model = NetworkBufferPoolModel(2, 128)
    assert model.is_available
    first = model.request_pooled_segment()
    assert model.is_available
    second = model.request_pooled_segment()
    assert not model.is_available
    assert first is not None
    assert second is not None
    model.recycle_pooled_segment(first)
    assert model.is_available
    model.recycle_pooled_segment(second)
    assert model.is_available


def test_availability_after_unpooled_requests_and_recycles() -> None:
    """testIsAvailableOrNotAfterRequestAndRecycleMultiSegments"""
    model = NetworkBufferPoolModel(10, 128)
    assert model.is_available
    first = model.request_unpooled_segments(5)
    assert model.is_available
    second = model.request_unpooled_segments(5)
    assert not model.is_available
    model.recycle_unpooled_segments(first)
    assert model.is_available
    third = model.request_unpooled_segments(5)
    assert not model.is_available
    model.recycle_unpooled_segments(second)
    assert model.is_available
    model.recycle_unpooled_segments(third)
    assert model.is_available


def test_local_pools_waiting_for_the_global_pool_are_served_by_its_recycles() -> None:
    """testBlockingRequestFromMultiLocalBufferPool, its threads' steps in one order: two pools
    of 5 to 10 over 20 segments, 9 pooled and 8 unpooled segments taken; the pools take the
    rest and wait; the recycles wake them (the last to wait first) and both end with 10."""
    model = NetworkBufferPoolModel(20, 128)
    pools = [model.create_buffer_pool(5, 10) for _ in range(2)]
    assert all(p.is_available for p in pools)
    assert model.available_segments == 18  # each pool fetched one ahead
    pooled = [model.request_pooled_segment() for _ in range(9)]
    unpooled = model.request_unpooled_segments(model.available_segments - 1)
    assert len(unpooled) == 8
    assert [p.num_buffers for p in pools] == [6, 6]  # 2 unreserved segments, one each
    assert model.is_available
    assert all(p.is_available for p in pools)
    held: list[list[int]] = [[], []]
    for pool, mine in zip(pools, held, strict=True):
        while (segment := pool.request_segment()) is not None:
            mine.append(segment)
    assert [len(h) for h in held] == [2, 1]  # the first took the last free segment
    assert sum(len(h) for h in held) + len(pooled) + len(unpooled) == 20
    assert not model.is_available
    assert not any(p.is_available for p in pools)
    first, *rest = pooled
    assert first is not None
    model.recycle_pooled_segment(first)
    assert (pools[0].is_available, pools[1].is_available) == (False, True)  # the later waiter
    for segment in rest:
        assert segment is not None
        model.recycle_pooled_segment(segment)
    model.recycle_unpooled_segments(unpooled)
    assert model.is_available
    assert all(p.is_available for p in pools)
    for pool, mine in zip(pools, held, strict=True):
        while len(mine) < 10:
            segment = pool.request_segment()
            assert segment is not None
            mine.append(segment)
    assert model.available_segments == 0
    assert not model.is_available
    for pool in pools:
        assert not pool.is_available
        assert pool.used_buffers == 10


# -- LocalBufferPoolTest, where no overdraft buffer, listener or thread is involved

NUM_BUFFERS = 1024


def test_a_local_pool_fetches_one_segment_ahead() -> None:
    """setupLocalBufferPool and testRequestMoreThanAvailable: after i requests the pool has
    taken i + 1 segments (up to its size), and a request beyond its size gets none."""
    model = NetworkBufferPoolModel(NUM_BUFFERS, 128)
    pool = unregistered(model, 1)
    assert pool.available_segments == 1
    pool.set_num_buffers(NUM_BUFFERS)
    for i in range(1, NUM_BUFFERS + 1):
        assert pool.request_segment() is not None
        assert model.used_segments == min(i + 1, NUM_BUFFERS)
    assert pool.request_segment() is None
    assert model.used_segments == NUM_BUFFERS


def test_resizing_a_destroyed_pool_fetches_nothing() -> None:
    """testSetNumAfterDestroyDoesNotProactivelyFetchSegments"""
    model = NetworkBufferPoolModel(NUM_BUFFERS, 128)
    pool = unregistered(model, 1)
    pool.set_num_buffers(2)
    assert (pool.num_buffers, pool.available_segments) == (2, 1)
    pool.lazy_destroy()
    pool.set_num_buffers(3)
    assert (pool.num_buffers, pool.available_segments) == (3, 0)


def test_segments_recycled_to_a_destroyed_pool_go_back_to_the_global_pool() -> None:
    """testRecycleAfterDestroy"""
    model = NetworkBufferPoolModel(NUM_BUFFERS, 128)
    pool = unregistered(model, 1)
    pool.set_num_buffers(NUM_BUFFERS)
    taken = [pool.request_segment() for _ in range(NUM_BUFFERS)]
    pool.lazy_destroy()
    assert model.used_segments == NUM_BUFFERS
    for segment in taken:
        assert segment is not None
        pool.recycle(segment)
    assert model.available_segments == NUM_BUFFERS


@pytest.mark.parametrize(
    ("large", "small", "requests", "excess", "ordinary", "available"),
    [
        (7, 5, 5, 0, 5, 0),  # as many requested as the smaller size
        (6, 4, 2, 0, 3, 1),  # fewer requested than the smaller size
        (7, 5, 7, 2, 5, 0),  # more requested than the smaller size
        (9, 5, 9, 4, 5, 0),
    ],
)
def test_a_pool_shrunk_below_what_it_holds(
    large: int, small: int, requests: int, excess: int, ordinary: int, available: int
) -> None:
    """testDecreasePoolSize (max 10, required 4), its cases that need no overdraft buffer:
    requested beyond the new size stays requested until recycled."""
    model = NetworkBufferPoolModel(NUM_BUFFERS, 128)
    pool = unregistered(model, 4, 10)
    pool.set_num_buffers(large)
    assert pool.num_buffers == large
    for _ in range(requests):
        assert pool.request_segment() is not None
    pool.set_num_buffers(small)
    assert pool.num_buffers == small
    assert max(pool.requested_segments - small, 0) == excess
    assert min(pool.requested_segments, small) == ordinary
    assert pool.available_segments == available
    assert pool.is_available == (available > 0)


def test_excess_segments_return_as_they_are_recycled() -> None:
    """testRecycleExcessBuffersAfterRecycling"""
    model = NetworkBufferPoolModel(NUM_BUFFERS, 128)
    pool = unregistered(model, 1)
    pool.set_num_buffers(NUM_BUFFERS)
    taken = [pool.request_segment() for _ in range(NUM_BUFFERS)]
    assert model.used_segments == NUM_BUFFERS
    pool.set_num_buffers(NUM_BUFFERS // 2)
    assert model.used_segments == NUM_BUFFERS  # none free to return yet
    for i in range(1, NUM_BUFFERS // 2):
        segment = taken.pop(0)
        assert segment is not None
        pool.recycle(segment)
        assert model.used_segments == NUM_BUFFERS - i


def test_free_segments_beyond_a_smaller_size_return_at_once() -> None:
    """testRecycleExcessBuffersAfterChangingNumBuffers"""
    model = NetworkBufferPoolModel(NUM_BUFFERS, 128)
    pool = unregistered(model, 1)
    pool.set_num_buffers(NUM_BUFFERS)
    taken = [pool.request_segment() for _ in range(NUM_BUFFERS)]
    for segment in taken:
        assert segment is not None
        pool.recycle(segment)
    assert pool.available_segments == NUM_BUFFERS
    pool.set_num_buffers(NUM_BUFFERS // 2)
    assert pool.available_segments == NUM_BUFFERS // 2


def test_a_size_below_the_minimum_is_refused() -> None:
    """testSetLessThanRequiredNumBuffers"""
    pool = unregistered(NetworkBufferPoolModel(NUM_BUFFERS, 128), 1)
    pool.set_num_buffers(1)
    with pytest.raises(InvalidParameterError, match="needs at least 1 buffers, but tried to set"):
        pool.set_num_buffers(0)


def test_a_bounded_pool() -> None:
    """testBoundedBuffer: a pool of 1 to 2, resized to 1, 2, 3 (2: its maximum) and 1."""
    model = NetworkBufferPoolModel(NUM_BUFFERS, 128)
    pool = unregistered(model, 1, 2)
    assert (pool.available_segments, pool.max_segments) == (1, 2)
    pool.set_num_buffers(1)
    assert pool.available_segments == 1
    first = pool.request_segment()
    assert first is not None
    assert pool.available_segments == 0
    assert pool.request_segment() is None
    pool.recycle(first)
    assert pool.available_segments == 1
    for size in (2, 3):
        pool.set_num_buffers(size)
        assert pool.available_segments == (1 if size == 2 else 2)
        first, second = pool.request_segment(), pool.request_segment()
        assert first is not None
        assert second is not None
        assert pool.available_segments == 0
        assert pool.request_segment() is None
        pool.recycle(first)
        assert pool.available_segments == 1
        pool.recycle(second)
        assert pool.available_segments == 2
    pool.set_num_buffers(1)
    assert pool.available_segments == 1
    first = pool.request_segment()
    assert first is not None
    assert pool.request_segment() is None
    pool.recycle(first)
    assert pool.available_segments == 1


def test_a_subpartition_at_its_maximum_makes_the_pool_unavailable() -> None:
    """testMaxBuffersPerChannelAndAvailability: 3 subpartitions of at most 2 buffers; a
    subpartition at its maximum makes the pool unavailable, yet a free segment is still
    handed out (FLINK-27522); available again once no subpartition is at its maximum."""
    model = NetworkBufferPoolModel(NUM_BUFFERS, 128)
    pool = model.create_buffer_pool(1, UNBOUNDED, subpartitions=3, max_buffers_per_channel=2)
    pool.set_num_buffers(10)
    assert pool.is_available
    b01, b11 = pool.request_segment(0), pool.request_segment(1)
    assert pool.is_available
    b02 = pool.request_segment(0)
    assert not pool.is_available
    b03, b21, b22 = pool.request_segment(0), pool.request_segment(2), pool.request_segment(2)
    assert not pool.is_available
    assert [pool.buffers_in(s) for s in range(3)] == [3, 1, 2]
    for segment, available in ((b11, False), (b21, False), (b02, False), (b01, True)):
        assert segment is not None
        pool.recycle(segment)
        assert pool.is_available == available
    for segment in (b03, b22):
        assert segment is not None
        pool.recycle(segment)
        assert pool.is_available


def test_availability_of_a_local_pool() -> None:
    """testIsAvailableOrNot"""
    model = NetworkBufferPoolModel(NUM_BUFFERS, 128)
    pool = unregistered(model, 1)
    assert pool.is_available
    held = pool.request_segment()
    assert held is not None
    assert not pool.is_available
    pool.set_num_buffers(5)
    assert pool.is_available
    taken = []
    for _ in range(4):
        assert pool.is_available
        segment = pool.request_segment()
        assert segment is not None
        taken.append(segment)
    assert not pool.is_available
    pool.recycle(taken.pop(0))
    assert pool.is_available
    for segment in taken:
        pool.recycle(segment)
    assert pool.is_available
    pool.set_num_buffers(2)  # one segment still out, one free here
    assert pool.is_available
    second = pool.request_segment()
    assert second is not None
    assert not pool.is_available
    pool.recycle(second)
    assert pool.is_available
    pool.set_num_buffers(1)
    assert not pool.is_available
    pool.recycle(held)
    assert pool.is_available


def test_reserving_segments_of_a_local_pool() -> None:
    """testReserveSegments: at most the minimum; waiting for segments nobody returns times
    out; the segments it fetches are not counted as requested (as in Flink); refused once
    destroyed."""
    model = NetworkBufferPoolModel(2, 128)
    first = model.create_buffer_pool(1, 2)
    with pytest.raises(InvalidParameterError, match="more segments than number of required"):
        first.reserve_segments(2)
    taken = [first.request_segment(), first.request_segment()]
    assert None not in taken
    second = model.create_buffer_pool(1, 10)
    with pytest.raises(BufferRequestTimeoutError):
        second.reserve_segments(1)
    assert not second.is_available
    for segment in taken:
        assert segment is not None
        first.recycle(segment)
    first.lazy_destroy()
    second.lazy_destroy()
    third = model.create_buffer_pool(2, 10)
    assert third.available_segments == 1
    third.reserve_segments(2)
    assert (third.available_segments, third.requested_segments) == (2, 1)
    third.lazy_destroy()
    with pytest.raises(BufferPoolDestroyedError, match="Buffer pool has already been"):
        third.reserve_segments(1)


# -- what the model adds: the reservation's arithmetic, refusals, and its own checks


def test_local_pools_and_unpooled_segments_share_the_reservation() -> None:
    """numTotalRequiredBuffers: minimums and unpooled segments add up, each new one is checked
    against what is left, and Flink's message names both numbers."""
    model = NetworkBufferPoolModel(10, 128)
    model.create_buffer_pool(4, 6)
    model.request_unpooled_segments(3)
    assert model.required_segments == 7
    with pytest.raises(InsufficientNetworkBuffersError, match="required 4, but only 3 available"):
        model.create_buffer_pool(4, 4)
    assert (model.required_segments, model.registered_pools) == (7, 1)
    model.create_buffer_pool(3, 3)
    assert model.required_segments == 10
    assert model.count_buffers() == 4 + 3  # nothing unreserved: both at their minimum


def test_a_pool_its_own_checks_refuse_keeps_its_reservation() -> None:
    """Flink reserves a pool's minimum before the pool checks its bounds, and a refused pool
    does not give it back; ``destroyAllBufferPools`` then finds segments still reserved."""
    model = NetworkBufferPoolModel(10, 128)
    with pytest.raises(InvalidParameterError, match=r"Maximum number of memory segments \(3\)"):
        model.create_buffer_pool(5, 3)
    assert model.required_segments == 5
    with pytest.raises(InsufficientNetworkBuffersError, match="required 6, but only 5 available"):
        model.create_buffer_pool(6, 6)
    with pytest.raises(InvalidParameterError, match=r"\(0\) should be larger than 0"):
        model.create_buffer_pool(0, 3)
    with pytest.raises(InvalidParameterError, match="not empty after destroying all"):
        model.destroy_all_buffer_pools()


def test_redistribution_as_pools_come_and_go() -> None:
    """redistributeBuffers at every creation, destruction and unpooled request: the unreserved
    segments shared in proportion to what each resizable pool could still take."""
    model = NetworkBufferPoolModel(20, 128)
    a = model.create_buffer_pool(2, 10)
    assert a.num_buffers == 10
    b = model.create_buffer_pool(2, 6)
    # 16 unreserved, but a can take only 8 more and b 4: all 12 are shared out
    assert (a.num_buffers, b.num_buffers) == (10, 6)
    segments = model.request_unpooled_segments(10)
    # 6 unreserved, capacity 6 + 4 = 10: a 6 * 6 // 10 = 3, b 6 * 10 // 10 - 3 = 3
    assert (a.num_buffers, b.num_buffers) == (5, 5)
    model.recycle_unpooled_segments(segments)
    b.lazy_destroy()
    assert a.num_buffers == 10
    assert model.count_buffers() == 10


def test_a_segment_is_recycled_only_where_it_came_from() -> None:
    model = NetworkBufferPoolModel(10, 128)
    pool = model.create_buffer_pool(1, 4)
    other = model.create_buffer_pool(1, 4, name="other")
    segment = pool.request_segment()
    assert segment is not None
    with pytest.raises(InvalidParameterError, match="given out by pool 0, so pool other"):
        other.recycle(segment)
    with pytest.raises(
        InvalidParameterError, match="so recyclePooledMemorySegment cannot take it back"
    ):
        model.recycle_pooled_segment(segment)
    with pytest.raises(InvalidParameterError, match="not given out"):
        model.recycle_unpooled_segments([99])
    unpooled = model.request_unpooled_segments(2)
    with pytest.raises(InvalidParameterError, match="twice"):
        model.recycle_unpooled_segments([unpooled[0], unpooled[0]])
    pool.recycle(segment)
    with pytest.raises(InvalidParameterError, match="not given out"):
        pool.recycle(segment)  # a double recycle


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((-1, 128), "the number of segments must be between 0"),
        ((10, 0), "the segment size must be between 1"),
        ((2**31, 128), "a Java int"),
        ((10, 128, 0), "The timeout for requesting exclusive buffers should be positive."),
    ],
)
def test_a_pool_flink_could_not_make_is_refused(arguments: tuple[int, ...], message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        NetworkBufferPoolModel(*arguments)


def test_local_pool_refusals() -> None:
    model = NetworkBufferPoolModel(10, 128)
    with pytest.raises(InvalidParameterError, match=r"each channel \(0\) should be larger"):
        model.create_buffer_pool(1, 2, subpartitions=2, max_buffers_per_channel=0)
    pool = model.create_buffer_pool(1, 2, subpartitions=2, max_buffers_per_channel=2, name="p")
    with pytest.raises(InvalidParameterError, match="named 'p' already"):
        model.create_buffer_pool(1, 2, name="p")
    with pytest.raises(InvalidParameterError, match="there is no subpartition 2"):
        pool.request_segment(2)


def test_a_local_pool_asking_a_destroyed_global_pool_is_refused() -> None:
    """After destroy() Flink's availability future stays complete, so a local pool that
    needs a segment asks again without end; the model says so instead."""
    model = NetworkBufferPoolModel(2, 128)
    pool = model.create_buffer_pool(1, 2)
    model.destroy()
    assert pool.available_segments == 1  # the one it fetched ahead
    with pytest.raises(BufferPoolDestroyedError, match="without end"):
        pool.request_segment()  # its last free segment: it must fetch the next one
