"""A TaskManager's partitions and gates set up request by request, as Flink's tasks do."""

from __future__ import annotations

from flinkstate.runtime.shuffle.gate_buffers_spec import create_gate_buffers_spec
from flinkstate.runtime.shuffle.netty_shuffle_utils import result_partition_pool_bounds
from flinkstate.runtime.shuffle.result_partition_type import ResultPartitionType
from flinkstate.runtime.tasks.task_setup import (
    GateSetup,
    PartitionSetup,
    PoolKind,
    PoolSize,
    setup_partitions_and_gates,
)

SEGMENT = 32768


def partition(subpartitions: int) -> PartitionSetup:
    minimum, maximum = result_partition_pool_bounds(subpartitions, 2, 8)
    return PartitionSetup(minimum, maximum, subpartitions, 10)


def gate(
    channels: int, kind: ResultPartitionType = ResultPartitionType.PIPELINED_BOUNDED
) -> GateSetup:
    return GateSetup(create_gate_buffers_spec(channels, 2, 8, kind), channels)


def test_a_small_task_fits_and_its_pools_share_what_is_left() -> None:
    """A partition of 4 subpartitions (5 to 16) and a gate of 4 remote channels (1 to 8
    floating, 2 exclusive each): 14 reserved; both pools grow to their maximum, each holding
    the one segment it fetched ahead."""
    report = setup_partitions_and_gates(2048, SEGMENT, [partition(4)], [gate(4)])
    assert report.fits
    assert report.pools == (
        PoolSize(PoolKind.RESULT_PARTITION, 1, 5, 16, 16, 1),
        PoolSize(PoolKind.INPUT_GATE, 1, 1, 8, 8, 1),
    )
    assert (report.required, report.exclusive, report.available) == (14, 8, 2048 - 2 - 8)
    assert report.usage_warning is None


def test_the_first_channel_beyond_the_total_is_refused_with_flinks_numbers() -> None:
    """At parallelism 1000 a task's partition needs 1001 buffers and its gate 1 plus 2 per
    remote channel: 64 MiB of 32 KiB segments (2048) serve 523 channels' exclusive buffers."""
    report = setup_partitions_and_gates(2048, SEGMENT, [partition(1000)], [gate(1000)])
    assert not report.fits
    assert report.refused_at == "the exclusive buffers of remote channel 524 of input gate 1"
    assert report.refusal is not None
    assert report.refusal.startswith(
        "Insufficient number of network buffers: required 2, but only 0 available. The total "
        "number of network buffers is currently set to 2048 of 32768 bytes each."
    )
    assert (report.required, report.exclusive) == (2048, 1046)
    # nothing unreserved: every pool at its minimum
    assert [(p.size, p.free) for p in report.pools] == [(1001, 1), (1, 1)]


def test_a_pool_beyond_the_total_is_refused_before_any_gate() -> None:
    report = setup_partitions_and_gates(2048, SEGMENT, [partition(1000)] * 3, [gate(4)])
    assert report.refused_at == "the pool of result partition 3"
    assert report.refusal is not None
    assert "required 1001, but only 46 available" in report.refusal
    assert [p.kind for p in report.pools] == [PoolKind.RESULT_PARTITION] * 2


def test_a_wide_batch_gate_takes_no_exclusive_buffers() -> None:
    """A blocking input's gate requires at most 1000 buffers: at 1001 channels that leaves no
    exclusive buffer for any channel ((1000 - 1) // 1001 = 0), and floating ones do all."""
    report = setup_partitions_and_gates(
        4096, SEGMENT, [], [gate(1001, ResultPartitionType.BLOCKING)]
    )
    assert report.fits
    assert report.exclusive == 0
    assert report.pools == (PoolSize(PoolKind.INPUT_GATE, 1, 1000, 2010, 2010, 1),)


def test_pools_that_may_ask_for_more_than_the_total_draw_flinks_warning() -> None:
    report = setup_partitions_and_gates(20, SEGMENT, [partition(4)], [gate(4)])
    assert report.fits
    assert report.usage == 120  # maximums 16 + 8 of 20
    assert report.usage_warning is not None
    assert report.usage_warning.startswith("Memory usage [120%] is too high")
    assert report.usage_warning.endswith(
        "(totalMemory=640.000kb (655360 bytes), requestedMemory=768.000kb (786432 bytes), "
        "missingMemory=128.000kb (131072 bytes))"
    )
