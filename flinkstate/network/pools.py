"""Where network buffers come from: each TaskManager's ``NetworkBufferPool`` and the
``LocalBufferPool`` of every result partition and input gate.

A local pool hands out its free segments first, then requests more from the global pool up to
its current size; a recycled segment goes back to the global pool while the local pool holds
more than its size. A result partition's pool also counts each subpartition's buffers: one at
its maximum makes the pool unavailable to every subpartition (how one slow consumer
back-pressures its producer). Every move goes through the ledger; the pools that changed are
noted for the action cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flinkstate.errors import InvalidParameterError
from flinkstate.network.buffer import LocalBufferPool, NetworkBufferPool, network_pool_owner
from flinkstate.network.ledger import SegmentLedger
from flinkstate.network.owners import Owner


@dataclass(slots=True)
class BufferPools:
    """The global pools by name (``network-pool tmN``) and the local pools by name."""

    ledger: SegmentLedger
    network: dict[str, NetworkBufferPool] = field(default_factory=dict)
    local: dict[str, LocalBufferPool] = field(default_factory=dict)

    # -- building

    def add_network_pool(self, task_manager: int, segments: int) -> NetworkBufferPool:
        """A TaskManager's global pool with ``segments`` new segments."""
        owner = network_pool_owner(task_manager)
        name = str(owner)
        pool = NetworkBufferPool(name, owner, segments, self.ledger.new_segments(segments, owner))
        self.network[name] = pool
        return pool

    def add_local_pool(self, pool: LocalBufferPool) -> None:
        self.local[pool.name] = pool

    def reserve(self, global_name: str, count: int, segment_size: int) -> None:
        """Reserve ``count`` segments of a global pool for a pool's minimum or a channel's
        exclusive buffers; Flink refuses to start a task the TaskManager cannot serve."""
        pool = self.network[global_name]
        if pool.required + count > pool.total:
            raise InvalidParameterError(
                f"Insufficient number of network buffers: required {count}, but only "
                f"{pool.total - pool.required} available. The total number of network buffers "
                f"is currently set to {pool.total} of {segment_size} bytes each "
                f"({global_name}); give the TaskManager more network buffers"
            )
        pool.required += count

    def assign(self, global_name: str, count: int, owner: Owner) -> list[int]:
        """While building: ``count`` free segments of a global pool belong to ``owner``."""
        nbp = self.network[global_name]
        taken = [nbp.free.pop() for _ in range(count)]
        for segment in taken:
            self.ledger.place(segment, owner)
        return taken

    def unassign(self, global_name: str, segments: list[int]) -> None:
        """While building: the segments belong to the global pool again."""
        nbp = self.network[global_name]
        for segment in segments:
            self.ledger.place(segment, nbp.owner)
            nbp.free.append(segment)

    def redistribute(self, nbp: NetworkBufferPool) -> None:
        """Share the unreserved segments among resizable pools as Flink's
        ``NetworkBufferPool.redistributeBuffers`` does (pools in creation order)."""
        pools = [
            p for p in self.local.values() if p.global_pool == nbp.name and p.maximum > p.minimum
        ]
        available = nbp.total - nbp.required
        capacity = sum(min(available, p.maximum - p.minimum) for p in pools)
        if available <= 0 or capacity == 0:
            return
        to_distribute = min(available, capacity)
        used = distributed = 0
        for pool in pools:
            used += min(available, pool.maximum - pool.minimum)
            share = to_distribute * used // capacity - distributed
            distributed += share
            pool.size = pool.minimum + share

    # -- the global pools

    def free_in(self, global_name: str) -> int:
        """Segments free in a global pool."""
        return len(self.network[global_name].free)

    def take(self, global_name: str, count: int, owner: Owner) -> list[int]:
        """``count`` segments straight from a global pool (exclusive buffers); the caller
        made sure they are there."""
        nbp = self.network[global_name]
        taken = [nbp.free.pop() for _ in range(count)]
        for segment in taken:
            self.ledger.move(segment, nbp.owner, owner)
        self.ledger.journal.changes.network_pool(nbp.name)
        return taken

    def give_back(self, global_name: str, segment: int, holder: Owner) -> None:
        """A segment taken with :meth:`take` returns to its global pool."""
        nbp = self.network[global_name]
        self.ledger.move(segment, holder, nbp.owner)
        nbp.free.append(segment)
        self.ledger.journal.changes.network_pool(nbp.name)

    # -- the local pools

    def can_request(self, pool: LocalBufferPool, for_subpartition: bool) -> bool:
        if for_subpartition and pool.saturated_subpartitions:
            return False
        return bool(pool.free) or (
            pool.requested < pool.size and bool(self.network[pool.global_pool].free)
        )

    def request(self, pool: LocalBufferPool, owner: Owner, subpartition: int = -1) -> int | None:
        """A segment of the pool for ``owner`` (counted against ``subpartition`` if given),
        or None when the pool has none to give."""
        if subpartition >= 0 and pool.saturated_subpartitions:
            return None
        changes = self.ledger.journal.changes
        if pool.free:
            segment = pool.free.pop()
        elif pool.requested < pool.size and self.network[pool.global_pool].free:
            nbp = self.network[pool.global_pool]
            segment = nbp.free.pop()
            self.ledger.move(segment, nbp.owner, pool.owner)
            pool.requested += 1
            changes.network_pool(nbp.name)
        else:
            return None
        changes.pool(pool.name)
        self.ledger.move(segment, pool.owner, owner)
        if subpartition >= 0:
            pool.per_subpartition[subpartition] += 1
            if pool.per_subpartition[subpartition] == pool.max_per_subpartition:
                pool.saturated_subpartitions += 1
        return segment

    def recycle(
        self, pool: LocalBufferPool, segment: int, holder: Owner, subpartition: int = -1
    ) -> None:
        """``holder`` returns a segment to the pool, or to the global pool while the pool
        holds more than its size."""
        if subpartition >= 0:
            if pool.per_subpartition[subpartition] == pool.max_per_subpartition:
                pool.saturated_subpartitions -= 1
            pool.per_subpartition[subpartition] -= 1
        changes = self.ledger.journal.changes
        if pool.requested > pool.size:
            nbp = self.network[pool.global_pool]
            self.ledger.move(segment, holder, nbp.owner)
            nbp.free.append(segment)
            pool.requested -= 1
            changes.network_pool(nbp.name)
        else:
            self.ledger.move(segment, holder, pool.owner)
            pool.free.append(segment)
        changes.pool(pool.name)

    def copy(self, ledger: SegmentLedger) -> BufferPools:
        """A copy moving segments in ``ledger``."""
        return BufferPools(
            ledger,
            {
                n: NetworkBufferPool(p.name, p.owner, p.total, list(p.free), p.required)
                for n, p in self.network.items()
            },
            {n: p.copy() for n, p in self.local.items()},
        )
