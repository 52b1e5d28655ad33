"""Java ``hashCode()`` of the key types people key Flink streams by.

Flink assigns a key to a key group from ``key.hashCode()``, so the model must reproduce Java's
boxed-type hash codes bit for bit: a Python ``hash()`` would put keys in different key groups.
A Python ``int`` is ambiguous (``Integer`` and ``Long`` hash negative numbers differently), so the
Java type is explicit wherever it matters; inference is only a convenience for literals.
"""

from __future__ import annotations

import math
import struct
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from flinkstate.errors import KeyTypeError

_INT_MIN = -(2**31)
_INT_MAX = 2**31 - 1
_LONG_MIN = -(2**63)
_LONG_MAX = 2**63 - 1
_MASK32 = 0xFFFFFFFF


class JavaType(StrEnum):
    """A Java key type whose ``hashCode()`` depends only on the value.

    Examples
    --------
    >>> JavaType.parse("java.lang.Integer")
    <JavaType.INT: 'int'>
    >>> JavaType.parse("Long").java_name
    'Long'
    >>> JavaType.parse("byte[]")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.KeyTypeError: cannot key by byte[]: a Java array's hashCode() ...
    """

    INT = "int"
    LONG = "long"
    SHORT = "short"
    BYTE = "byte"
    CHAR = "char"
    BOOLEAN = "boolean"
    FLOAT = "float"
    DOUBLE = "double"
    STRING = "string"

    @property
    def java_name(self) -> str:
        """The boxed class name a Flink user sees (``Integer`` for ``int``)."""
        return _JAVA_NAMES[self]

    @classmethod
    def parse(cls, name: str | JavaType) -> JavaType:
        """Accept ``long``, ``Long``, ``java.lang.Long`` and the like."""
        if isinstance(name, JavaType):
            return name
        text = name.strip().removeprefix("java.lang.").lower()
        text = _ALIASES.get(text, text)
        try:
            return cls(text)
        except ValueError:
            if text in _UNHASHABLE_NAMES:
                raise KeyTypeError(_unhashable_message(name)) from None
            known = ", ".join(t.value for t in cls)
            raise KeyTypeError(f"unknown key type {name!r}; known types: {known}") from None


#: the key types whose hash codes are computed a column at a time (:func:`java_hash_codes`
#: here, Spark expressions in ``flinkstate.spark.key_groups``): the key types of a dataset
VECTORISED_TYPES = (JavaType.INT, JavaType.LONG, JavaType.STRING)

_JAVA_NAMES = {
    JavaType.INT: "Integer",
    JavaType.LONG: "Long",
    JavaType.SHORT: "Short",
    JavaType.BYTE: "Byte",
    JavaType.CHAR: "Character",
    JavaType.BOOLEAN: "Boolean",
    JavaType.FLOAT: "Float",
    JavaType.DOUBLE: "Double",
    JavaType.STRING: "String",
}
_ALIASES = {"integer": "int", "character": "char", "str": "string", "bool": "boolean"}
_UNHASHABLE_NAMES = {"byte[]", "bytes", "bytearray", "array", "int[]", "long[]", "char[]"}


def _unhashable_message(what: object) -> str:
    return (
        f"cannot key by {what}: a Java array's hashCode() is its identity, not its content, "
        "so Flink cannot assign it to a stable key group (wrap the bytes in a String or a "
        "value type with a content-based hashCode())"
    )


def to_int32(value: int) -> int:
    """Wrap an integer to Java ``int`` (two's complement, 32 bits).

    Examples
    --------
    >>> to_int32(2**31), to_int32(2**32 + 5), to_int32(-1)
    (-2147483648, 5, -1)
    """
    value &= _MASK32
    return value - (1 << 32) if value > _INT_MAX else value


def infer_java_type(key: object) -> JavaType:
    """The Java type a Python literal most likely stands for.

    ``bool`` is Boolean, ``str`` String, ``float`` Double; an ``int`` is Integer when it fits
    in 32 bits and Long otherwise. Pass the type explicitly for a Long key with a small value.

    Examples
    --------
    >>> [infer_java_type(key).java_name for key in (42, 2**40, "42", 4.2, True)]
    ['Integer', 'Long', 'String', 'Double', 'Boolean']
    """
    if isinstance(key, bool):
        return JavaType.BOOLEAN
    if isinstance(key, int):
        return JavaType.INT if _INT_MIN <= key <= _INT_MAX else JavaType.LONG
    if isinstance(key, float):
        return JavaType.DOUBLE
    if isinstance(key, str):
        return JavaType.STRING
    if isinstance(key, bytes | bytearray | memoryview | list | tuple | np.ndarray):
        raise KeyTypeError(_unhashable_message(f"a {type(key).__name__} key"))
    raise KeyTypeError(
        f"cannot infer the Java type of {key!r} ({type(key).__name__}); "
        f"pass one of: {', '.join(t.value for t in JavaType)}"
    )


def _check_integral(key: object, java_type: JavaType, low: int, high: int) -> int:
    if isinstance(key, bool) or not isinstance(key, int | np.integer):
        raise KeyTypeError(f"a {java_type.java_name} key must be an integer, got {key!r}")
    value = int(key)
    if not low <= value <= high:
        raise KeyTypeError(
            f"{value} does not fit in a Java {java_type.java_name} ({low} to {high})"
        )
    return value


def long_key(key: object) -> int:
    """``key`` as a Java ``long``, refused as :func:`java_hash_code` refuses a Long key (the
    model's records carry Long keys; a partitioner that reads one checks it here).

    Examples
    --------
    >>> long_key(2**63 - 1)
    9223372036854775807
    >>> long_key(2**63)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.KeyTypeError: 9223372036854775808 does not fit in a Java Long ...
    """
    return _check_integral(key, JavaType.LONG, _LONG_MIN, _LONG_MAX)


def _double_bits(value: float) -> int:
    if math.isnan(value):
        return 0x7FF8000000000000  # Double.doubleToLongBits canonicalises every NaN
    return int(struct.unpack(">q", struct.pack(">d", value))[0])


def _float_bits(value: float) -> int:
    if math.isnan(value):
        return 0x7FC00000  # Float.floatToIntBits canonicalises every NaN
    try:
        return int(struct.unpack(">i", struct.pack(">f", value))[0])
    except OverflowError:
        raise KeyTypeError(f"{value} does not fit in a Java Float") from None


def _long_hash(value: int) -> int:
    unsigned = value & 0xFFFFFFFFFFFFFFFF
    return to_int32(unsigned ^ (unsigned >> 32))


def _string_hash(text: str) -> int:
    code = 0
    units = text.encode("utf-16-be", errors="surrogatepass")
    for index in range(0, len(units), 2):
        code = (31 * code + (units[index] << 8 | units[index + 1])) & _MASK32
    return to_int32(code)


def java_hash_code(key: object, java_type: JavaType | str | None = None) -> int:
    """``key.hashCode()`` as Java computes it for the boxed ``java_type``.

    Raises :class:`KeyTypeError` for values the type cannot hold and for arrays, whose Java
    hash code is an identity hash and so cannot be keyed by.

    Examples
    --------
    Java's own ``hashCode()`` values (``tests/reference``):

    >>> java_hash_code("Flink"), java_hash_code("été")
    (67968320, 227742)

    An ``Integer`` is its own hash; a ``Long`` folds its two halves together:

    >>> java_hash_code(-1, "int"), java_hash_code(-1, "long"), java_hash_code(2**32, "long")
    (-1, 0, 1)
    >>> java_hash_code(True), java_hash_code(1.0), java_hash_code(1.0, "float")
    (1231, 1072693248, 1065353216)
    """
    kind = infer_java_type(key) if java_type is None else JavaType.parse(java_type)
    if kind is JavaType.STRING:
        if not isinstance(key, str):
            raise KeyTypeError(f"a String key must be a str, got {key!r}")
        return _string_hash(key)
    if kind is JavaType.BOOLEAN:
        if not isinstance(key, bool | np.bool_):
            raise KeyTypeError(f"a Boolean key must be True or False, got {key!r}")
        return 1231 if key else 1237
    if kind is JavaType.CHAR:
        if isinstance(key, str):
            if len(key) != 1 or ord(key) > 0xFFFF:
                raise KeyTypeError(f"a Character key must be one UTF-16 code unit, got {key!r}")
            return ord(key)
        return _check_integral(key, kind, 0, 0xFFFF)
    if kind in (JavaType.DOUBLE, JavaType.FLOAT):
        if isinstance(key, bool) or not isinstance(key, int | float | np.number):
            raise KeyTypeError(f"a {kind.java_name} key must be a number, got {key!r}")
        if kind is JavaType.DOUBLE:
            return _long_hash(_double_bits(float(key)))
        return to_int32(_float_bits(float(key)))
    if kind is JavaType.LONG:
        return _long_hash(_check_integral(key, kind, _LONG_MIN, _LONG_MAX))
    if kind is JavaType.INT:
        return _check_integral(key, kind, _INT_MIN, _INT_MAX)
    if kind is JavaType.SHORT:
        return _check_integral(key, kind, -(2**15), 2**15 - 1)
    return _check_integral(key, kind, -(2**7), 2**7 - 1)  # BYTE


def java_hash_codes(
    keys: npt.ArrayLike, java_type: JavaType | str = JavaType.LONG
) -> npt.NDArray[np.int32]:
    """Vectorised ``hashCode()`` of Integer, Long or String keys, bit-identical to the scalar
    one.

    Examples
    --------
    >>> java_hash_codes([42, -1, 4294967296], "long").tolist()
    [42, 0, 1]
    >>> java_hash_codes([42, -1], "int").tolist()
    [42, -1]
    """
    kind = JavaType.parse(java_type)
    if kind is JavaType.STRING:
        return string_hash_codes(keys)
    array = np.asarray(keys)
    if array.dtype.kind not in "iu":
        raise KeyTypeError(f"vectorised hash codes need an integer array, got dtype {array.dtype}")
    if kind is JavaType.INT:
        if array.size and (array.min() < _INT_MIN or array.max() > _INT_MAX):
            raise KeyTypeError("an Integer key array holds values outside the 32-bit range")
        return array.astype(np.int32)
    if kind is JavaType.LONG:
        if array.dtype == np.uint64 and array.size and array.max() > _LONG_MAX:
            raise KeyTypeError("a Long key array holds values above the 64-bit signed range")
        unsigned = array.astype(np.int64).view(np.uint64)
        return (unsigned ^ (unsigned >> np.uint64(32))).astype(np.uint32).view(np.int32)
    raise KeyTypeError(f"vectorised hash codes support int, long and string keys, not {kind.value}")


def string_hash_codes(keys: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """``String.hashCode()`` of every string in ``keys``: ``sum(unit[i] * 31^(n-1-i))`` over
    each string's UTF-16 code units, wrapped to 32 bits.

    The strings are encoded once, end to end, and their units numbered ``j`` across all of
    them. 31 is odd, so it has an inverse modulo 2^32: each unit times ``31^-j`` summed (a
    running sum, wrapping as Java's ``int`` does) between a string's bounds, times
    ``31^(end-1)``, is its hash. No loop over characters in Python, no gather per unit.

    Examples
    --------
    >>> string_hash_codes(["", "a", "key", "hello world", "日本語"]).tolist()
    [0, 97, 106079, 1794106052, 25921943]
    """
    array = np.asarray(keys, dtype=object).ravel()
    try:
        encoded = [key.encode("utf-16-be", "surrogatepass") for key in array]
    except AttributeError:
        bad = next(key for key in array if not isinstance(key, str))
        raise KeyTypeError(f"a String key must be a str, got {bad!r}") from None
    ends = np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))) // 2
    units = np.frombuffer(b"".join(encoded), dtype=">u2").astype(np.uint32)
    return hash_codes_of_units(units, np.concatenate(([0], ends)).astype(np.int64))


def hash_codes_of_units(
    units: npt.NDArray[np.uint32], bounds: npt.NDArray[np.int64]
) -> npt.NDArray[np.int32]:
    """``String.hashCode()`` of strings given as their UTF-16 units end to end, string ``i``
    the units ``bounds[i]`` to ``bounds[i + 1]``: how a reader that has the units already (an
    ASCII string's bytes are its units) hashes them without making a Python string.

    Examples
    --------
    ``"key"`` and ``"Flink"`` as their ASCII bytes end to end (an ASCII byte is one UTF-16
    unit):

    >>> import numpy as np
    >>> units = np.frombuffer(b"keyFlink", dtype=np.uint8).astype(np.uint32)
    >>> hash_codes_of_units(units, np.array([0, 3, 8])).tolist()
    [106079, 67968320]
    """
    starts, ends = bounds[:-1], bounds[1:]
    if not len(units):
        return np.zeros(len(starts), dtype=np.int32)
    with np.errstate(over="ignore"):
        powers = _powers(31, len(units))  # 31^j
        inverses = _powers(_INVERSE_OF_31, len(units))  # 31^-j
        running = np.concatenate(([0], np.cumsum(units * inverses, dtype=np.uint32)))
        sums = running.astype(np.uint32)[ends] - running.astype(np.uint32)[starts]
        codes = sums * powers[np.maximum(ends - 1, 0)]
    return codes.astype(np.uint32).view(np.int32)


#: 31 * this == 1 modulo 2^32
_INVERSE_OF_31 = pow(31, -1, 1 << 32)


def _powers(base: int, count: int) -> npt.NDArray[np.uint32]:
    """``base^0 .. base^(count-1)`` modulo 2^32."""
    powers = np.full(count, base, dtype=np.uint32)
    powers[0] = 1
    with np.errstate(over="ignore"):
        return np.cumprod(powers, dtype=np.uint32)
