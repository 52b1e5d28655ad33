"""The kinds of owner a memory segment can have, in one list.

Every segment of a TaskManager is owned by exactly one owner at a time, and an owner's name
starts with its kind (``exclusive counter[0]<-source[1]``, ``pool source[0]>0``). The kinds
are listed here once, with where in the job each one is and whether it exists only while a
restored job recovers its in-flight data; metrics, the command line and the views all take
their lists from this one, so they cannot drift apart.
"""

from __future__ import annotations

from enum import Enum, StrEnum


class OwnerPlace(Enum):
    """Where a kind of owner sits: which node of the job holds its segments."""

    POOLS = "pools"  # the TaskManager's pool and the local pools of partitions and gates
    PRODUCER = "producer"  # a subpartition being filled or queued
    CHANNEL = "channel"  # an input channel's buffers
    READER = "reader"  # a channel-state reader filtering or spilling recovered state
    TASK = "task"  # the task's record deserializer
    WRITER = "writer"  # the channel-state writer persisting a checkpoint


class OwnerKind(StrEnum):
    """The first word of an owner's name (Flink's class in the comment)."""

    NETWORK_POOL = "network-pool"  # NetworkBufferPool
    POOL = "pool"  # LocalBufferPool
    BUILDER = "builder"  # BufferBuilder
    QUEUE = "queue"  # PipelinedSubpartition's buffers
    EXCLUSIVE = "exclusive"  # RemoteInputChannel's exclusive buffers
    FLOATING = "floating"  # BufferManager's floating buffers
    RECEIVED = "received"  # RemoteInputChannel's receivedBuffers
    DESERIALIZER = "deserializer"  # SpillingAdaptiveSpanningRecordDeserializer
    CHANNEL_STATE_WRITER = "channel-state-writer"  # ChannelStateWriteRequestExecutor
    RECOVERED = "recovered"  # RecoveredInputChannel's receivedBuffers
    RECOVERED_EXCLUSIVE = "recovered-exclusive"  # RecoveredInputChannel's exclusive buffers
    PRE_FILTER = "pre-filter"  # the filtering handler's buffer before filtering
    POST_FILTER = "post-filter"  # the filtering handler's buffers after filtering
    SPILLING = "spilling"  # the spilling handler's buffer being written to a spill file

    @property
    def place(self) -> OwnerPlace:
        return _PLACES[self]

    @property
    def recovery(self) -> bool:
        """Exists only while a restored job recovers its in-flight data."""
        return self in _RECOVERY


_PLACES = {
    OwnerKind.NETWORK_POOL: OwnerPlace.POOLS,
    OwnerKind.POOL: OwnerPlace.POOLS,
    OwnerKind.BUILDER: OwnerPlace.PRODUCER,
    OwnerKind.QUEUE: OwnerPlace.PRODUCER,
    OwnerKind.EXCLUSIVE: OwnerPlace.CHANNEL,
    OwnerKind.FLOATING: OwnerPlace.CHANNEL,
    OwnerKind.RECEIVED: OwnerPlace.CHANNEL,
    OwnerKind.DESERIALIZER: OwnerPlace.TASK,
    OwnerKind.CHANNEL_STATE_WRITER: OwnerPlace.WRITER,
    OwnerKind.RECOVERED: OwnerPlace.CHANNEL,
    OwnerKind.RECOVERED_EXCLUSIVE: OwnerPlace.CHANNEL,
    OwnerKind.PRE_FILTER: OwnerPlace.READER,
    OwnerKind.POST_FILTER: OwnerPlace.READER,
    OwnerKind.SPILLING: OwnerPlace.READER,
}
_RECOVERY = frozenset(
    {
        OwnerKind.RECOVERED,
        OwnerKind.RECOVERED_EXCLUSIVE,
        OwnerKind.PRE_FILTER,
        OwnerKind.POST_FILTER,
        OwnerKind.SPILLING,
    }
)


def kinds_at(place: OwnerPlace) -> frozenset[str]:
    """The owner kinds (as they start owner names) at one place."""
    return frozenset(k.value for k in OwnerKind if k.place is place)
