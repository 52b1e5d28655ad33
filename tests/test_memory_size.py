"""Memory sizes parsed as Flink's MemorySize.parseBytes parses them."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.memory_size import parse_bytes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1234", 1234),
        ("128m", 128 * 1024**2),
        ("1 mb", 1024**2),
        ("32 KB", 32 * 1024),
        ("64kibibytes", 64 * 1024),
        ("1g", 1024**3),
        ("2 tebibytes", 2 * 1024**4),
        ("  7 b ", 7),
        ("9223372036854775807", 2**63 - 1),
    ],
)
def test_sizes(text: str, expected: int) -> None:
    assert parse_bytes(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        ("m", "does not start with a whole number"),
        ("-5m", "does not start with a whole number"),
        ("1.5g", "unit '.5g'"),
        ("12 parsecs", "unit 'parsecs'"),
        ("9223372036854775808", "64-bit"),
        ("8388608t", "64-bit"),
    ],
)
def test_bad_sizes_are_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        parse_bytes(text)
