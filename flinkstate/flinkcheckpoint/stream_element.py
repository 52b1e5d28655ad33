"""Records in a channel's bytes: Flink's length framing and ``StreamElementSerializer``.

``RecordWriter`` writes each element as a 4-byte big-endian length and the serialized element,
and fills buffers without regard to those boundaries, so a channel's concatenated chunks are a
sequence of frames that may end (input state) or begin (output state) inside one. An element
starts with a tag byte: 0 a record with a timestamp (what FLIP-27 sources emit, with
``Long.MIN_VALUE`` when none is assigned), 1 a record without, 2 to 6 watermarks, latency
markers, watermark status, record attributes and internal watermarks.

Values are decoded for the types Flink serializes the same way everywhere: ``Long``,
``Integer``, ``Short``, ``Byte``, ``Double``, ``Float`` (big-endian), ``Boolean`` (one byte),
``String`` (``StringValue``: a 7-bit varint of length + 1, then each UTF-16 unit as a varint),
tuples of them (fields back to back, ``TupleSerializer``) and rows of them (``RowSerializer``: a
bit mask, most significant bit first, of the row kind's two bits and one null flag per field,
then the fields that are not null). Any other type keeps its raw bytes, or goes through a
decoder the caller passes.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from flinkstate.errors import CheckpointFormatError, InvalidParameterError
from flinkstate.flinkcheckpoint.datainput import MAX_NESTING

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class ElementTag(IntEnum):
    """The tag byte that starts a serialized stream element (``StreamElementSerializer``).

    Examples
    --------
    >>> ElementTag(0).name, ElementTag(2).name
    ('RECORD', 'WATERMARK')
    """

    RECORD = 0
    RECORD_WITHOUT_TIMESTAMP = 1
    WATERMARK = 2
    LATENCY_MARKER = 3
    WATERMARK_STATUS = 4
    RECORD_ATTRIBUTES = 5
    INTERNAL_WATERMARK = 6


#: body sizes of the elements that are not records
_FIXED = {
    ElementTag.WATERMARK: 8,
    ElementTag.LATENCY_MARKER: 8 + 16 + 4,
    ElementTag.WATERMARK_STATUS: 4,
    ElementTag.RECORD_ATTRIBUTES: 1,
    ElementTag.INTERNAL_WATERMARK: 4 + 8,
}

#: reads a value at an offset of a buffer: (value, offset after it)
ValueDecoder = Callable[[bytes, int], tuple[object, int]]


@dataclass(frozen=True, slots=True)
class Element:
    """One framed element: where its length prefix is, its length and tag; for records the
    timestamp (None without one) and the value (None when not decoded).

    Examples
    --------
    The first record in the input state of subtask 1 of the counter: 34 bytes after its length,
    a ``Tuple2<Long,String>`` stamped ``Long.MIN_VALUE`` (a FLIP-27 source assigned no timestamp):

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> (handle,) = read_metadata(checkpoint).operator("slow-counter").subtask(1).channel_handles()
    >>> with StateFiles(checkpoint) as files:
    ...     data = read_channel(handle, files).data
    >>> first = decode(data, value_decoder("Tuple2<Long,String>")).elements[0]
    >>> first.offset, first.length, first.tag, first.is_record
    (0, 34, 0, True)
    >>> first.timestamp == -(2**63), first.value
    (True, (25887, 'p25887xxxxxxxxxx'))
    """

    offset: int
    length: int
    tag: int
    timestamp: int | None = None
    value: object = None

    @property
    def is_record(self) -> bool:
        return self.tag in (ElementTag.RECORD, ElementTag.RECORD_WITHOUT_TIMESTAMP)


@dataclass(frozen=True, slots=True)
class Decoded:
    """The whole elements of some channel data, and how many bytes follow the last one.

    Examples
    --------
    The input state of subtask 1 of the counter ends inside a record, whose rest is in the
    upstream's output state:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> (handle,) = read_metadata(checkpoint).operator("slow-counter").subtask(1).channel_handles()
    >>> with StateFiles(checkpoint) as files:
    ...     data = read_channel(handle, files).data
    >>> decoded = decode(data)
    >>> len(data), len(decoded.elements), decoded.trailing
    (980, 25, 30)
    """

    elements: tuple[Element, ...]
    #: bytes after the last whole element (a record cut by the end of the data)
    trailing: int


#: runs of equal-length frames are checked this many at a time at most
_MAX_RUN = 1 << 16
#: where lengths vary, frames are stepped one by one over this many bytes before a run is
#: tried again; the budget doubles while runs keep failing, so varying data pays for few tries
_MIN_STEP_BYTES = 1 << 12
_MAX_STEP_BYTES = 1 << 22
_U32 = struct.Struct(">I")


def frames(data: bytes, start: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    """Offsets and lengths (int64 arrays) of the whole frames from ``start``, and the bytes
    left after them.

    Each frame's length says where the next begins, so the scan is sequential; but records of
    one type often have one length, so runs of equal-length frames are confirmed with numpy a
    block at a time (every candidate's length read at once). Where lengths vary, a tight loop
    steps frame by frame, reading lengths unsigned so that it always moves forward, and the
    lengths it found are checked afterwards, all at once.

    Examples
    --------
    Records of one type often have one length: here 25 frames of 34 bytes after their 4-byte
    lengths, and 30 bytes of a record cut by the end of the data:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> (handle,) = read_metadata(checkpoint).operator("slow-counter").subtask(1).channel_handles()
    >>> with StateFiles(checkpoint) as files:
    ...     data = read_channel(handle, files).data
    >>> offsets, lengths, trailing = frames(data)
    >>> offsets[:3].tolist(), set(lengths.tolist()), trailing
    ([0, 38, 76], {34}, 30)
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    end = len(raw)
    offsets: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    position = start
    run = 16
    budget = _MIN_STEP_BYTES
    while position + 4 <= end:
        (length,) = _I32.unpack_from(data, position)
        if length <= 0:
            raise CheckpointFormatError(
                "channel data", position, f"a positive record length, found {length}"
            )
        stride = 4 + length
        fit = (end - position) // stride
        if fit == 0:
            break
        count = min(fit, run)
        starts = position + stride * np.arange(count, dtype=np.int64)
        found = (
            (raw[starts].astype(np.int64) << 24)
            | (raw[starts + 1].astype(np.int64) << 16)
            | (raw[starts + 2].astype(np.int64) << 8)
            | raw[starts + 3].astype(np.int64)
        )
        changed = np.flatnonzero(found != length)
        same = count if changed.size == 0 else int(changed[0])
        offsets.append(starts[:same])
        lengths.append(np.full(same, length, dtype=np.int64))
        position += stride * same
        if same == count:
            run = min(run * 2, _MAX_RUN)
            budget = _MIN_STEP_BYTES
            continue
        run = 16
        if same >= 4:
            continue
        stepped, position = _step(data, position, min(end, position + budget))
        budget = min(budget * 2, _MAX_STEP_BYTES)
        if position > end:  # the last frame stepped onto does not fit: it is the trailing one
            position = stepped.pop()
            (length,) = _I32.unpack_from(data, position)
            if length <= 0:
                raise CheckpointFormatError(
                    "channel data", position, f"a positive record length, found {length}"
                )
        if stepped:
            at = np.array(stepped, dtype=np.int64)
            sizes = np.diff(at, append=np.int64(position)) - 4
            bad = np.flatnonzero((sizes <= 0) | (sizes > 0x7FFFFFFF))
            if bad.size:
                first = int(bad[0])
                (length,) = _I32.unpack_from(data, int(at[first]))
                raise CheckpointFormatError(
                    "channel data", int(at[first]), f"a positive record length, found {length}"
                )
            offsets.append(at)
            lengths.append(sizes)
    if not offsets:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, end - position
    return np.concatenate(offsets), np.concatenate(lengths), end - position


def _step(data: bytes, position: int, limit: int) -> tuple[list[int], int]:
    """Frame starts from ``position`` while they begin before ``limit``; the position after
    the last, which is past the data's end when that frame does not fit."""
    unpack = _U32.unpack_from
    found: list[int] = []
    append = found.append
    last = min(limit, len(data) - 4)
    while position <= last:
        append(position)
        (length,) = unpack(data, position)
        position += 4 + length
    return found, position


def decode(
    data: bytes, value: ValueDecoder | None = None, start: int = 0, source: str = "channel data"
) -> Decoded:
    """Every whole element from ``start``; record values through ``value`` when given.

    Examples
    --------
    A record framed by hand: its length, tag 1 (no timestamp), then a ``Long``:

    >>> data = (9).to_bytes(4, "big") + bytes([1]) + (42).to_bytes(8, "big")
    >>> decode(data, value_decoder("Long"))
    Decoded(elements=(Element(offset=0, length=9, tag=1, timestamp=None, value=42),), trailing=0)
    >>> decode(data + data[:6]).trailing
    6
    """
    offsets, lengths, trailing = frames(data, start)
    elements = []
    for offset, length in zip(offsets.tolist(), lengths.tolist(), strict=True):
        body = offset + 4
        tag = data[body]
        if tag == ElementTag.RECORD:
            if length < 9:
                raise CheckpointFormatError(source, offset, "a record with an 8-byte timestamp")
            (timestamp,) = _I64.unpack_from(data, body + 1)
            elements.append(
                Element(
                    offset,
                    length,
                    tag,
                    timestamp,
                    _value(data, body + 9, body + length, value, source),
                )
            )
        elif tag == ElementTag.RECORD_WITHOUT_TIMESTAMP:
            elements.append(
                Element(
                    offset,
                    length,
                    tag,
                    None,
                    _value(data, body + 1, body + length, value, source),
                )
            )
        elif tag in _FIXED:
            if length != 1 + _FIXED[ElementTag(tag)]:
                raise CheckpointFormatError(
                    source,
                    offset,
                    f"a {ElementTag(tag).name.lower()} of {1 + _FIXED[ElementTag(tag)]} bytes, "
                    f"found {length}",
                )
            elements.append(Element(offset, length, tag))
        else:
            raise CheckpointFormatError(source, body, f"a stream element tag (0 to 6), found {tag}")
    return Decoded(tuple(elements), trailing)


class RecordTypeError(CheckpointFormatError):
    """A record whose value the record type given does not read: the framing is whole, the
    type is wrong (or the value corrupt).

    Examples
    --------
    The records of the keyed job are ``Tuple2<Long,String>``; read as ``Long`` they are too long:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> (handle,) = read_metadata(checkpoint).operator("slow-counter").subtask(1).channel_handles()
    >>> with StateFiles(checkpoint) as files:
    ...     data = read_channel(handle, files).data
    >>> try:
    ...     decode(data, value_decoder("Long"), source="slow-counter[1]")
    ... except RecordTypeError as error:
    ...     print(error)
    slow-counter[1]: at byte 13: expected a value of 25 bytes, the decoder read 8
    """


#: what a decoder may raise on bytes that are not its type
_DECODE_ERRORS = (IndexError, struct.error, UnicodeDecodeError, ValueError, OverflowError)


def _value(data: bytes, start: int, end: int, value: ValueDecoder | None, source: str) -> object:
    if value is None:
        return None
    try:
        decoded, stop = value(data, start)
    except _DECODE_ERRORS as bad:
        raise RecordTypeError(source, start, f"a value the decoder reads ({bad})") from None
    if stop != end:
        raise RecordTypeError(
            source, start, f"a value of {end - start} bytes, the decoder read {stop - start}"
        )
    return decoded


def value_span(element: Element) -> tuple[int, int]:
    """Where a record's value is in the data it was framed from: after its length, tag and
    timestamp (if it has one), to its end.

    Examples
    --------
    A record's value starts after its length (4 bytes), tag (1) and timestamp (8):

    >>> timestamp, value = (0).to_bytes(8, "big"), (7).to_bytes(8, "big")
    >>> data = (17).to_bytes(4, "big") + bytes([0]) + timestamp + value
    >>> (record,) = decode(data).elements
    >>> value_span(record), read_long(data, value_span(record)[0])
    ((13, 21), (7, 21))
    """
    body = element.offset + 4
    start = body + (9 if element.tag == ElementTag.RECORD else 1)
    return start, body + element.length


_TUPLE2_FIELDS = ("Long", "Integer", "String", "Double")
_TUPLE3_FIELDS = ("Long", "Integer", "String")
#: the record types tried when none is given or the one given does not read the records:
#: the scalars, then tuples of two and three of the commonest, simplest first
CANDIDATE_TYPES: tuple[str, ...] = (
    "Long",
    "Integer",
    "String",
    "Double",
    "Float",
    "Short",
    "Byte",
    "Boolean",
    *(f"Tuple2<{a},{b}>" for a in _TUPLE2_FIELDS for b in _TUPLE2_FIELDS),
    *(
        f"Tuple3<{a},{b},{c}>"
        for a in _TUPLE3_FIELDS
        for b in _TUPLE3_FIELDS
        for c in _TUPLE3_FIELDS
    ),
)


def types_that_read(
    data: bytes,
    elements: Sequence[Element],
    candidates: Iterable[str] = CANDIDATE_TYPES,
    sample: int = 256,
) -> list[str] | None:
    r"""The candidate types whose decoder reads each record of ``elements`` (the first
    ``sample`` of them) exactly to its end. Framing alone cannot tell a record's type, and
    several types may read the same bytes (a ``Long`` is also two ``Integer``\ s): these are
    the ones the records do not rule out, none of them proven. None where there is no
    record: nothing is ruled out.

    Examples
    --------
    Framing alone cannot tell a record's type; these are the usual types that read every record
    of the keyed job's channel exactly to its end (the job's own is ``Tuple2<Long,String>``):

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> (handle,) = read_metadata(checkpoint).operator("slow-counter").subtask(1).channel_handles()
    >>> with StateFiles(checkpoint) as files:
    ...     data = read_channel(handle, files).data
    >>> types_that_read(data, decode(data).elements)
    ['Tuple2<Long,String>', 'Tuple2<Double,String>', 'Tuple3<Integer,Integer,String>']
    """
    spans = [value_span(e) for e in elements if e.is_record][:sample]
    if not spans:
        return None
    fitting = []
    for name in candidates:
        read = value_decoder(name)
        try:
            if all(read(data, start)[1] == end for start, end in spans):
                fitting.append(name)
        except _DECODE_ERRORS:
            continue
    return fitting


# -- value decoders


def read_long(data: bytes, at: int) -> tuple[object, int]:
    """A big-endian ``Long`` at ``at``: (value, offset after it).

    Examples
    --------
    >>> read_long((25887).to_bytes(8, "big"), 0)
    (25887, 8)
    """
    return _I64.unpack_from(data, at)[0], at + 8


def read_int(data: bytes, at: int) -> tuple[object, int]:
    """A big-endian ``Integer`` at ``at``: (value, offset after it).

    Examples
    --------
    >>> read_int((-1).to_bytes(4, "big", signed=True), 0)
    (-1, 4)
    """
    return _I32.unpack_from(data, at)[0], at + 4


def _fixed(layout: str) -> ValueDecoder:
    unpack = struct.Struct(layout).unpack_from
    size = struct.calcsize(layout)

    def read(data: bytes, at: int) -> tuple[object, int]:
        return unpack(data, at)[0], at + size

    return read


def read_boolean(data: bytes, at: int) -> tuple[object, int]:
    """A ``Boolean`` (one byte, 0 or 1) at ``at``: (value, offset after it).

    Examples
    --------
    >>> read_boolean(bytes([1, 0]), 0), read_boolean(bytes([1, 0]), 1)
    ((True, 1), (False, 2))
    >>> read_boolean(bytes([2]), 0)
    Traceback (most recent call last):
        ...
    ValueError: a boolean byte (0 or 1), found 2
    """
    byte = data[at]
    if byte > 1:
        raise ValueError(f"a boolean byte (0 or 1), found {byte}")
    return byte == 1, at + 1


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 35:
            raise ValueError("a varint longer than 5 bytes")


def read_string(data: bytes, at: int) -> tuple[object, int]:
    """``StringValue.readString``: length + 1 (0 is null), then UTF-16 units as varints.

    Examples
    --------
    ``StringValue`` writes the length plus one, then each UTF-16 unit as a varint (one byte each
    for ASCII):

    >>> read_string(bytes([6]) + b"Flink", 0)
    ('Flink', 6)
    >>> read_string(bytes([4, 0xE9, 0x01, 0x74, 0xE9, 0x01]), 0)
    ('été', 6)
    >>> read_string(bytes([0]), 0)
    (None, 1)
    """
    length = data[at]
    at += 1
    if length >= 0x80:  # a longer varint
        length, at = _varint(data, at - 1)
    if length == 0:
        return None, at
    length -= 1
    if length > len(data) - at:
        raise ValueError(f"a string of {length} characters past the end")
    # ASCII is one byte per character: take the fast path when it holds
    chunk = bytes(data[at : at + length])
    if chunk.isascii():
        return chunk.decode("ascii"), at + length
    units = []
    for _ in range(length):
        unit, at = _varint(data, at)
        if unit > 0xFFFF:
            raise ValueError(f"a UTF-16 unit (at most 0xFFFF), found 0x{unit:X}")
        units.append(unit)
    return b"".join(u.to_bytes(2, "big") for u in units).decode("utf-16-be", "surrogatepass"), at


_SCALARS: dict[str, ValueDecoder] = {
    "Long": read_long,
    "Integer": read_int,
    "Short": _fixed(">h"),
    "Byte": _fixed(">b"),
    "Double": _fixed(">d"),
    "Float": _fixed(">f"),
    "Boolean": read_boolean,
    "String": read_string,
}

#: RowKind's byte values, by the short names Flink prints them with
ROW_KINDS = ("+I", "-U", "+U", "-D")


@dataclass(frozen=True, slots=True)
class Row:
    """A decoded ``Row``: its kind (``+I``, ``-U``, ``+U``, ``-D``) and fields (None where
    null). Indexing reads a field, as for a tuple, so key functions work on both.

    Examples
    --------
    A ``Row<Long,String>``: a byte of bits (the row kind's two, then a null flag per field), then
    the fields that are not null:

    >>> read = value_decoder("Row<Long,String>")
    >>> row, _ = read(bytes([0b0000_0000]) + (42).to_bytes(8, "big") + bytes([6]) + b"Flink", 0)
    >>> row, row[1], len(row)
    (Row(kind='+I', fields=(42, 'Flink')), 'Flink', 2)

    The first bit set makes the kind ``-U`` (an update's retraction), the fourth ``f1`` null:

    >>> read(bytes([0b1001_0000]) + (42).to_bytes(8, "big"), 0)[0]
    Row(kind='-U', fields=(42, None))
    """

    kind: str
    fields: tuple[object, ...]

    def __getitem__(self, index: int) -> object:
        return self.fields[index]

    def __len__(self) -> int:
        return len(self.fields)


def tuple_decoder(fields: list[ValueDecoder]) -> ValueDecoder:
    """A decoder of a ``TupleN`` whose fields ``fields`` read, back to back
    (``TupleSerializer``).

    Examples
    --------
    >>> read = tuple_decoder([read_long, read_string])
    >>> read((25887).to_bytes(8, "big") + bytes([17]) + b"p25887xxxxxxxxxx", 0)
    ((25887, 'p25887xxxxxxxxxx'), 25)
    """
    if len(fields) == 2:  # the commonest tuple, without the loop
        first, second = fields

        def read_pair(data: bytes, at: int) -> tuple[object, int]:
            a, at = first(data, at)
            b, at = second(data, at)
            return (a, b), at

        return read_pair

    def read(data: bytes, at: int) -> tuple[object, int]:
        values = []
        for field in fields:
            value, at = field(data, at)
            values.append(value)
        return tuple(values), at

    return read


def row_decoder(fields: list[ValueDecoder]) -> ValueDecoder:
    """A decoder of a ``Row`` whose fields ``fields`` read: the null mask, then the fields not
    null (``RowSerializer``).

    Examples
    --------
    >>> read = row_decoder([read_int, read_string])
    >>> read(bytes([0b0001_0000]) + (7).to_bytes(4, "big"), 0)
    (Row(kind='+I', fields=(7, None)), 5)
    """
    bits = 2 + len(fields)
    mask_bytes = (bits + 7) // 8

    def read(data: bytes, at: int) -> tuple[object, int]:
        if at + mask_bytes > len(data):
            raise ValueError("a row's null mask past the end")
        mask = int.from_bytes(data[at : at + mask_bytes], "big") >> (8 * mask_bytes - bits)
        at += mask_bytes
        top = bits - 1
        kind = ROW_KINDS[(mask >> top & 1) | (mask >> (top - 1) & 1) << 1]
        values: list[object] = []
        for position, field in enumerate(fields):
            if mask >> (top - 2 - position) & 1:
                values.append(None)
            else:
                value, at = field(data, at)
                values.append(value)
        return Row(kind, tuple(values)), at

    return read


def value_decoder(type_name: str) -> ValueDecoder:
    """A decoder for a scalar type (``Long``, ``Integer``, ``Short``, ``Byte``, ``Double``,
    ``Float``, ``Boolean``, ``String``), or ``TupleN<...>`` or ``Row<...>`` of them.

    Examples
    --------
    >>> read = value_decoder("Tuple3<Integer,Boolean,String>")
    >>> read((7).to_bytes(4, "big") + bytes([1, 3]) + b"ok", 0)
    ((7, True, 'ok'), 8)
    >>> value_decoder("Map<Long,String>")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: no decoder for 'Map<Long,String>': known are Long, ...
    """
    name = type_name.replace(" ", "")
    if _nesting(name) > MAX_NESTING:
        raise InvalidParameterError(
            f"a record type nested at most {MAX_NESTING} deep, got {_nesting(name)} levels"
        )
    if name in _SCALARS:
        return _SCALARS[name]
    match = re.fullmatch(r"Tuple(\d+)<(.+)>", name)
    if match:
        fields = _split(match.group(2))
        if len(fields) != int(match.group(1)):
            raise InvalidParameterError(f"{type_name} names {len(fields)} field types")
        return tuple_decoder([value_decoder(f) for f in fields])
    match = re.fullmatch(r"Row<(.+)>", name)
    if match:
        return row_decoder([value_decoder(f) for f in _split(match.group(1))])
    raise InvalidParameterError(
        f"no decoder for {type_name!r}: known are {', '.join(_SCALARS)}, and TupleN<...> and "
        "Row<...> of them; pass your own decoder for other types"
    )


def record_fields(type_name: str) -> tuple[str, ...] | None:
    """The field types of a ``TupleN<...>`` or ``Row<...>`` record type, in order (what a
    key ``f<N>`` reads); None for a scalar type. Refused as :func:`value_decoder` refuses.

    Examples
    --------
    >>> record_fields("Tuple2<Long,String>"), record_fields("Row<Integer, Tuple2<Long,Long>>")
    (('Long', 'String'), ('Integer', 'Tuple2<Long,Long>'))
    >>> record_fields("Long") is None
    True
    """
    value_decoder(type_name)  # the same checks, the same one-line refusals
    name = type_name.replace(" ", "")
    match = re.fullmatch(r"(?:Tuple\d+|Row)<(.+)>", name)
    return None if match is None else tuple(_split(match.group(1)))


def _nesting(name: str) -> int:
    """How deep ``<...>`` nest in a type name (checked before the recursive parse)."""
    depth = deepest = 0
    for char in name:
        depth += (char == "<") - (char == ">")
        deepest = max(deepest, depth)
    return deepest


def _split(fields: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in fields:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += (char == "<") - (char == ">")
        current += char
    parts.append(current)
    return parts
