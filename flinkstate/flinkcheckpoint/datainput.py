"""Flink's ``DataInputStream`` reads over an in-memory file, each bounded by what remains.

Flink writes its checkpoint metadata with ``java.io.DataOutputStream``: big-endian integers and
``writeUTF`` strings (a 2-byte length, then modified UTF-8). A corrupt or truncated file must
end in a ``CheckpointFormatError`` that names the file, the offset and what was expected, so
every read checks its length first, and every count read from the file is checked against the
bytes left before a list of that size is built.
"""

from __future__ import annotations

import mmap
import struct
from typing import NoReturn

from flinkstate.errors import CheckpointFormatError

#: how deep anything nested in a checkpoint may go (serializer snapshots, record types, Java
#: objects): far beyond what jobs use, far below Python's recursion limit
MAX_NESTING = 64

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U16 = struct.Struct(">H")


class DataInput:
    """A cursor over one file's bytes (``source`` names the file in errors).

    Examples
    --------
    The start of a ``_metadata`` file Flink 2.3.0 wrote: the magic number, the version and the
    checkpoint id (what Flink's own loader read from it, ``chk-48.groundtruth.json``):

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> data = (real_checkpoint("keyed-hash-p2-p4") / "_metadata").read_bytes()
    >>> reader = DataInput(data, "_metadata")
    >>> hex(reader.i32("the magic number")), reader.i32("the version"), reader.i64("the id")
    ('0x4960672d', 6, 48)
    >>> reader.pos, reader.remaining
    (16, 41096)

    A read past the end names the file, the offset and what was expected there:

    >>> from flinkstate.errors import CheckpointFormatError
    >>> try:
    ...     DataInput(data[:12], "_metadata", pos=8).i64("the checkpoint id")
    ... except CheckpointFormatError as error:
    ...     print(error)
    _metadata: at byte 8: expected the checkpoint id (8 bytes), but the file ends after 4
    """

    __slots__ = ("_data", "pos", "source")

    def __init__(self, data: bytes | mmap.mmap, source: str, pos: int = 0) -> None:
        self._data = data
        self.source = source
        self.pos = pos

    @property
    def remaining(self) -> int:
        return len(self._data) - self.pos

    def fail(self, expected: str, at: int | None = None) -> NoReturn:
        raise CheckpointFormatError(self.source, self.pos if at is None else at, expected)

    def _need(self, count: int, what: str) -> None:
        if count > self.remaining:
            self.fail(f"{what} ({count} bytes), but the file ends after {self.remaining}")

    def u8(self, what: str) -> int:
        self._need(1, what)
        value = self._data[self.pos]
        self.pos += 1
        return value

    def i32(self, what: str) -> int:
        self._need(4, what)
        (value,) = _I32.unpack_from(self._data, self.pos)
        self.pos += 4
        return int(value)

    def i64(self, what: str) -> int:
        self._need(8, what)
        (value,) = _I64.unpack_from(self._data, self.pos)
        self.pos += 8
        return int(value)

    def boolean(self, what: str) -> bool:
        at = self.pos
        value = self.u8(what)
        if value > 1:
            self.fail(f"{what} as a boolean (0 or 1), found {value}", at)
        return value == 1

    def raw(self, count: int, what: str) -> bytes:
        if count < 0:
            self.fail(f"a non-negative length of {what}, found {count}")
        self._need(count, what)
        value = self._data[self.pos : self.pos + count]
        self.pos += count
        return bytes(value)

    def utf(self, what: str) -> str:
        """``DataInput.readUTF``: modified UTF-8 (NUL as C0 80, supplementary characters as
        two 3-byte surrogates), which Python reads as UTF-8 with surrogates passed through."""
        self._need(2, f"the length of {what}")
        (length,) = _U16.unpack_from(self._data, self.pos)
        at = self.pos
        self.pos += 2
        data = self.raw(length, what)
        try:
            return data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as bad:
            self.fail(f"{what} in modified UTF-8 ({bad.reason})", at + 2 + bad.start)

    def count(self, what: str, min_item_size: int) -> int:
        """A non-negative count of items that each take at least ``min_item_size`` bytes."""
        at = self.pos
        value = self.i32(f"the number of {what}")
        if value < 0:
            self.fail(f"a non-negative number of {what}, found {value}", at)
        if value * min_item_size > self.remaining:
            self.fail(
                f"{value} {what} of at least {min_item_size} bytes each, but only "
                f"{self.remaining} bytes remain",
                at,
            )
        return value
