"""Flink's key-group arithmetic as Spark column expressions: no Python on the executors.

The subtask a record's partitioner selects after a rescale follows from its key by Java's
``hashCode()``, Flink's ``MathUtils.murmurHash`` and ``KeyGroupRangeAssignment``;
:mod:`flinkstate.keygroups` and :mod:`flinkstate.javahash` compute them in Python and numpy.
Run by Spark through Python workers, every record crosses to Python and back; written here
with ``pyspark.sql.functions`` alone, the same values are computed by the JVM's generated code,
and they are checked equal to Flink's own (``tests/reference``).

Java's ``int`` arithmetic wraps; Spark's does not under ANSI mode (Spark 4's default), where
an overflow fails the job. So a 32-bit value is held in a ``long`` as Java's signed ``int``:
the product of two such values fits in a ``long``, and a left shift by 32 then an arithmetic
right shift by 32 (shifts never fail) keeps its low 32 bits, sign extended, which is Java's
wrapped result. No expression here can overflow whatever the ANSI setting.

A murmur hash's two rotations and three xor-shifts each read their input twice, so its tree
names the hash code 32 times. Spark computes each distinct subexpression once per row in a
projection or an aggregate's keys (subexpression elimination, on by default), but not inside a
branch of a ``CASE``, where the hash costs about 40 times as much: compute it unconditionally
(:func:`flinkstate.spark.channel_selection.selection_key` does). Spark's own ``hash`` is
Murmur3 too, but with seed 42 where Flink's is 0, so it cannot stand in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from flinkstate.errors import KeyTypeError
from flinkstate.javahash import VECTORISED_TYPES, JavaType
from flinkstate.keygroups import check_max_parallelism, check_parallelism_against_max

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

#: the key types whose hash code is an expression here (every key type of a dataset)
KEY_TYPES = VECTORISED_TYPES

_INT_BIT = 1 << 31
_MASK32 = 0xFFFFFFFF


def _java_int(constant: int) -> int:
    """A 32-bit constant as Java's signed ``int`` reads it."""
    constant &= _MASK32
    return constant - (1 << 32) if constant & _INT_BIT else constant


def wrap_int(value: Column) -> Column:
    """The low 32 bits of a ``long`` expression, sign extended (a ``long`` holding Java's
    wrapped ``int``): two shifts, which wrap rather than overflow under ANSI mode."""
    from pyspark.sql import functions as F

    return F.shiftright(F.shiftleft(value, 32), 32)


def _times(value: Column, constant: int) -> Column:
    """Java's ``int`` product ``value * constant`` (both Java ints, so the exact product fits
    in a ``long``)."""
    from pyspark.sql import functions as F

    return wrap_int(value * F.lit(_java_int(constant)))


def _unsigned(value: Column) -> Column:
    return value.bitwiseAND(_MASK32)


def _rotate_left(value: Column, distance: int) -> Column:
    """``Integer.rotateLeft(value, distance)``."""
    from pyspark.sql import functions as F

    return wrap_int(
        F.shiftleft(value, distance).bitwiseOR(
            F.shiftrightunsigned(_unsigned(value), 32 - distance)
        )
    )


def _xor_shift(value: Column, distance: int) -> Column:
    """``value ^ (value >>> distance)`` on a Java ``int`` (bit 31 and the sign extension
    above it are left as they are, so the result is a Java ``int`` already)."""
    from pyspark.sql import functions as F

    return value.bitwiseXOR(F.shiftrightunsigned(_unsigned(value), distance))


def java_int_hash_code(key: Column) -> Column:
    """``Integer.hashCode()``: the value itself, as an ``int`` (a value out of the ``int``
    range fails the job under ANSI mode, as the numpy version refuses it)."""
    return key.cast("int")


def java_long_hash_code(key: Column) -> Column:
    """``Long.hashCode()``: ``(int) (value ^ (value >>> 32))``."""
    from pyspark.sql import functions as F

    value = key.cast("long")
    return wrap_int(value.bitwiseXOR(F.shiftrightunsigned(value, 32))).cast("int")


def java_string_hash_code(key: Column) -> Column:
    """``String.hashCode()``: ``31 * h + unit`` over the string's UTF-16 code units (a
    character beyond the BMP is two of them), wrapped to an ``int``; 0 for "".

    Spark has no function from a string to its UTF-16 units, so the units are read from the
    hexadecimal of its UTF-16BE encoding, four digits each, and folded by ``aggregate``.
    """
    from pyspark.sql import functions as F

    digits = F.hex(F.encode(key.cast("string"), "UTF-16BE"))
    units = F.regexp_extract_all(digits, F.lit("([0-9A-F]{4})"), 1)
    return F.aggregate(
        units,
        F.lit(0).cast("long"),
        lambda code, unit: wrap_int(code * F.lit(31) + F.conv(unit, 16, 10).cast("long")),
    ).cast("int")


def java_hash_code(key: Column, java_type: JavaType | str) -> Column:
    """``key.hashCode()`` for the boxed ``java_type`` (Integer, Long or String)."""
    kind = JavaType.parse(java_type)
    if kind is JavaType.INT:
        return java_int_hash_code(key)
    if kind is JavaType.LONG:
        return java_long_hash_code(key)
    if kind is JavaType.STRING:
        return java_string_hash_code(key)
    raise KeyTypeError(
        f"hash codes as Spark expressions support {', '.join(t.value for t in KEY_TYPES)} "
        f"keys, not {kind.value}"
    )


def _murmur_steps() -> tuple[Callable[[Column], Column], ...]:
    """Flink's ``MathUtils.murmurHash(int)`` as steps, each an expression of the one before:
    one expression when folded (:func:`murmur_hash`), one projection each when the whole is
    too deep to send (:func:`with_murmur_hash`)."""
    from pyspark.sql import functions as F

    return (
        lambda k: k.cast("int").cast("long"),
        lambda k: _times(k, 0xCC9E2D51),
        lambda k: _rotate_left(k, 15),
        lambda k: _times(k, 0x1B873593),
        lambda k: _rotate_left(k, 13),
        lambda k: wrap_int(k * F.lit(5) + F.lit(_java_int(0xE6546B64))).bitwiseXOR(F.lit(4)),
        lambda k: _xor_shift(k, 16),
        lambda k: _times(k, 0x85EBCA6B),
        lambda k: _xor_shift(k, 13),
        lambda k: _times(k, 0xC2B2AE35),
        lambda k: _xor_shift(k, 16),
        # Java's ``code >= 0 ? code : code != MIN_VALUE ? -code : 0``: |MIN_VALUE| is 2^31,
        # the only absolute value with bit 31 set
        lambda k: F.abs(k).bitwiseAND(_INT_BIT - 1).cast("int"),
    )


def murmur_hash(code: Column) -> Column:
    """Flink's ``MathUtils.murmurHash(int)``: non-negative, 0 for ``Integer.MIN_VALUE``'s
    hash."""
    for step in _murmur_steps():
        code = step(code)
    return code


def with_murmur_hash(frame: DataFrame, code: Column, into: str) -> DataFrame:
    """``frame`` with the column ``into``: Flink's murmur hash of the ``int`` hash codes
    ``code``, one step per projection. Folded into one expression the hash nests more than a
    hundred deep, which Spark Connect's protocol refuses to carry (protobuf's depth limit);
    in steps each is shallow, and Spark's optimizer folds them into one again on the server
    (``CollapseProject``), so the work done is the same."""
    from pyspark.sql import functions as F

    frame = frame.withColumn(into, code)
    for step in _murmur_steps():
        frame = frame.withColumn(into, step(F.col(into)))
    return frame


def compute_key_group_for_key_hash(code: Column, max_parallelism: int) -> Column:
    """The key group of a key whose Java ``hashCode()`` is ``code``:
    ``murmurHash(code) % maxParallelism`` (never negative: the murmur hash is not)."""
    from pyspark.sql import functions as F

    check_max_parallelism(max_parallelism)
    return (murmur_hash(code) % F.lit(max_parallelism)).cast("int")


def assign_to_key_group(
    key: Column, max_parallelism: int, java_type: JavaType | str = JavaType.LONG
) -> Column:
    """``KeyGroupRangeAssignment.assignToKeyGroup``: the key group of ``key``, a column of
    Integer, Long or String keys."""
    return compute_key_group_for_key_hash(java_hash_code(key, java_type), max_parallelism)


def compute_operator_index_for_key_group(
    key_group: Column, max_parallelism: int, parallelism: int
) -> Column:
    """``KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup``: the subtask of
    ``parallelism`` whose range holds ``key_group``, ``keyGroup * parallelism /
    maxParallelism`` in integers (Spark's ``div``)."""
    from pyspark.sql import functions as F

    check_parallelism_against_max(parallelism, max_parallelism)
    product = key_group.cast("long") * F.lit(parallelism)
    return F.call_function("div", product, F.lit(max_parallelism)).cast("int")


def assign_key_to_parallel_operator(
    key: Column,
    max_parallelism: int,
    parallelism: int,
    java_type: JavaType | str = JavaType.LONG,
) -> Column:
    """The subtask a keyed exchange sends ``key`` to (``KeyGroupStreamPartitioner``)."""
    check_parallelism_against_max(parallelism, max_parallelism)
    return compute_operator_index_for_key_group(
        assign_to_key_group(key, max_parallelism, java_type), max_parallelism, parallelism
    )
