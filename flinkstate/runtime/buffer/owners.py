"""Who holds a memory segment: the kinds of owner, in one list, and the owner values.

Every segment of a TaskManager is owned by exactly one :class:`Owner` at a time: a kind and
the container it belongs to (a channel, a subpartition, a task, a pool, a TaskManager, a
writer). It becomes text (``exclusive counter[0]<-source[1]``, ``pool source[0]>0``) only in
traces, captions and reports; nothing reads that text back. The kinds are listed here once,
with where in the job each one is and whether it exists only while a restored job recovers its
in-flight data; metrics, the command line and the views all take their lists from this one, so
they cannot drift apart.

A container's owners are made once, when the network is built (:class:`ChannelOwners`,
:class:`SubpartitionOwners`), so that a step that moves a segment makes no new value.
"""

from __future__ import annotations

from enum import Enum, StrEnum
from typing import NamedTuple


class OwnerPlace(Enum):
    """Where a kind of owner sits: which node of the job holds its segments.

    Examples
    --------
    An input channel holds its exclusive, floating and received buffers (and, in a restored
    job, its recovered ones):

    >>> sorted(kind.value for kind in kinds_at(OwnerPlace.CHANNEL))
    ['exclusive', 'floating', 'received', 'recovered', 'recovered-exclusive']
    """

    POOLS = "pools"  # the TaskManager's pool and the local pools of partitions and gates
    PRODUCER = "producer"  # a subpartition being filled or queued
    CHANNEL = "channel"  # an input channel's buffers
    READER = "reader"  # a channel-state reader filtering or spilling recovered state
    TASK = "task"  # the task's record deserializer
    WRITER = "writer"  # the channel-state writer persisting a checkpoint


class OwnerKind(StrEnum):
    """The first word of an owner's name (Flink's class in the comment).

    Examples
    --------
    A ``RemoteInputChannel``'s exclusive buffers sit in the channel in every job; a
    ``RecoveredInputChannel``'s exist only while a restored job recovers:

    >>> OwnerKind.EXCLUSIVE.place.value, OwnerKind.EXCLUSIVE.recovery
    ('channel', False)
    >>> OwnerKind.RECOVERED_EXCLUSIVE.recovery
    True
    """

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


def kinds_at(place: OwnerPlace) -> frozenset[OwnerKind]:
    """The owner kinds at one place.

    Examples
    --------
    A subpartition holds the ``BufferBuilder`` being filled and its queue of finished buffers:

    >>> sorted(kind.value for kind in kinds_at(OwnerPlace.PRODUCER))
    ['builder', 'queue']
    """
    return frozenset(k for k in OwnerKind if k.place is place)


class Owner(NamedTuple):
    """A holder of segments: its kind and the name of the container it belongs to.

    (A named tuple: compared at every move, and ordered as its text is.)

    Examples
    --------
    >>> owner = Owner(OwnerKind.FLOATING, "keyed[0]<source[1]")
    >>> str(owner), owner.place.value
    ('floating keyed[0]<source[1]', 'channel')
    """

    kind: OwnerKind
    #: the container: a channel, subpartition, task, result partition or gate (a local pool),
    #: TaskManager (its network pool) or channel-state writer
    holder: str

    def __str__(self) -> str:
        return f"{self.kind.value} {self.holder}"

    @property
    def place(self) -> OwnerPlace:
        return self.kind.place


class ChannelOwners(NamedTuple):
    """The owners of one input channel's segments, by what holds them.

    Examples
    --------
    >>> owners = ChannelOwners.of("keyed[0]<source[1]")
    >>> str(owners.exclusive), str(owners.recovered)
    ('exclusive keyed[0]<source[1]', 'recovered keyed[0]<source[1]')
    """

    exclusive: Owner
    floating: Owner
    received: Owner
    recovered: Owner
    recovered_exclusive: Owner
    #: the channel-state reader's, while it filters or spills this channel's recovered state
    pre_filter: Owner
    post_filter: Owner
    spilling: Owner

    @classmethod
    def of(cls, channel: str) -> ChannelOwners:
        return cls(
            Owner(OwnerKind.EXCLUSIVE, channel),
            Owner(OwnerKind.FLOATING, channel),
            Owner(OwnerKind.RECEIVED, channel),
            Owner(OwnerKind.RECOVERED, channel),
            Owner(OwnerKind.RECOVERED_EXCLUSIVE, channel),
            Owner(OwnerKind.PRE_FILTER, channel),
            Owner(OwnerKind.POST_FILTER, channel),
            Owner(OwnerKind.SPILLING, channel),
        )


class SubpartitionOwners(NamedTuple):
    """The owners of one subpartition's segments: the buffer being filled, and the queue.

    Examples
    --------
    >>> [str(owner) for owner in SubpartitionOwners.of("source[1]>keyed[0]")]
    ['builder source[1]>keyed[0]', 'queue source[1]>keyed[0]']
    """

    builder: Owner
    queue: Owner

    @classmethod
    def of(cls, subpartition: str) -> SubpartitionOwners:
        return cls(Owner(OwnerKind.BUILDER, subpartition), Owner(OwnerKind.QUEUE, subpartition))
