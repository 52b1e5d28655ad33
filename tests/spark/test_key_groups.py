"""Flink's key-group arithmetic as Spark expressions equals Flink's values and the numpy
functions', under ANSI mode (Spark 4's default, where an int overflow fails the job)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flinkstate.errors import InvalidParameterError, KeyTypeError
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import KeyGroupsStateHandle
from flinkstate.flinkcheckpoint.keyed_state import keyed_entries
from flinkstate.flinkcheckpoint.metadata import read_metadata
from flinkstate.javahash import java_hash_code, java_hash_codes
from flinkstate.keygroups import (
    UPPER_BOUND_MAX_PARALLELISM,
    assign_to_key_group,
    assign_to_key_group_array,
    compute_operator_index_for_key_group_array,
    murmur_hash_array,
)
from flinkstate.spark import key_groups
from tests.flinkcheckpoint.made import STRING_KEYED, made_checkpoint

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession

pytestmark = pytest.mark.slow

#: a Spark job per example: few examples, many values each
SPARK_EXAMPLES = settings(max_examples=25)
INTS = st.integers(min_value=-(2**31), max_value=2**31 - 1)
LONGS = st.integers(min_value=-(2**63), max_value=2**63 - 1)
#: the hash code whose murmur mix is Integer.MIN_VALUE, which Flink turns into 0 (found by
#: running the mix backwards from 0x80000000)
MIXES_TO_MIN_VALUE = -2089875627
EXTREMES = [
    0,
    1,
    -1,
    2**31 - 1,
    -(2**31),
    2**31,
    -(2**31) - 1,
    2**32,
    2**63 - 1,
    -(2**63),
    MIXES_TO_MIN_VALUE,
]
# texts: any code point but lone surrogates (a Spark string is UTF-8), with characters beyond
# the BMP (two UTF-16 units each) and the empty string drawn often
TEXTS = st.one_of(
    st.just(""),
    st.text(max_size=40),
    st.text(st.characters(min_codepoint=0x10000), max_size=8),
    st.text(st.sampled_from(["a", "é", "日", "\U0001f600", "\U0010ffff", "\x00"]), max_size=12),
)
PARALLELISMS = st.integers(min_value=1, max_value=UPPER_BOUND_MAX_PARALLELISM).flatmap(
    lambda max_p: st.tuples(st.just(max_p), st.integers(min_value=1, max_value=max_p))
)


@pytest.fixture(params=["true", "false"], ids=["ansi", "legacy"])
def ansi(request: pytest.FixtureRequest, spark: SparkSession) -> Iterator[SparkSession]:
    """The shared session with ANSI mode on, then off: the expressions must not depend on it."""
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", request.param)
    yield spark
    spark.conf.set("spark.sql.ansi.enabled", before)


@pytest.fixture(scope="module")
def strict(spark: SparkSession) -> Iterator[SparkSession]:
    """The shared session with ANSI mode on, as Spark 4 starts by default."""
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "true")
    yield spark
    spark.conf.set("spark.sql.ansi.enabled", before)


def _column(
    spark: SparkSession, values: list[Any], kind: str, *columns: Callable[[Column], Column]
) -> list[tuple[Any, ...]]:
    """Each function of ``columns`` (a function of the column ``k``) over ``values``, in order."""
    from pyspark.sql import functions as F

    frame = spark.createDataFrame([(i, v) for i, v in enumerate(values)], f"i int, k {kind}")
    key = F.col("k")
    rows = frame.select("i", *[make(key) for make in columns]).collect()
    # put back in order here: sorting in Spark would add a shuffle to each example's job and
    # more than double its time (0.57 s against 1.46 s, measured on 2 busy cores)
    return [tuple(row)[1:] for row in sorted(rows, key=lambda row: row[0])]


# -- Flink's own values ---------------------------------------------------------------------


def test_a_mix_to_min_value_hashes_to_zero(ansi: SparkSession) -> None:
    assert murmur_hash_array(np.array([MIXES_TO_MIN_VALUE])).tolist() == [0]
    got = _column(ansi, [MIXES_TO_MIN_VALUE, MIXES_TO_MIN_VALUE + 1], "int", key_groups.murmur_hash)
    assert got == [(0,), (murmur_hash_array(np.array([MIXES_TO_MIN_VALUE + 1]))[0],)]


def test_murmur_hash_matches_flink(ansi: SparkSession, flink_reference: dict[str, Any]) -> None:
    pairs = flink_reference["murmur_hash"]
    got = _column(ansi, [code for code, _ in pairs], "int", key_groups.murmur_hash)
    assert [row[0] for row in got] == [hashed for _, hashed in pairs]


def test_the_murmur_hash_in_steps_is_the_murmur_hash(
    ansi: SparkSession, flink_reference: dict[str, Any]
) -> None:
    """The hash one projection per step (what a pipeline sends over Spark Connect, whose
    protocol refuses the folded expression as too deep) gives Flink's values too."""
    from pyspark.sql import functions as F

    pairs = flink_reference["murmur_hash"]
    frame = ansi.createDataFrame([(i, c) for i, (c, _) in enumerate(pairs)], "i int, k int")
    staged = key_groups.with_murmur_hash(frame, F.col("k"), "h").orderBy("i").collect()
    assert [row.h for row in staged] == [hashed for _, hashed in pairs]
    assert staged[0].k == pairs[0][0]  # the frame's own columns stay


@pytest.mark.parametrize(
    ("kind", "spark_type"), [("int", "int"), ("long", "long"), ("string", "string")]
)
def test_hash_codes_match_flink(
    ansi: SparkSession, flink_reference: dict[str, Any], kind: str, spark_type: str
) -> None:
    rows = [row for row in flink_reference["hash_code"] if row[0] == kind]
    assert len(rows) > 100
    got = _column(
        ansi, [row[1] for row in rows], spark_type, lambda k: key_groups.java_hash_code(k, kind)
    )
    assert [row[0] for row in got] == [row[2] for row in rows]


@pytest.mark.parametrize(
    ("kind", "spark_type"), [("int", "int"), ("long", "long"), ("string", "string")]
)
def test_key_groups_and_subtasks_match_flink(
    ansi: SparkSession, flink_reference: dict[str, Any], kind: str, spark_type: str
) -> None:
    rows = [row for row in flink_reference["assign"] if row[0] == kind]
    assert len(rows) >= 100
    pairs = sorted({(row[2], row[3]) for row in rows})
    # one job: every key against every (max parallelism, parallelism) of the reference
    got = _column(
        ansi,
        [row[1] for row in rows],
        spark_type,
        *[
            make
            for max_p, p in pairs
            for make in (
                lambda k, m=max_p: key_groups.assign_to_key_group(k, m, kind),
                lambda k, m=max_p, n=p: key_groups.assign_key_to_parallel_operator(k, m, n, kind),
            )
        ],
    )
    mismatches = []
    for row, found in zip(rows, got, strict=True):
        at = 2 * pairs.index((row[2], row[3]))
        if found[at : at + 2] != tuple(row[4:]):
            mismatches.append((row, found[at : at + 2]))
    assert mismatches == []


def test_string_keys_of_a_real_checkpoint_are_where_flink_put_them(strict: SparkSession) -> None:
    """The String keys Flink stored in a real job's keyed state, each in the key group Flink
    computed: Spark's expressions give every one the same (and so do numpy and Python,
    tests/flinkcheckpoint/test_export.py)."""
    checkpoint = made_checkpoint(STRING_KEYED)
    operator = read_metadata(checkpoint).operator("slow-counter")
    with StateFiles(checkpoint) as files:
        entries = [
            entry
            for subtask in operator.subtasks
            if isinstance(subtask.managed_keyed_state, KeyGroupsStateHandle)
            for entry in keyed_entries(subtask.managed_keyed_state, files)
            if entry.state == "count"
        ]
    assert len(entries) > 100
    max_p = operator.max_parallelism
    got = _column(
        strict,
        [e.key for e in entries],
        "string",
        lambda k: key_groups.assign_to_key_group(k, max_p, "string"),
    )
    assert [g for (g,) in got] == [e.key_group for e in entries]


def test_owners_of_key_groups_match_flink(
    ansi: SparkSession, flink_reference: dict[str, Any]
) -> None:
    from pyspark.sql import functions as F

    cases = [(max_p, p, owners) for max_p, p, _, owners in flink_reference["key_group_ranges"]]
    cases = [case for case in cases if case[2]]  # Flink's owner of every key group
    assert len(cases) > 50
    widest = max(max_p for max_p, _, _ in cases)
    frame = ansi.range(widest).select(
        "id",
        *[
            key_groups.compute_operator_index_for_key_group(F.col("id"), max_p, p)
            for max_p, p, _ in cases
        ],
    )
    rows = frame.orderBy("id").collect()
    for index, (max_p, _, owners) in enumerate(cases, start=1):
        assert [row[index] for row in rows[:max_p]] == owners


# -- the numpy and Python functions, on random keys -----------------------------------------


@SPARK_EXAMPLES
@given(st.lists(INTS, max_size=64), PARALLELISMS)
def test_int_keys_equal_numpy(strict: SparkSession, keys: list[int], pair: tuple[int, int]) -> None:
    max_p, p = pair
    keys = [*keys, *(k for k in EXTREMES if -(2**31) <= k < 2**31)]
    got = _column(
        strict,
        keys,
        "int",
        lambda k: key_groups.java_int_hash_code(k),
        lambda k: key_groups.murmur_hash(k),
        lambda k: key_groups.assign_to_key_group(k, max_p, "int"),
        lambda k: key_groups.assign_key_to_parallel_operator(k, max_p, p, "int"),
    )
    array = np.array(keys, dtype=np.int64)
    groups = assign_to_key_group_array(array, max_p, "int")
    expected = zip(
        java_hash_codes(array, "int").tolist(),
        murmur_hash_array(array).tolist(),
        groups.tolist(),
        compute_operator_index_for_key_group_array(max_p, p, groups).tolist(),
        strict=True,
    )
    assert got == list(expected)


@SPARK_EXAMPLES
@given(st.lists(LONGS, max_size=64), PARALLELISMS)
def test_long_keys_equal_numpy(
    strict: SparkSession, keys: list[int], pair: tuple[int, int]
) -> None:
    max_p, p = pair
    keys = [*keys, *EXTREMES]
    got = _column(
        strict,
        keys,
        "long",
        lambda k: key_groups.java_long_hash_code(k),
        lambda k: key_groups.assign_to_key_group(k, max_p, "long"),
        lambda k: key_groups.assign_key_to_parallel_operator(k, max_p, p, "long"),
    )
    array = np.array(keys, dtype=np.int64)
    groups = assign_to_key_group_array(array, max_p, "long")
    expected = zip(
        java_hash_codes(array, "long").tolist(),
        groups.tolist(),
        compute_operator_index_for_key_group_array(max_p, p, groups).tolist(),
        strict=True,
    )
    assert got == list(expected)


@SPARK_EXAMPLES
@given(
    st.lists(TEXTS, max_size=32), st.integers(min_value=1, max_value=UPPER_BOUND_MAX_PARALLELISM)
)
def test_string_keys_equal_python(strict: SparkSession, keys: list[str], max_p: int) -> None:
    keys = [*keys, "", "\U0001f600", "a\U0001f600b"]
    got = _column(
        strict,
        keys,
        "string",
        lambda k: key_groups.java_string_hash_code(k),
        lambda k: key_groups.assign_to_key_group(k, max_p, "string"),
    )
    assert got == [
        (java_hash_code(k, "string"), assign_to_key_group(k, max_p, "string")) for k in keys
    ]


# -- what they refuse -----------------------------------------------------------------------


def test_an_int_key_out_of_range_fails_under_ansi(strict: SparkSession) -> None:
    from pyspark.errors import ArithmeticException

    with pytest.raises(ArithmeticException, match="CAST_OVERFLOW"):
        _column(strict, [2**31], "long", key_groups.java_int_hash_code)


def test_bad_arguments_are_refused_before_spark_runs() -> None:
    from pyspark.sql import functions as F

    key = F.col("k")
    with pytest.raises(KeyTypeError, match="not double"):
        key_groups.java_hash_code(key, "double")
    with pytest.raises(InvalidParameterError, match="max parallelism 40000"):
        key_groups.assign_to_key_group(key, 40_000)
    with pytest.raises(InvalidParameterError, match="above max parallelism 128"):
        key_groups.compute_operator_index_for_key_group(key, 128, 129)
