"""A task's network buffer requirements, against NettyShuffleUtils and its test."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.shuffle.config import NetworkConfig
from flinkstate.runtime.shuffle.netty_shuffle_utils import (
    UNBOUNDED_POOL_SIZE,
    GateRequirement,
    PartitionRequirement,
    SortShuffle,
    network_buffers_for_announcing,
    result_partition_pool_bounds,
)
from flinkstate.runtime.shuffle.result_partition_type import ResultPartitionType as T


def test_a_pipelined_bounded_pool_never_has_a_maximum_below_its_minimum() -> None:
    # 4 subpartitions, 1 buffer each, no floating: (5, 4) before, Flink's max(min, max) gives 5
    assert result_partition_pool_bounds(4, 1, 0) == (5, 5)
    assert NetworkConfig(buffers_per_channel=1, floating_buffers=1).result_partition_pool_bounds(
        4
    ) == (5, 5)
    assert NetworkConfig().result_partition_pool_bounds(4) == (5, 16)


def test_pools_by_partition_type() -> None:
    # the types without a bound (and not sorting) may grow without limit
    for kind in (T.PIPELINED, T.HYBRID_FULL, T.HYBRID_SELECTIVE):
        assert result_partition_pool_bounds(6, 2, 8, kind) == (7, UNBOUNDED_POOL_SIZE)
    assert result_partition_pool_bounds(6, 2, 8, T.PIPELINED_APPROXIMATE) == (7, 20)
    # a blocking partition sorts from sort_shuffle.min_parallelism subpartitions on (default 1)
    assert result_partition_pool_bounds(6, 2, 8, T.BLOCKING) == (512, 512)
    assert result_partition_pool_bounds(200, 2, 8, T.BLOCKING_PERSISTENT) == (512, 800)
    hash_based = SortShuffle(min_parallelism=8, min_buffers=12)
    assert result_partition_pool_bounds(6, 5, 8, T.BLOCKING, hash_based) == (7, UNBOUNDED_POOL_SIZE)
    assert result_partition_pool_bounds(10, 5, 8, T.BLOCKING, hash_based) == (12, 40)
    # tiered storage caps the minimum at its guaranteed buffers
    assert result_partition_pool_bounds(
        6, 2, 8, T.HYBRID_FULL, tiered_storage_exclusive_buffers=3
    ) == (
        3,
        UNBOUNDED_POOL_SIZE,
    )


def test_the_announcement_of_netty_shuffle_utils_test() -> None:
    """NettyShuffleUtilsTest.testComputeRequiredNetworkBuffers: 5 buffers per channel, 8 per
    gate, sort shuffle from 8 subpartitions with 12 buffers; its expected value is what the
    gates and partitions it builds consume, added up here term by term."""
    gates = [GateRequirement(3, T.PIPELINED_BOUNDED), GateRequirement(4, T.BLOCKING)]
    partitions = [
        PartitionRequirement(5, T.PIPELINED_BOUNDED),  # 5 * 5 + 8 = 33, its maximum
        PartitionRequirement(6, T.BLOCKING),  # hash-based: its minimum, 6 + 1
        PartitionRequirement(10, T.BLOCKING),  # sort-based: its minimum, 12
    ]
    total = network_buffers_for_announcing(
        gates, partitions, 5, 8, UNBOUNDED_POOL_SIZE, SortShuffle(8, 12)
    )
    # gates: 3 * 5 + 8 = 23 and 4 * 5 + 8 = 28
    assert total == 23 + 28 + 33 + 7 + 12 == 103
    reused = network_buffers_for_announcing(
        [GateRequirement(3, T.PIPELINED_BOUNDED, reuse=2)], [], 5, 8
    )
    assert reused == 46


def test_an_unbounded_pool_cannot_be_announced() -> None:
    with pytest.raises(InvalidParameterError, match="unbounded pool"):
        network_buffers_for_announcing([], [PartitionRequirement(3, T.PIPELINED)], 2, 8)


def test_a_partition_needs_a_subpartition() -> None:
    with pytest.raises(InvalidParameterError, match="at least one subpartition"):
        result_partition_pool_bounds(0, 2, 8)
