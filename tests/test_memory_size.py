"""Memory sizes parsed as Flink's MemorySize.parseBytes parses them."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.memory_size import parse_bytes, to_human_readable


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


@pytest.mark.parametrize(
    ("size", "text"),
    [
        # NetworkBufferPoolTest.testSegmentsUsage's warning
        (6400, "6.250kb (6400 bytes)"),
        (7680, "7.500kb (7680 bytes)"),
        (1280, "1.250kb (1280 bytes)"),
        (10240, "10.000kb (10240 bytes)"),
        (3840, "3.750kb (3840 bytes)"),
        # MemorySizeTest.testToHumanReadableString
        (0, "0 bytes"),
        (1, "1 bytes"),
        (1024, "1024 bytes"),
        (1025, "1.001kb (1025 bytes)"),
        (1536, "1.500kb (1536 bytes)"),
        (1_000_000, "976.563kb (1000000 bytes)"),
        (1_000_000_000, "953.674mb (1000000000 bytes)"),
        (1_000_000_000_000, "931.323gb (1000000000000 bytes)"),
        (1_000_000_000_000_000, "909.495tb (1000000000000000 bytes)"),
        # the largest unit the size exceeds
        (1024**2, "1024.000kb (1048576 bytes)"),
        (1024**2 + 1, "1.000mb (1048577 bytes)"),
        (5 * 1024**4, "5.000tb (5497558138880 bytes)"),
        # Java's %.3f rounds a tie half up: 1.0625 kb
        (1088, "1.063kb (1088 bytes)"),
    ],
)
def test_sizes_written_as_flink_writes_them(size: int, text: str) -> None:
    assert to_human_readable(size) == text
