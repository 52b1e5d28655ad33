from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flinkstate.errors import InvalidParameterError
from flinkstate.javahash import JavaType
from flinkstate.keygroups import (
    EMPTY_KEY_GROUP_RANGE,
    UPPER_BOUND_MAX_PARALLELISM,
    KeyGroupRange,
    assign_key_to_parallel_operator,
    assign_key_to_parallel_operator_array,
    assign_to_key_group,
    assign_to_key_group_array,
    compute_default_max_parallelism,
    compute_key_group_range_for_operator_index,
    compute_operator_index_for_key_group,
    compute_operator_index_for_key_group_array,
    key_group_ranges,
    murmur_hash,
    murmur_hash_array,
)

# -- values taken from Flink's jar and tests ------------------------------------------------


def test_murmur_hash_matches_flink(flink_reference: dict[str, Any]) -> None:
    pairs = flink_reference["murmur_hash"]
    assert [murmur_hash(code) for code, _ in pairs] == [expected for _, expected in pairs]


def test_murmur_hash_array_matches_flink(flink_reference: dict[str, Any]) -> None:
    codes = np.array([code for code, _ in flink_reference["murmur_hash"]], dtype=np.int64)
    expected = [hashed for _, hashed in flink_reference["murmur_hash"]]
    assert murmur_hash_array(codes).tolist() == expected


def test_key_assignment_matches_flink(flink_reference: dict[str, Any]) -> None:
    mismatches = []
    for kind, key, max_p, p, group, subtask in flink_reference["assign"]:
        actual = (
            assign_to_key_group(key, max_p, kind),
            assign_key_to_parallel_operator(key, max_p, p, kind),
        )
        if actual != (group, subtask):
            mismatches.append((kind, key, max_p, p, group, subtask, actual))
    assert mismatches == []


def test_vectorised_assignment_matches_flink(flink_reference: dict[str, Any]) -> None:
    for kind in ("int", "long"):
        rows = [row for row in flink_reference["assign"] if row[0] == kind]
        for max_p, p in {(row[2], row[3]) for row in rows}:
            subset = [row for row in rows if (row[2], row[3]) == (max_p, p)]
            keys = np.array([row[1] for row in subset], dtype=np.int64)
            assert assign_to_key_group_array(keys, max_p, kind).tolist() == [r[4] for r in subset]
            assert assign_key_to_parallel_operator_array(keys, max_p, p, kind).tolist() == [
                r[5] for r in subset
            ]


def test_key_group_ranges_match_flink(flink_reference: dict[str, Any]) -> None:
    for max_p, p, ranges, owners in flink_reference["key_group_ranges"]:
        assert [[r.start, r.end] for r in key_group_ranges(max_p, p)] == ranges
        if owners:
            assert [
                compute_operator_index_for_key_group(max_p, p, g) for g in range(max_p)
            ] == owners


def test_default_max_parallelism_matches_flink(flink_reference: dict[str, Any]) -> None:
    for p, expected in flink_reference["default_max_parallelism"]:
        assert compute_default_max_parallelism(p) == expected


def test_cep_rescaling_test_key_groups() -> None:
    # CEPRescalingTest: Integer keys, max parallelism 10.
    expected = {7: (1, 0, 0), 10: (9, 1, 2), 45: (6, 1, 1), 90: (2, 0, 0)}
    for key, (group, at_2, at_3) in expected.items():
        assert assign_to_key_group(key, 10, JavaType.INT) == group
        assert compute_operator_index_for_key_group(10, 2, group) == at_2
        assert compute_operator_index_for_key_group(10, 3, group) == at_3


def test_documented_example_ranges() -> None:
    """The example of docs/concepts/rescaling.md#key-groups."""
    assert key_group_ranges(128, 3) == (
        KeyGroupRange(0, 42),
        KeyGroupRange(43, 85),
        KeyGroupRange(86, 127),
    )


# -- properties -----------------------------------------------------------------------------

parallelisms = st.integers(min_value=1, max_value=UPPER_BOUND_MAX_PARALLELISM).flatmap(
    lambda max_p: st.tuples(st.just(max_p), st.integers(min_value=1, max_value=min(max_p, 300)))
)


@given(parallelisms)
def test_ranges_partition_all_key_groups(pair: tuple[int, int]) -> None:
    max_p, p = pair
    ranges = key_group_ranges(max_p, p)
    assert ranges[0].start == 0
    assert ranges[-1].end == max_p - 1
    for left, right in itertools.pairwise(ranges):
        assert right.start == left.end + 1
    assert all(len(r) >= 1 for r in ranges)
    assert sum(len(r) for r in ranges) == max_p


@given(parallelisms, st.data())
def test_owner_of_a_key_group_contains_it(pair: tuple[int, int], data: st.DataObject) -> None:
    max_p, p = pair
    group = data.draw(st.integers(min_value=0, max_value=max_p - 1))
    owner = compute_operator_index_for_key_group(max_p, p, group)
    assert group in compute_key_group_range_for_operator_index(max_p, p, owner)


@given(st.lists(st.integers(min_value=-(2**31), max_value=2**31 - 1), max_size=64))
def test_murmur_array_equals_scalar(codes: list[int]) -> None:
    assert murmur_hash_array(np.array(codes, dtype=np.int64)).tolist() == [
        murmur_hash(c) for c in codes
    ]


@given(
    st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=64),
    parallelisms,
)
def test_vectorised_long_assignment_equals_scalar(keys: list[int], pair: tuple[int, int]) -> None:
    max_p, p = pair
    array = np.array(keys, dtype=np.int64)
    assert assign_to_key_group_array(array, max_p, "long").tolist() == [
        assign_to_key_group(k, max_p, "long") for k in keys
    ]
    assert assign_key_to_parallel_operator_array(array, max_p, p, "long").tolist() == [
        assign_key_to_parallel_operator(k, max_p, p, "long") for k in keys
    ]


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_murmur_hash_is_non_negative(code: int) -> None:
    assert 0 <= murmur_hash(code) < 2**31


@given(st.integers(min_value=1, max_value=UPPER_BOUND_MAX_PARALLELISM))
def test_default_max_parallelism_bounds(p: int) -> None:
    default = compute_default_max_parallelism(p)
    assert 128 <= default <= UPPER_BOUND_MAX_PARALLELISM
    assert default & (default - 1) == 0
    assert default >= min(p, UPPER_BOUND_MAX_PARALLELISM)


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: key_group_ranges(128, 0), "parallelism 0 is out of range"),
        (lambda: key_group_ranges(128, 129), "parallelism 129 is above max parallelism 128"),
        (
            lambda: key_group_ranges(40000, 4),
            "max parallelism 40000 is above Flink's upper bound 32768",
        ),
        (lambda: key_group_ranges(0, 1), "max parallelism 0 is out of range"),
        (lambda: compute_default_max_parallelism(-3), "parallelism -3 is out of range"),
        (lambda: compute_key_group_range_for_operator_index(128, 4, 4), "subtask index 4"),
        (lambda: compute_operator_index_for_key_group(128, 4, 128), "key group 128"),
        (lambda: assign_to_key_group(1, 32769), "32769"),
        (lambda: murmur_hash(2**31), "Java int"),
        (lambda: compute_operator_index_for_key_group_array(128, 4, [0, 200]), "0 to 127"),
        (lambda: key_group_ranges(128, 2.5), "whole number"),  # type: ignore[arg-type]
    ],
)
def test_bad_input_names_value_and_limit(call: Any, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        call()


def test_key_group_range_value_type() -> None:
    r = KeyGroupRange(3, 5)
    assert list(r) == [3, 4, 5]
    assert len(r) == 3
    assert 4 in r
    assert 6 not in r
    assert r.intersection(KeyGroupRange(5, 9)) == KeyGroupRange(5, 5)
    assert r.intersection(KeyGroupRange(6, 9)) is EMPTY_KEY_GROUP_RANGE
    assert len(EMPTY_KEY_GROUP_RANGE) == 0
    assert KeyGroupRange.of(4, 2) is EMPTY_KEY_GROUP_RANGE
    with pytest.raises(InvalidParameterError):
        KeyGroupRange(5, 3)
    with pytest.raises(InvalidParameterError):
        KeyGroupRange(-1, 3)


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ((0, 10), (3, 7), (3, 7)),
        ((0, 5), (6, 10), None),
        ((0, 10), (5, 20), (5, 10)),
        ((3, 12), (0, 10), (3, 10)),
    ],
)
def test_key_group_intersection(
    first: tuple[int, int], second: tuple[int, int], expected: tuple[int, int] | None
) -> None:
    # KeyGroupRangeTest.testKeyGroupIntersection: symmetric, empty where they do not overlap
    one, two = KeyGroupRange.of(*first), KeyGroupRange.of(*second)
    want = EMPTY_KEY_GROUP_RANGE if expected is None else KeyGroupRange(*expected)
    assert one.intersection(two) == want
    assert two.intersection(one) == want
    assert one.intersection(one) == one


@pytest.mark.parametrize(
    ("start", "end"),
    [(0, 0), (0, 1), (1, 2), (42, 42), (3, 7), (0, 2**15 - 1), (2**15 - 2, 2**15 - 1)],
)
def test_key_group_range_basics(start: int, end: int) -> None:
    # KeyGroupRangeTest.testKeyGroupRangeBasics: its size, its key groups in order, nothing
    # either side (Short.MAX_VALUE is 2**15 - 1)
    groups = KeyGroupRange.of(start, end)
    assert groups.number_of_key_groups == max(0, end - start + 1)
    assert (groups.start, groups.end) == (start, end)
    assert list(groups) == list(range(start, end + 1))
    assert all(group in groups for group in groups)
    assert start - 1 not in groups
    assert end + 1 not in groups


def test_a_key_group_range_starting_below_zero_is_refused() -> None:
    # KeyGroupRangeTest.testKeyGroupRangeBasics: KeyGroupRange.of(-3, 2) is an
    # IllegalArgumentException
    with pytest.raises(InvalidParameterError, match="cannot start below 0"):
        KeyGroupRange.of(-3, 2)


def test_string_key_groups_in_numpy_are_flinks(flink_reference: dict[str, Any]) -> None:
    """``KeyGroupRangeAssignment`` on Flink's JVM for String keys (every max parallelism of
    the reference) against the numpy functions, all keys of a max parallelism at once."""
    rows = [row for row in flink_reference["assign"] if row[0] == "string"]
    assert len(rows) >= 100
    for max_p, p in sorted({(row[2], row[3]) for row in rows}):
        mine = [row for row in rows if (row[2], row[3]) == (max_p, p)]
        keys = [row[1] for row in mine]
        assert assign_to_key_group_array(keys, max_p, "string").tolist() == [r[4] for r in mine]
        subtasks = assign_key_to_parallel_operator_array(keys, max_p, p, "string")
        assert subtasks.tolist() == [r[5] for r in mine]
