"""Who owns each in-flight record after a rescale, computed on the executors through Arrow.

For a keyed exchange the owner follows from the key alone: Flink hashes the ``Long`` key to a
key group (murmur hash of its ``hashCode()``, modulo max parallelism) and the key group to the
subtask whose range holds it at the new parallelism. The executors run the package's own
vectorised functions on Arrow batches (``mapInArrow``): no per-row Python, nothing collected.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from flinkstate.errors import InvalidParameterError
from flinkstate.keygroups import (
    check_parallelism_against_max,
)
from flinkstate.rescale.owner_rule import OwnerRule
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.spark.tables import SparkDataset

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

OWNER_SCHEMA = "buffer_id long, position int, record long, key long, key_group int, new_subtask int"


def keyed_owners(dataset: SparkDataset, exchange: str, new_parallelism: int) -> DataFrame:
    """Every fragment of ``exchange``'s channel state with its record's key group and the
    subtask owning that key group at ``new_parallelism``."""
    rows = dataset.exchanges.where(dataset.exchanges.exchange == exchange).collect()
    if not rows:
        known = [r.exchange for r in dataset.exchanges.select("exchange").collect()]
        raise InvalidParameterError(
            f"no exchange {exchange!r} in this checkpoint; it has {', '.join(known) or 'none'}"
        )
    if rows[0].partitioner != Partitioner.HASH.flink_class:
        raise InvalidParameterError(
            f"{exchange} is a {rows[0].partitioner} exchange: its records have no key-group "
            "owner (their new readers follow from the subtask mapping)"
        )
    downstream = rows[0].downstream
    operator = dataset.operators.where(dataset.operators.operator == downstream).first()
    if operator is None:
        raise InvalidParameterError(
            f"{exchange} reads into {downstream!r}, which the "
            "checkpoint's operators table does not list"
        )
    max_parallelism = int(operator.max_parallelism)
    check_parallelism_against_max(new_parallelism, max_parallelism)

    def owners(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            keys = batch.column("key").to_numpy(zero_copy_only=False)
            groups = OwnerRule.KEY_GROUP.owner_keys(keys, max_parallelism)
            subtasks = OwnerRule.KEY_GROUP.owners(groups, max_parallelism, new_parallelism)
            yield pa.RecordBatch.from_arrays(
                [
                    batch.column("buffer_id"),
                    batch.column("position"),
                    batch.column("record"),
                    batch.column("key"),
                    pa.array(groups, pa.int32()),
                    pa.array(subtasks, pa.int32()),
                ],
                names=["buffer_id", "position", "record", "key", "key_group", "new_subtask"],
            )

    ids = dataset.buffers.where(dataset.buffers.exchange == exchange).select("buffer_id")
    fragments = dataset.fragments.join(ids, "buffer_id").select(
        "buffer_id", "position", "record", "key"
    )
    return fragments.mapInArrow(owners, OWNER_SCHEMA)
