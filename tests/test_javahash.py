from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flinkstate.errors import KeyTypeError
from flinkstate.javahash import (
    JavaType,
    infer_java_type,
    java_hash_code,
    java_hash_codes,
    long_key,
    string_hash_codes,
)


def _value(kind: str, raw: Any) -> Any:
    if kind in ("double", "float") and isinstance(raw, str):
        return {"NaN": math.nan, "Infinity": math.inf}[raw]
    return raw


def test_every_java_hash_code_matches_flink_jvm(flink_reference: dict[str, Any]) -> None:
    mismatches = []
    for kind, raw, expected in flink_reference["hash_code"]:
        actual = java_hash_code(_value(kind, raw), kind)
        if actual != expected:
            mismatches.append((kind, raw, expected, actual))
    assert mismatches == []
    assert len(flink_reference["hash_code"]) > 700


@pytest.mark.parametrize(
    ("key", "kind", "expected"),
    [
        (-1, "int", -1),
        (-1, "long", 0),  # Long(-1).hashCode() == 0 while Integer(-1).hashCode() == -1
        (2**32, "long", 1),
        ("", "string", 0),
        ("a", "string", 97),
        ("\U0001f600", "string", 0xD83D * 31 + 0xDE00),  # two UTF-16 code units
        (True, "boolean", 1231),
        (False, "boolean", 1237),
        ("A", "char", 65),
    ],
)
def test_documented_java_semantics(key: Any, kind: str, expected: int) -> None:
    assert java_hash_code(key, kind) == expected


def test_inference_picks_integer_then_long() -> None:
    assert infer_java_type(5) is JavaType.INT
    assert infer_java_type(2**31) is JavaType.LONG
    assert infer_java_type("x") is JavaType.STRING
    assert infer_java_type(True) is JavaType.BOOLEAN
    assert infer_java_type(1.5) is JavaType.DOUBLE


@pytest.mark.parametrize("key", [b"abc", bytearray(b"x"), [1, 2], np.array([1, 2])])
def test_arrays_are_rejected_with_a_reason(key: Any) -> None:
    with pytest.raises(KeyTypeError, match="identity"):
        java_hash_code(key)


def test_byte_array_type_name_is_rejected() -> None:
    with pytest.raises(KeyTypeError, match="identity"):
        java_hash_code("abc", "byte[]")


@pytest.mark.parametrize(
    ("key", "kind", "message"),
    [
        (2**31, "int", "does not fit in a Java Integer"),
        (2**63, "long", "does not fit in a Java Long"),
        (128, "byte", "does not fit in a Java Byte"),
        ("ab", "char", "one UTF-16 code unit"),
        (1, "string", "must be a str"),
        ("x", "long", "must be an integer"),
        (1, "boolean", "True or False"),
    ],
)
def test_out_of_range_values_name_the_limit(key: Any, kind: str, message: str) -> None:
    with pytest.raises(KeyTypeError, match=message):
        java_hash_code(key, kind)


def test_unknown_type_lists_the_known_ones() -> None:
    with pytest.raises(KeyTypeError, match="known types: int, long"):
        JavaType.parse("decimal")


@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=50))
def test_vectorised_long_hash_equals_scalar(keys: list[int]) -> None:
    expected = [java_hash_code(k, JavaType.LONG) for k in keys]
    assert java_hash_codes(np.array(keys, dtype=np.int64), "long").tolist() == expected


@given(st.lists(st.integers(min_value=-(2**31), max_value=2**31 - 1), max_size=50))
def test_vectorised_int_hash_equals_scalar(keys: list[int]) -> None:
    expected = [java_hash_code(k, JavaType.INT) for k in keys]
    assert java_hash_codes(np.array(keys, dtype=np.int64), "int").tolist() == expected


def test_vectorised_rejects_strings_and_out_of_range() -> None:
    with pytest.raises(KeyTypeError, match="integer array"):
        java_hash_codes(np.array(["a"]), "long")
    with pytest.raises(KeyTypeError, match="32-bit"):
        java_hash_codes(np.array([2**31]), "int")
    with pytest.raises(KeyTypeError, match="a String key must be a str, got 1"):
        java_hash_codes(np.array([1]), "string")
    with pytest.raises(KeyTypeError, match="int, long and string"):
        java_hash_codes(np.array([1]), "double")


def test_vectorised_string_hash_codes_are_flinks(flink_reference: dict[str, Any]) -> None:
    """Every String of the reference (empty, Latin-1, CJK, beyond the BMP, a NUL, long ones
    that wrap many times) hashed at once equals ``String.hashCode()`` on Flink's JVM."""
    pairs = [(raw, code) for kind, raw, code in flink_reference["hash_code"] if kind == "string"]
    assert len(pairs) > 10
    strings = [raw for raw, _ in pairs]
    assert string_hash_codes(strings).tolist() == [code for _, code in pairs]
    assert java_hash_codes(np.array(strings, dtype=object), "string").dtype == np.int32
    assert string_hash_codes([]).tolist() == []


@given(st.lists(st.text(max_size=40), max_size=50))
def test_vectorised_string_hash_equals_scalar(keys: list[str]) -> None:
    expected = [java_hash_code(k, JavaType.STRING) for k in keys]
    assert string_hash_codes(keys).tolist() == expected


def test_a_long_key_is_checked_as_a_long_hash_code_checks_it() -> None:
    assert long_key(np.int64(-5)) == -5
    assert type(long_key(np.int64(-5))) is int
    for bad in (2**63, True, "1"):
        with pytest.raises(KeyTypeError) as long_error:
            long_key(bad)
        with pytest.raises(KeyTypeError) as hash_error:
            java_hash_code(bad, "long")
        assert str(long_error.value) == str(hash_error.value)
