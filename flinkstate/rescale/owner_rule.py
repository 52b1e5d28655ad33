"""Which new subtask owns a record, by the exchange's partitioner: the one rule.

The simulator's record filter and routing, the state assignment's expected owners, the
rescale routes and the Spark pipeline all ask this module, one record at a time or a column at
a time, so that the figures they produce cannot disagree about who owns a record.
"""

from __future__ import annotations

import functools
from enum import Enum
from typing import Any

import numpy as np
import numpy.typing as npt

from flinkstate.javahash import JavaType
from flinkstate.keygroups import (
    assign_key_to_parallel_operator,
    assign_to_key_group_array,
    compute_operator_index_for_key_group_array,
)
from flinkstate.rescale.partitioner import Partitioner


class OwnerRule(Enum):
    """How a record's new owner follows from its key, by the exchange's partitioner.

    Ownership is computed in two steps so that the expensive one is done once per record,
    whatever the new parallelism: an *owner key* (the key group for keyBy, the key itself for
    the model's custom partitioner) and then the owner at a parallelism.

    Examples
    --------
    A keyBy's records belong to the subtask owning their key group; the model's custom
    partitioner sends a key to ``key % parallelism``; a rebalance gives no owner:

    >>> rule = OwnerRule.of(Partitioner.HASH)
    >>> rule, rule.owner(42, 128, 3)
    (<OwnerRule.KEY_GROUP: 1>, 0)
    >>> OwnerRule.of(Partitioner.CUSTOM).owner(42, 128, 4)
    2
    >>> OwnerRule.of(Partitioner.REBALANCE).owner(42, 128, 4)
    -1

    A column at a time: the key groups once, then the owners at any parallelism:

    >>> import numpy as np
    >>> groups = rule.owner_keys(np.array([42, -1, 4294967296]), 128)
    >>> groups.tolist(), rule.owners(groups, 128, 3).tolist(), rule.owners(groups, 128, 7).tolist()
    ([29, 94, 86], [0, 2, 2], [1, 5, 4])
    """

    NONE = 0  # the partitioner gives no owner: such exchanges never filter
    KEY_GROUP = 1
    KEY = 2

    @classmethod
    def of(cls, partitioner: Partitioner) -> OwnerRule:
        if partitioner is Partitioner.HASH:
            return cls.KEY_GROUP
        if partitioner is Partitioner.CUSTOM:
            return cls.KEY
        return cls.NONE

    def owner(self, key: int, max_parallelism: int, parallelism: int) -> int:
        """The subtask that owns one ``Long`` key at ``parallelism`` (-1 where the rule gives
        none): the same arithmetic as :meth:`owner_keys` then :meth:`owners`, for one record."""
        if self is _BY_KEY_GROUP:
            return _key_group_owner(key, max_parallelism, parallelism)
        if self is _BY_KEY:
            return key % parallelism
        return -1

    def owner_keys(
        self,
        keys: npt.NDArray[Any],
        max_parallelism: int,
        java_type: JavaType | str = JavaType.LONG,
    ) -> npt.NDArray[np.int64]:
        """Each key's owner key (-1 where the rule gives none): the key group of a key of
        ``java_type`` (Long, Integer or String; for keyBy), the ``Long`` key itself (the
        model's custom partitioner)."""
        if self is OwnerRule.KEY_GROUP:
            return assign_to_key_group_array(keys, max_parallelism, java_type).astype(np.int64)
        if self is OwnerRule.KEY:
            return keys.astype(np.int64)
        return np.full(len(keys), -1, dtype=np.int64)

    def owners(
        self, owner_keys: npt.NDArray[np.int64], max_parallelism: int, parallelism: int
    ) -> npt.NDArray[np.int32]:
        """The owning subtask at ``parallelism`` of each owner key (-1 where none)."""
        if self is OwnerRule.KEY_GROUP:
            return compute_operator_index_for_key_group_array(
                max_parallelism, parallelism, owner_keys
            )
        if self is OwnerRule.KEY:
            return (owner_keys % parallelism).astype(np.int32)
        return np.full(len(owner_keys), -1, dtype=np.int32)


# read once: a member read through its class costs about 45 ns, and every record asks
_BY_KEY_GROUP = OwnerRule.KEY_GROUP
_BY_KEY = OwnerRule.KEY


@functools.lru_cache(maxsize=65536)
def _key_group_owner(key: int, max_parallelism: int, parallelism: int) -> int:
    """Keys repeat within a run; their subtask is Flink's arithmetic, computed once each."""
    return assign_key_to_parallel_operator(key, max_parallelism, parallelism, "long")
