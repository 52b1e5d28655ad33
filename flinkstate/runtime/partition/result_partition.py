"""Result partitions and their subpartitions: where a producer's buffers queue for a consumer.

Flink's ``ResultPartition`` (one per output of a subtask) has a ``LocalBufferPool`` and one
``ResultSubpartition`` per consuming subtask; the producer writes records into the
subpartition's open buffer (its builder), finished buffers queue until the consumer (locally)
or the transport (remotely) takes them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.runtime.buffer.buffer import Buffer, LocalBufferPool
from flinkstate.runtime.buffer.owners import SubpartitionOwners
from flinkstate.runtime.copying import FIXED, NotState, StateKey
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
