"""How a result partition's data may be consumed: Flink's ``ResultPartitionType``.

The model's streaming exchanges are all ``PIPELINED_BOUNDED``; the other types matter for the
buffer arithmetic a user may ask about (a batch job's blocking exchanges take their floating
buffers differently, a blocking partition's pool has no upper bound unless it sorts).
"""

from __future__ import annotations

from flinkstate.choice import Choice


class ResultPartitionType(Choice):
    """Flink's seven partition types, by the name a user types (``pipelined-bounded``).

    Examples
    --------
    A streaming job's exchanges are ``PIPELINED_BOUNDED``: pipelined, with a bounded pool; a
    batch job's blocking partition is read only once it is finished:

    >>> streaming = ResultPartitionType("pipelined-bounded")
    >>> streaming.flink, streaming.is_pipelined, streaming.is_bounded
    ('PIPELINED_BOUNDED', True, True)
    >>> ResultPartitionType.BLOCKING.can_be_pipelined_consumed
    False
    >>> ResultPartitionType.PIPELINED_APPROXIMATE.is_pipelined
    False
    """

    BLOCKING = "blocking"
    BLOCKING_PERSISTENT = "blocking-persistent"
    PIPELINED = "pipelined"
    PIPELINED_BOUNDED = "pipelined-bounded"
    PIPELINED_APPROXIMATE = "pipelined-approximate"
    HYBRID_FULL = "hybrid-full"
    HYBRID_SELECTIVE = "hybrid-selective"

    @property
    def flink(self) -> str:
        """Flink's constant: ``PIPELINED_BOUNDED``."""
        return self.name

    @property
    def is_bounded(self) -> bool:
        """Its pool has an upper bound (only the bounded pipelined types)."""
        return self in (
            ResultPartitionType.PIPELINED_BOUNDED,
            ResultPartitionType.PIPELINED_APPROXIMATE,
        )

    @property
    def is_blocking(self) -> bool:
        """``isBlockingOrBlockingPersistentResultPartition``."""
        return self in (ResultPartitionType.BLOCKING, ResultPartitionType.BLOCKING_PERSISTENT)

    @property
    def is_hybrid(self) -> bool:
        return self in (ResultPartitionType.HYBRID_FULL, ResultPartitionType.HYBRID_SELECTIVE)

    @property
    def is_pipelined(self) -> bool:
        """``isPipelinedOrPipelinedBoundedResultPartition``: ``PIPELINED_APPROXIMATE`` is not."""
        return self in (ResultPartitionType.PIPELINED, ResultPartitionType.PIPELINED_BOUNDED)

    @property
    def can_be_pipelined_consumed(self) -> bool:
        """Its consumer may read while it is produced (every type but the blocking ones)."""
        return not self.is_blocking
