"""The virtual channels of one new input channel, from its gate's rescaling descriptor: the
values of Flink's DemultiplexingRecordDeserializerTest, and the exchange plan built on them."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.rescale import (
    NO_RESCALE,
    GateOrPartitionRescalingDescriptor,
    MappingType,
    RescaleMappings,
    VirtualChannel,
    rescale_exchange,
    virtual_channels,
)

from .test_mapper import mappings


def rescaling_descriptor(
    old_subtasks: tuple[int, ...],
    gates: Sequence[RescaleMappings],
    ambiguous: set[int],
) -> tuple[GateOrPartitionRescalingDescriptor, ...]:
    """As Flink's ``InflightDataRescalingDescriptorUtil.rescalingDescriptor``: one descriptor
    per gate, each with the same old subtasks and ambiguous subtasks and its own mapping."""
    return tuple(
        GateOrPartitionRescalingDescriptor(
            old_subtasks, mapping, frozenset(ambiguous), MappingType.RESCALING
        )
        for mapping in gates
    )


# DemultiplexingRecordDeserializerTest: (test, InputChannelInfo(gate, channel), old subtask
# indexes, each gate's channel mapping, ambiguous subtasks, the SubtaskConnectionDescriptors
# (old subtask, old channel) of the deserializer, those of them that filter)
FLINK_CASES = [
    (
        "testUpscale",
        (2, 0),
        (0, 1),
        [mappings(), mappings(), mappings((2, 3), (4, 5))],
        set(),
        {(0, 2), (0, 3), (1, 2), (1, 3)},
        set(),
    ),
    (
        "testAmbiguousChannels",
        (1, 0),
        (41, 42),
        [mappings(), mappings((2, 3), (4, 5))],
        {42},
        {(41, 2), (41, 3), (42, 2), (42, 3)},
        {(42, 2), (42, 3)},
    ),
    (
        "testWatermarks",
        (0, 0),
        (0, 1),
        [mappings((0, 1), (4, 5))],
        set(),
        {(0, 0), (0, 1), (1, 0), (1, 1)},
        set(),
    ),
]


@pytest.mark.parametrize(
    ("test", "channel_info", "old", "gates", "ambiguous", "expected", "filtered"),
    FLINK_CASES,
    ids=[case[0] for case in FLINK_CASES],
)
def test_the_virtual_channels_of_flinks_demultiplexing_deserializer_tests(
    test: str,
    channel_info: tuple[int, int],
    old: tuple[int, ...],
    gates: list[RescaleMappings],
    ambiguous: set[int],
    expected: set[tuple[int, int]],
    filtered: set[tuple[int, int]],
) -> None:
    gate, channel = channel_info
    found = virtual_channels(rescaling_descriptor(old, gates, ambiguous)[gate], channel)
    assert {(vc.old_subtask, vc.old_channel) for vc in found} == expected
    assert len(found) == len(expected)  # each once
    assert {(vc.old_subtask, vc.old_channel) for vc in found if vc.filtered} == filtered


def test_old_subtask_first_then_old_channel() -> None:
    # Flink keeps them in a hash map; the model fixes the order its traces were recorded in.
    (descriptor,) = rescaling_descriptor((41, 42), [mappings((2, 3), (4, 5))], {42})
    assert virtual_channels(descriptor, 1) == (
        VirtualChannel(41, 4),
        VirtualChannel(41, 5),
        VirtualChannel(42, 4, filtered=True),
        VirtualChannel(42, 5, filtered=True),
    )


def test_unmapped_like_flink() -> None:
    # create(...) returns UNMAPPED: no old subtask, or no old channel for this channel
    assert virtual_channels(NO_RESCALE, 0) == ()
    assert virtual_channels(NO_RESCALE, 7) == ()
    (gate,) = rescaling_descriptor((0, 1), [mappings((), (0, 1))], set())
    assert virtual_channels(gate, 0) == ()
    assert len(virtual_channels(gate, 1)) == 4


def test_the_downscaling_gate_of_state_assignment_operation_test() -> None:
    # StateAssignmentOperationTest.testChannelStateAssignmentDownscaling: new downstream
    # subtask 0 of keyBy 3 -> 2 reads old subtasks 0 and 1 (1 shared) and its channel 0 carries
    # old channels 0 and 2: four virtual channels, those of old subtask 1 filtered.
    down0 = rescale_exchange("keyBy", (3, 2), (3, 2)).downstream[0]
    assert virtual_channels(down0.descriptor, 0) == (
        VirtualChannel(0, 0),
        VirtualChannel(0, 2),
        VirtualChannel(1, 0, filtered=True),
        VirtualChannel(1, 2, filtered=True),
    )
    assert virtual_channels(down0.descriptor, 1) == (
        VirtualChannel(0, 1),
        VirtualChannel(1, 1, filtered=True),
    )


PLANS = [
    ("keyBy", (3, 2), (3, 2)),
    ("keyBy", (2, 3), (2, 3)),
    ("keyBy", (4, 4), (7, 3)),
    ("keyBy", (5, 2), (3, 3)),
    ("partitionCustom", (2, 3), (3, 5)),
    ("rebalance", (4, 4), (10, 4)),
    ("shuffle", (6, 2), (2, 6)),
    ("global", (3, 2), (3, 5)),
]


@pytest.mark.parametrize(("partitioner", "upstream", "downstream"), PLANS)
def test_the_exchange_plan_demultiplexes_what_the_descriptor_says(
    partitioner: str, upstream: tuple[int, int], downstream: tuple[int, int]
) -> None:
    plan = rescale_exchange(partitioner, upstream, downstream)
    for d in plan.downstream:
        if d.descriptor is NO_RESCALE:
            continue
        assert d.virtual_channels == tuple(
            virtual_channels(d.descriptor, channel) for channel in range(upstream[1])
        )


@pytest.mark.parametrize(
    ("channel", "message"),
    [
        (-1, "input channel -1 is out of range 0 to 1"),
        (2, "input channel 2 is out of range 0 to 1"),
        (True, "input channel must be a whole number, got True"),
        (1.0, "input channel must be a whole number, got 1.0"),
    ],
)
def test_a_channel_outside_the_mapping_is_refused(channel: int, message: str) -> None:
    (gate,) = rescaling_descriptor((0, 1), [mappings((2, 3), (4, 5))], set())
    with pytest.raises(InvalidParameterError) as raised:
        virtual_channels(gate, channel)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_channel_of_a_mapping_without_channels_is_refused() -> None:
    (gate,) = rescaling_descriptor((0, 1), [mappings()], set())
    with pytest.raises(InvalidParameterError, match="the descriptor maps no new channel"):
        virtual_channels(gate, 0)
