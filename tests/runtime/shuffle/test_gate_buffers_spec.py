"""An input gate's buffers for every partition type, checked against GateBuffersSpecTest."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.shuffle.gate_buffers_spec import (
    DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_BATCH,
    DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_STREAM,
    GateBuffersSpec,
    create_gate_buffers_spec,
    effective_max_required_buffers_per_gate,
)
from flinkstate.runtime.shuffle.result_partition_type import ResultPartitionType

TYPES = list(ResultPartitionType)


def streaming(kind: ResultPartitionType) -> bool:
    """The test's own split: pipelined and hybrid inputs have no cap, the others 1000."""
    return kind.is_pipelined or kind.is_hybrid


def spec(channels: int, kind: ResultPartitionType, per_channel: int = 2) -> GateBuffersSpec:
    # as the Flink test builds it: the cap given explicitly, 8 floating buffers
    cap = (
        DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_STREAM
        if streaming(kind)
        else DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_BATCH
    )
    return create_gate_buffers_spec(channels, per_channel, 8, kind, cap)


#: GateBuffersSpecTest's five cases: channels, buffers per channel, and the spec it expects for
#: a pipelined or hybrid input and for the others (capped at 1000 required buffers)
FLINK_CASES = [
    # testCalculationWithSufficientRequiredBuffers
    (499, 2, GateBuffersSpec(2, 1, 8, 1006), GateBuffersSpec(2, 1, 8, 1006)),
    # testCalculationWithOneExclusiveBuffer
    (500, 2, GateBuffersSpec(2, 1, 8, 1008), GateBuffersSpec(1, 500, 508, 1008)),
    # testUpperBoundaryCalculationWithOneExclusiveBuffer
    (999, 2, GateBuffersSpec(2, 1, 8, 2006), GateBuffersSpec(1, 1, 1007, 2006)),
    # testBoundaryCalculationWithoutExclusiveBuffer
    (1000, 2, GateBuffersSpec(2, 1, 8, 2008), GateBuffersSpec(0, 1000, 2008, 2008)),
    # testCalculationWithConfiguredZeroExclusiveBuffer
    (1001, 0, GateBuffersSpec(0, 1, 8, 8), GateBuffersSpec(0, 1, 8, 8)),
]


@pytest.mark.parametrize("kind", TYPES)
@pytest.mark.parametrize(("channels", "per_channel", "pipelined", "batch"), FLINK_CASES)
def test_flinks_cases(
    kind: ResultPartitionType,
    channels: int,
    per_channel: int,
    pipelined: GateBuffersSpec,
    batch: GateBuffersSpec,
) -> None:
    assert spec(channels, kind, per_channel) == (pipelined if streaming(kind) else batch)


@pytest.mark.parametrize("kind", TYPES)
@pytest.mark.parametrize("tiered", [False, True])
def test_a_configured_cap_wins(kind: ResultPartitionType, tiered: bool) -> None:
    assert effective_max_required_buffers_per_gate(kind, 100, tiered) == 100


@pytest.mark.parametrize("kind", TYPES)
@pytest.mark.parametrize("tiered", [False, True])
def test_the_default_cap(kind: ResultPartitionType, tiered: bool) -> None:
    # hybrid inputs are capped only with tiered storage
    uncapped = kind.is_pipelined or (kind.is_hybrid and not tiered)
    expected = (
        DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_STREAM
        if uncapped
        else DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_BATCH
    )
    assert effective_max_required_buffers_per_gate(kind, None, tiered) == expected


def test_pipelined_approximate_is_capped_like_a_batch_input() -> None:
    # not "pipelined or pipelined bounded" in Flink's sense, and not hybrid
    kind = ResultPartitionType.PIPELINED_APPROXIMATE
    assert effective_max_required_buffers_per_gate(kind) == 1000
    assert create_gate_buffers_spec(500, 2, 8, kind) == GateBuffersSpec(1, 500, 508, 1008)


def test_a_gate_without_floating_buffers_is_refused_as_flink_refuses_it() -> None:
    with pytest.raises(InvalidParameterError, match="Wrong number of floating buffers"):
        create_gate_buffers_spec(4, 1, 0)
    # a capped batch gate has floating buffers in place of exclusive ones
    assert create_gate_buffers_spec(1000, 2, 0, ResultPartitionType.BLOCKING).total_floating == 2000


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 2, 8), "at least one channel"),
        ((4, -1, 8), "must not be negative"),
        ((4, 2, -8), "must not be negative"),
    ],
)
def test_bad_input_is_one_clear_error(args: tuple[int, int, int], message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        create_gate_buffers_spec(*args)
    with pytest.raises(InvalidParameterError, match="at least 1 buffer"):
        create_gate_buffers_spec(4, 2, 8, max_required_buffers_per_gate=0)
