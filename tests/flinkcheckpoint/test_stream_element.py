"""Record framing and value decoding, on hand-made bytes in Flink's encodings."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flinkstate.errors import CheckpointFormatError, InvalidParameterError
from flinkstate.flinkcheckpoint.stream_element import (
    CANDIDATE_TYPES,
    ElementTag,
    RecordTypeError,
    Row,
    decode,
    frames,
    read_string,
    types_that_read,
    value_decoder,
)


def _varint(value: int) -> bytes:
    out = b""
    while value >= 0x80:
        out += bytes([value & 0x7F | 0x80])
        value >>= 7
    return out + bytes([value])


def string_value(text: str | None) -> bytes:
    """``StringValue.writeString``: length + 1, then each UTF-16 unit as a varint."""
    if text is None:
        return b"\x00"
    units = text.encode("utf-16-be", "surrogatepass")
    codes = [int.from_bytes(units[i : i + 2], "big") for i in range(0, len(units), 2)]
    return _varint(len(codes) + 1) + b"".join(_varint(c) for c in codes)


def framed(element: bytes) -> bytes:
    return struct.pack(">i", len(element)) + element


@given(st.one_of(st.none(), st.text(max_size=300)))
def test_strings_read_as_flink_writes_them(text: str | None) -> None:
    data = b"\x07" + string_value(text) + b"\x09"
    value, end = read_string(data, 1)
    assert value == text
    assert end == len(data) - 1


@given(
    st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), st.text(max_size=40)), max_size=20),
    st.integers(0, 40),
)
def test_tuples_frame_and_decode_with_a_cut_tail(records: list[tuple[int, str]], cut: int) -> None:
    stream = b"".join(
        framed(b"\x00" + struct.pack(">qq", -(2**63), seq) + string_value(text))
        for seq, text in records
    )
    tail = framed(b"\x01" + struct.pack(">q", 7) + string_value("partial"))
    cut = min(cut, len(tail) - 1)
    decoded = decode(stream + tail[:cut], value_decoder("Tuple2<Long, String>"))
    assert [e.value for e in decoded.elements] == records
    assert all(e.tag == ElementTag.RECORD for e in decoded.elements)
    assert decoded.trailing == cut


def test_watermarks_and_records_without_timestamps() -> None:
    data = framed(b"\x02" + struct.pack(">q", 5)) + framed(b"\x01" + struct.pack(">i", 42))
    decoded = decode(data, value_decoder("Integer"))
    assert [(e.tag, e.timestamp, e.value) for e in decoded.elements] == [
        (ElementTag.WATERMARK, None, None),
        (ElementTag.RECORD_WITHOUT_TIMESTAMP, None, 42),
    ]


def test_a_value_of_the_wrong_type_is_named() -> None:
    data = framed(b"\x01" + struct.pack(">q", 42))
    with pytest.raises(CheckpointFormatError, match="a value of 8 bytes, the decoder read 4"):
        decode(data, value_decoder("Integer"))


def test_an_unknown_tag_or_a_bad_length_is_named() -> None:
    with pytest.raises(CheckpointFormatError, match="a stream element tag"):
        decode(framed(b"\x09abc"))
    with pytest.raises(CheckpointFormatError, match="a positive record length"):
        frames(struct.pack(">i", -3) + b"xxxx")


def scan(data: bytes) -> tuple[list[int], list[int], int] | int:
    """Frame by frame, the obvious way: the frames, or the offset of the first bad length."""
    offsets, lengths, position = [], [], 0
    while position + 4 <= len(data):
        (length,) = struct.unpack_from(">i", data, position)
        if length <= 0:
            return position
        if position + 4 + length > len(data):
            break
        offsets.append(position)
        lengths.append(length)
        position += 4 + length
    return offsets, lengths, len(data) - position


# runs of one length (the numpy path) between stretches of varying lengths (the stepping
# path), long enough to cross the stepping budgets; sometimes a bad length or a cut at the end
@pytest.mark.slow
@given(
    st.lists(
        st.tuples(st.integers(1, 80), st.integers(1, 300)),
        min_size=1,
        max_size=40,
    ),
    st.data(),
)
def test_framing_agrees_with_a_frame_by_frame_scan(
    runs: list[tuple[int, int]], data: st.DataObject
) -> None:
    rng = data.draw(st.randoms(use_true_random=False))
    parts = []
    for length, count in runs:
        varying = rng.random() < 0.5
        for _ in range(count):
            size = rng.randint(1, 2 * length) if varying else length
            parts.append(struct.pack(">i", size) + bytes([rng.randrange(256)]) * size)
    stream = b"".join(parts)
    if data.draw(st.booleans()):
        bad = data.draw(st.sampled_from([0, -1, -4, -(2**31)]))
        at = data.draw(st.integers(0, len(parts)))
        stream = b"".join(parts[:at]) + struct.pack(">i", bad) + b"".join(parts[at:])
    stream = stream[: data.draw(st.integers(len(stream) - 50, len(stream)))]
    expected = scan(stream)
    if isinstance(expected, int):
        with pytest.raises(CheckpointFormatError, match="a positive record length") as error:
            frames(stream)
        assert error.value.offset == expected
        return
    offsets, lengths, trailing = frames(stream)
    assert (offsets.tolist(), lengths.tolist(), trailing) == expected


def test_unknown_types_are_refused_by_name() -> None:
    with pytest.raises(InvalidParameterError, match="no decoder for 'Map<Long,Long>'"):
        value_decoder("Map<Long,Long>")
    with pytest.raises(InvalidParameterError, match="names 1 field types"):
        value_decoder("Tuple2<Long>")


@pytest.mark.parametrize(
    ("type_name", "encoded", "value"),
    [
        ("Short", struct.pack(">h", -2), -2),
        ("Byte", struct.pack(">b", -128), -128),
        ("Double", struct.pack(">d", 2.5), 2.5),
        ("Float", struct.pack(">f", -0.75), -0.75),
        ("Boolean", b"\x01", True),
        ("Boolean", b"\x00", False),
    ],
)
def test_other_scalars(type_name: str, encoded: bytes, value: object) -> None:
    assert value_decoder(type_name)(encoded, 0) == (value, len(encoded))


def row(kind: int, fields: list[bytes | None]) -> bytes:
    """``RowSerializer``'s layout: the kind's bits 0x01 and 0x02, a null flag per field, packed
    most significant bit first into whole bytes; then the fields that are not null."""
    flags = [bool(kind & 1), bool(kind & 2)] + [f is None for f in fields]
    mask = bytearray()
    for at in range(0, len(flags), 8):
        byte = 0
        for bit, flag in enumerate(flags[at : at + 8]):
            byte |= flag << (7 - bit)
        mask.append(byte)
    return bytes(mask) + b"".join(f for f in fields if f is not None)


@pytest.mark.parametrize(("kind", "name"), [(0, "+I"), (1, "-U"), (2, "+U"), (3, "-D")])
def test_rows_with_their_kind_and_nulls(kind: int, name: str) -> None:
    decoder = value_decoder("Row<Long, String, Integer>")
    data = row(kind, [struct.pack(">q", 7), None, struct.pack(">i", -1)])
    assert decoder(data, 0) == (Row(name, (7, None, -1)), len(data))
    assert decoder(data, 0)[0][0] == 7  # fields index like a tuple's, for key functions


@given(st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), min_size=1, max_size=20))
def test_row_masks_of_any_width(values: list[int | None]) -> None:
    """Masks of more than 8 bits run into a second and third byte."""
    decoder = value_decoder(f"Row<{','.join(['Long'] * len(values))}>")
    data = row(0, [None if v is None else struct.pack(">q", v) for v in values])
    assert decoder(data, 0) == (Row("+I", tuple(values)), len(data))


def test_a_row_in_a_record() -> None:
    body = b"\x01" + row(2, [struct.pack(">q", 1), string_value("x")])
    decoded = decode(framed(body), value_decoder("Row<Long,String>"))
    assert [e.value for e in decoded.elements] == [Row("+U", (1, "x"))]


def test_a_string_unit_beyond_utf16_is_a_format_error() -> None:
    """A varint unit above 0xFFFF used to end in ``OverflowError``."""
    value = _varint(2) + b"\xff\xff\x7f"  # one character, unit 0x1FFFFF
    data = framed(b"\x00" + struct.pack(">q", 0) + value)
    with pytest.raises(CheckpointFormatError, match="a UTF-16 unit"):
        decode(data, value_decoder("String"))


def test_a_record_type_nested_too_deep_is_refused_before_parsing() -> None:
    """1,500 levels used to end in ``RecursionError``."""
    deep = "Tuple1<" * 1500 + "Long" + ">" * 1500
    with pytest.raises(InvalidParameterError, match="nested at most 64 deep, got 1500"):
        value_decoder(deep)
    assert value_decoder("Tuple1<" * 10 + "Long" + ">" * 10) is not None


def _records(*values: bytes, timestamps: bool = True) -> bytes:
    tag = b"\x00" + struct.pack(">q", 0) if timestamps else b"\x01"
    return b"".join(framed(tag + value) for value in values)


@given(st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), st.text(max_size=30)), min_size=1))
def test_the_type_written_is_among_the_types_that_read(records: list[tuple[int, str]]) -> None:
    data = _records(*(struct.pack(">q", seq) + string_value(text) for seq, text in records))
    types = types_that_read(data, decode(data).elements)
    assert types is not None
    assert "Tuple2<Long,String>" in types
    assert all(t in CANDIDATE_TYPES for t in types)


def test_types_that_read_rule_out_what_the_records_do_not_fit() -> None:
    # eight bytes each: a Long, two Integers, a Double ... but no String and no Integer alone
    data = _records(struct.pack(">q", 1), struct.pack(">q", 2**40), timestamps=False)
    types = types_that_read(data, decode(data).elements)
    assert types is not None
    assert {"Long", "Double", "Tuple2<Integer,Integer>"} <= set(types)
    assert "Integer" not in types
    assert "String" not in types
    # strings of different lengths: only what reads a length first
    words = _records(string_value("a"), string_value("longer text"))
    assert types_that_read(words, decode(words).elements) == ["String"]
    # no record: nothing is ruled out
    marks = framed(b"\x02" + struct.pack(">q", 5))
    assert types_that_read(marks, decode(marks).elements) is None


def test_a_value_the_type_does_not_read_is_a_record_type_error() -> None:
    data = _records(struct.pack(">q", 42), timestamps=False)
    with pytest.raises(RecordTypeError, match="a value of 8 bytes, the decoder read 4"):
        decode(data, value_decoder("Integer"))
