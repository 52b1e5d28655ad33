from __future__ import annotations

import itertools
import tracemalloc
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flinkstate.errors import InvalidParameterError, UnsupportedRescaleError
from flinkstate.rescale import UNSUPPORTED_MESSAGE, RescaleMappings, SubtaskStateMapper

FIRST = SubtaskStateMapper.FIRST
FULL = SubtaskStateMapper.FULL
RANGE = SubtaskStateMapper.RANGE
ROUND_ROBIN = SubtaskStateMapper.ROUND_ROBIN


def mappings(*rows: tuple[int, ...]) -> RescaleMappings:
    """As Flink's test helper: the number of targets is the largest index plus one."""
    targets = max((t for row in rows for t in row), default=-1) + 1
    return RescaleMappings.of(rows, targets)


def test_every_mapper_matches_flink_for_parallelism_1_to_12(
    flink_reference: dict[str, Any],
) -> None:
    mismatches = []
    for case in flink_reference["subtask_state_mappers"]:
        mapper = SubtaskStateMapper.parse(case["mapper"])
        mapping = mapper.new_to_old(case["old"], case["new"])
        actual = {
            "rows": [list(r) for r in mapping.all_rows()],
            "identity": mapping.is_identity,
            "ambiguous_mapper": mapper.is_ambiguous,
            "ambiguous_targets": sorted(mapping.ambiguous_targets()),
            "inverted": [list(mapping.invert().mapped_indexes(o)) for o in range(case["old"])],
            "inverted_identity": mapping.invert().is_identity,
        }
        expected = {k: case[k] for k in actual}
        if actual != expected:
            mismatches.append((case["mapper"], case["old"], case["new"], expected, actual))
    assert mismatches == []
    assert len(flink_reference["subtask_state_mappers"]) == 5 * 144


# Flink's SubtaskStateMapperTest, value for value.
@pytest.mark.parametrize(
    ("mapper", "old", "new", "expected"),
    [
        (FIRST, 3, 2, mappings((0, 1, 2), ())),
        (FIRST, 3, 3, mappings((0, 1, 2), (), ())),
        (FIRST, 3, 4, mappings((0, 1, 2), (), (), ())),
        (FULL, 3, 2, mappings((0, 1, 2), (0, 1, 2))),
        (FULL, 3, 3, mappings((0, 1, 2), (0, 1, 2), (0, 1, 2))),
        (FULL, 3, 4, mappings((0, 1, 2), (0, 1, 2), (0, 1, 2), (0, 1, 2))),
        (RANGE, 3, 2, mappings((0, 1), (1, 2))),
        (RANGE, 10, 2, mappings((0, 1, 2, 3, 4), (5, 6, 7, 8, 9))),
        (RANGE, 10, 1, mappings(tuple(range(10)))),
        (RANGE, 3, 3, mappings((0,), (1,), (2,))),
        (RANGE, 3, 4, mappings((0,), (0, 1), (1, 2), (2,))),
        (RANGE, 3, 7, mappings((0,), (0,), (0, 1), (1,), (1, 2), (2,), (2,))),
        (ROUND_ROBIN, 10, 4, mappings((0, 4, 8), (1, 5, 9), (2, 6), (3, 7))),
        (ROUND_ROBIN, 5, 4, mappings((0, 4), (1,), (2,), (3,))),
        (ROUND_ROBIN, 5, 2, mappings((0, 2, 4), (1, 3))),
        (ROUND_ROBIN, 5, 1, mappings((0, 1, 2, 3, 4))),
        (ROUND_ROBIN, 10, 10, mappings(*((i,) for i in range(10)))),
        (ROUND_ROBIN, 5, 5, mappings((0,), (1,), (2,), (3,), (4,))),
        (ROUND_ROBIN, 1, 1, mappings((0,))),
        (ROUND_ROBIN, 4, 10, mappings((0,), (1,), (2,), (3,), (), (), (), (), (), ())),
        (ROUND_ROBIN, 4, 5, mappings((0,), (1,), (2,), (3,), ())),
        (ROUND_ROBIN, 2, 5, mappings((0,), (1,), (), (), ())),
        (ROUND_ROBIN, 1, 5, mappings((0,), (), (), (), ())),
    ],
)
def test_flink_subtask_state_mapper_test(
    mapper: SubtaskStateMapper, old: int, new: int, expected: RescaleMappings
) -> None:
    assert mapper.new_to_old(old, new) == expected


def test_round_robin_javadoc_tables() -> None:
    assert ROUND_ROBIN.new_to_old(6, 10).all_rows() == (
        (0,),
        (1,),
        (2,),
        (3,),
        (4,),
        (5,),
        (),
        (),
        (),
        (),
    )
    assert ROUND_ROBIN.new_to_old(10, 4).all_rows() == ((0, 4, 8), (1, 5, 9), (2, 6), (3, 7))


def test_arbitrary_is_round_robin() -> None:
    for old in range(1, 9):
        for new in range(1, 9):
            assert SubtaskStateMapper.ARBITRARY.new_to_old(old, new) == ROUND_ROBIN.new_to_old(
                old, new
            )


def test_ambiguity_flags() -> None:
    assert {m for m in SubtaskStateMapper if m.is_ambiguous} == {
        FULL,
        RANGE,
        SubtaskStateMapper.POINTWISE_UPSTREAM,
    }


def test_unsupported_uses_flinks_message() -> None:
    with pytest.raises(UnsupportedRescaleError) as raised:
        SubtaskStateMapper.UNSUPPORTED.new_to_old(3, 2)
    assert str(raised.value) == UNSUPPORTED_MESSAGE
    assert "add an explicit shuffle()" in UNSUPPORTED_MESSAGE


def test_pointwise_upstream_needs_topology() -> None:
    with pytest.raises(UnsupportedRescaleError, match="topology"):
        SubtaskStateMapper.POINTWISE_UPSTREAM.old_subtasks(0, 2, 3)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 0, 2), "old parallelism 0"),
        ((0, 3, 0), "new parallelism 0"),
        ((2, 3, 2), "new subtask 2 is out of range 0 to 1"),
        ((0, 40000, 2), "40000"),
    ],
)
def test_bad_parallelism(args: tuple[int, int, int], message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        RANGE.old_subtasks(*args)


def test_unknown_mapper_name() -> None:
    with pytest.raises(InvalidParameterError, match="known mappers: ARBITRARY"):
        SubtaskStateMapper.parse("HASH")
    assert SubtaskStateMapper.parse("round-robin") is ROUND_ROBIN


sizes = st.integers(min_value=1, max_value=200)
consistent = st.sampled_from([SubtaskStateMapper.ARBITRARY, FIRST, FULL, RANGE, ROUND_ROBIN])


@pytest.mark.slow
@given(consistent, sizes, sizes)
def test_mapping_both_directions_agree(mapper: SubtaskStateMapper, old: int, new: int) -> None:
    forward = mapper.new_to_old(old, new)
    backward = mapper.old_to_new(old, new)
    pairs = {(n, o) for n in range(new) for o in forward.mapped_indexes(n)}
    assert pairs == {(n, o) for o in range(old) for n in backward.mapped_indexes(o)}
    assert backward.invert() == forward
    # No old subtask's data is dropped: someone reads every old subtask.
    assert all(backward.mapped_indexes(o) for o in range(old))
    # Only an ambiguous mapper lets two new subtasks share an old one.
    if not mapper.is_ambiguous:
        assert forward.ambiguous_targets() == frozenset()


@given(sizes, sizes)
def test_range_shares_at_most_the_boundaries(old: int, new: int) -> None:
    rows = RANGE.new_to_old(old, new).all_rows()
    for left, right in itertools.pairwise(rows):
        assert right[0] in (left[-1], left[-1] + 1)  # contiguous, overlapping at most one


# --- the same mappings as ranges ------------------------------------------------------------


def test_ranges_match_flink_for_parallelism_1_to_12(flink_reference: dict[str, Any]) -> None:
    mismatches = []
    for case in flink_reference["subtask_state_mappers"]:
        mapper = SubtaskStateMapper.parse(case["mapper"])
        ranges = mapper.ranges(case["old"], case["new"])
        actual = {
            "rows": [list(row) for row in ranges.new_to_old],
            "identity": ranges.is_identity,
            "ambiguous_targets": sorted(ranges.ambiguous),
            "inverted": [list(row) for row in ranges.old_to_new],
        }
        expected = {k: case[k] for k in actual}
        if actual != expected:
            mismatches.append((case["mapper"], case["old"], case["new"], expected, actual))
    assert mismatches == []


@given(consistent, sizes, sizes)
def test_ranges_agree_with_the_listed_mapping(
    mapper: SubtaskStateMapper, old: int, new: int
) -> None:
    ranges = mapper.ranges(old, new)
    listed = mapper.new_to_old(old, new)
    assert tuple(tuple(row) for row in ranges.new_to_old) == listed.all_rows()
    inverted = listed.invert()
    assert [tuple(row) for row in ranges.old_to_new] == [
        inverted.mapped_indexes(o) for o in range(old)
    ]
    assert ranges.pairs == sum(len(row) for row in listed.all_rows())
    for index in range(new):
        runs = ranges.runs(index)
        assert [o for run, _ in runs for o in run] == list(listed.mapped_indexes(index))
        assert all(flag == (run[0] in ranges.ambiguous) for run, flag in runs)
        assert list(ranges.shared(index)) == [
            o for o in listed.mapped_indexes(index) if o in ranges.ambiguous
        ]


def test_range_rows_split_into_shared_and_own_runs() -> None:
    ranges = RANGE.ranges(3, 2)
    assert ranges.runs(0) == ((range(0, 1), False), (range(1, 2), True))
    assert ranges.runs(1) == ((range(1, 2), True), (range(2, 3), False))
    assert ranges.shared(0) == range(1, 2)


def test_a_full_mapping_of_400_million_pairs_costs_its_parallelisms() -> None:
    tracemalloc.start()
    try:
        ranges = FULL.ranges(20_000, 20_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ranges.pairs == 400_000_000
    assert ranges.runs(7) == ((range(20_000), True),)
    assert peak < 20_000_000  # the listed mapping took 7.5 GB and failed


def test_ranges_refuse_what_the_mapping_refuses() -> None:
    with pytest.raises(UnsupportedRescaleError) as raised:
        SubtaskStateMapper.UNSUPPORTED.ranges(3, 2)
    assert str(raised.value) == UNSUPPORTED_MESSAGE
    with pytest.raises(UnsupportedRescaleError, match="topology"):
        SubtaskStateMapper.POINTWISE_UPSTREAM.ranges(3, 2)
    with pytest.raises(InvalidParameterError, match="new parallelism 40000"):
        RANGE.ranges(3, 40_000)
