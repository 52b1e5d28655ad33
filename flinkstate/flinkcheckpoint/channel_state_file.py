"""Channel-state data: the chunks a channel's handle points at (``ChannelStateSerializerImpl``).

A channel-state stream starts with a 4-byte version (0), then chunks back to back: a 4-byte
length and that many bytes of one network buffer's payload, nothing else. Chunks of many
channels and subtasks interleave in one file; a handle's ``offsets`` say which are its own, in
replay order. Inlined state is one channel's stream ``[version][total length][data]`` with
``offsets == [4]``. Reading a channel concatenates its chunks.
"""

from __future__ import annotations

import itertools
import struct
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from flinkstate.errors import CheckpointFormatError
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import (
    ByteStreamStateHandle,
    ChannelStateHandle,
    StreamStateHandle,
)

if TYPE_CHECKING:
    from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata

#: ``ChannelStateSerializerImpl.SERIALIZATION_VERSION``
SERIALIZATION_VERSION = 0
HEADER_LENGTH = 4
_I32 = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One persisted buffer: where its length prefix is, and its payload length.

    Examples
    --------
    The output state of ``to-record`` subtask 0 for downstream subtask 0: full 4 KiB buffers and a
    few partly filled ones, each chunk at its 4-byte length prefix (as Flink's loader lists them,
    ``chk-48.groundtruth.json``):

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> _, handle = next(read_metadata(checkpoint).channel_handles())
    >>> with StateFiles(checkpoint) as files:
    ...     chunks = read_channel(handle, files).chunks
    >>> chunks[:3]
    (Chunk(offset=4, length=4096), Chunk(offset=4104, length=4096), Chunk(offset=8204, length=16))
    """

    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class ChannelData:
    """A channel's in-flight bytes in replay order, and the chunks they came from.

    Examples
    --------
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> _, handle = next(read_metadata(checkpoint).channel_handles())
    >>> with StateFiles(checkpoint) as files:
    ...     channel = read_channel(handle, files)
    >>> len(channel.chunks), channel.size, handle.state_size - 4 * len(channel.chunks)
    (10, 24624, 24624)
    """

    handle: ChannelStateHandle
    chunks: tuple[Chunk, ...]
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


def read_channel(handle: ChannelStateHandle, files: StateFiles) -> ChannelData:
    """A channel's chunks, checked against the handle: each inside the stream, and together
    exactly the state size Flink declared (4 bytes of length per chunk, plus the version
    header of an inlined stream), so that a changed offset or length cannot go unseen.

    Examples
    --------
    The input state of subtask 2 of the counter was inlined into ``_metadata``: one chunk, whose
    stream's 4-byte version header counts in the handle's state size:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> metadata = read_metadata(checkpoint)
    >>> (handle,) = metadata.operator("slow-counter").subtask(2).channel_handles()
    >>> type(handle.delegate).__name__, handle.state_size
    ('ByteStreamStateHandle', 1026)
    >>> with StateFiles(checkpoint) as files:
    ...     channel = read_channel(handle, files)
    >>> channel.chunks, channel.data[:4].hex()
    ((Chunk(offset=4, length=1018),), '00000022')
    """
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


def read_channels(handles: Sequence[ChannelStateHandle], files: StateFiles) -> list[ChannelData]:
    """:func:`read_channel` of many handles, their checks made with numpy for all at once (a
    Spark task reads thousands of channels of a few chunks each). Where any check fails,
    the handles are read one by one, whose first error is the answer.

    Examples
    --------
    Every output channel of ``to-record`` subtask 0, read at once:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> subtask = read_metadata(checkpoint).operator("to-record").subtask(0)
    >>> with StateFiles(checkpoint) as files:
    ...     channels = read_channels(list(subtask.channel_handles()), files)
    >>> [(c.handle.channel_or_subpartition, len(c.chunks), c.size) for c in channels]
    [(0, 10, 24624), (1, 1, 3124), (2, 1, 3124), (3, 1, 3200)]
    """
    found = _read_checked(handles, files)
    return [read_channel(h, files) for h in handles] if found is None else found


def _read_checked(
    handles: Sequence[ChannelStateHandle], files: StateFiles
) -> list[ChannelData] | None:
    """The handles read with their checks made at once; None where one fails."""
    views: dict[int, memoryview] = {}
    sizes: dict[int, int] = {}
    of_handle = []
    for handle in handles:
        delegate = handle.delegate
        if delegate is None:
            return None
        key = id(delegate)
        if key not in views:
            view = files.stream(delegate)
            if len(view) < HEADER_LENGTH or _I32.unpack_from(view, 0)[0] != SERIALIZATION_VERSION:
                return None
            views[key] = view
            sizes[key] = len(view)
        of_handle.append(key)
    counts = np.fromiter((len(h.offsets) for h in handles), np.int64, len(handles))
    offsets = np.fromiter(
        itertools.chain.from_iterable(h.offsets for h in handles), np.int64, int(counts.sum())
    )
    # every chunk's length, read from its stream: a stream's chunks at a time
    ends = np.repeat(np.array([sizes[k] for k in of_handle], dtype=np.int64), counts)
    if ((offsets < HEADER_LENGTH) | (offsets > ends - 4)).any():
        return None
    lengths = np.empty(len(offsets), dtype=np.int64)
    owner = np.repeat(np.array(of_handle, dtype=np.int64), counts)
    for key, view in views.items():
        mine = np.flatnonzero(owner == key)
        raw = np.frombuffer(view, dtype=np.uint8)
        at = offsets[mine]
        lengths[mine] = (
            raw[at].astype(np.int64) << 24
            | raw[at + 1].astype(np.int64) << 16
            | raw[at + 2].astype(np.int64) << 8
            | raw[at + 3].astype(np.int64)
        )
    if ((lengths >= 1 << 31) | (offsets + 4 + lengths > ends)).any():
        return None  # a negative length (its sign bit set), or a chunk past its stream's end
    inline = np.fromiter(
        (isinstance(h.delegate, ByteStreamStateHandle) for h in handles), bool, len(handles)
    )
    covered = np.bincount(
        np.repeat(np.arange(len(handles)), counts), HEADER_LENGTH + lengths, len(handles)
    ).astype(np.int64) + np.where(inline, HEADER_LENGTH, 0)
    declared = np.fromiter((h.state_size for h in handles), np.int64, len(handles))
    if (covered != declared).any():
        return None
    found = []
    bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
    starts, sized = offsets.tolist(), lengths.tolist()
    for index, handle in enumerate(handles):
        view = views[of_handle[index]]
        chunks = range(bounds[index], bounds[index + 1])
        found.append(
            ChannelData(
                handle,
                tuple(Chunk(starts[i], sized[i]) for i in chunks),
                b"".join(view[starts[i] + 4 : starts[i] + 4 + sized[i]] for i in chunks),
            )
        )
    return found


def check_chunks(
    handles: Iterable[tuple[str, ChannelStateHandle]],
    files: StateFiles,
    reused: Collection[StreamStateHandle] = (),
) -> None:
    """Every chunk the channel handles of a checkpoint (each with its operator's label) name
    is bytes of its own: Flink writes each buffer once, for one channel, so a chunk two
    handles name, or one handle twice, or chunks that overlap, would replay the same data
    twice. Flink also writes a stream's chunks back to back, from its 4-byte header to its
    end, each named by the channel it wrote it for: bytes in no handle's chunk mean a handle
    was pointed away from its own chunk (inside it, or at another). Either is refused naming
    the handles; a chunk outside its stream is left to :func:`read_channel`, which names it.
    The streams in ``reused`` (an earlier checkpoint's, whose state a subtask reuses) may
    hold chunks of channels this checkpoint no longer names.

    Examples
    --------
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> handles = [(op.label, h) for op, h in read_metadata(checkpoint).channel_handles()]
    >>> with StateFiles(checkpoint) as files:
    ...     check_chunks(handles, files)  # Flink's own checkpoint: every chunk once
    ...     check_chunks(handles[:1] * 2, files)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.CheckpointFormatError: ...: at byte 4: expected chunks each named by one \
handle once, found the chunk at 4 of to-record's output handle of subtask 0, 0/0 and the chunk \
at 4 of to-record's output handle of subtask 0, 0/0 sharing bytes

    Its first handle alone leaves the rest of the file in no handle's chunk:

    >>> with StateFiles(checkpoint) as files:
    ...     check_chunks(handles[:1], files)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.CheckpointFormatError: ...: at byte 24668: expected chunks back to back \
from the stream's 4-byte header to its end, as Flink writes them, found bytes 24668 to 52422 \
in no handle's chunk, after the chunk at 24648 of to-record's output handle of subtask 0, 0/0
    """
    claims: dict[StreamStateHandle, list[tuple[int, int, str]]] = defaultdict(list)
    #: streams with a chunk that cannot be read (outside them): read_channel says which
    unread: set[StreamStateHandle] = set()
    for operator, handle in handles:
        if handle.delegate is None:
            continue
        stream = files.stream(handle.delegate)
        name = (
            f"{operator}'s {handle.kind} handle of subtask {handle.subtask}, "
            f"{handle.gate_or_partition}/{handle.channel_or_subpartition}"
        )
        mine = claims[handle.delegate]
        for offset in handle.offsets:
            length = -1
            if HEADER_LENGTH <= offset <= len(stream) - 4:
                (length,) = _I32.unpack_from(stream, offset)
            if 0 <= length <= len(stream) - offset - 4:
                mine.append((offset, offset + 4 + length, name))
            else:
                unread.add(handle.delegate)
    for delegate, ranges in claims.items():
        ranges.sort()
        for (start, end, first), (following, _, second) in itertools.pairwise(ranges):
            if following < end:
                raise CheckpointFormatError(
                    files.describe(delegate),
                    following,
                    f"chunks each named by one handle once, found the chunk at {start} of "
                    f"{first} and the chunk at {following} of {second} sharing bytes",
                )
        if ranges and delegate not in unread and delegate not in reused:
            _check_back_to_back(files, delegate, ranges)


def _check_back_to_back(
    files: StateFiles, delegate: StreamStateHandle, ranges: list[tuple[int, int, str]]
) -> None:
    """The sorted chunks of one stream, which do not overlap, cover it whole."""
    length = len(files.stream(delegate))
    position, previous = HEADER_LENGTH, None
    for start, end, name in [*ranges, (length, length, "")]:
        if start != position:
            where = (
                f"after the chunk at {previous[0]} of {previous[1]}"
                if previous is not None
                else f"before the chunk at {start} of {name}"
            )
            raise CheckpointFormatError(
                files.describe(delegate),
                position,
                "chunks back to back from the stream's 4-byte header to its end, as Flink "
                f"writes them, found bytes {position} to {start} in no handle's chunk, {where}",
            )
        position, previous = end, (start, name)


def check_checkpoint_chunks(metadata: CheckpointMetadata, files: StateFiles) -> None:
    """:func:`check_chunks` of every channel handle of a checkpoint; the streams of a subtask
    that reuses an earlier checkpoint's state (metadata version 7) are not held to be covered
    whole by this checkpoint's handles.

    Examples
    --------
    Every checkpoint Flink wrote passes, file-merged ones included:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> for name in ("keyed-hash-p2-p4", "keyed-hash-p2-p4-filemerging"):
    ...     checkpoint = real_checkpoint(name)
    ...     with StateFiles(checkpoint) as files:
    ...         check_checkpoint_chunks(read_metadata(checkpoint), files)
    """
    reused = {
        handle.delegate
        for operator in metadata.operators
        for subtask in operator.subtasks
        if subtask.ref_checkpoint_id is not None
        for handle in subtask.channel_handles()
        if handle.delegate is not None
    }
    check_chunks(((op.label, h) for op, h in metadata.channel_handles()), files, reused)
