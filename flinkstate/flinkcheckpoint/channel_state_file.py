"""Channel-state data: the chunks a channel's handle points at (``ChannelStateSerializerImpl``).

A channel-state stream starts with a 4-byte version (0), then chunks back to back: a 4-byte
length and that many bytes of one network buffer's payload, nothing else. Chunks of many
channels and subtasks interleave in one file; a handle's ``offsets`` say which are its own, in
replay order. Inlined state is one channel's stream ``[version][total length][data]`` with
``offsets == [4]``. Reading a channel concatenates its chunks.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from flinkstate.errors import CheckpointFormatError
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import ByteStreamStateHandle, ChannelStateHandle

#: ``ChannelStateSerializerImpl.SERIALIZATION_VERSION``
SERIALIZATION_VERSION = 0
HEADER_LENGTH = 4
_I32 = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One persisted buffer: where its length prefix is, and its payload length."""

    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class ChannelData:
    """A channel's in-flight bytes in replay order, and the chunks they came from."""

    handle: ChannelStateHandle
    chunks: tuple[Chunk, ...]
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


def read_channel(handle: ChannelStateHandle, files: StateFiles) -> ChannelData:
    """A channel's chunks, checked against the handle: each inside the stream, and together
    exactly the state size Flink declared (4 bytes of length per chunk, plus the version
    header of an inlined stream), so that a changed offset or length cannot go unseen."""
    if handle.delegate is None:
        if handle.state_size or handle.offsets:
            raise CheckpointFormatError(
                f"the {handle.kind} handle of subtask {handle.subtask}",
                0,
                f"no offsets and no size for a handle without a stream, found "
                f"{len(handle.offsets)} offsets and {handle.state_size} bytes",
            )
        return ChannelData(handle, (), b"")
    delegate = handle.delegate
    stream = files.stream(delegate)
    if len(stream) < HEADER_LENGTH:
        raise CheckpointFormatError(
            files.describe(delegate), 0, "the 4-byte channel-state version header"
        )
    (version,) = _I32.unpack_from(stream, 0)
    if version != SERIALIZATION_VERSION:
        raise CheckpointFormatError(
            files.describe(delegate),
            0,
            f"channel-state serialization version {SERIALIZATION_VERSION}, found {version}",
        )
    chunks = []
    parts = []
    for offset in handle.offsets:
        if not HEADER_LENGTH <= offset <= len(stream) - 4:
            raise CheckpointFormatError(
                files.describe(delegate),
                offset,
                f"a chunk length inside the {len(stream)}-byte stream",
            )
        (length,) = _I32.unpack_from(stream, offset)
        if length < 0 or offset + 4 + length > len(stream):
            raise CheckpointFormatError(
                files.describe(delegate),
                offset,
                f"a chunk length between 0 and {len(stream) - offset - 4}, found {length}",
            )
        chunks.append(Chunk(offset, length))
        parts.append(stream[offset + 4 : offset + 4 + length])
    covered = sum(HEADER_LENGTH + c.length for c in chunks)
    if isinstance(handle.delegate, ByteStreamStateHandle):
        covered += HEADER_LENGTH  # an inlined stream counts its own version header
    if handle.state_size != covered:
        raise CheckpointFormatError(
            files.describe(delegate),
            handle.offsets[0] if handle.offsets else 0,
            f"the {covered} bytes the {handle.kind} handle of subtask {handle.subtask}, "
            f"{handle.gate_or_partition}/{handle.channel_or_subpartition} covers (its chunks "
            f"and their lengths) to be its declared state size, found {handle.state_size}",
        )
    return ChannelData(handle, tuple(chunks), b"".join(parts))
