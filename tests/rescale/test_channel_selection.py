"""The one channel selection: the new subtask the exchange's partitioner selects for a record,
one key at a time and a column at a time, always the same answer."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from flinkstate.keygroups import assign_key_to_parallel_operator
from flinkstate.rescale.channel_selection import ChannelSelection
from flinkstate.rescale.partitioner import Partitioner

LONGS = st.integers(min_value=-(2**63), max_value=2**63 - 1)


def test_the_selection_follows_the_partitioner() -> None:
    assert ChannelSelection.of(Partitioner.HASH) is ChannelSelection.KEY_GROUP
    assert ChannelSelection.of(Partitioner.CUSTOM) is ChannelSelection.KEY
    assert ChannelSelection.of(Partitioner.REBALANCE) is ChannelSelection.NONE
    assert ChannelSelection.NONE.select(5, 128, 3) == -1


@given(
    st.lists(LONGS, min_size=1, max_size=50),
    st.integers(min_value=1, max_value=4096),
    st.data(),
)
def test_one_key_at_a_time_equals_a_column_at_a_time(
    keys: list[int], max_parallelism: int, data: st.DataObject
) -> None:
    parallelism = data.draw(st.integers(min_value=1, max_value=max_parallelism))
    column = np.array(keys, dtype=np.int64)
    for selection in (ChannelSelection.KEY_GROUP, ChannelSelection.KEY):
        selection_keys = selection.selection_keys(column, max_parallelism)
        selected = selection.select_each(selection_keys, max_parallelism, parallelism)
        one_by_one = [selection.select(k, max_parallelism, parallelism) for k in keys]
        assert one_by_one == selected.tolist()


@given(LONGS, st.integers(min_value=1, max_value=32768), st.data())
def test_a_keyed_selection_is_flinks_key_to_operator_assignment(
    key: int, max_parallelism: int, data: st.DataObject
) -> None:
    parallelism = data.draw(st.integers(min_value=1, max_value=max_parallelism))
    expected = assign_key_to_parallel_operator(key, max_parallelism, parallelism, "long")
    assert ChannelSelection.KEY_GROUP.select(key, max_parallelism, parallelism) == expected


def test_column_selections_equal_flinks_scalar_assignment() -> None:
    keys = np.array([0, 1, -1, 42, 2**40, -(2**62)], dtype=np.int64)
    groups = ChannelSelection.KEY_GROUP.selection_keys(keys, 128)
    for parallelism in (1, 3, 7):
        selected = ChannelSelection.KEY_GROUP.select_each(groups, 128, parallelism)
        assert list(selected) == [
            assign_key_to_parallel_operator(int(k), 128, parallelism, "long") for k in keys
        ]
    assert list(ChannelSelection.KEY.select_each(keys, 0, 3)) == [int(k) % 3 for k in keys]
    assert list(ChannelSelection.NONE.select_each(keys, 128, 3)) == [-1] * len(keys)
