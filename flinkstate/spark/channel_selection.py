"""Which new subtask the partitioner selects for each in-flight record after a rescale, as
Spark column expressions.

For a keyed exchange the selected subtask follows from the key alone: Flink hashes the key
(Long, Integer or String, by the exchange's key type) to a key group (murmur hash of its
``hashCode()``, modulo max parallelism) and the key group to the subtask whose range holds it
at the new parallelism. Every step is an expression of :mod:`flinkstate.spark.key_groups`, run
by the JVM: no Python on the executors, nothing collected. The channel selections of
:class:`~flinkstate.rescale.channel_selection.ChannelSelection` (key group, key, none) are
written here as expressions too, in two steps as there: a selection key per record, once, then
the subtask it selects at each new parallelism.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from flinkstate.errors import InvalidParameterError
from flinkstate.javahash import JavaType
from flinkstate.keygroups import (
    check_parallelism_against_max,
)
from flinkstate.rescale.channel_selection import ChannelSelection
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.rescale.routes import JobShape, SweepPlan, key_type_of
from flinkstate.spark.key_groups import (
    assign_to_key_group,
    compute_operator_index_for_key_group,
    java_hash_code,
    with_murmur_hash,
)
from flinkstate.spark.tables import SparkDataset

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


def keyed_selection(dataset: SparkDataset, exchange: str, new_parallelism: int) -> DataFrame:
    """Every fragment of ``exchange``'s channel state with its record's key group and the
    subtask the partitioner selects for that key group at ``new_parallelism``."""
    from pyspark.sql import functions as F

    rows = dataset.exchanges.where(dataset.exchanges.exchange == exchange).collect()
    if not rows:
        known = [r.exchange for r in dataset.exchanges.select("exchange").collect()]
        raise InvalidParameterError(
            f"no exchange {exchange!r} in this checkpoint; it has {', '.join(known) or 'none'}"
        )
    if rows[0].partitioner != Partitioner.HASH.flink_class:
        raise InvalidParameterError(
            f"{exchange} is a {rows[0].partitioner} exchange: its partitioner does not select "
            "by key group (the records' new readers follow from the subtask mapping)"
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

    kind = key_type_of(exchange, rows[0].key_type)
    ids = dataset.buffers.where(dataset.buffers.exchange == exchange).select("buffer_id")
    fragments = dataset.fragments.join(ids, "buffer_id").select(
        "buffer_id", "position", "record", "key", "key_string"
    )
    # the hash in projections of their own: one expression is too deep for Spark Connect
    code = java_hash_code(F.col(key_column(kind)), kind)
    hashed = with_murmur_hash(fragments, code, "key_murmur")
    fragments = hashed.select(
        "buffer_id",
        "position",
        "record",
        "key",
        "key_string",
        (F.col("key_murmur") % F.lit(max_parallelism)).cast("int").alias("key_group"),
    )
    # the selection reads the key group's column, not its expression again (a select of its own)
    return fragments.withColumn(
        "new_subtask",
        compute_operator_index_for_key_group(F.col("key_group"), max_parallelism, new_parallelism),
    )


def key_column(java_type: JavaType) -> str:
    """The fragments' column a key of ``java_type`` is in: ``key_string`` for a String,
    ``key`` (a ``long``) for a Long or an Integer."""
    return "key_string" if java_type is JavaType.STRING else "key"


def key_hash_code(
    exchange: Column, types: Mapping[str, JavaType] | Mapping[int, JavaType]
) -> Column:
    """Java's ``hashCode()`` (``int``) of each record's key by its exchange's key type
    (exchange -> type, by name or by the number standing for it, as in :func:`selection_key`):
    ``Long.hashCode`` of ``key`` unless the exchange's keys are Integers (``key``) or Strings
    (``key_string``). Only the types present are in the expression, so a dataset of Long
    keys costs what it did."""
    from pyspark.sql import functions as F

    code = java_hash_code(F.col("key"), JavaType.LONG)
    others = [(name, kind) for name, kind in types.items() if kind is not JavaType.LONG]
    for name, kind in others:
        code = F.when(
            exchange == F.lit(name), java_hash_code(F.col(key_column(kind)), kind)
        ).otherwise(code)
    return code


def selection_key(
    exchange: Column,
    key: Column,
    selections: Mapping[str, tuple[ChannelSelection, int]]
    | Mapping[int, tuple[ChannelSelection, int]],
    murmur: Column | None = None,
) -> Column:
    """The selection key (``long``) of a record by its exchange's channel selection (exchange
    -> selection, max parallelism): the key group of its ``Long`` key for keyBy, the key itself
    for the model's custom partitioner, -1 where the partitioner does not select by key (and
    for an exchange not in ``selections``). An exchange is named in ``exchange`` and
    ``selections`` alike, by its name or by a number
    standing for it (cheaper to compare and to group by).

    A murmur hash names its input many times over (:mod:`flinkstate.spark.key_groups`), and
    Spark evaluates it once per record only where its subexpression elimination reaches, which
    is not inside a branch of a ``CASE`` (there it costs 40 times as much). So every candidate
    selection key is computed unconditionally, in one array, and the exchange picks its own from it
    by position (a ``CASE`` of literals). ``murmur``, where given, is the murmur hash of each
    key's hash code computed already (:func:`~flinkstate.spark.key_groups.with_murmur_hash`,
    as a pipeline sent over Spark Connect must): a key group is then that modulo the max
    parallelism.
    """
    from pyspark.sql import functions as F

    candidates = [F.lit(-1).cast("long")]
    # a candidate's selection and max parallelism -> its position (from 1)
    slots: dict[tuple[ChannelSelection, int], int] = {}
    chosen: dict[str | int, int] = {}  # exchange -> its candidate's position (from 1)
    for name, (selection, max_parallelism) in selections.items():
        if selection is ChannelSelection.NONE:
            continue
        slot = (selection, max_parallelism if selection is ChannelSelection.KEY_GROUP else 0)
        if slot not in slots:
            if selection is ChannelSelection.KEY_GROUP and murmur is not None:
                group = murmur % F.lit(max_parallelism)
                candidates.append(group.cast("long"))
            elif selection is ChannelSelection.KEY_GROUP:
                candidates.append(assign_to_key_group(key, max_parallelism, "long").cast("long"))
            else:
                candidates.append(key.cast("long"))
            slots[slot] = len(candidates)
        chosen[name] = slots[slot]
    if not chosen:
        return candidates[0]
    (first, at), *others = chosen.items()
    position = F.when(exchange == F.lit(first), at)
    for name, at in others:
        position = position.when(exchange == F.lit(name), at)
    return F.element_at(F.array(*candidates), position.otherwise(1))


def selected_subtask(
    exchange: Column,
    selection_key: Column,
    selections: Mapping[str, tuple[ChannelSelection, int, int]],
) -> Column:
    """The subtask (``int``) the partitioner selects for a record with ``selection_key`` by its
    exchange's channel selection (exchange -> selection, max parallelism, the consumer's new
    parallelism): the subtask whose range holds the key group, the key modulo the parallelism
    (never negative), or -1 where the partitioner does not select by key."""
    from pyspark.sql import functions as F

    chosen: Column | None = None
    for name, (selection, max_parallelism, parallelism) in selections.items():
        if selection is ChannelSelection.KEY_GROUP:
            value = compute_operator_index_for_key_group(
                selection_key, max_parallelism, parallelism
            )
        elif selection is ChannelSelection.KEY:
            value = F.pmod(selection_key, F.lit(parallelism)).cast("int")
        else:
            continue
        condition = exchange == F.lit(name)
        chosen = F.when(condition, value) if chosen is None else chosen.when(condition, value)
    none = F.lit(-1).cast("int")
    return none if chosen is None else chosen.otherwise(none)


def selected_subtask_at(
    exchange: Column, selection_key: Column, to: Column, plan: SweepPlan, shape: JobShape
) -> Column:
    """The subtask (``int``) the partitioner selects for a record with ``selection_key`` at the
    new parallelism ``to`` names, one of ``plan``'s targets (-1 for any other)."""
    from pyspark.sql import functions as F

    selections = plan.selections_of(shape)
    chosen: Column | None = None
    for index, target in enumerate(plan.targets):
        value = selected_subtask(
            exchange,
            selection_key,
            {name: (sel, max_p, p[index]) for name, (sel, max_p, p) in selections.items()},
        )
        condition = to == F.lit(target)
        chosen = F.when(condition, value) if chosen is None else chosen.when(condition, value)
    none = F.lit(-1).cast("int")
    return none if chosen is None else chosen.otherwise(none)
