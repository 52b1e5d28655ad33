"""Network configuration with Flink's defaults, bounds and sizing rules.

Flink 2.x hard-codes what older releases configured (2 exclusive buffers per channel, 8 floating
buffers per gate, 10 buffers per subpartition at most); the model keeps them as parameters so a
user can ask "what if". The memory segment size is validated as
:mod:`flinkstate.memory_segment` says.
"""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError
from flinkstate.memory_segment import (
    DEFAULT_SEGMENT_SIZE,
    MAX_PAGE_SIZE,
    check_segment_size,
)
from flinkstate.runtime.shuffle.gate_buffers_spec import create_gate_buffers_spec
from flinkstate.runtime.shuffle.netty_shuffle_utils import result_partition_pool_bounds

#: buffers one subpartition may hold before its pool is unavailable: a constant in Flink 2.x
DEFAULT_MAX_BUFFERS_PER_CHANNEL = 10


@dataclass(frozen=True)
class NetworkConfig:
    """Per-TaskManager network settings; defaults are Flink 2.x's.

    Examples
    --------
    Flink 2.x's defaults: 32 KiB segments, 2 exclusive buffers per channel, 8 floating per gate,
    and 2048 buffers (64 MiB) of network memory:

    >>> config = NetworkConfig()
    >>> config.segment_size, config.buffers_per_channel, config.floating_buffers
    (32768, 2, 8)
    >>> config.network_buffers * config.segment_size == 64 * 2**20
    True
    >>> config.gate_buffers(4), config.result_partition_pool_bounds(4)
    ((2, 1, 8), (5, 16))
    """

    segment_size: int = DEFAULT_SEGMENT_SIZE
    buffers_per_channel: int = 2
    floating_buffers: int = 8
    max_buffers_per_channel: int = DEFAULT_MAX_BUFFERS_PER_CHANNEL
    #: 64 MiB of network memory / 32 KiB segments, Flink's minimum network memory
    network_buffers: int = 2048
    #: subtask i of every operator shares slot i; slots fill task managers in order
    slots_per_tm: int = 1
    #: ``execution.checkpointing.unaligned.max-subtasks-per-channel-state-file``: subtasks
    #: of one TaskManager that share a channel-state writer thread (and file)
    subtasks_per_state_file: int = 5

    def __post_init__(self) -> None:
        check_segment_size(self.segment_size)
        for name in ("buffers_per_channel", "floating_buffers"):
            if getattr(self, name) < 0:
                raise InvalidParameterError(
                    f"{name} must not be negative, got {getattr(self, name)}"
                )
        for name in (
            "max_buffers_per_channel",
            "network_buffers",
            "slots_per_tm",
            "subtasks_per_state_file",
        ):
            if getattr(self, name) < 1:
                raise InvalidParameterError(f"{name} must be at least 1, got {getattr(self, name)}")

    def task_manager_of(self, subtask: int) -> int:
        return subtask // self.slots_per_tm

    def result_partition_pool_bounds(self, subpartitions: int) -> tuple[int, int]:
        """(min, max) buffers of a pipelined-bounded result partition's pool
        (``netty_shuffle_utils.result_partition_pool_bounds``)."""
        return result_partition_pool_bounds(
            subpartitions, self.buffers_per_channel, self.floating_buffers
        )

    def gate_buffers(self, channels: int) -> tuple[int, int, int]:
        """(exclusive per channel, floating min, floating max) of a streaming input gate
        (``gate_buffers_spec.create_gate_buffers_spec``, no limit on required buffers)."""
        spec = create_gate_buffers_spec(channels, self.buffers_per_channel, self.floating_buffers)
        return spec.exclusive_per_channel, spec.required_floating, spec.total_floating


def number_of_network_buffers(network_memory: int, page_size: int = DEFAULT_SEGMENT_SIZE) -> int:
    """How many network buffers ``network_memory`` bytes make
    (``NettyShuffleEnvironmentConfiguration.calculateNumberOfNetworkBuffers``): whole pages
    only, the offcut is left to the user's memory; more than a Java int of pages is refused.

    Examples
    --------
    Flink's minimum network memory, 64 MiB, makes 2048 buffers of 32 KiB; a byte short, 2047:

    >>> number_of_network_buffers(64 * 2**20)
    2048
    >>> number_of_network_buffers(64 * 2**20 - 1)
    2047
    """
    check_segment_size(page_size)
    if network_memory < 0:
        raise InvalidParameterError(f"network memory must not be negative, got {network_memory}")
    buffers = network_memory // page_size
    if buffers > MAX_PAGE_SIZE:
        raise InvalidParameterError(
            f"network memory of {network_memory} bytes is more than {MAX_PAGE_SIZE} pages of "
            f"{page_size} bytes (Flink: 'The given number of memory bytes ({network_memory}) "
            "corresponds to more than MAX_INT pages.')"
        )
    return buffers
