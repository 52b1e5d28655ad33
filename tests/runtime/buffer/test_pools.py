"""Buffer pools: local pools over a TaskManager's global pool, every move in the ledger."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flinkstate.errors import InsufficientNetworkBuffersError, InvalidParameterError
from flinkstate.runtime.buffer.buffer import LocalBufferPool, local_pool
from flinkstate.runtime.buffer.ledger import Marks, ReadersOf, SegmentLedger, StepJournal
from flinkstate.runtime.buffer.owners import Owner, OwnerKind
from flinkstate.runtime.buffer.pools import BufferPools

GLOBAL = "network-pool tm0"
GLOBAL_OWNER = Owner(OwnerKind.NETWORK_POOL, "tm0")
B0, B1 = Owner(OwnerKind.BUILDER, "a>b0"), Owner(OwnerKind.BUILDER, "a>b1")
X, Y = Owner(OwnerKind.FLOATING, "x"), Owner(OwnerKind.FLOATING, "y")


def attach(journal: StepJournal) -> None:
    """Changes to the pool mark slot 1, to the global pool slot 2."""
    readers = ReadersOf({}, {}, {}, {"pool a>b": (1,)}, {GLOBAL: (2,)}, {}, {}, {}, {})
    journal.changes.attach(Marks(set(), set(), {}, {}, set()), readers)


def pools_with(segments: int = 4, size: int = 2, max_per_subpartition: int = 0) -> BufferPools:
    pools = BufferPools(SegmentLedger(StepJournal()))
    attach(pools.ledger.journal)
    pools.add_network_pool(0, segments)
    pools.add_local_pool(
        LocalBufferPool(
            "pool a>b",
            Owner(OwnerKind.POOL, "a>b"),
            GLOBAL,
            1,
            size,
            size,
            per_subpartition=[0, 0],
            max_per_subpartition=max_per_subpartition,
        )
    )
    return pools


def test_a_request_takes_from_the_global_pool_up_to_the_local_size() -> None:
    pools = pools_with()
    stale = pools.ledger.journal.changes.stale
    pool = pools.local["pool a>b"]
    first = pools.request(pool, B0)
    second = pools.request(pool, B1)
    assert (first, second) == (3, 2)  # the global pool's free list is a stack
    assert pools.request(pool, B0) is None  # at its size
    assert not pools.can_request(pool, False)
    assert pools.ledger.owner[:4] == [
        GLOBAL_OWNER,
        GLOBAL_OWNER,
        B1,
        B0,
    ]
    assert stale == {1, 2}  # the readers of the local pool and of the global one


def test_a_recycled_segment_stays_in_the_local_pool_and_is_handed_out_first() -> None:
    pools = pools_with()
    pool = pools.local["pool a>b"]
    segment = pools.request(pool, B0)
    assert segment is not None
    pools.recycle(pool, segment, B0)
    assert pool.free == [segment]
    assert pools.request(pool, B1) == segment
    assert pool.requested == 1


def test_a_pool_shrunk_below_what_it_holds_returns_recycled_segments_to_the_global_pool() -> None:
    pools = pools_with()
    pool = pools.local["pool a>b"]
    segment = pools.request(pool, X)
    assert segment is not None
    assert pools.request(pool, Y) is not None
    pool.size = 1  # redistribution gave it less
    pools.recycle(pool, segment, X)
    assert pools.free_in(GLOBAL) == 3
    assert pool.requested == 1
    assert pool.free == []


def test_one_subpartition_at_its_maximum_makes_the_pool_unavailable_to_all() -> None:
    pools = pools_with(size=4, max_per_subpartition=1)
    pool = pools.local["pool a>b"]
    segment = pools.request(pool, B0, 0)
    assert segment is not None
    assert pool.saturated_subpartitions == 1
    assert not pools.can_request(pool, True)
    assert pools.can_request(pool, False)  # not for a subpartition: recovery, floating
    pools.recycle(pool, segment, B0, 0)
    assert pools.can_request(pool, True)


def test_a_request_while_a_subpartition_is_at_its_maximum_is_still_served() -> None:
    """LocalBufferPoolTest.testMaxBuffersPerChannelAndAvailability (FLINK-27522): the pool is
    unavailable, but a request it can serve is served; the simulator's tasks ask only when it
    is available."""
    pools = pools_with(size=4, max_per_subpartition=1)
    pool = pools.local["pool a>b"]
    assert pools.request(pool, B0, 0) is not None
    second = pools.request(pool, B1, 0)
    assert second is not None
    assert pool.per_subpartition == [2, 0]
    assert pool.saturated_subpartitions == 1
    pools.recycle(pool, second, B1, 0)
    assert pool.saturated_subpartitions == 1  # back at its maximum, not below it


def test_taking_exclusive_buffers_and_giving_them_back_moves_them_in_the_ledger() -> None:
    pools = pools_with()
    taken = pools.take(GLOBAL, 2, Owner(OwnerKind.RECOVERED_EXCLUSIVE, "b<a"))
    assert taken == [3, 2]
    assert pools.free_in(GLOBAL) == 2
    pools.give_back(GLOBAL, 3, Owner(OwnerKind.RECOVERED_EXCLUSIVE, "b<a"))
    assert pools.free_in(GLOBAL) == 3
    assert [m.target for m in pools.ledger.journal.moves] == [
        Owner(OwnerKind.RECOVERED_EXCLUSIVE, "b<a"),
        Owner(OwnerKind.RECOVERED_EXCLUSIVE, "b<a"),
        GLOBAL_OWNER,
    ]


def test_a_reservation_beyond_the_global_pool_is_refused_as_flink_does() -> None:
    pools = pools_with(segments=3)
    pools.reserve(GLOBAL, 2, 32768)
    with pytest.raises(InsufficientNetworkBuffersError) as refused:
        pools.reserve(GLOBAL, 2, 32768)
    assert str(refused.value) == (
        "Insufficient number of network buffers: required 2, but only 1 available. The total "
        "number of network buffers is currently set to 3 of 32768 bytes each. You can increase "
        "this number by setting the configuration keys 'taskmanager.memory.network.fraction', "
        "'taskmanager.memory.network.min', and 'taskmanager.memory.network.max'."
    )
    assert isinstance(refused.value, InvalidParameterError)  # one line at the command line
    pools.release(GLOBAL, 2)
    pools.reserve(GLOBAL, 3, 32768)


def test_redistribution_shares_the_unreserved_segments_in_creation_order() -> None:
    # NetworkBufferPool.redistributeBuffers: 10 unreserved segments, two pools that could
    # take 8 and 4 more: 10 * 8 // 12 = 6 to the first, the rest (4) to the second
    pools = BufferPools(SegmentLedger(StepJournal()))
    nbp = pools.add_network_pool(0, 12)
    pools.reserve(GLOBAL, 2, 32768)
    for holder, maximum in (("a", 9), ("b", 5)):
        pools.add_local_pool(local_pool(holder, GLOBAL, 1, maximum))
    pools.redistribute(nbp)
    assert [p.size for p in pools.local.values()] == [7, 5]


def test_with_nothing_unreserved_every_resizable_pool_is_back_at_its_minimum() -> None:
    pools = BufferPools(SegmentLedger(StepJournal()))
    nbp = pools.add_network_pool(0, 4)
    pools.reserve(GLOBAL, 1, 32768)
    pools.add_local_pool(local_pool("a", GLOBAL, 1, 9))
    pools.redistribute(nbp)
    assert pools.local["pool a"].size == 4  # its minimum and the 3 unreserved
    pools.reserve(GLOBAL, 3, 32768)
    pools.add_local_pool(local_pool("b", GLOBAL, 3, 3))  # not resizable: never resized
    assert pools.redistribution(nbp) == [(pools.local["pool a"], 1)]
    pools.redistribute(nbp)
    assert [p.size for p in pools.local.values()] == [1, 3]


def test_a_smaller_size_returns_the_free_segments_beyond_it() -> None:
    pools = pools_with(segments=4, size=3)
    pool = pools.local["pool a>b"]
    taken = [pools.request(pool, X) for _ in range(3)]
    for segment in taken:
        assert segment is not None
        pools.recycle(pool, segment, X)
    assert (pool.requested, len(pool.free)) == (3, 3)
    pools.set_size(pool, 1)
    assert (pool.size, pool.requested, len(pool.free), pools.free_in(GLOBAL)) == (1, 1, 1, 3)
    with pytest.raises(InvalidParameterError, match="needs at least 1 buffers, but tried to set"):
        pools.set_size(pool, 0)
    pools.set_size(pool, 99)
    assert pool.size == 3  # at most its maximum


def test_a_destroyed_pool_returns_its_free_segments_and_every_recycled_one() -> None:
    pools = pools_with()
    pool = pools.local["pool a>b"]
    held = pools.request(pool, X)
    free = pools.request(pool, Y)
    assert held is not None
    assert free is not None
    pools.recycle(pool, free, Y)
    pools.destroy(pool)
    assert (pool.free, pool.requested, pools.free_in(GLOBAL)) == ([], 1, 3)
    pools.recycle(pool, held, X)
    assert (pool.free, pool.requested, pools.free_in(GLOBAL)) == ([], 0, 4)


def test_a_copy_moves_segments_in_its_own_ledger() -> None:
    pools = pools_with()
    journal = pools.ledger.journal.copy()
    attach(journal)
    twin = pools.copy(pools.ledger.copy(journal))
    assert twin.request(twin.local["pool a>b"], X) == 3
    assert pools.free_in(GLOBAL) == 4
    assert pools.ledger.owner[3] == GLOBAL_OWNER


@given(st.lists(st.tuples(st.sampled_from(["take", "back", "request", "recycle"]), st.booleans())))
def test_copies_share_the_global_pools_until_one_changes_and_keep_their_keys_true(
    steps: list[tuple[str, bool]],
) -> None:
    """Any order of takes, returns, requests, recycles and copies: each copy's key made from
    what it keeps equals its key made afresh, and a copy is never changed by another."""
    pools = pools_with(segments=6, size=3)
    copies: list[tuple[BufferPools, tuple[object, ...]]] = []
    taken: list[int] = []
    held: list[int] = []
    for kind, copy in steps:
        pool = pools.local["pool a>b"]
        if kind == "take" and pools.free_in(GLOBAL):
            taken += pools.take(GLOBAL, 1, X)
        elif kind == "back" and taken:
            pools.give_back(GLOBAL, taken.pop(), X)
        elif kind == "request" and pools.can_request(pool, False):
            segment = pools.request(pool, Y)
            assert segment is not None
            held.append(segment)
        elif kind == "recycle" and held:
            pools.recycle(pool, held.pop(), Y)
        assert pools.state_key(known=True) == pools.state_key()
        if copy:
            ledger = pools.ledger.copy(StepJournal())
            copies.append((pools, pools.state_key()))
            pools = pools.copy(ledger, share_local=False)
            attach(ledger.journal)
    for copied, key in copies:
        assert copied.state_key() == copied.state_key(known=True) == key
