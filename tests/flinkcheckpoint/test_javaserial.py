"""The Java-serialized trailer of ``_metadata`` is stepped over by its structure alone; a
stream Java never writes is a format error naming where, never another exception."""

from __future__ import annotations

import struct

import pytest

from flinkstate.errors import CheckpointFormatError
from flinkstate.flinkcheckpoint.datainput import DataInput
from flinkstate.flinkcheckpoint.javaserial import skip_java_object


def utf(text: str) -> bytes:
    return struct.pack(">H", len(text)) + text.encode()


def array_of(class_name: str, elements: bytes, count: int = 1) -> bytes:
    """``AC ED 00 05``, then ``TC_ARRAY`` of a class with no fields and no superclass."""
    descriptor = b"\x72" + utf(class_name) + struct.pack(">q", 1) + b"\x02\x00\x00" + b"\x78\x70"
    return b"\xac\xed\x00\x05\x75" + descriptor + struct.pack(">i", count) + elements


def test_an_array_of_a_known_type_is_stepped_over() -> None:
    reader = DataInput(array_of("[J", struct.pack(">q", 7)), "trailer")
    skip_java_object(reader, "the trailer")
    assert reader.remaining == 0


def test_an_array_of_an_unknown_element_type_is_a_format_error() -> None:
    """``[Q`` names no Java type: this used to end in ``KeyError: 'Q'``."""
    reader = DataInput(array_of("[Q", b"\x00" * 8), "trailer")
    with pytest.raises(CheckpointFormatError, match=r"a Java type code .* found 'Q'"):
        skip_java_object(reader, "the trailer")
