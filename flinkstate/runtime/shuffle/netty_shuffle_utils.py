"""A task's network buffer requirements: Flink's ``NettyShuffleUtils``.

A result partition's local pool gets at least one buffer per subpartition plus one (a task
processes input only with an output buffer at hand, and every subpartition may hold a partial
one), and at most ``buffers_per_channel`` per subpartition plus the floating ones; the maximum
is never below the minimum. Blocking partitions of at least ``sort_shuffle_min_parallelism``
subpartitions sort instead, with a fixed minimum. What a task announces to the resource manager
adds up each gate's target and each partition's maximum (its minimum for blocking ones, whose
floating buffers come back without back pressure).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.shuffle.gate_buffers_spec import (
    check_buffer_counts,
    create_gate_buffers_spec,
)
from flinkstate.runtime.shuffle.result_partition_type import ResultPartitionType

#: ``NetworkBufferPool.UNBOUNDED_POOL_SIZE``: ``Integer.MAX_VALUE``
UNBOUNDED_POOL_SIZE = 2**31 - 1
#: ``taskmanager.network.sort-shuffle.min-parallelism`` and ``.min-buffers`` defaults
DEFAULT_SORT_SHUFFLE_MIN_PARALLELISM = 1
DEFAULT_SORT_SHUFFLE_MIN_BUFFERS = 512


@dataclass(frozen=True, slots=True)
class SortShuffle:
    """When a blocking partition sorts, and the buffers it then needs at least.

    Examples
    --------
    Flink's defaults: a blocking partition of one subpartition or more sorts, with 512 buffers:

    >>> SortShuffle()
    SortShuffle(min_parallelism=1, min_buffers=512)
    >>> result_partition_pool_bounds(4, 2, 8, ResultPartitionType.BLOCKING)
    (512, 512)
    """

    min_parallelism: int = DEFAULT_SORT_SHUFFLE_MIN_PARALLELISM
    min_buffers: int = DEFAULT_SORT_SHUFFLE_MIN_BUFFERS

    def __post_init__(self) -> None:
        if self.min_parallelism < 1 or self.min_buffers < 1:
            raise InvalidParameterError(
                "the sort shuffle's minimum parallelism and minimum buffers must be at least 1, "
                f"got {self.min_parallelism} and {self.min_buffers}"
            )


def result_partition_pool_bounds(
    subpartitions: int,
    buffers_per_channel: int,
    floating_buffers: int,
    partition_type: ResultPartitionType = ResultPartitionType.PIPELINED_BOUNDED,
    sort_shuffle: SortShuffle = SortShuffle(),
    tiered_storage_exclusive_buffers: int | None = None,
) -> tuple[int, int]:
    """(min, max) buffers of a result partition's local pool
    (``getMinMaxNetworkBuffersPerResultPartition``; ``tiered_storage_exclusive_buffers``
    given when tiered storage is on).

    Examples
    --------
    A streaming partition of 4 subpartitions with the defaults: at least 4 + 1, at most
    2 per subpartition and the 8 floating ones (``2S + 8``); an unbounded ``PIPELINED`` one has
    no maximum:

    >>> result_partition_pool_bounds(4, buffers_per_channel=2, floating_buffers=8)
    (5, 16)
    >>> _, maximum = result_partition_pool_bounds(4, 2, 8, ResultPartitionType.PIPELINED)
    >>> maximum == UNBOUNDED_POOL_SIZE
    True
    """
    if subpartitions < 1:
        raise InvalidParameterError(
            f"a result partition has at least one subpartition, got {subpartitions}"
        )
    check_buffer_counts(buffers_per_channel, floating_buffers)
    sorts = partition_type.is_blocking and subpartitions >= sort_shuffle.min_parallelism
    if sorts:
        minimum = sort_shuffle.min_buffers
    elif tiered_storage_exclusive_buffers is not None:
        minimum = min(tiered_storage_exclusive_buffers, subpartitions + 1)
    else:
        minimum = subpartitions + 1
    if partition_type.is_bounded:
        maximum = subpartitions * buffers_per_channel + floating_buffers
    elif sorts:
        maximum = max(minimum, 4 * subpartitions)
    else:
        maximum = UNBOUNDED_POOL_SIZE
    return minimum, max(minimum, maximum)


@dataclass(frozen=True, slots=True)
class GateRequirement:
    """An input gate as the announcement counts it: its channels, the type of the partition
    it reads, and how many consumers reuse that partition's gate.

    Examples
    --------
    A gate of 4 channels reading a streaming partition, its own (used by one consumer):

    >>> gate = GateRequirement(4)
    >>> gate.partition_type.flink, gate.reuse
    ('PIPELINED_BOUNDED', 1)
    """

    channels: int
    partition_type: ResultPartitionType = ResultPartitionType.PIPELINED_BOUNDED
    reuse: int = 1


@dataclass(frozen=True, slots=True)
class PartitionRequirement:
    """A result partition as the announcement counts it: its subpartitions and its type.

    Examples
    --------
    >>> PartitionRequirement(4).partition_type.flink
    'PIPELINED_BOUNDED'
    """

    subpartitions: int
    partition_type: ResultPartitionType = ResultPartitionType.PIPELINED_BOUNDED


def network_buffers_for_announcing(
    gates: Iterable[GateRequirement],
    partitions: Iterable[PartitionRequirement],
    buffers_per_channel: int,
    floating_buffers: int,
    max_required_buffers_per_gate: int | None = None,
    sort_shuffle: SortShuffle = SortShuffle(),
) -> int:
    """The network buffers a task announces (``computeNetworkBuffersForAnnouncing``).

    Examples
    --------
    A streaming task reading 4 channels and writing 4 subpartitions, with the defaults: the
    gate's target (4 * 2 + 8) and the partition's maximum (4 * 2 + 8):

    >>> gates, partitions = [GateRequirement(4)], [PartitionRequirement(4)]
    >>> network_buffers_for_announcing(gates, partitions, buffers_per_channel=2, floating_buffers=8)
    32
    """
    total = 0
    for gate in gates:
        spec = create_gate_buffers_spec(
            gate.channels,
            buffers_per_channel,
            floating_buffers,
            gate.partition_type,
            max_required_buffers_per_gate,
        )
        total += spec.target_total * gate.reuse
    for partition in partitions:
        minimum, maximum = result_partition_pool_bounds(
            partition.subpartitions,
            buffers_per_channel,
            floating_buffers,
            partition.partition_type,
            sort_shuffle,
        )
        announced = maximum if partition.partition_type.can_be_pipelined_consumed else minimum
        if announced == UNBOUNDED_POOL_SIZE:
            raise InvalidParameterError(
                f"a {partition.partition_type.flink} partition has an unbounded pool: its "
                "network memory cannot be announced (Flink refuses it too)"
            )
        total += announced
    return total
