"""A channel's records as columns: framing, tags, value layouts and keys with numpy, no Python
call per record where the record type's layout allows.

``stream_element.decode`` builds one ``Element`` and decodes one value per record (about
20 MB/s); a rescale needs only each record's frame and key. A flat record type (a scalar, or a
``TupleN``/``Row`` of scalars) has a layout numpy can walk for every record at once: fixed
widths add a constant, a ``String`` (``StringValue``) adds its one-byte length where the
length is below 128 and every character ASCII (one byte per UTF-16 unit), a ``Row``'s null
mask removes the fields it marks null. Records the walk cannot read that way (a longer
string, a character beyond ASCII) are decoded one by one with the scalar decoder; anything the
walk finds wrong (a tag, a length, a value that does not end where its record does, a key in
another subtask's key groups) sends the whole channel through the scalar reader, whose one-line
error is the answer, so both readers agree byte for byte on good and bad input alike.
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from flinkstate.errors import CheckpointFormatError, InvalidParameterError
from flinkstate.flinkcheckpoint.key_selector import KeySelector
from flinkstate.flinkcheckpoint.stream_element import (
    ElementTag,
    decode,
    frames,
    record_fields,
    value_decoder,
)
from flinkstate.javahash import JavaType, hash_codes_of_units, string_hash_codes
from flinkstate.keygroups import assign_to_key_group, assign_to_key_group_array, murmur_hash_array

#: body sizes (after the tag) of the elements that are not records, by tag
_FIXED_BODY = np.array([-1, -1, 8, 8 + 16 + 4, 4, 1, 4 + 8], dtype=np.int64)
#: widths of the scalars of fixed size
_WIDTHS = {"Long": 8, "Integer": 4, "Short": 2, "Byte": 1, "Double": 8, "Float": 4, "Boolean": 1}
_SCALARS = frozenset({*_WIDTHS, "String"})
#: what a scalar decoder raises on bytes that are not its type
_DECODE_ERRORS = (IndexError, struct.error, UnicodeDecodeError, ValueError, OverflowError)


@dataclass(frozen=True, slots=True)
class RecordLayout:
    """A flat record type: its scalar fields in order (one for a scalar value) and whether
    it is a ``Row`` (a null mask before the fields).

    Examples
    --------
    >>> RecordLayout.of("Row<Long, String>")
    RecordLayout(type_name='Row<Long,String>', fields=('Long', 'String'), row=True)
    >>> RecordLayout.of("Tuple2<Long,Tuple2<Long,Long>>") is None
    True
    """

    type_name: str
    fields: tuple[str, ...]
    row: bool

    @classmethod
    @functools.lru_cache(maxsize=64)
    def of(cls, type_name: str) -> RecordLayout | None:
        """The layout of ``type_name``; None where a field is not a scalar (nested types go
        through the scalar decoder). Refused as ``value_decoder`` refuses."""
        fields = record_fields(type_name)
        name = type_name.replace(" ", "")
        if fields is None:
            return cls(name, (name,), False) if name in _SCALARS else None
        if not all(f in _SCALARS for f in fields):
            return None
        return cls(name, tuple(fields), re.match(r"Row<", name) is not None)


@dataclass(frozen=True)
class ChannelColumns:
    """The records of one channel's bytes: frame offsets and lengths (the 4-byte length
    prefix not counted, as ``Element.length``), and their keys (int64 for Long and Integer
    keys, an Arrow string array for String keys, None without a key) with key groups.

    Examples
    --------
    The channel from ``to-record`` subtask 0 to counter subtask 0 as columns: every record's frame
    and its key ``f0 % 1000`` with the key group Flink puts it in:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.key_selector import key_function
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> _, handle = next(read_metadata(checkpoint).channel_handles())
    >>> with StateFiles(checkpoint) as files:
    ...     data = read_channel(handle, files).data
    >>> key = key_function("f0%1000", "Tuple2<Long,String>")
    >>> columns = channel_columns(data, "Tuple2<Long,String>", key, 128, "channel 0->0")
    >>> len(columns.offsets), columns.offsets[:3].tolist(), columns.trailing
    (648, [0, 38, 76], 0)
    >>> columns.keys[:3].tolist(), columns.key_groups[:3].tolist()
    ([950, 952, 953], [18, 26, 9])
    """

    offsets: npt.NDArray[np.int64]
    lengths: npt.NDArray[np.int64]
    trailing: int
    keys: npt.NDArray[np.int64] | pa.Array | None
    key_groups: npt.NDArray[np.int32] | None


class _Irregular(Exception):
    """Something the vectorised walk does not vouch for: the scalar reader decides."""


def channel_columns(
    data: bytes,
    type_name: str | None,
    key: KeySelector | None,
    max_parallelism: int,
    source: str,
) -> ChannelColumns:
    """Every record of ``data`` framed, and keyed by ``key`` over values of ``type_name`` where
    a key is given; the scalar reader's error for anything it refuses (``source`` names the
    channel in it). Keys need the record type.

    Examples
    --------
    Downstream subtask 0 of 4 owns key groups 0 to 31: every key of the channel that leads to it is
    in them:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.key_selector import key_function
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> _, handle = next(read_metadata(checkpoint).channel_handles())
    >>> with StateFiles(checkpoint) as files:
    ...     data = read_channel(handle, files).data
    >>> key = key_function("f0%1000", "Tuple2<Long,String>")
    >>> groups = channel_columns(data, "Tuple2<Long,String>", key, 128, "channel 0->0").key_groups
    >>> int(groups.min()), int(groups.max())
    (0, 31)

    Without a key, only the frames:

    >>> framed = channel_columns(data, None, None, 128, "channel 0->0")
    >>> len(framed.offsets), framed.keys is None
    (648, True)
    """
    if key is not None and type_name is None:
        raise InvalidParameterError(f"{source} is keyed: reading its keys needs the record type")
    try:
        return _vectorised(data, type_name, key, max_parallelism, source)
    except _Irregular:
        return _scalar(data, type_name, key, max_parallelism, source)


def batch_columns(
    data: bytes,
    bounds: npt.NDArray[np.int64],
    type_name: str | None,
    key: KeySelector | None,
    max_parallelism: int,
) -> ChannelColumns | None:
    """The records of many channels laid end to end in ``data`` (channel i is
    ``data[bounds[i]:bounds[i + 1]]``), framed and keyed in one numpy pass, offsets into
    ``data``: what a Spark task needs without a fixed cost per channel. None unless every
    channel ends with a whole frame and the walk vouches for every record; the caller then
    reads each channel apart (:func:`channel_columns`), whose answer or error is the one to
    give, so a batch never answers what its channels read one by one would not.

    Framing is a walk from where a channel starts: where every channel boundary is a frame
    start, framing the concatenation frames each channel as alone, and the checks of a
    record's tag, layout and key are the record's own.

    Examples
    --------
    The first two logical channels of the keyBy (to counter subtasks 0 and 1, each its input state
    then its output state) laid end to end, framed and keyed in one pass:

    >>> import numpy as np
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.inflight import logical_channels
    >>> from flinkstate.flinkcheckpoint.key_selector import key_function
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> channels = logical_channels(read_metadata(checkpoint))[:2]
    >>> with StateFiles(checkpoint) as files:
    ...     data = [
    ...         b"".join(read_channel(side, files).data for side in (c.input, c.output) if side)
    ...         for c in channels
    ...     ]
    >>> bounds = np.cumsum([0, *map(len, data)])
    >>> key = key_function("f0%1000", "Tuple2<Long,String>")
    >>> columns = batch_columns(b"".join(data), bounds, "Tuple2<Long,String>", key, 128)
    >>> bounds.tolist(), len(columns.offsets)
    ([0, 24624, 28728], 756)

    A batch that ends inside a record is not vouched for: the caller reads each channel apart:

    >>> cut = bounds - [0, 0, 1]
    >>> batch_columns(b"".join(data)[:-1], cut, "Tuple2<Long,String>", key, 128) is None
    True
    """
    if key is not None and type_name is None:
        return None
    try:
        return _vectorised(data, type_name, key, max_parallelism, "a batch of channels", bounds)
    except (_Irregular, CheckpointFormatError, InvalidParameterError):
        return None


def _vectorised(
    data: bytes,
    type_name: str | None,
    key: KeySelector | None,
    max_parallelism: int,
    source: str,
    bounds: npt.NDArray[np.int64] | None = None,
) -> ChannelColumns:
    raw = np.frombuffer(data, dtype=np.uint8)
    offsets, lengths, trailing = frames(data)
    if bounds is not None:
        # each non-empty channel must start at a frame (of any element) and the last end
        # with one: then no frame crosses from one channel into the next
        starts = bounds[:-1][bounds[:-1] < bounds[1:]]
        found = np.searchsorted(offsets, starts)
        if trailing or (
            len(starts)
            and (
                (found >= len(offsets)).any()
                or (offsets[np.minimum(found, len(offsets) - 1)] != starts).any()
            )
        ):
            raise _Irregular
    if not len(offsets):
        return ChannelColumns(offsets, lengths, trailing, _no_keys(key), _no_groups(key))
    tags = raw[offsets + 4].astype(np.int64)
    if (tags > ElementTag.INTERNAL_WATERMARK).any():
        raise _Irregular
    is_record = tags <= ElementTag.RECORD_WITHOUT_TIMESTAMP
    if ((~is_record) & (lengths != 1 + _FIXED_BODY[tags])).any():
        raise _Irregular
    if ((tags == ElementTag.RECORD) & (lengths < 9)).any():
        raise _Irregular
    offsets, lengths, tags = offsets[is_record], lengths[is_record], tags[is_record]
    if key is None:
        return ChannelColumns(offsets, lengths, trailing, None, None)
    layout = None if type_name is None else RecordLayout.of(type_name)
    if layout is None:
        raise _Irregular
    starts = offsets + 4 + np.where(tags == ElementTag.RECORD, 9, 1)
    ends = offsets + 4 + lengths
    keys, slow = _walk(raw, starts, ends, layout, key)
    if slow.any():
        keys = _patched(data, layout.type_name, key, keys, starts, ends, slow)
    if key.modulus is not None and isinstance(keys, np.ndarray):
        keys = np.fmod(keys, np.int64(key.modulus))  # Java's %: the sign follows the dividend
    groups = _key_groups(keys, key.java_type, max_parallelism)
    return ChannelColumns(offsets, lengths, trailing, keys, groups)


def _walk(
    raw: npt.NDArray[np.uint8],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    layout: RecordLayout,
    key: KeySelector,
) -> tuple[npt.NDArray[np.int64] | pa.Array, npt.NDArray[np.bool_]]:
    """Each record's key field read where the layout puts it, every value checked to end at
    its record's end; the records only the scalar decoder reads (``slow``)."""
    size = len(raw)
    # how many bytes with the high bit set come before each position: a string is ASCII
    # where none lies in its characters
    high = np.concatenate(([0], np.cumsum(raw >= 0x80, dtype=np.int32)))
    at = starts.copy()
    slow = np.zeros(len(starts), dtype=bool)
    mask_at = starts
    if layout.row:
        bits = 2 + len(layout.fields)
        mask_bytes = (bits + 7) // 8
        if (at + mask_bytes > ends).any():
            raise _Irregular
        at = at + mask_bytes
    field = 0 if key.field is None else key.field
    found: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None
    for index, name in enumerate(layout.fields):
        null = np.zeros(len(starts), dtype=bool)
        if layout.row:
            bit = 2 + index
            null = (raw[mask_at + bit // 8] >> (7 - bit % 8)) & 1 == 1
        if name == "String":
            first = raw[np.minimum(at, size - 1)].astype(np.int64)
            slow |= (first >= 0x80) & ~null
            chars = np.where((first >= 0x80) | (first == 0), 0, first - 1)
            begin = np.minimum(at + 1, size)
            stop = np.minimum(begin + chars, size)
            slow |= (high[stop] - high[begin] != 0) & ~null
            if index == field:
                if ((first == 0) & ~slow).any() or (null & ~slow).any():
                    raise _Irregular  # a null key: the scalar reader says so
                found = (begin, chars)
            width = np.where(first == 0, 1, 1 + chars)
        else:
            width_of = _WIDTHS[name]
            if name == "Boolean" and (raw[np.minimum(at, size - 1)][~null] > 1).any():
                raise _Irregular
            if index == field:
                if (null & ~slow).any():
                    raise _Irregular
                found = (at, np.full(len(at), width_of, dtype=np.int64))
            width = np.full(len(at), width_of, dtype=np.int64)
        at = at + np.where(null, 0, width)
    if ((at != ends) & ~slow).any():
        raise _Irregular
    assert found is not None  # key_function checked the field against the type
    where, width = found
    name = layout.fields[field]
    if name == "String":
        return _strings(raw, where, width, slow), slow
    if name not in ("Long", "Integer"):
        raise _Irregular  # key_function keys only by Long, Integer and String
    fast = ~slow
    columns = np.zeros(len(where), dtype=np.int64)
    read = where[fast]
    grid = read[:, None] + np.arange(_WIDTHS[name], dtype=np.int64)
    values = raw[grid].copy().view(">i8" if name == "Long" else ">i4").ravel()
    columns[fast] = values.astype(np.int64)
    return columns, slow


def _strings(
    raw: npt.NDArray[np.uint8],
    begin: npt.NDArray[np.int64],
    chars: npt.NDArray[np.int64],
    slow: npt.NDArray[np.bool_],
) -> pa.Array:
    """The ASCII strings at ``begin`` as one Arrow array, gathered without a loop (empty
    where ``slow``: patched afterwards)."""
    chars = np.where(slow, 0, chars)
    bounds = np.concatenate(([0], np.cumsum(chars)))
    total = int(bounds[-1])
    index = np.repeat(begin - bounds[:-1], chars) + np.arange(total, dtype=np.int64)
    body = raw[index].tobytes()
    return pa.StringArray.from_buffers(
        len(chars), pa.py_buffer(bounds.astype(np.int32).tobytes()), pa.py_buffer(body)
    )


def _patched(
    data: bytes,
    type_name: str,
    key: KeySelector,
    keys: npt.NDArray[np.int64] | pa.Array,
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    slow: npt.NDArray[np.bool_],
) -> npt.NDArray[np.int64] | pa.Array:
    """The keys of the records only the scalar decoder reads, decoded one by one."""
    read = value_decoder(type_name)
    plain = KeySelector(key.spec, key.field, None, key.java_type, key.typed)
    patch: dict[int, int | str] = {}
    for index in np.flatnonzero(slow).tolist():
        try:
            value, stop = read(data, int(starts[index]))
            if stop != int(ends[index]):
                raise _Irregular
            patch[index] = plain(value)
        except (*_DECODE_ERRORS, InvalidParameterError):
            raise _Irregular from None
    if isinstance(keys, np.ndarray):
        keys = keys.copy()
        for index, value in patch.items():
            keys[index] = int(value)
        return keys
    values = keys.to_pylist()
    for index, value in patch.items():
        values[index] = value
    return string_column(values, "a channel")


def string_column(keys: Sequence[object], source: str) -> pa.Array:
    r"""String keys as an Arrow column; a Java String with a lone UTF-16 surrogate (which
    Arrow's UTF-8 cannot hold) refused in one line.

    Examples
    --------
    >>> string_column(["key", "Flink"], "a channel").to_pylist()
    ['key', 'Flink']

    A Java ``String`` may hold a lone UTF-16 surrogate, which Arrow's UTF-8 cannot:

    >>> from flinkstate.errors import InvalidParameterError
    >>> try:
    ...     string_column(["key", chr(0xD800)], "channel 0->0")
    ... except InvalidParameterError as error:
    ...     print(error)  # doctest: +NORMALIZE_WHITESPACE
    channel 0->0: a String key with a lone UTF-16 surrogate ('\ud800') cannot be a
    dataset's key_string
    """
    try:
        return pa.array(keys, type=pa.string())
    except UnicodeEncodeError:
        bad = next(k for k in keys if isinstance(k, str) and not _encodes(k))
        raise InvalidParameterError(
            f"{source}: a String key with a lone UTF-16 surrogate ({bad!r}) cannot be a "
            "dataset's key_string"
        ) from None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _key_groups(
    keys: npt.NDArray[np.int64] | pa.Array, java_type: JavaType, max_parallelism: int
) -> npt.NDArray[np.int32]:
    """Flink's key group of every key (``KeyGroupRangeAssignment``), from the key's
    ``hashCode()`` by its Java type; a String's from its UTF-16 units without a Python str."""
    if isinstance(keys, np.ndarray):
        if (
            java_type is JavaType.INT
            and len(keys)
            and (keys.min() < -(2**31) or keys.max() >= 2**31)
        ):
            raise _Irregular
        return assign_to_key_group_array(keys, max_parallelism, java_type)
    wide = pc.cast(keys, pa.large_string())
    _, offset_buffer, body_buffer = wide.buffers()
    offsets = np.frombuffer(offset_buffer, dtype=np.int64)[
        wide.offset : wide.offset + len(keys) + 1
    ]
    body = np.frombuffer(body_buffer, dtype=np.uint8) if body_buffer else np.zeros(0, np.uint8)
    body = body[offsets[0] : offsets[-1]]
    if (body >= 0x80).any():  # a character beyond ASCII: its UTF-16 units need the encoder
        codes = string_hash_codes(keys.to_pylist())
    else:
        codes = hash_codes_of_units(body.astype(np.uint32), offsets - offsets[0])
    hashes = murmur_hash_array(codes)
    return (hashes % np.int32(max_parallelism)).astype(np.int32)


def _no_keys(key: KeySelector | None) -> npt.NDArray[np.int64] | pa.Array | None:
    if key is None:
        return None
    if key.java_type is JavaType.STRING:
        return pa.array([], type=pa.string())
    return np.zeros(0, dtype=np.int64)


def _no_groups(key: KeySelector | None) -> npt.NDArray[np.int32] | None:
    return None if key is None else np.zeros(0, dtype=np.int32)


def _scalar(
    data: bytes, type_name: str | None, key: KeySelector | None, max_parallelism: int, source: str
) -> ChannelColumns:
    """The scalar reader's answer (``decode`` and the key one record at a time): its error
    for what it refuses, its columns otherwise."""
    value = value_decoder(type_name) if key is not None and type_name is not None else None
    decoded = decode(data, value, source=source)
    records = [e for e in decoded.elements if e.is_record]
    offsets = np.array([e.offset for e in records], dtype=np.int64)
    lengths = np.array([e.length for e in records], dtype=np.int64)
    if key is None:
        return ChannelColumns(offsets, lengths, decoded.trailing, None, None)
    found = [key(e.value) for e in records]
    groups = np.array(
        [assign_to_key_group(k, max_parallelism, key.java_type) for k in found], dtype=np.int32
    )
    keys: npt.NDArray[np.int64] | pa.Array = (
        string_column(found, source)
        if key.java_type is JavaType.STRING
        else np.array(found, dtype=np.int64)
    )
    return ChannelColumns(offsets, lengths, decoded.trailing, keys, groups)
