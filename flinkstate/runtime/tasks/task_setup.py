"""Whether a TaskManager's network buffers are enough for the result partitions and input gates
its tasks set up, and what each local pool gets: Flink's order of requests played on a
:class:`~flinkstate.runtime.buffer.network_buffer_pool.NetworkBufferPoolModel`.

A task sets up its result partitions first, then its input gates
(``Task.setupPartitionsAndGates``): each partition creates its local pool with its minimum and
maximum, each gate creates its pool of floating buffers and fetches one of them at once
(``SingleInputGate.setupChannels``, ``reserveSegments(1)``). A gate's channels start as
recovered channels, which take no buffers; once they are converted (right away in a job with
no in-flight state), each remote channel requests its exclusive buffers from the global pool as
unpooled segments (``RemoteInputChannel.setup``). Every creation and every request reserves
segments against the total, and the first one beyond it fails with Flink's message, with the
numbers Flink names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from flinkstate.errors import BufferRequestTimeoutError, InsufficientNetworkBuffersError
from flinkstate.runtime.buffer.network_buffer_pool import LocalPool, NetworkBufferPoolModel
from flinkstate.runtime.shuffle.gate_buffers_spec import GateBuffersSpec


class PoolKind(StrEnum):
    """Whose local pool it is.

    Examples
    --------
    >>> str(PoolKind.INPUT_GATE)
    'input gate'
    """

    RESULT_PARTITION = "result partition"
    INPUT_GATE = "input gate"


@dataclass(frozen=True)
class PartitionSetup:
    """A result partition to set up: its pool's bounds (``NettyShuffleUtils``) and its
    subpartitions, each holding at most ``max_buffers_per_channel`` buffers.

    Examples
    --------
    A streaming partition of 4 subpartitions with Flink's defaults: a pool of 5 to 16, at
    most 10 buffers per subpartition:

    >>> from flinkstate.runtime.shuffle.netty_shuffle_utils import result_partition_pool_bounds
    >>> PartitionSetup(*result_partition_pool_bounds(4, 2, 8), 4, max_buffers_per_channel=10)
    PartitionSetup(minimum=5, maximum=16, subpartitions=4, max_buffers_per_channel=10)
    """

    minimum: int
    maximum: int
    subpartitions: int
    max_buffers_per_channel: int


@dataclass(frozen=True)
class GateSetup:
    """An input gate to set up: its buffers (``GateBuffersSpec``) and how many of its channels
    are remote (a local channel reads the producer's buffers and takes none of its own).

    Examples
    --------
    >>> from flinkstate.runtime.shuffle.gate_buffers_spec import create_gate_buffers_spec
    >>> gate = GateSetup(create_gate_buffers_spec(4, 2, 8), remote_channels=4)
    >>> gate.spec.exclusive_per_channel * gate.remote_channels
    8
    """

    spec: GateBuffersSpec
    remote_channels: int


@dataclass(frozen=True)
class PoolSize:
    """A local pool once everything is set up (or as far as it got).

    Examples
    --------
    A gate's floating pool with Flink's defaults, grown to its maximum by redistribution:

    >>> PoolSize(PoolKind.INPUT_GATE, 1, required=1, maximum=8, size=8, free=1).size
    8
    """

    kind: PoolKind
    #: its number among the pools of its kind, from 1
    index: int
    required: int
    maximum: int
    #: its size after the last redistribution
    size: int
    #: segments it holds free: the one it fetched ahead
    free: int


@dataclass(frozen=True)
class SetupReport:
    """What the TaskManager's pool looks like after the setup, and where it ran out, if it
    did.

    Examples
    --------
    Two partitions that may each grow to 16 buffers on 20 segments: both fit at their
    minimum of 5, share the rest, and Flink warns that they may ask for 160% of the memory:

    >>> partition = PartitionSetup(5, 16, subpartitions=4, max_buffers_per_channel=10)
    >>> report = setup_partitions_and_gates(20, 32_768, [partition, partition], [])
    >>> report.fits, [pool.size for pool in report.pools], report.usage
    (True, [10, 10], 160)
    >>> report.usage_warning.split(".")[0]
    'Memory usage [160%] is too high to satisfy all of the requests'
    """

    segments: int
    segment_size: int
    pools: tuple[PoolSize, ...]
    #: segments the remote channels took as exclusive buffers
    exclusive: int
    #: segments reserved in all (``numTotalRequiredBuffers``)
    required: int
    #: segments free in the global pool
    available: int
    #: the segments the pools may ask for, in percent of the total, and Flink's warning when
    #: that is 100 or more
    usage: int
    usage_warning: str | None
    #: Flink's message where a reservation or request failed, and which one; None if all fit
    refusal: str | None = None
    refused_at: str | None = None

    @property
    def fits(self) -> bool:
        return self.refusal is None


def setup_partitions_and_gates(
    segments: int,
    segment_size: int,
    partitions: Sequence[PartitionSetup],
    gates: Sequence[GateSetup],
) -> SetupReport:
    """Set up ``partitions`` and then ``gates`` on a new pool of ``segments`` segments of
    ``segment_size`` bytes, in Flink's order, stopping at the first refusal.

    Examples
    --------
    A task reading 4 remote channels and writing 4 subpartitions, with Flink's defaults: its
    pools reserve 5 + 1 segments and its channels take 2 exclusive buffers each. The 2048
    segments of 64 MiB are plenty; 10 segments run out at the third channel, with Flink's
    message:

    >>> from flinkstate.runtime.shuffle.gate_buffers_spec import create_gate_buffers_spec
    >>> partition = PartitionSetup(5, 16, subpartitions=4, max_buffers_per_channel=10)
    >>> gate = GateSetup(create_gate_buffers_spec(4, 2, 8), remote_channels=4)
    >>> report = setup_partitions_and_gates(2048, 32_768, [partition], [gate])
    >>> report.fits, report.exclusive, report.required
    (True, 8, 14)
    >>> short = setup_partitions_and_gates(10, 32_768, [partition], [gate])
    >>> short.refused_at
    'the exclusive buffers of remote channel 3 of input gate 1'
    >>> short.refusal.split(".")[0]
    'Insufficient number of network buffers: required 2, but only 0 available'
    """
    model = NetworkBufferPoolModel(segments, segment_size)
    created: list[tuple[PoolKind, int, LocalPool]] = []
    exclusive = 0
    step = ""
    refusal = None
    try:
        for index, partition in enumerate(partitions, 1):
            step = f"the pool of result partition {index}"
            pool = model.create_buffer_pool(
                partition.minimum,
                partition.maximum,
                partition.subpartitions,
                partition.max_buffers_per_channel,
                name=f"{PoolKind.RESULT_PARTITION} {index}",
            )
            created.append((PoolKind.RESULT_PARTITION, index, pool))
        for index, gate in enumerate(gates, 1):
            step = f"the pool of input gate {index}"
            pool = model.create_buffer_pool(
                gate.spec.required_floating,
                gate.spec.total_floating,
                name=f"{PoolKind.INPUT_GATE} {index}",
            )
            created.append((PoolKind.INPUT_GATE, index, pool))
            pool.reserve_segments(1)
        for index, gate in enumerate(gates, 1):
            if not gate.spec.exclusive_per_channel:
                continue
            for channel in range(1, gate.remote_channels + 1):
                step = f"the exclusive buffers of remote channel {channel} of input gate {index}"
                exclusive += len(model.request_unpooled_segments(gate.spec.exclusive_per_channel))
    except (InsufficientNetworkBuffersError, BufferRequestTimeoutError) as error:
        refusal = str(error)
    return SetupReport(
        segments,
        segment_size,
        tuple(
            PoolSize(
                kind,
                index,
                pool.required_segments,
                pool.max_segments,
                pool.num_buffers,
                pool.available_segments,
            )
            for kind, index, pool in created
        ),
        exclusive,
        model.required_segments,
        model.available_segments,
        model.estimated_requested_usage,
        model.usage_warning(),
        refusal,
        step if refusal is not None else None,
    )
