"""The vectorised reader of a channel's records agrees with the scalar one (``decode`` and the
key one record at a time) on generated streams, good and corrupted: the same frames, keys and
key groups, or the same one-line error."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flinkstate.errors import FlinkstateError, InvalidParameterError
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.record_columns import (
    RecordLayout,
    batch_columns,
    channel_columns,
)
from flinkstate.flinkcheckpoint.stream_element import decode, value_decoder
from flinkstate.keygroups import assign_to_key_group
from tests.flinkcheckpoint.test_stream_element import framed, row, string_value

LONGS = st.integers(-(2**63), 2**63 - 1)
INTS = st.integers(-(2**31), 2**31 - 1)
#: ASCII mostly (the vectorised path), sometimes beyond it or longer than 127 characters
TEXT = st.one_of(
    st.text(st.characters(max_codepoint=127), max_size=20),
    st.text(max_size=5),
    st.text(st.characters(max_codepoint=127), min_size=126, max_size=140),
)
#: (record type, key, strategy of a value's bytes)
CASES = {
    "Tuple2<Long,String>/f0%1000": (
        "Tuple2<Long,String>",
        "f0%1000",
        st.tuples(LONGS, TEXT).map(lambda v: struct.pack(">q", v[0]) + string_value(v[1])),
    ),
    "Tuple2<String,Long>/f0": (
        "Tuple2<String,Long>",
        "f0",
        st.tuples(TEXT, LONGS).map(lambda v: string_value(v[0]) + struct.pack(">q", v[1])),
    ),
    "Tuple3<Integer,Boolean,String>/f2": (
        "Tuple3<Integer,Boolean,String>",
        "f2",
        st.tuples(INTS, st.booleans(), TEXT).map(
            lambda v: struct.pack(">i?", v[0], v[1]) + string_value(v[2])
        ),
    ),
    "Row<String,Integer,Double>/f1": (
        "Row<String,Integer,Double>",
        "f1",
        st.tuples(
            st.integers(0, 3), st.one_of(st.none(), TEXT), INTS, st.one_of(st.none(), st.floats())
        ).map(
            lambda v: row(
                v[0],
                [
                    None if v[1] is None else string_value(v[1]),
                    struct.pack(">i", v[2]),
                    None if v[3] is None else struct.pack(">d", v[3]),
                ],
            )
        ),
    ),
    "Integer/value%7": ("Integer", "value%7", INTS.map(lambda v: struct.pack(">i", v))),
    "String/value": ("String", "value", TEXT.map(string_value)),
}
WATERMARK = framed(b"\x02" + struct.pack(">q", 5))


def element(value: bytes, timestamp: bool) -> bytes:
    return framed((b"\x00" + struct.pack(">q", -(2**63)) if timestamp else b"\x01") + value)


def scalar(data: bytes, type_name: str, spec: str, max_p: int) -> object:
    """The scalar reader's answer: (offsets, lengths, trailing, keys, groups) or its error."""
    key = key_function(spec, type_name)
    try:
        decoded = decode(data, value_decoder(type_name), source="channel c")
        records = [e for e in decoded.elements if e.is_record]
        keys = [key(e.value) for e in records]
    except FlinkstateError as error:
        return str(error)
    if any(isinstance(k, str) and not _utf8(k) for k in keys):  # Arrow cannot hold it
        return "lone surrogate"
    return (
        [e.offset for e in records],
        [e.length for e in records],
        decoded.trailing,
        keys,
        [assign_to_key_group(k, max_p, key.java_type) for k in keys],
    )


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def vectorised(data: bytes, type_name: str, spec: str, max_p: int) -> object:
    try:
        found = channel_columns(data, type_name, key_function(spec, type_name), max_p, "channel c")
    except FlinkstateError as error:
        return "lone surrogate" if "lone UTF-16 surrogate" in str(error) else str(error)
    keys = found.keys.to_pylist() if isinstance(found.keys, pa.Array) else found.keys.tolist()
    assert found.key_groups is not None
    return (
        found.offsets.tolist(),
        found.lengths.tolist(),
        found.trailing,
        keys,
        found.key_groups.tolist(),
    )


@pytest.mark.slow
@settings(max_examples=150)
@given(st.sampled_from(sorted(CASES)), st.data())
def test_the_vectorised_reader_agrees_with_the_scalar_one(case: str, data: st.DataObject) -> None:
    type_name, spec, values = CASES[case]
    parts = [
        WATERMARK if data.draw(st.integers(0, 9)) == 0 else element(v, data.draw(st.booleans()))
        for v in data.draw(st.lists(values, max_size=30))
    ]
    stream = bytearray(b"".join(parts))
    if stream and data.draw(st.booleans()):  # a corrupted byte, or a cut tail
        if data.draw(st.booleans()):
            stream[data.draw(st.integers(0, len(stream) - 1))] = data.draw(st.integers(0, 255))
        else:
            del stream[data.draw(st.integers(0, len(stream) - 1)) :]
    max_p = data.draw(st.sampled_from([1, 128, 32768]))
    assert vectorised(bytes(stream), type_name, spec, max_p) == scalar(
        bytes(stream), type_name, spec, max_p
    )


def test_layouts_of_flat_types_only() -> None:
    assert RecordLayout.of("Tuple2<Long, String>") == RecordLayout(
        "Tuple2<Long,String>", ("Long", "String"), False
    )
    assert RecordLayout.of("Row<Integer>") == RecordLayout("Row<Integer>", ("Integer",), True)
    assert RecordLayout.of("Tuple2<Long,Tuple2<Long,Long>>") is None
    with pytest.raises(InvalidParameterError, match="no decoder"):
        RecordLayout.of("Map<Long,Long>")


def test_nested_types_are_read_by_the_scalar_decoder() -> None:
    type_name = "Tuple2<Tuple2<Long,Long>,String>"
    value = struct.pack(">qq", 3, 4) + string_value("x")
    data = element(value, True) * 3
    found = channel_columns(data, type_name, key_function("f1", type_name), 128, "c")
    assert isinstance(found.keys, pa.Array)
    assert found.keys.to_pylist() == ["x"] * 3


def test_a_key_needs_the_record_type() -> None:
    with pytest.raises(InvalidParameterError, match="needs the record type"):
        channel_columns(b"", None, key_function("f0"), 128, "channel c")


def test_without_a_key_records_are_framed_only() -> None:
    data = element(b"abc", False) + WATERMARK + element(b"defg", True)
    found = channel_columns(data, None, None, 128, "c")
    assert found.keys is None
    assert found.key_groups is None
    assert found.offsets.tolist() == [0, len(element(b"abc", False)) + len(WATERMARK)]
    assert np.array_equal(found.lengths, [4, 13])


def batched(channels: list[bytes], type_name: str, spec: str, max_p: int) -> object:
    """``batch_columns`` of the channels end to end, offsets made relative to each channel's
    start and split by channel as ``vectorised`` gives them; None where it declines."""
    bounds = np.cumsum([0] + [len(c) for c in channels], dtype=np.int64)
    found = batch_columns(
        b"".join(channels), bounds, type_name, key_function(spec, type_name), max_p
    )
    if found is None:
        return None
    keys = found.keys.to_pylist() if isinstance(found.keys, pa.Array) else found.keys.tolist()
    assert found.key_groups is not None
    assert found.trailing == 0
    channel = np.searchsorted(bounds, found.offsets, side="right") - 1
    answers = []
    for index in range(len(channels)):
        mine = np.flatnonzero(channel == index)
        answers.append(
            (
                (found.offsets[mine] - bounds[index]).tolist(),
                found.lengths[mine].tolist(),
                0,
                [keys[i] for i in mine.tolist()],
                found.key_groups[mine].tolist(),
            )
        )
    return answers


@pytest.mark.slow
@settings(max_examples=150)
@given(st.sampled_from(sorted(CASES)), st.data())
def test_a_batch_of_channels_answers_only_as_its_channels_read_apart(
    case: str, data: st.DataObject
) -> None:
    """Channels (empty ones, cut ones, corrupted ones among them) framed and keyed together:
    where the batch answers, every channel read apart answers the same, whole."""
    type_name, spec, values = CASES[case]
    channels = []
    for _ in range(data.draw(st.integers(1, 4))):
        stream = bytearray(
            b"".join(
                element(v, data.draw(st.booleans()))
                for v in data.draw(st.lists(values, max_size=8))
            )
        )
        if stream and data.draw(st.integers(0, 3)) == 0:  # a corrupted byte, or a cut tail
            if data.draw(st.booleans()):
                stream[data.draw(st.integers(0, len(stream) - 1))] = data.draw(st.integers(0, 255))
            else:
                del stream[data.draw(st.integers(0, len(stream) - 1)) :]
        channels.append(bytes(stream))
    max_p = data.draw(st.sampled_from([1, 128, 32768]))
    together = batched(channels, type_name, spec, max_p)
    apart = [vectorised(c, type_name, spec, max_p) for c in channels]
    if together is not None:
        assert together == apart


def test_clean_channels_are_read_in_one_batch() -> None:
    first = element(struct.pack(">q", 5) + string_value("a"), True) * 3
    second = element(struct.pack(">q", -9) + string_value("bc"), False) + WATERMARK
    channels = [first, b"", second, first]
    found = batched(channels, "Tuple2<Long,String>", "f0", 128)
    assert found == [vectorised(c, "Tuple2<Long,String>", "f0", 128) for c in channels]


def test_a_channel_cut_inside_a_record_is_left_to_the_channel_reader() -> None:
    """The first channel's cut record and the second channel frame together as records; the
    batch still declines, for the first channel alone ends inside a record."""
    whole = element(struct.pack(">q", 5) + string_value("abcdefgh"), True)
    cut, rest = whole[:10], whole[10:]
    assert batched([cut, rest], "Tuple2<Long,String>", "f0", 128) is None
    assert batched([whole, whole[:0]], "Tuple2<Long,String>", "f0", 128) is not None
