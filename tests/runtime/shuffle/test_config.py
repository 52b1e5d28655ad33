from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.memory_segment import check_segment_size
from flinkstate.runtime.shuffle.config import NetworkConfig, number_of_network_buffers


@pytest.mark.parametrize(
    ("channels", "expected"),
    [
        # GateBuffersSpecTest, pipelined cases: 2 exclusive per channel, floating [1, 8].
        (499, (2, 1, 8)),
        (500, (2, 1, 8)),
        (999, (2, 1, 8)),
        (1000, (2, 1, 8)),
        (1, (2, 1, 8)),
    ],
)
def test_gate_buffers_match_flink(channels: int, expected: tuple[int, int, int]) -> None:
    assert NetworkConfig().gate_buffers(channels) == expected


def test_zero_exclusive_buffers_means_floating_only() -> None:
    # GateBuffersSpecTest: 1001 channels with 0 configured exclusive buffers -> 0, [1, 8].
    assert NetworkConfig(buffers_per_channel=0).gate_buffers(1001) == (0, 1, 8)


def test_result_partition_pool_bounds() -> None:
    assert NetworkConfig().result_partition_pool_bounds(4) == (5, 16)


@pytest.mark.parametrize(
    ("size", "message"),
    [
        (
            1024,
            "Invalid configuration value for taskmanager.memory.segment-size : 1024 - "
            "Minimum memory segment size is 4096",
        ),
        (
            5000,
            "Invalid configuration value for taskmanager.memory.segment-size : 5000 - "
            "Memory segment size must be a power of 2.",
        ),
    ],
)
def test_segment_size_is_checked_like_flink(size: int, message: str) -> None:
    with pytest.raises(InvalidParameterError) as raised:
        check_segment_size(size)
    assert str(raised.value) == message
    assert check_segment_size(4096) == 4096


@pytest.mark.parametrize("size", [2**31, 2**40, 3 * 2**31])
def test_a_segment_size_that_does_not_fit_a_java_int_is_refused_with_the_limit(size: int) -> None:
    # getPageSize casts to int first (MathUtils.checkedDownCast): 2^31 is a power of two above
    # 4096 and would pass every other check
    with pytest.raises(InvalidParameterError) as raised:
        NetworkConfig(segment_size=size)
    assert str(raised.value) == (
        f"taskmanager.memory.segment-size {size} does not fit a Java int (at most 2147483647 "
        f"bytes; the largest valid size is 1 GiB) (Flink: 'Cannot downcast long value {size} "
        "to integer.')"
    )
    assert check_segment_size(2**30) == 2**30


def test_other_bounds() -> None:
    with pytest.raises(InvalidParameterError, match="max_buffers_per_channel"):
        NetworkConfig(max_buffers_per_channel=0)
    with pytest.raises(InvalidParameterError, match="buffers_per_channel"):
        NetworkConfig(buffers_per_channel=-1)


def test_network_buffers_from_memory_and_page_size() -> None:
    # NettyShuffleEnvironmentConfigurationTest.testNetworkBufferNumberCalculation
    assert number_of_network_buffers(128 * 1024 * 1024, 1024 * 1024) == 128
    # the offcut is left over; the minimum network memory makes the model's default
    assert number_of_network_buffers(64 * 1024 * 1024 + 1000) == 2048
    with pytest.raises(InvalidParameterError, match="MAX_INT pages"):
        number_of_network_buffers(2**31 * 4096, 4096)
    with pytest.raises(InvalidParameterError, match="power of 2"):
        number_of_network_buffers(1024, 5000)
    with pytest.raises(InvalidParameterError, match="negative"):
        number_of_network_buffers(-1)
