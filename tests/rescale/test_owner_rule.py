"""The one owner rule: a record's new subtask by its exchange's partitioner, one key at a time
and a column at a time, always the same answer."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from flinkstate.keygroups import assign_key_to_parallel_operator
from flinkstate.rescale.owner_rule import OwnerRule
from flinkstate.rescale.partitioner import Partitioner

LONGS = st.integers(min_value=-(2**63), max_value=2**63 - 1)


def test_the_rule_follows_the_partitioner() -> None:
    assert OwnerRule.of(Partitioner.HASH) is OwnerRule.KEY_GROUP
    assert OwnerRule.of(Partitioner.CUSTOM) is OwnerRule.KEY
    assert OwnerRule.of(Partitioner.REBALANCE) is OwnerRule.NONE
    assert OwnerRule.NONE.owner(5, 128, 3) == -1


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
    for rule in (OwnerRule.KEY_GROUP, OwnerRule.KEY):
        owners = rule.owners(rule.owner_keys(column, max_parallelism), max_parallelism, parallelism)
        assert [rule.owner(k, max_parallelism, parallelism) for k in keys] == owners.tolist()


@given(LONGS, st.integers(min_value=1, max_value=32768), st.data())
def test_a_keyed_owner_is_flinks_key_to_operator_assignment(
    key: int, max_parallelism: int, data: st.DataObject
) -> None:
    parallelism = data.draw(st.integers(min_value=1, max_value=max_parallelism))
    expected = assign_key_to_parallel_operator(key, max_parallelism, parallelism, "long")
    assert OwnerRule.KEY_GROUP.owner(key, max_parallelism, parallelism) == expected


def test_column_rules_equal_flinks_scalar_assignment() -> None:
    keys = np.array([0, 1, -1, 42, 2**40, -(2**62)], dtype=np.int64)
    groups = OwnerRule.KEY_GROUP.owner_keys(keys, 128)
    for parallelism in (1, 3, 7):
        owners = OwnerRule.KEY_GROUP.owners(groups, 128, parallelism)
        assert list(owners) == [
            assign_key_to_parallel_operator(int(k), 128, parallelism, "long") for k in keys
        ]
    assert list(OwnerRule.KEY.owners(keys, 0, 3)) == [int(k) % 3 for k in keys]
    assert list(OwnerRule.NONE.owners(keys, 128, 3)) == [-1] * len(keys)
