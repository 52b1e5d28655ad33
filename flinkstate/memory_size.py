"""Memory sizes as Flink's configuration writes them ("128m", "32 kb", "1g").

Flink's ``MemorySize.parseBytes``: a whole number, then optionally a unit (case does not
matter, spaces between are allowed); the units are powers of 1024. A value that does not fit
a Java ``long`` is refused, as Flink refuses it. ``to_human_readable`` writes a size back the
way Flink's log and messages show it (``MemorySize.toHumanReadableString``).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from flinkstate.errors import InvalidParameterError

#: Flink's ``MemorySize.MemoryUnit``: each unit's spellings and multiplier
UNITS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("b", "bytes"), 1),
    (("k", "kb", "kibibytes"), 1024),
    (("m", "mb", "mebibytes"), 1024**2),
    (("g", "gb", "gibibytes"), 1024**3),
    (("t", "tb", "tebibytes"), 1024**4),
)
#: ``Long.MAX_VALUE``
MAX_BYTES = 2**63 - 1


def parse_bytes(text: str) -> int:
    """The number of bytes ``text`` names, or one clear error.

    Examples
    --------
    As Flink's ``MemorySize.parseBytes`` reads them (units are powers of 1024):

    >>> parse_bytes("128m"), parse_bytes("32 KB"), parse_bytes("1g")
    (134217728, 32768, 1073741824)
    >>> parse_bytes("1.5g")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: memory size unit '.5g' of '1.5g' is none of ...
    """
    trimmed = text.strip()
    if not trimmed:
        raise InvalidParameterError("a memory size must not be empty (for example 64m or 1g)")
    digits = len(trimmed) - len(trimmed.lstrip("0123456789"))
    number, unit = trimmed[:digits], trimmed[digits:].strip().lower()
    if not number:
        raise InvalidParameterError(
            f"memory size {text!r} does not start with a whole number (for example 64m or 1g)"
        )
    multiplier = 1
    if unit:
        found = next((m for names, m in UNITS if unit in names), None)
        if found is None:
            known = " | ".join("(" + " | ".join(names) + ")" for names, _ in UNITS)
            raise InvalidParameterError(
                f"memory size unit {unit!r} of {text!r} is none of Flink's units: {known}"
            )
        multiplier = found
    value = int(number)
    if value * multiplier > MAX_BYTES:
        raise InvalidParameterError(
            f"memory size {text!r} does not fit a 64-bit number of bytes (Flink refuses it too)"
        )
    return value * multiplier


def to_human_readable(size: int) -> str:
    """``size`` bytes as Flink writes them in its messages: in the largest unit the size
    exceeds, to three decimals and with the exact count beside it (``6.250kb (6400 bytes)``),
    or as plain bytes (``1024 bytes``). Java's ``%.3f`` rounds the shortest decimal form of the
    quotient half up (``0.0625`` becomes ``0.063``), which Python's formatting does not.

    Examples
    --------
    As Flink's messages write them (``MemorySizeTest``, ``NetworkBufferPoolTest``):

    >>> to_human_readable(1024), to_human_readable(1025)
    ('1024 bytes', '1.001kb (1025 bytes)')
    >>> to_human_readable(6400)
    '6.250kb (6400 bytes)'

    The unit is the largest one the size exceeds, so exactly one mebibyte is still kibibytes:

    >>> to_human_readable(parse_bytes("1m")), to_human_readable(parse_bytes("1m") + 1)
    ('1024.000kb (1048576 bytes)', '1.000mb (1048577 bytes)')
    """
    multiplier, unit = max(
        ((m, names[1]) for names, m in UNITS if size > m), default=(1, UNITS[0][0][1])
    )
    if multiplier == 1:
        return f"{size} {unit}"
    shortest = Decimal(repr(size / multiplier))
    return f"{shortest.quantize(Decimal('0.001'), rounding=ROUND_HALF_UP)}{unit} ({size} bytes)"
