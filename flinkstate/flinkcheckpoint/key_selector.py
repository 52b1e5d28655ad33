"""A ``keyBy``'s key selector, said in a small notation: which field of a record's value is
its key, maybe Java's remainder of it, and the key's Java type, which decides its
``hashCode()`` and so the key group Flink puts it in (``KeyGroupRangeAssignment``).

``_metadata`` does not record how a job keys its records; the user says it (``--exchange
UP->DOWN=hash:f0``) and the record type says the key's type (Long, Integer or String: the key
types every consumer of a dataset hashes, in numpy and as Spark expressions). Nothing is
evaluated: the notation is parsed, never run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.stream_element import record_fields
from flinkstate.javahash import JavaType

#: the key types an export hashes as Flink does in every consumer (numpy, Spark expressions),
#: by the names record types give them
KEY_TYPES: dict[str, JavaType] = {
    "Long": JavaType.LONG,
    "Integer": JavaType.INT,
    "String": JavaType.STRING,
}


@dataclass(frozen=True)
class KeySelector:
    """A keyBy's key read from a record's value as the job's key selector computes it: the
    value or one of its fields (``f<N>``), maybe Java's remainder of it (``%M``), with the
    key's Java type, which decides where Flink puts it (``hashCode()`` differs by type).

    Examples
    --------
    The keyed job's key, ``f0 % 1000`` of a ``Tuple2<Long,String>``, with Java's remainder (its sign
    follows the dividend):

    >>> key = key_function("f0%1000", "Tuple2<Long,String>")
    >>> key.field, key.modulus, key.java_type
    (0, 1000, <JavaType.LONG: 'long'>)
    >>> key((25887, "p25887xxxxxxxxxx")), key((-25887, "negative"))
    (887, -887)
    """

    spec: str
    field: int | None
    modulus: int | None
    java_type: JavaType
    #: whether the record type was given (else an integer key is taken for a Long)
    typed: bool = True

    def __call__(self, value: object) -> int | str:
        part = value if self.field is None else self._field(value)
        if part is None:
            raise InvalidParameterError(
                f"key {self.spec!r} of {value!r} is null: Flink cannot key by null"
            )
        if self.java_type is JavaType.STRING:
            if not isinstance(part, str):
                raise InvalidParameterError(f"key {self.spec!r} of {value!r} is not a String")
            return part
        if isinstance(part, bool) or not isinstance(part, int):
            more = (
                ""
                if self.typed or not isinstance(part, str)
                else ": to key by a String, give the record type (--record-type)"
            )
            raise InvalidParameterError(f"key {self.spec!r} of {value!r} is not an integer{more}")
        return part if self.modulus is None else _java_rem(part, self.modulus)

    def _field(self, value: object) -> object:
        try:
            return value[self.field]  # type: ignore[index]
        except (IndexError, TypeError, KeyError):
            size = len(value) if hasattr(value, "__len__") else 1
            raise InvalidParameterError(
                f"key {self.spec!r} reads field {self.field}, but the records have {size} "
                f"field(s) (f0 to f{size - 1}), e.g. {value!r}"
            ) from None


def key_function(spec: str, record_type: str | None = None) -> KeySelector:
    """A key from a small, safe notation: ``f0`` (a tuple's or row's field 0), ``f0%1000``,
    ``value`` or ``value%1000`` (the value itself); Java's ``%`` (the sign follows the
    dividend). Its Java type is the field's in ``record_type`` (Long, Integer or String; a
    remainder of an Integer by a divisor beyond ``int`` is a Long, as in Java); without a
    record type an integer key is a Long.

    Examples
    --------
    A key's Java type is its field's, which decides its ``hashCode()``:

    >>> key_function("f1", "Tuple2<Long,String>").java_type
    <JavaType.STRING: 'string'>
    >>> key_function("value", "Integer").java_type
    <JavaType.INT: 'int'>
    >>> key_function("f1", "Tuple2<Long,Double>")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: key 'f1' is a Double: an export keys by Long, ...
    """
    match = re.fullmatch(r"(?:f(\d+)|value)(?:%(\d+))?", spec.replace(" ", ""))
    if match is None or match.group(2) == "0":
        raise InvalidParameterError(
            f"a key is f<N>, f<N>%<M>, value or value%<M> (M > 0), got {spec!r}"
        )
    field = None if match.group(1) is None else int(match.group(1))
    modulus = None if match.group(2) is None else int(match.group(2))
    if record_type is None:
        return KeySelector(spec, field, modulus, JavaType.LONG, typed=False)
    fields = record_fields(record_type)
    if field is None:
        name = record_type.replace(" ", "")
        if fields is not None:
            raise InvalidParameterError(
                f"key {spec!r} is the whole {name} value: key by one of its fields, "
                f"f0 to f{len(fields) - 1}"
            )
    elif fields is None:
        raise InvalidParameterError(
            f"key {spec!r} reads field {field}, but a {record_type} record has no fields: "
            "key by value"
        )
    elif field >= len(fields):
        raise InvalidParameterError(
            f"key {spec!r} reads field {field}, but the records have {len(fields)} field(s) "
            f"(f0 to f{len(fields) - 1} of {record_type})"
        )
    else:
        name = fields[field]
    if name not in KEY_TYPES:
        raise InvalidParameterError(
            f"key {spec!r} is a {name}: an export keys by {', '.join(KEY_TYPES)} fields"
        )
    kind = KEY_TYPES[name]
    if modulus is not None and kind is JavaType.STRING:
        raise InvalidParameterError(
            f"key {spec!r} takes a remainder of a String: a String key is {spec.split('%')[0]}"
        )
    if kind is JavaType.INT and modulus is not None and modulus > 2**31 - 1:
        kind = JavaType.LONG  # an int % a long literal is a long
    return KeySelector(spec, field, modulus, kind)


def _java_rem(a: int, b: int) -> int:
    """``a % b`` in Java: truncated division, exact for any long."""
    q = abs(a) // b
    return a - (q if a >= 0 else -q) * b
