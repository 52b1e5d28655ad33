"""How many buffers an input gate takes: Flink's ``GateBuffersSpec``.

``InputGateSpecUtils.createGateBuffersSpec`` aims at ``buffers_per_channel`` exclusive buffers
per channel plus one floating buffer as the gate's required buffers, and at the floating
buffers on top as its total. A streaming gate has no limit on required buffers; a batch
gate's required buffers are capped (1000 by default), and once the channels' exclusive
buffers would pass the cap, each channel gets fewer (down to none) and floating buffers take
their place: a wide batch gate still starts with a bounded number of buffers.
"""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.shuffle.result_partition_type import ResultPartitionType

#: ``InputGateSpecUtils.DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_BATCH``
DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_BATCH = 1000
#: ``..._FOR_STREAM``: ``Integer.MAX_VALUE``, no limit
DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_STREAM = 2**31 - 1


@dataclass(frozen=True, slots=True)
class GateBuffersSpec:
    """The exclusive buffers each channel gets, the floating buffers the gate's pool needs at
    least and may grow to, and the buffers the gate aims at in all (what it announces)."""

    exclusive_per_channel: int
    required_floating: int
    total_floating: int
    target_total: int


def check_buffer_counts(buffers_per_channel: int, floating_buffers: int) -> None:
    """The two per-channel and per-gate counts every buffer computation starts from."""
    if buffers_per_channel < 0 or floating_buffers < 0:
        raise InvalidParameterError(
            "buffers per channel and floating buffers per gate must not be negative, got "
            f"{buffers_per_channel} and {floating_buffers}"
        )


def effective_max_required_buffers_per_gate(
    partition_type: ResultPartitionType,
    configured: int | None = None,
    tiered_storage: bool = False,
) -> int:
    """The cap on a gate's required buffers: the configured one, else none for pipelined
    inputs (and hybrid ones without tiered storage, whose backlog may overshoot) and 1000
    for the rest."""
    if configured is not None:
        return configured
    if partition_type.is_pipelined or (partition_type.is_hybrid and not tiered_storage):
        return DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_STREAM
    return DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_BATCH


def create_gate_buffers_spec(
    channels: int,
    buffers_per_channel: int,
    floating_buffers: int,
    partition_type: ResultPartitionType = ResultPartitionType.PIPELINED_BOUNDED,
    max_required_buffers_per_gate: int | None = None,
    tiered_storage: bool = False,
) -> GateBuffersSpec:
    """The gate's buffers, refusing what Flink refuses (with its reason)."""
    if channels < 1:
        raise InvalidParameterError(f"a gate has at least one channel, got {channels}")
    check_buffer_counts(buffers_per_channel, floating_buffers)
    cap = effective_max_required_buffers_per_gate(
        partition_type, max_required_buffers_per_gate, tiered_storage
    )
    if cap < 1:
        raise InvalidParameterError(
            f"a gate requires at least 1 buffer, got a maximum of {cap} required buffers "
            "(Flink: 'Require at least 1 buffer per gate.')"
        )
    target_required = channels * buffers_per_channel + 1
    target_total = channels * buffers_per_channel + floating_buffers
    required = min(cap, target_required)
    # one buffer of the required ones is always floating; the rest is shared out evenly
    exclusive = min(buffers_per_channel, (required - 1) // channels)
    required_floating = required - channels * exclusive
    total_floating = target_total - channels * exclusive
    if required_floating > total_floating:
        raise InvalidParameterError(
            f"a gate of {channels} channel(s) with {buffers_per_channel} buffer(s) per channel "
            f"and {floating_buffers} floating buffer(s) needs {required_floating} "
            f"floating buffer(s) but may have only {total_floating}: give it at least one "
            "floating buffer (Flink: 'Wrong number of floating buffers.')"
        )
    return GateBuffersSpec(exclusive, required_floating, total_floating, target_total)
