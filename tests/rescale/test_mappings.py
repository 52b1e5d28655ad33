from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flinkstate.errors import InvalidParameterError
from flinkstate.rescale import RescaleMappings

from .test_mapper import mappings


# Flink's RescaleMappingsTest.
def test_invert() -> None:
    mapping = mappings((0,), (0,), (), (2, 3), (0, 5))
    inverted = mapping.invert()
    assert inverted == mappings((0, 1, 4), (), (3,), (3,), (), (4,))
    assert inverted.invert() == mapping


def test_normalization_drops_trailing_empty_rows() -> None:
    mapping = mappings((0,), (0,), (), (2, 3), (0, 5), (), ())
    assert mapping.number_of_sources == 7
    assert mapping.number_of_targets == 6
    assert len(mapping.rows) == 5
    assert mapping.mapped_indexes(6) == ()


def test_ambiguous_targets() -> None:
    mapping = mappings((0,), (1, 2), (), (2, 3, 4), (4, 5), ())
    assert mapping.ambiguous_targets() == {2, 4}


def test_identity_detection() -> None:
    mapping = RescaleMappings.of([(0,), (1,), (), ()], 2)
    assert mapping.is_identity
    assert mapping.mapped_indexes(1) == (1,)
    assert mapping.mapped_indexes(3) == ()
    assert mapping.invert() == RescaleMappings.identity(2, 4)
    assert mapping.ambiguous_targets() == frozenset()
    assert not RescaleMappings.of([(0,), (1,)], 3).is_identity  # fewer sources than targets


def test_targets_outside_range_are_rejected() -> None:
    with pytest.raises(InvalidParameterError, match="outside 0 to 1"):
        RescaleMappings.of([(0,), (2,)], 2)


rows = st.integers(min_value=1, max_value=8).flatmap(
    lambda targets: st.tuples(
        st.just(targets),
        st.lists(st.sets(st.integers(min_value=0, max_value=targets - 1)), max_size=10),
    )
)


@pytest.mark.slow
@given(rows)
def test_invert_twice_is_the_original(case: tuple[int, list[set[int]]]) -> None:
    targets, raw = case
    mapping = RescaleMappings.of([tuple(sorted(r)) for r in raw], targets)
    twice = mapping.invert().invert()
    assert [twice.mapped_indexes(i) for i in range(len(raw))] == [
        mapping.mapped_indexes(i) for i in range(len(raw))
    ]
