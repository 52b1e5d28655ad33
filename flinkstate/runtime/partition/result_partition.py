"""Result partitions and their subpartitions: where a producer's buffers queue for a consumer.

Flink's ``ResultPartition`` (one per output of a subtask) has a ``LocalBufferPool`` and one
``ResultSubpartition`` per consuming subtask; the producer writes records into the
subpartition's open buffer (its builder), finished buffers queue until the consumer (locally)
or the transport (remotely) takes them.

Every change to a subpartition's state a step makes goes through a method of it named as
Flink's ``PipelinedSubpartition`` names the operation (``add``, ``poll_buffer``,
``resume_consumption``, ...), which notes the change itself in the ``Changes`` it is given (the
caller's world's: a copied world's subpartitions note into the copy's).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.runtime.buffer.buffer import Buffer, LocalBufferPool
from flinkstate.runtime.buffer.ledger import Changes
from flinkstate.runtime.buffer.owners import SubpartitionOwners
from flinkstate.runtime.copying import FIXED, NotState, StateKey
from flinkstate.runtime.events import BARRIER
from flinkstate.runtime.jobgraph import Exchange


@dataclass(slots=True)
class Subpartition:
    name: str
    partition: str
    producer: str
    consumer: str
    channel: str
    index: int
    #: who holds its segments, made once (``SubpartitionOwners.of(name)``)
    owners: SubpartitionOwners
    queue: deque[Buffer] = field(default_factory=deque)
    builder: Buffer | None = None
    #: after handing out a recovery-completion event: no data until the consumer resumes
    blocked: bool = False

    NOT_STATE: ClassVar[NotState] = {
        "name": FIXED,
        "partition": FIXED,
        "producer": FIXED,
        "consumer": FIXED,
        "channel": FIXED,
        "index": FIXED,
        "owners": FIXED,
    }

    def state_key(self) -> StateKey:
        builder = self.builder
        return (
            tuple([b.state_key() for b in self.queue]),
            None if builder is None else builder.state_key(),
            self.blocked,
        )

    @property
    def backlog(self) -> int:
        return sum(1 for b in self.queue if not b.is_event)

    def copy(self) -> Subpartition:
        builder = self.builder
        return Subpartition(
            self.name,
            self.partition,
            self.producer,
            self.consumer,
            self.channel,
            self.index,
            self.owners,
            deque(self.queue),
            None if builder is None else builder.copy(),
            self.blocked,
        )

    def add(self, buffer: Buffer, changes: Changes) -> None:
        """A finished buffer or an event queues for the consumer (``PipelinedSubpartition.add``).

        Examples
        --------
        >>> from flinkstate.runtime.buffer.owners import SubpartitionOwners
        >>> sub = Subpartition("s", "p", "a[0]", "b[0]", "c", 0, SubpartitionOwners.of("s"))
        >>> changes = Changes(subpartitions={"s": (3, 5)}, channel_of={"s": "c"})
        >>> sub.add(Buffer(7, 32, 10, []), changes)
        >>> sub.backlog, changes.stale, changes.touched
        (1, {3, 5}, {'c'})
        >>> sub.poll_buffer(changes).segment, sub.backlog
        (7, 0)
        """
        changes.subpartition(self.name)
        self.queue.append(buffer)

    def add_priority(self, event: Buffer, changes: Changes) -> None:
        """A priority event (an unaligned barrier) overtakes the queued buffers
        (``PipelinedSubpartition.addPriorityElement``)."""
        changes.subpartition(self.name)
        self.queue.appendleft(event)

    def time_out_barrier(self, checkpoint: int, changes: Changes) -> list[Buffer] | None:
        """Take out the aligned barrier of ``checkpoint`` that still queues here, returning
        the data buffers before it (the output state the unaligned barrier now overtakes), or
        None if it has left (``PipelinedSubpartition.alignedBarrierTimeout``, which then adds
        the barrier ``asUnaligned`` as a priority event: :meth:`add_priority`). Priority
        events at the head are passed over, as Flink's search starts after them.

        Examples
        --------
        >>> from flinkstate.runtime.buffer.owners import SubpartitionOwners
        >>> from flinkstate.runtime.events import BARRIER
        >>> sub = Subpartition("s", "p", "a[0]", "b[0]", "c", 0, SubpartitionOwners.of("s"))
        >>> changes = Changes(subpartitions={"s": (3,)}, channel_of={"s": "c"})
        >>> sub.add(Buffer(7, 32, 10, []), changes)
        >>> sub.add(Buffer(-1, 0, event=BARRIER, checkpoint=1), changes)
        >>> sub.add(Buffer(8, 32, 10, []), changes)
        >>> [b.segment for b in sub.time_out_barrier(1, changes)], len(sub.queue)
        ([7], 2)
        >>> sub.time_out_barrier(1, changes) is None
        True
        """
        before: list[Buffer] = []
        for position, buffer in enumerate(self.queue):
            if buffer.priority:
                continue
            if buffer.is_event:
                if buffer.checkpoint == checkpoint and buffer.event == BARRIER:
                    changes.subpartition(self.name)
                    del self.queue[position]
                    return before
            else:
                before.append(buffer)
        return None

    def poll_buffer(self, changes: Changes) -> Buffer:
        """The head of the queue, taken by the consumer or the transport
        (``PipelinedSubpartition.pollBuffer``)."""
        changes.subpartition(self.name)
        return self.queue.popleft()

    def start_builder(self, builder: Buffer, changes: Changes) -> None:
        """The producer writes into ``builder`` from now on (a ``BufferBuilder`` of a segment
        it requested)."""
        changes.subpartition(self.name)
        self.builder = builder

    def finish_builder(self, changes: Changes) -> Buffer:
        """The open buffer is finished and queues (``BufferBuilder.finish``, then ``add``):
        returned for the caller to move its segment to the queue."""
        builder = self.builder
        assert builder is not None
        self.add(builder, changes)
        self.builder = None
        return builder

    def discard_builder(self, changes: Changes) -> int:
        """The open buffer, empty, is dropped: its segment, for the caller to recycle."""
        builder = self.builder
        assert builder is not None
        changes.subpartition(self.name)
        self.builder = None
        return builder.segment

    def resume_consumption(self, changes: Changes) -> None:
        """Data flows again after a recovery-completion event blocked it
        (``PipelinedSubpartition.resumeConsumption``)."""
        changes.subpartition(self.name)
        self.blocked = False


@dataclass(slots=True)
class ResultPartition:
    name: str
    exchange: Exchange
    task: str
    subpartitions: list[Subpartition]
    pool: LocalBufferPool
    next_channel: int = -1

    NOT_STATE: ClassVar[NotState] = {
        "name": FIXED,
        "exchange": FIXED,
        "task": FIXED,
        "subpartitions": "links: each subpartition is keyed in the world's subpartitions",
        "pool": "a link: the pool is keyed in the world's buffer pools",
    }

    def state_key(self) -> StateKey:
        return (self.next_channel,)
