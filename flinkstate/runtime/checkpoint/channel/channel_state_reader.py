"""A task's channel-state reader: the input channel state it still has to read back.

Flink reads a restored task's input channel state on a separate thread
(``SequentialChannelStateReaderImpl``, "channel-state-unspilling"). What the reader does with
each chunk depends on the recovery generation (into recovered channels, through the record
filter, or into spill files); this is only what it holds while it does it.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.runtime.buffer.buffer import Buffer
from flinkstate.runtime.buffer.ledger import Changes
from flinkstate.runtime.buffer.records import Fragment
from flinkstate.runtime.checkpoint.channel.fetched_channel_state import SpillWriter
from flinkstate.runtime.checkpoint.state_assignment import RecoveredChunk
from flinkstate.runtime.copying import FIXED, NotState, StateKey


@dataclass(slots=True)
class ChannelStateReader:
    """A task's channel-state reader thread ("channel-state-unspilling") and what it still
    has to read; in filter-on-read mode also the buffers it holds while filtering.

    Examples
    --------
    A restored ``map[0]``'s reader with one chunk to read back into gate 0's channel 2:

    >>> chunk = RecoveredChunk(0, 1, 0, (2,), (Fragment(7, 0, 104, 104),))
    >>> reader = ChannelStateReader("channel-state-reader map[0]", "map[0]", deque([chunk]))
    >>> len(reader.chunks), reader.finished, reader.pre is None
    (1, False, True)
    """

    name: str
    task: str
    chunks: deque[RecoveredChunk] = field(default_factory=deque)
    finished: bool = False
    #: filter-on-read: the pre-filter buffer (segment or HEAP), where it returns to, its channel
    pre: int | None = None
    pre_origin: str = ""
    pre_channel: str = ""
    #: records still to re-serialize (record, bytes written) and the post-filter buffers so far
    pending: deque[tuple[int, int]] = field(default_factory=deque)
    posts: list[Buffer] = field(default_factory=list)
    #: per virtual channel (gate, channel, old subtask, old channel): the record being
    #: reassembled and the bytes of it received
    partials: dict[tuple[int, int, int, int], tuple[int, int]] = field(default_factory=dict)
    heap_segment_allocated: bool = False
    heap_segment_in_use: bool = False
    #: V2: the spill files being written
    spill: SpillWriter | None = None

    NOT_STATE: ClassVar[NotState] = {"name": FIXED, "task": FIXED}

    def state_key(self) -> StateKey:
        spill = self.spill
        return (
            tuple(self.chunks),
            self.finished,
            self.pre,
            self.pre_origin,
            self.pre_channel,
            tuple(self.pending),
            tuple([b.state_key() for b in self.posts]),
            # looked up by virtual channel (walked only to report what is incomplete)
            frozenset(self.partials.items()),
            self.heap_segment_allocated,
            self.heap_segment_in_use,
            None if spill is None else spill.state_key(),
        )

    # -- its changes, each noted in the stepping world's ``changes`` (a copy's in the copy's)

    def output_recovered(self, changes: Changes) -> None:
        """Its task has put its output state back (``readOutputData`` returned): it may read
        the input state."""
        changes.reader(self.name)

    def stepping(self, changes: Changes) -> None:
        """Its thread takes one of its actions, which moves it on: its next are computed
        again."""
        changes.reader(self.name)

    def copy(self) -> ChannelStateReader:
        return ChannelStateReader(
            self.name,
            self.task,
            deque(self.chunks),
            self.finished,
            self.pre,
            self.pre_origin,
            self.pre_channel,
            deque(self.pending),
            [b.copy() for b in self.posts],
            dict(self.partials),
            self.heap_segment_allocated,
            self.heap_segment_in_use,
            None if self.spill is None else self.spill.copy(),
        )


def split_chunk(chunk: RecoveredChunk, capacity: int) -> list[RecoveredChunk]:
    """A persisted chunk as network buffers of ``capacity`` bytes: the reader fills one buffer
    at a time, so a chunk larger than a buffer (a long partial record) spans several.

    Examples
    --------
    A persisted record of 40004 bytes read back into Flink's 32 KiB buffers takes two:

    >>> chunk = RecoveredChunk(0, 1, 0, (2,), (Fragment(7, 0, 40_004, 40_004),))
    >>> [piece.size for piece in split_chunk(chunk, capacity=32_768)]
    [32768, 7236]
    """
    pieces: list[RecoveredChunk] = []
    current: list[Fragment] = []
    room = capacity
    for fragment in chunk.fragments:
        start, left = fragment.start, fragment.length
        while left:
            if room == 0:
                pieces.append(dataclasses.replace(chunk, fragments=tuple(current)))
                current, room = [], capacity
            take = min(room, left)
            current.append(Fragment(fragment.record, start, take, fragment.total))
            start, left, room = start + take, left - take, room - take
    if current:
        pieces.append(dataclasses.replace(chunk, fragments=tuple(current)))
    return pieces
