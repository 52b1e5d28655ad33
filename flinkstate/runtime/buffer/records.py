"""Records and their fragments in network buffers.

Flink's network carries *stream elements*: records, and the watermarks and watermark statuses
that travel in the same buffers between them (``StreamElementSerializer``: a tag byte, then a
record's timestamp and value, a watermark's 8-byte timestamp, or a status's 4-byte int). Every
element is serialized as a 4-byte length followed by its payload. The serializer copies those
bytes into fixed-size buffers, so a record larger than what is left in a buffer continues in
the next one: it *spans* buffers. Buffers carry fragments (which record, which byte range); a
per-channel deserializer reassembles complete records.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from flinkstate.memory_segment import LENGTH_PREFIX_BYTES

#: ``Watermark.UNINITIALIZED`` and ``Long.MIN_VALUE``: no watermark yet
MIN_WATERMARK = -(2**63)
#: ``Watermark.MAX_WATERMARK``: a source at the end of its input
MAX_WATERMARK = 2**63 - 1
#: payload bytes after the length: tag + long timestamp; tag + int status
WATERMARK_SIZE = 9
WATERMARK_STATUS_SIZE = 5


#: the path a record took to a task, for the order checks: where it came from (0: its source;
#: -1 - its id: recovered, its route before the checkpoint unknown; else the path it took to the
#: task before) and the channel it came through. A path is its route, not a number drawn when
#: first taken, so records reaching two tasks in either order leave the same paths behind.
Path: TypeAlias = int | tuple["Path", str]


class StreamElementKind(StrEnum):
    """What a stream element is (``StreamElement``'s subclasses the model has).

    Examples
    --------
    >>> [str(kind) for kind in StreamElementKind]
    ['record', 'watermark', 'watermark-status']
    """

    RECORD = "record"
    WATERMARK = "watermark"
    WATERMARK_STATUS = "watermark-status"


@dataclass(frozen=True, slots=True)
class Record:
    """A stream element, by default a record emitted by a source subtask: ``seq`` orders the
    records of one source subtask, and a record's event time is its ``timestamp``.

    A watermark (``kind`` WATERMARK) says no record with a timestamp at or below
    ``timestamp`` follows from where it came; a watermark status says whether that input is
    ``idle``. Their ``source`` is the subtask that emitted them and ``key``/``seq`` mean
    nothing (0 and -1): they are broadcast, never routed by key, filtered or counted as records.

    Examples
    --------
    A record of 100 bytes takes 104 in a buffer (its 4-byte length first); a watermark's
    payload is a tag byte and an 8-byte timestamp:

    >>> record = Record(id=7, key=42, size=100, source="source[0]", seq=3)
    >>> record.is_record, record.serialized_length
    (True, 104)
    >>> mark = Record(8, 0, WATERMARK_SIZE, "source[0]", -1, StreamElementKind.WATERMARK, 1000)
    >>> mark.is_record, mark.serialized_length
    (False, 13)
    """

    id: int
    key: int
    size: int
    source: str
    seq: int
    kind: StreamElementKind = StreamElementKind.RECORD
    timestamp: int = 0
    idle: bool = False

    @property
    def is_record(self) -> bool:
        return self.kind is StreamElementKind.RECORD

    @property
    def serialized_length(self) -> int:
        return LENGTH_PREFIX_BYTES + self.size


@dataclass(frozen=True, slots=True)
class Fragment:
    """Bytes ``[start, start + length)`` of a serialized record of ``total`` bytes.

    Examples
    --------
    A record of 40000 bytes spans two of Flink's 32 KiB buffers: the first holds its first
    32768 serialized bytes, the second the rest:

    >>> from flinkstate.memory_segment import DEFAULT_SEGMENT_SIZE
    >>> total = Record(1, 42, 40_000, "source[0]", 0).serialized_length
    >>> head = Fragment(1, 0, DEFAULT_SEGMENT_SIZE, total)
    >>> tail = Fragment(1, DEFAULT_SEGMENT_SIZE, total - DEFAULT_SEGMENT_SIZE, total)
    >>> (head.is_first, head.is_last), (tail.is_last, tail.length), tail.is_whole
    ((True, False), (True, 7236), False)
    """

    record: int
    start: int
    length: int
    total: int

    @property
    def is_first(self) -> bool:
        return self.start == 0

    @property
    def is_last(self) -> bool:
        return self.start + self.length == self.total

    @property
    def is_whole(self) -> bool:
        return self.is_first and self.is_last
