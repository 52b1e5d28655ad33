"""Records and their fragments in network buffers.

A record is serialized as a 4-byte length followed by its payload. The serializer copies those
bytes into fixed-size buffers, so a record larger than what is left in a buffer continues in
the next one: it *spans* buffers. Buffers carry fragments (which record, which byte range); a
per-channel deserializer reassembles complete records.
"""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.network.config import LENGTH_PREFIX_BYTES


@dataclass(frozen=True, slots=True)
class Record:
    """A record emitted by a source subtask: ``seq`` orders the records of one source subtask."""

    id: int
    key: int
    size: int
    source: str
    seq: int

    @property
    def serialized_length(self) -> int:
        return LENGTH_PREFIX_BYTES + self.size


@dataclass(frozen=True, slots=True)
class Fragment:
    """Bytes ``[start, start + length)`` of a serialized record of ``total`` bytes."""

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
