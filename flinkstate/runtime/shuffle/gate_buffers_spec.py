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
    least and may grow to, and the buffers the gate aims at in all (what it announces).

    Examples
    --------
    A streaming gate of 4 channels with Flink's defaults (2 buffers per channel, 8 floating per
    gate): 2 exclusive buffers per channel, a floating pool of 1 to 8, 16 buffers announced:

    >>> create_gate_buffers_spec(4, buffers_per_channel=2, floating_buffers=8)
    GateBuffersSpec(exclusive_per_channel=2, required_floating=1, total_floating=8, target_total=16)
    """

    exclusive_per_channel: int
    required_floating: int
    total_floating: int
    target_total: int


def check_buffer_counts(buffers_per_channel: int, floating_buffers: int) -> None:
    """The two per-channel and per-gate counts every buffer computation starts from.

    Examples
    --------
    Flink's defaults pass; a negative count is refused:

    >>> check_buffer_counts(2, 8)
    >>> check_buffer_counts(-1, 8)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: buffers per channel ... must not be negative, ...
    """
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
    for the rest.

    Examples
    --------
    No cap for a streaming gate (``Integer.MAX_VALUE``), 1000 for a batch one:

    >>> effective_max_required_buffers_per_gate(ResultPartitionType.PIPELINED_BOUNDED)
    2147483647
    >>> effective_max_required_buffers_per_gate(ResultPartitionType.BLOCKING)
    1000
    """
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
    """The gate's buffers, refusing what Flink refuses (with its reason).

    Examples
    --------
    A batch gate of 1000 channels with the defaults passes the cap of 1000 required buffers:
    each channel gets none exclusive, and the floating pool takes their place (as in Flink's
    ``GateBuffersSpecTest``):

    >>> spec = create_gate_buffers_spec(1000, 2, 8, ResultPartitionType.BLOCKING)
    >>> spec.exclusive_per_channel, spec.required_floating, spec.total_floating
    (0, 1000, 2008)
    """
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
