"""A state's fingerprint as a digest that every process computes alike: what a search spread
over many processes (Spark's executors) deduplicates states by.

Python's ``hash`` of a string is salted per process, so two executors would hash one state
differently. Here the fingerprint (``NetworkWorld.fingerprint``: tuples, frozensets, strings,
ints, enums, frozen dataclasses and ``Fixed`` values) is written out canonically, equal
values as equal bytes (a set's elements sorted by their bytes, a named tuple as the tuple it
equals, a ``StrEnum`` as its text, a bool as the int it equals), unequal values as unequal
bytes (every piece tagged and length-prefixed), and hashed with BLAKE2b: two states share a
digest only if their fingerprints are equal, but for a chance of about n²/2¹²⁹ among n
states. A value of a kind it cannot write out exactly is refused, not guessed.

A fingerprint is a flat tuple whose parts mostly stay the very same objects from a state to
the next (a component's key is kept while it is unchanged): :class:`StateDigester` keeps each
part's digest by identity, so a child state costs the digests of the parts its action changed.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Hashable
from enum import Enum
from typing import Any

from flinkstate.runtime import Fixed

#: bytes of a digest (128 bits)
DIGEST_BYTES = 16
#: parts' digests kept by one digester before it starts afresh (a bound on its memory)
MAX_REMEMBERED = 200_000


def canonical_bytes(value: object) -> bytes:
    """``value`` written out so that equal values give equal bytes and unequal ones unequal
    bytes (as Python's ``==`` tells them apart); a ``TypeError`` for a kind it cannot.

    Examples
    --------
    >>> canonical_bytes(frozenset({"b", "a"})) == canonical_bytes(frozenset({"a", "b"}))
    True
    >>> canonical_bytes((1, "1")) != canonical_bytes((1, 1))
    True
    >>> canonical_bytes(object())
    Traceback (most recent call last):
        ...
    TypeError: cannot write a object as a state's part exactly
    """
    out: list[bytes] = []
    _write(value, out.append)
    return b"".join(out)


def _write(value: object, emit: Callable[[bytes], None]) -> None:
    kind = type(value)
    if isinstance(value, str) and kind is str:
        _text(value, emit)
    elif isinstance(value, int) and (kind is int or kind is bool):
        emit(b"i%d;" % value)
    elif value is None:
        emit(b"n")
    elif isinstance(value, tuple):  # named tuples equal the plain tuple of their fields
        emit(b"(%d:" % len(value))
        for item in value:
            _write(item, emit)
        emit(b")")
    elif isinstance(value, frozenset | set):
        _unordered(b"{", [canonical_bytes(item) for item in value], emit)
    elif isinstance(value, Enum):
        _member(value, emit)
    elif isinstance(value, Fixed):
        emit(b"x")
        _write(value.value, emit)
    else:
        _other(value, emit)


def _text(value: str, emit: Callable[[bytes], None]) -> None:
    data = value.encode("utf-8", "surrogatepass")
    emit(b"s%d:" % len(data))
    emit(data)


def _unordered(tag: bytes, items: list[bytes], emit: Callable[[bytes], None]) -> None:
    """A set's (or a map's) items, in the order of their bytes."""
    emit(tag + b"%d:" % len(items))
    for item in sorted(items):
        emit(item)


def _member(value: Enum, emit: Callable[[bytes], None]) -> None:
    """An enum member: a str or int enum as the value it equals, any other by its class."""
    if isinstance(value, str):
        _text(str.__str__(value), emit)
    elif isinstance(value, int):
        emit(b"i%d;" % int(value))
    else:
        kind = type(value)
        _text(f"{kind.__module__}.{kind.__qualname__}.{value.name}", lambda b: emit(b"e" + b))


def _other(value: object, emit: Callable[[bytes], None]) -> None:
    """Maps, lists, bytes, floats and frozen dataclasses (by class and compared fields)."""
    if isinstance(value, dict):
        pairs = [canonical_bytes(k) + canonical_bytes(v) for k, v in value.items()]
        _unordered(b"<", pairs, emit)
    elif isinstance(value, list):
        emit(b"[%d:" % len(value))
        for item in value:
            _write(item, emit)
        emit(b"]")
    elif isinstance(value, bytes):
        emit(b"b%d:" % len(value))
        emit(value)
    elif isinstance(value, float):
        emit(b"i%d;" % int(value) if value.is_integer() else b"f" + value.hex().encode())
    elif dataclasses.is_dataclass(value) and _compared_by_value(value):
        kind = type(value)
        _text(f"{kind.__module__}.{kind.__qualname__}", lambda b: emit(b"d" + b))
        for field in dataclasses.fields(value):
            if field.compare:
                _write(getattr(value, field.name), emit)
        emit(b".")
    else:
        raise TypeError(f"cannot write a {type(value).__name__} as a state's part exactly")


def _compared_by_value(value: Any) -> bool:
    """Whether a dataclass compares by its fields (its ``eq`` not turned off or replaced)."""
    params = getattr(type(value), "__dataclass_params__", None)
    return params is not None and params.eq


def state_digest(fingerprint: Hashable) -> bytes:
    """The digest of a fingerprint, the same in every process.

    Examples
    --------
    >>> state_digest(("a", 1)).hex()[:12], len(state_digest(("a", 1)))
    ('ceadf6ced441', 16)
    >>> state_digest(("a", 1)) == StateDigester().digest(("a", 1))
    True
    """
    return StateDigester().digest(fingerprint)


class StateDigester:
    """Digests of fingerprints, each part of a tuple fingerprint digested once while it stays
    the same object (it is held here, so its identity is not taken by another)."""

    def __init__(self) -> None:
        self.parts: dict[int, tuple[object, bytes]] = {}

    def digest(self, fingerprint: Hashable) -> bytes:
        """The fingerprint's digest: of its parts' digests for a tuple, of its bytes else."""
        whole = hashlib.blake2b(digest_size=DIGEST_BYTES)
        if type(fingerprint) is not tuple:
            whole.update(b"v" + canonical_bytes(fingerprint))
            return whole.digest()
        parts = self.parts
        if len(parts) > MAX_REMEMBERED:
            parts.clear()
        whole.update(b"t%d:" % len(fingerprint))
        for part in fingerprint:
            known = parts.get(id(part))
            if known is None or known[0] is not part:
                digest = hashlib.blake2b(canonical_bytes(part), digest_size=DIGEST_BYTES).digest()
                parts[id(part)] = known = (part, digest)
            whole.update(known[1])
        return whole.digest()
