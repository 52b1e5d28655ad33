"""Which new subtask the exchange's partitioner selects for a record, computed in one place.

Flink's partitioner *selects a channel* for each record (``StreamPartitioner.selectChannel``;
for keyBy ``KeyGroupStreamPartitioner.selectChannel``, which is
``KeyGroupRangeAssignment.assignKeyToParallelOperator``), and after a rescale a virtual
channel's ``PartitionerRecordFilter`` keeps a record only if the partitioner selects the
filtering subtask. The simulator's record filter and routing, the state assignment's expected
subtasks, the rescale routes and the Spark pipeline all ask this module, one record at a time or
a column at a time, so that the figures they produce cannot disagree about which subtask a
record goes to.
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


class ChannelSelection(Enum):
    """How the exchange's partitioner selects a record's new subtask from its key.

    The selection is computed in two steps so that the expensive one is done once per record,
    whatever the new parallelism: a *selection key* (the key group for keyBy, the key itself for
    the model's custom partitioner) and then the subtask it selects at a parallelism.

    Examples
    --------
    A keyBy selects the subtask whose key-group range holds the record's key group; the model's
    custom partitioner sends a key to ``key % parallelism``; a rebalance does not select by key:

    >>> selection = ChannelSelection.of(Partitioner.HASH)
    >>> selection, selection.select(42, 128, 3)
    (<ChannelSelection.KEY_GROUP: 1>, 0)
    >>> ChannelSelection.of(Partitioner.CUSTOM).select(42, 128, 4)
    2
    >>> ChannelSelection.of(Partitioner.REBALANCE).select(42, 128, 4)
    -1

    A column at a time: the key groups once, then the selected subtasks at any parallelism:

    >>> import numpy as np
    >>> groups = selection.selection_keys(np.array([42, -1, 4294967296]), 128)
    >>> at_3 = selection.select_each(groups, 128, 3)
    >>> groups.tolist(), at_3.tolist(), selection.select_each(groups, 128, 7).tolist()
    ([29, 94, 86], [0, 2, 2], [1, 5, 4])
    """

    NONE = 0  # the partitioner does not select by key: such exchanges never filter
    KEY_GROUP = 1
    KEY = 2

    @classmethod
    def of(cls, partitioner: Partitioner) -> ChannelSelection:
        if partitioner is Partitioner.HASH:
            return cls.KEY_GROUP
        if partitioner is Partitioner.CUSTOM:
            return cls.KEY
        return cls.NONE

    def select(self, key: int, max_parallelism: int, parallelism: int) -> int:
        """The subtask the partitioner selects for one ``Long`` key at ``parallelism`` (-1 where
        it does not select by key): the same arithmetic as :meth:`selection_keys` then
        :meth:`select_each`, for one record."""
        if self is _BY_KEY_GROUP:
            return _key_group_subtask(key, max_parallelism, parallelism)
        if self is _BY_KEY:
            return key % parallelism
        return -1

    def selection_keys(
        self,
        keys: npt.NDArray[Any],
        max_parallelism: int,
        java_type: JavaType | str = JavaType.LONG,
    ) -> npt.NDArray[np.int64]:
        """Each key's selection key (-1 where the partitioner does not select by key): the key
        group of a key of ``java_type`` (Long, Integer or String; for keyBy), the ``Long`` key
        itself (the model's custom partitioner)."""
        if self is ChannelSelection.KEY_GROUP:
            return assign_to_key_group_array(keys, max_parallelism, java_type).astype(np.int64)
        if self is ChannelSelection.KEY:
            return keys.astype(np.int64)
        return np.full(len(keys), -1, dtype=np.int64)

    def select_each(
        self, selection_keys: npt.NDArray[np.int64], max_parallelism: int, parallelism: int
    ) -> npt.NDArray[np.int32]:
        """The subtask selected at ``parallelism`` for each selection key (-1 where none)."""
        if self is ChannelSelection.KEY_GROUP:
            return compute_operator_index_for_key_group_array(
                max_parallelism, parallelism, selection_keys
            )
        if self is ChannelSelection.KEY:
            return (selection_keys % parallelism).astype(np.int32)
        return np.full(len(selection_keys), -1, dtype=np.int32)


# read once: a member read through its class costs about 45 ns, and every record asks
_BY_KEY_GROUP = ChannelSelection.KEY_GROUP
_BY_KEY = ChannelSelection.KEY


@functools.lru_cache(maxsize=65536)
def _key_group_subtask(key: int, max_parallelism: int, parallelism: int) -> int:
    """Keys repeat within a run; their subtask is Flink's arithmetic, computed once each."""
    return assign_key_to_parallel_operator(key, max_parallelism, parallelism, "long")
