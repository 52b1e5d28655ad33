"""Spill files of recovered channel state: how current Flink recovers with checkpointing on.

With checkpointing during recovery enabled, Flink's master (the "V2" generation) no longer keeps
recovered input in network buffers while it reads the checkpoint: the channel-state reader
filters the records (on a rescale) and appends them to local spill files, and a *drainer* later
copies them into the physical input channels, one buffer at a time. Both halves live here as
plain values and small state machines the network world owns:

* ``SpillWriter`` (``AbstractSpillingHandler``): appends each source buffer's surviving bytes to
  the open *segment* of the target channel. A segment is one run of one channel's bytes behind a
  12-byte header (gate, channel, body length); it is sealed when the next append is for another
  channel or when it outgrew ``max_segment_size`` (1 MiB in Flink), and a segment whose records
  were all filtered out is dropped. Files rotate only between segments, once a file has reached
  ``max_file_size`` (64 MiB in Flink), so a segment never crosses a file.
* ``FetchedChannelState``: the sealed files with a reference count. The fetch keeps one
  reference until the drainer exists, every reader and every checkpoint's snapshot holds one,
  and the files are deleted exactly once, when the last one is released.
* ``DrainCursor`` (``FetchedChannelStateReaderImpl``'s committed position): where the drainer
  is. A checkpoint cuts there: what was delivered before is in the channels' queues, everything
  after is ``FetchedChannelStateSnapshot.remaining_slice`` of the files.

The bytes are kept as record fragments rather than bytes, so the invariants can follow every
record through a spill file, a drained buffer, a checkpoint and the next restore.

Readers of the seed PRs (#28517, #28554) know these under the names they had before merge:
``SpillFile`` (here ``FetchedChannelState`` with its ``SpillFile``s; the seed's "64 MiB
segments" are Flink's per-file bound), ``SpillFileWriter`` / ``FilteredBufferWriter``
(``SpillWriter``), ``SpillFileReader`` (the drainer and its ``DrainCursor``) and
``DiskSnapshot`` (``FetchedChannelStateSnapshot``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.buffer.ledger import Changes
from flinkstate.runtime.buffer.records import Fragment
from flinkstate.runtime.checkpoint.checkpoint import InputChannelInfo
from flinkstate.runtime.copying import FIXED, NotState, StateKey
from flinkstate.runtime.options import DEFAULT_MAX_SEGMENT_SIZE, DEFAULT_SPILL_FILE_SIZE

#: ``AbstractSpillingHandler.SEGMENT_HEADER_BYTES``: gate index, channel index, body length
SEGMENT_HEADER_BYTES = 12


def body_length(fragments: Iterable[Fragment]) -> int:
    return sum(f.length for f in fragments)


def cut(fragments: tuple[Fragment, ...], start: int, length: int) -> tuple[Fragment, ...]:
    """Bytes ``[start, start + length)`` of a run of fragments, as fragments: a drained buffer
    or a checkpoint's slice can begin or end inside a record."""
    out: list[Fragment] = []
    end = start + length
    offset = 0
    for fragment in fragments:
        low, high = max(start, offset), min(end, offset + fragment.length)
        if low < high:
            skip = low - offset
            out.append(Fragment(fragment.record, fragment.start + skip, high - low, fragment.total))
        offset += fragment.length
        if offset >= end:
            break
    return tuple(out)


def drain_sizes(body: int, capacity: int) -> list[int]:
    """The buffers a drainer fills from one segment body: full ones, and the rest of the
    segment in a last one (a buffer never carries bytes of two segments)."""
    if capacity <= 0:
        raise InvalidParameterError(f"buffer capacity must be positive, got {capacity}")
    sizes = [capacity] * (body // capacity)
    if body % capacity:
        sizes.append(body % capacity)
    return sizes


@dataclass(frozen=True, slots=True)
class SpillSegment:
    """A sealed run of one channel's bytes: ``offset`` is where its header sits in its file."""

    file: int
    offset: int
    channel: InputChannelInfo
    fragments: tuple[Fragment, ...]

    @property
    def body_length(self) -> int:
        return body_length(self.fragments)

    @property
    def size(self) -> int:
        return SEGMENT_HEADER_BYTES + self.body_length

    @property
    def end(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True, slots=True)
class SpillFile:
    """``spill-segment-<index>.bin`` in the task's ``flink-channel-spill-<UUID>`` folder."""

    index: int
    segments: tuple[SpillSegment, ...]

    @property
    def name(self) -> str:
        return f"spill-segment-{self.index}.bin"

    @property
    def size(self) -> int:
        return sum(s.size for s in self.segments)


@dataclass(slots=True)
class SpillWriter:
    """The fetch's writing half: segments per channel run, files rotating between segments.

    The open segment is buffered on the heap until it is sealed (Flink's segment serializer),
    which is why segments are bounded: ``heap_bytes`` is that buffer, header included.
    """

    max_file_size: int = DEFAULT_SPILL_FILE_SIZE
    max_segment_size: int = DEFAULT_MAX_SEGMENT_SIZE
    files: list[SpillFile] = field(default_factory=list)
    #: the file being written (its segments so far), or None before the first non-empty seal
    #: and after a rotation
    _open_file: list[SpillSegment] | None = None
    _channel: InputChannelInfo | None = None
    _fragments: list[Fragment] = field(default_factory=list)
    heap_peak: int = 0
    #: segments sealed with no body (every record filtered out) and dropped
    dropped_segments: int = 0
    #: the handler's spill directory was deleted with every file in it (a failed fetch's
    #: cleanup since FLINK-40520)
    deleted: bool = False

    NOT_STATE: ClassVar[NotState] = {
        "max_file_size": FIXED,
        "max_segment_size": FIXED,
        "heap_peak": "a running maximum for reports: nothing the run does or checks reads it",
    }

    def state_key(self) -> StateKey:
        open_file = self._open_file
        return (
            tuple(self.files),
            None if open_file is None else tuple(open_file),
            self._channel,
            tuple(self._fragments),
            self.dropped_segments,
            self.deleted,
        )

    def __post_init__(self) -> None:
        for name in ("max_file_size", "max_segment_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidParameterError(f"spill {name} must be at least 1 byte, got {value!r}")

    @property
    def heap_bytes(self) -> int:
        if self._channel is None:
            return 0
        return SEGMENT_HEADER_BYTES + body_length(self._fragments)

    @property
    def file_count(self) -> int:
        """Files created on disk so far: a file opens when its first segment is sealed."""
        return len(self.files) + (1 if self._open_file else 0)

    def delete_directory(self) -> int:
        """Delete the handler's ``flink-channel-spill-<UUID>`` directory and every file in it,
        whether or not their state was built; the number of files deleted (0 the second time).
        """
        if self.deleted:
            return 0
        self.deleted = True
        return self.file_count

    @property
    def bytes_written(self) -> int:
        """Bytes in sealed segments (headers included), what the disk holds so far."""
        done = sum(f.size for f in self.files)
        return done + sum(s.size for s in self._open_file or ())

    def append(self, channel: InputChannelInfo, fragments: Iterable[Fragment]) -> None:
        """One source buffer's surviving bytes for ``channel`` (possibly none: the segment is
        still opened, which seals the previous one, as in Flink)."""
        if self._channel != channel or self.heap_bytes > self.max_segment_size:
            self.seal()
            self._channel = channel
        self._fragments.extend(fragments)
        self.heap_peak = max(self.heap_peak, self.heap_bytes)

    def seal(self) -> None:
        """Write the open segment out; an empty one is dropped and opens no file."""
        channel, fragments = self._channel, tuple(self._fragments)
        if channel is None:
            return
        self._channel, self._fragments = None, []
        if not fragments:
            self.dropped_segments += 1
            return
        if self._open_file is not None and sum(s.size for s in self._open_file) >= (
            self.max_file_size
        ):
            self._close_file()
        if self._open_file is None:
            self._open_file = []
        offset = sum(s.size for s in self._open_file)
        self._open_file.append(SpillSegment(len(self.files), offset, channel, fragments))

    def _close_file(self) -> None:
        if self._open_file:
            self.files.append(SpillFile(len(self.files), tuple(self._open_file)))
        self._open_file = None

    def close(self) -> FetchedChannelState | None:
        """Seal everything; the state of the written files (holding the fetch's reference until
        the drainer takes over), or None when nothing was spilled."""
        self.seal()
        self._close_file()
        if not self.files:
            return None
        state = FetchedChannelState(tuple(self.files))
        state.acquire()
        return state

    def copy(self) -> SpillWriter:
        twin = SpillWriter(
            self.max_file_size,
            self.max_segment_size,
            list(self.files),
            None if self._open_file is None else list(self._open_file),
            self._channel,
            list(self._fragments),
            self.heap_peak,
            self.dropped_segments,
            self.deleted,
        )
        return twin


@dataclass(slots=True)
class FetchedChannelState:
    """The spill files of one task's fetch and who still needs them."""

    files: tuple[SpillFile, ...]
    references: int = 0
    #: the files are gone (``cleanedUp``); ``deletions`` counts how often that happened
    deleted: bool = False
    deletions: int = 0

    NOT_STATE: ClassVar[NotState] = {}

    def state_key(self) -> StateKey:
        return (self.files, self.references, self.deleted, self.deletions)

    @property
    def segments(self) -> tuple[SpillSegment, ...]:
        return tuple(s for f in self.files for s in f.segments)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    def acquire(self) -> None:
        self.references += 1

    def release(self) -> bool:
        """Drop one reference; the last one deletes the files. True when this call deleted
        them. A release after the count reached zero deletes nothing (Flink's guard)."""
        self.references -= 1
        if self.references == 0 and not self.deleted:
            self.deleted = True
            self.deletions += 1
            return True
        return False

    def close(self) -> bool:
        """Delete the files whatever references are outstanding (task shutdown)."""
        if self.deleted:
            return False
        self.deleted = True
        self.deletions += 1
        return True

    def copy(self) -> FetchedChannelState:
        return FetchedChannelState(self.files, self.references, self.deleted, self.deletions)


@dataclass(slots=True)
class SpillAccount:
    """The run's spill files, counted for its figures: bytes written to them (headers
    included), files not deleted yet, and the most alive at once."""

    bytes_written: int = 0
    files_alive: int = 0
    files_peak: int = 0

    NOT_STATE: ClassVar[NotState] = {
        "files_peak": "a running maximum for reports: nothing the run does or checks reads it",
    }

    def state_key(self) -> StateKey:
        return (self.bytes_written, self.files_alive)

    def sealed(self, state: FetchedChannelState | None, bytes_written: int) -> None:
        """A fetch sealed its files (``state`` None: it wrote none)."""
        self.bytes_written += bytes_written
        if state is not None:
            self.files_alive += len(state.files)
            self.files_peak = max(self.files_peak, self.files_alive)

    def deleted(self, state: FetchedChannelState) -> None:
        """The last reference to a fetch's files went: they are deleted."""
        self.files_alive -= len(state.files)

    def copy(self) -> SpillAccount:
        return SpillAccount(self.bytes_written, self.files_alive, self.files_peak)


@dataclass(frozen=True, slots=True)
class FetchedChannelStateSnapshot:
    """Flink's four values of a cut in the spill files: the file and the byte offset; and,
    when the cut lies inside a segment's body, that segment's channel and the bytes left of
    it (``channel`` is None exactly when the offset sits on a header or the end)."""

    file_index: int
    read_offset: int
    channel: InputChannelInfo | None
    remaining: int

    def __post_init__(self) -> None:
        if (self.channel is None) != (self.remaining == 0):
            raise InvalidParameterError(
                f"channel and remaining must be set together: {self.channel} / {self.remaining}"
            )

    @property
    def empty(self) -> bool:
        return self.file_index < 0

    def remaining_slice(
        self, state: FetchedChannelState
    ) -> tuple[tuple[InputChannelInfo, tuple[Fragment, ...]], ...]:
        """What the channel-state writer adds to the checkpoint: the rest of the segment the
        cut lies in, then every later segment, each as one chunk for its channel."""
        if self.empty:
            return ()
        chunks: list[tuple[InputChannelInfo, tuple[Fragment, ...]]] = []
        for segment in state.segments:
            if segment.file < self.file_index:
                continue
            if segment.file == self.file_index and segment.end <= self.read_offset:
                continue
            body_start = segment.offset + SEGMENT_HEADER_BYTES
            if segment.file == self.file_index and body_start < self.read_offset:
                consumed = self.read_offset - body_start
                assert self.channel == segment.channel
                assert segment.body_length - consumed == self.remaining
                chunks.append((segment.channel, cut(segment.fragments, consumed, self.remaining)))
            else:
                chunks.append((segment.channel, segment.fragments))
        return tuple(chunks)


#: a snapshot with nothing in it: the drain had finished (``FetchedChannelState.emptySnapshot``)
EMPTY_SNAPSHOT = FetchedChannelStateSnapshot(-1, 0, None, 0)


@dataclass(slots=True)
class DrainCursor:
    """The drainer's committed position: the segment it is in and the body bytes delivered.

    In Flink the drainer reads ahead by at most one buffer outside its lock and commits under
    it; a step of the model requests, fills, delivers and commits at once, so the read and the
    committed position coincide between steps.
    """

    segment: int = 0
    consumed: int = 0

    NOT_STATE: ClassVar[NotState] = {}

    def state_key(self) -> StateKey:
        return (self.segment, self.consumed)

    def next_buffer(
        self, state: FetchedChannelState, capacity: int
    ) -> tuple[InputChannelInfo, tuple[Fragment, ...]] | None:
        """The next buffer's channel and bytes, without moving (None when all is drained)."""
        segments = state.segments
        if self.segment >= len(segments):
            return None
        segment = segments[self.segment]
        length = min(capacity, segment.body_length - self.consumed)
        return segment.channel, cut(segment.fragments, self.consumed, length)

    def commit(self, state: FetchedChannelState, length: int) -> None:
        segment = state.segments[self.segment]
        self.consumed += length
        if self.consumed >= segment.body_length:
            self.segment += 1
            self.consumed = 0

    def finished(self, state: FetchedChannelState) -> bool:
        return self.segment >= len(state.segments)

    def snapshot(self, state: FetchedChannelState) -> FetchedChannelStateSnapshot:
        """The committed position in Flink's terms (``FetchedChannelStateReader.snapshot``)."""
        segments = state.segments
        if self.segment >= len(segments):
            last = state.files[-1]
            return FetchedChannelStateSnapshot(last.index, last.size, None, 0)
        segment = segments[self.segment]
        if self.consumed == 0:
            return FetchedChannelStateSnapshot(segment.file, segment.offset, None, 0)
        return FetchedChannelStateSnapshot(
            segment.file,
            segment.offset + SEGMENT_HEADER_BYTES + self.consumed,
            segment.channel,
            segment.body_length - self.consumed,
        )

    def copy(self) -> DrainCursor:
        return DrainCursor(self.segment, self.consumed)


@dataclass(slots=True)
class FetchedChannelStateDrainer:
    """One task's drainer: the fetched state, its committed position, how far it got."""

    name: str
    task: str
    state: FetchedChannelState | None = None
    cursor: DrainCursor | None = None
    #: the fetch's reference has been handed over (``drain()`` releases it first)
    draining: bool = False
    finished: bool = False

    NOT_STATE: ClassVar[NotState] = {"name": FIXED, "task": FIXED}

    def state_key(self) -> StateKey:
        state, cursor = self.state, self.cursor
        return (
            None if state is None else state.state_key(),
            None if cursor is None else cursor.state_key(),
            self.draining,
            self.finished,
        )

    @property
    def installed(self) -> bool:
        return self.cursor is not None

    # -- its changes, each noted in the stepping world's ``changes`` (a copy's in the copy's)

    def install(self, changes: Changes) -> None:
        """It becomes the task's trigger with the fetched state (its root reader's reference)
        and a cursor at its start: its thread may drain."""
        assert self.state is not None
        self.state.acquire()
        self.cursor = DrainCursor()
        changes.drainer(self.name)

    def stepping(self, changes: Changes) -> None:
        """Its thread takes one of its actions, which moves it on: its next are computed
        again."""
        changes.drainer(self.name)

    def copy(self) -> FetchedChannelStateDrainer:
        return FetchedChannelStateDrainer(
            self.name,
            self.task,
            None if self.state is None else self.state.copy(),
            None if self.cursor is None else self.cursor.copy(),
            self.draining,
            self.finished,
        )


def drainer_name(task_key: str) -> str:
    """The drainer actor's name for a task, by its key in ``tasks`` (``X[i]``)."""
    return f"drainer {task_key}"
