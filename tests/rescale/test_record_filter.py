"""The record filter of one new subtask: Flink's values for PartitionerRecordFilter (from
DemultiplexingRecordDeserializerTest and RecordFilterTest) and Flink's key-group assignment
for keyBy."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flinkstate.errors import FlinkstateError, InvalidParameterError, KeyTypeError
from flinkstate.rescale import (
    GateOrPartitionRescalingDescriptor,
    MappingType,
    Partitioner,
    PartitionerRecordFilter,
    virtual_channels,
)
from flinkstate.rescale.channel_selection import ChannelSelection

from .test_mapper import mappings


def test_the_ambiguous_channels_of_flinks_demultiplexing_test() -> None:
    # testAmbiguousChannels: channel 0 of gate 1 demultiplexes old subtasks 41 and 42 over old
    # channels 2 and 3; 42 is ambiguous, so its records pass the filter of subtask 1 under a
    # partitioner that sends a Long to its value modulo 2 (the model's partitionCustom). Each
    # buffer holds i and i + 1: 41's virtual channels deliver both, 42's only the odd one.
    descriptor = GateOrPartitionRescalingDescriptor(
        (41, 42), mappings((2, 3), (4, 5)), frozenset({42}), MappingType.RESCALING
    )
    record_filter = PartitionerRecordFilter.of("partitionCustom", 1, 2, 128)
    for i in range(100):
        for vc in virtual_channels(descriptor, 0):
            read = [k for k in (i, i + 1) if not vc.filtered or record_filter.keeps(k)]
            if vc.old_subtask == 41:
                assert read == [i, i + 1]
            else:
                assert read == [i // 2 * 2 + 1]


# RecordFilterTest: a modulo-2 partitioner; (subtask, keys it accepts, keys it rejects)
RECORD_FILTER_TEST = [
    ("testPartitionerRecordFilterAcceptsMatchingSubtask", 0, [0, 2, 4], []),
    ("testPartitionerRecordFilterRejectsNonMatchingSubtask", 0, [], [1, 3, 5]),
    ("testPartitionerRecordFilterWithDifferentSubtaskIndex", 1, [1, 3], [0, 2]),
]


@pytest.mark.parametrize(
    ("test", "subtask", "kept", "dropped"),
    RECORD_FILTER_TEST,
    ids=[c[0] for c in RECORD_FILTER_TEST],
)
def test_flinks_record_filter_test(
    test: str, subtask: int, kept: list[int], dropped: list[int]
) -> None:
    record_filter = PartitionerRecordFilter.of(Partitioner.CUSTOM, subtask, 2, 128)
    assert [record_filter.keeps(key) for key in kept] == [True] * len(kept)
    assert [record_filter.keeps(key) for key in dropped] == [False] * len(dropped)


def test_keyby_keeps_what_flinks_key_group_assignment_sends_to_the_subtask(
    flink_reference: dict[str, Any],
) -> None:
    # Flink 2.3.0's KeyGroupRangeAssignment for Long keys: (key, max parallelism, parallelism,
    # key group, subtask); the subtask keeps the key, its neighbours drop it
    rows = [row for row in flink_reference["assign"] if row[0] == "long"]
    assert rows
    for _, key, max_parallelism, parallelism, _, subtask in rows:
        selected = PartitionerRecordFilter.of("keyBy", subtask, parallelism, max_parallelism)
        assert selected.selected_subtask(key) == subtask
        assert selected.keeps(key)
        for other in {(subtask - 1) % parallelism, (subtask + 1) % parallelism} - {subtask}:
            assert not PartitionerRecordFilter.of(
                "keyBy", other, parallelism, max_parallelism
            ).keeps(key)


@given(
    st.sampled_from([Partitioner.HASH, Partitioner.CUSTOM]),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.integers(min_value=1, max_value=300),
    st.data(),
)
def test_exactly_one_subtask_keeps_a_record_the_one_the_partitioner_selects(
    partitioner: Partitioner, key: int, max_parallelism: int, data: st.DataObject
) -> None:
    parallelism = data.draw(st.integers(min_value=1, max_value=min(max_parallelism, 40)))
    keeping = [
        subtask
        for subtask in range(parallelism)
        if PartitionerRecordFilter(partitioner, subtask, parallelism, max_parallelism).keeps(key)
    ]
    assert keeping == [ChannelSelection.of(partitioner).select(key, max_parallelism, parallelism)]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("nope", 0, 2, 128), "unknown partitioner 'nope'"),
        (("rebalance", 0, 2, 128), "rebalance() gives a record no owner"),
        (("shuffle", 0, 2, 128), "shuffle() gives a record no owner"),
        (("global", 0, 2, 128), "global() gives a record no owner"),
        (("forward", 0, 2, 128), "forward() gives a record no owner"),
        (("rescale", 0, 2, 128), "rescale() gives a record no owner"),
        (("broadcast", 0, 2, 128), "broadcast() gives a record no owner"),
        (("keyBy", 0, 0, 128), "parallelism 0 is out of range"),
        (("keyBy", 0, 2, 0), "max parallelism 0 is out of range"),
        (("keyBy", 0, 200, 128), "parallelism 200 is above max parallelism 128"),
        (("keyBy", -1, 2, 128), "subtask -1 is out of range 0 to 1 (parallelism 2)"),
        (("partitionCustom", 2, 2, 128), "subtask 2 is out of range 0 to 1 (parallelism 2)"),
        (("keyBy", True, 2, 128), "subtask must be a whole number, got True"),
    ],
)
def test_bad_filters_are_refused_in_one_line(
    arguments: tuple[str, int, int, int], message: str
) -> None:
    with pytest.raises(InvalidParameterError) as raised:
        PartitionerRecordFilter.of(*arguments)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_partitioner_must_be_named_through_of() -> None:
    with pytest.raises(InvalidParameterError) as raised:
        PartitionerRecordFilter("keyBy", 0, 2, 128)  # type: ignore[arg-type]
    assert "name one with PartitionerRecordFilter.of" in str(raised.value)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (2**63, "does not fit in a Java Long"),
        (-(2**63) - 1, "does not fit in a Java Long"),
        ("7", "a Long key must be an integer, got '7'"),
        (1.5, "a Long key must be an integer, got 1.5"),
        (False, "a Long key must be an integer, got False"),
    ],
)
@pytest.mark.parametrize("partitioner", ["keyBy", "partitionCustom"])
def test_a_key_that_is_no_long_is_refused(partitioner: str, key: object, message: str) -> None:
    record_filter = PartitionerRecordFilter.of(partitioner, 0, 2, 128)
    with pytest.raises(KeyTypeError) as raised:
        record_filter.keeps(key)  # type: ignore[arg-type]
    assert message in str(raised.value)
    assert issubclass(KeyTypeError, FlinkstateError)
