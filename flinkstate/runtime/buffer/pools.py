"""Where network buffers come from: each TaskManager's ``NetworkBufferPool`` and the
``LocalBufferPool`` of every result partition and input gate, held together.

A pool's own rules are its methods (:mod:`flinkstate.runtime.buffer.buffer`): a local pool
says whether it can serve a request, counts its subpartitions' buffers (one at its maximum makes
the pool unavailable to every subpartition: how one slow consumer back-pressures its producer),
resizes itself; a global pool shares its unreserved segments out. ``BufferPools`` moves the
segments between them: every move goes through the ledger, the pools that changed are noted
for the action cache, and a global pool shared with a copy is copied before it changes.

Both the simulator and the standalone pool a user drives
(:mod:`flinkstate.runtime.buffer.network_buffer_pool`) call it: the reservation and Flink's
refusal, the redistribution of the unreserved segments, requests and recycles. The standalone
pool also listens for a global pool's free list filling again (``available_listener``): Flink
completes the pool's availability future there, and local pools waiting for a segment take one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.errors import InsufficientNetworkBuffersError
from flinkstate.runtime.buffer.buffer import LocalBufferPool, NetworkBufferPool, network_pool_owner
from flinkstate.runtime.buffer.ledger import SegmentLedger
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.copying import NotState, StateKey

#: the options that size a TaskManager's network memory, which Flink's messages name
NETWORK_MEMORY_KEYS = (
    "taskmanager.memory.network.fraction",
    "taskmanager.memory.network.min",
    "taskmanager.memory.network.max",
)


def config_description(total: int, segment_size: int) -> str:
    """How Flink's ``NetworkBufferPool`` describes itself when it refuses or times out: its
    segments and their size, and the options that give it more."""
    fraction, minimum, maximum = NETWORK_MEMORY_KEYS
    return (
        f"The total number of network buffers is currently set to {total} of {segment_size} "
        f"bytes each. You can increase this number by setting the configuration keys "
        f"'{fraction}', '{minimum}', and '{maximum}'"
    )


def insufficient_buffers_message(
    required: int, available: int, total: int, segment_size: int
) -> str:
    """Flink's refusal of a reservation: the segments asked for and those not yet reserved
    (``NetworkBufferPool.internalCreateBufferPool`` and ``tryRedistributeBuffers``)."""
    return (
        f"Insufficient number of network buffers: required {required}, but only {available} "
        f"available. {config_description(total, segment_size)}."
    )


@dataclass(slots=True)
class BufferPools:
    """The global pools by name (``network-pool tmN``) and the local pools by name."""

    ledger: SegmentLedger
    network: dict[str, NetworkBufferPool] = field(default_factory=dict)
    local: dict[str, LocalBufferPool] = field(default_factory=dict)
    #: told a global pool's name when a segment lands in its empty free list; the simulator
    #: leaves it None (it computes availability instead of waiting for it)
    available_listener: Callable[[str], None] | None = None
    #: the global pools it shares with a copy (``copy``): each is copied before it changes
    network_shared: set[str] = field(default_factory=set, compare=False)
    #: each global pool's key as last made, until the pool changes (``state_key``)
    network_keys: dict[str, StateKey] = field(default_factory=dict, compare=False)

    NOT_STATE: ClassVar[NotState] = {
        "ledger": "a link: the ledger is keyed in the world's",
        "available_listener": "a driven pool's callback (None in the simulator)",
        "network_shared": "bookkeeping of a copy: which global pools it shares with another",
        "network_keys": "a cache of the global pools' keys (``state_key``)",
    }

    def state_key(self, *, known: bool = False) -> StateKey:
        """Each pool's key, one part each (a step changes one or two pools: a model checker
        hashes and stores those only); the local pools' with their names, as a pool can be
        removed (``remove_local_pool``). ``known``: a global pool's key as kept since it last
        changed (its free list can be thousands of segments long), else made afresh."""
        return (
            *self.network_state_key(known=known),
            *[(n, p.state_key()) for n, p in self.local.items()],
        )

    def network_state_key(self, *, known: bool = False) -> StateKey:
        """The global pools' part of :meth:`state_key`: a world keys its local pools with its
        other per-name components, each computed again only when a step may have changed it
        (``NetworkState.known_keys``)."""
        if not known:
            return tuple([p.state_key() for p in self.network.values()])
        keys = self.network_keys
        network = []
        for name, pool in self.network.items():
            key = keys.get(name)
            if key is None:
                key = keys[name] = pool.state_key()
            network.append(key)
        return tuple(network)

    def changing(self, global_name: str) -> NetworkBufferPool:
        """The global pool, about to change: its own copy if it shared it, its key no longer
        known. Every change to a global pool goes through here."""
        pool = self.network[global_name]
        if global_name in self.network_shared:
            pool = self.network[global_name] = NetworkBufferPool(
                pool.name, pool.owner, pool.total, list(pool.free), pool.required
            )
            self.network_shared.discard(global_name)
        self.network_keys.pop(global_name, None)
        return pool

    # -- building

    def add_network_pool(self, task_manager: int, segments: int) -> NetworkBufferPool:
        """A TaskManager's global pool with ``segments`` new segments."""
        owner = network_pool_owner(task_manager)
        name = str(owner)
        pool = NetworkBufferPool(name, owner, segments, self.ledger.new_segments(segments, owner))
        self.network[name] = pool
        self.network_keys.pop(name, None)
        return pool

    def add_local_pool(self, pool: LocalBufferPool) -> None:
        self.local[pool.name] = pool

    def remove_local_pool(self, pool: LocalBufferPool) -> bool:
        """The pool no longer draws on its global pool, and its minimum is no longer reserved
        (``NetworkBufferPool.destroyBufferPool``); False if it was removed already. The caller
        redistributes."""
        if self.local.pop(pool.name, None) is None:
            return False
        self.changing(pool.global_pool).required -= pool.minimum
        return True

    def reserve(self, global_name: str, count: int, segment_size: int) -> None:
        """Reserve ``count`` segments of a global pool for a pool's minimum or a channel's
        exclusive buffers; Flink refuses to start a task the TaskManager cannot serve."""
        pool = self.network[global_name]
        if pool.required + count > pool.total:
            raise InsufficientNetworkBuffersError(
                insufficient_buffers_message(
                    count, pool.total - pool.required, pool.total, segment_size
                )
            )
        self.changing(global_name).required += count

    def release(self, global_name: str, count: int) -> None:
        """``count`` reserved segments are reserved no more (unpooled segments returned, or a
        request for them that failed); the caller redistributes."""
        self.changing(global_name).required -= count

    def assign(self, global_name: str, count: int, owner: Owner) -> list[int]:
        """While building: ``count`` free segments of a global pool belong to ``owner``."""
        nbp = self.changing(global_name)
        taken = [nbp.free.pop() for _ in range(count)]
        for segment in taken:
            self.ledger.place(segment, owner)
        return taken

    def unassign(self, global_name: str, segments: list[int]) -> None:
        """While building: the segments belong to the global pool again."""
        nbp = self.changing(global_name)
        for segment in segments:
            self.ledger.place(segment, nbp.owner)
            nbp.free.append(segment)

    def redistribution(self, nbp: NetworkBufferPool) -> list[tuple[LocalBufferPool, int]]:
        """The size the global pool gives each of its resizable local pools
        (:meth:`NetworkBufferPool.redistribution`), in creation order."""
        return nbp.redistribution(self.local.values())

    def redistribute(self, nbp: NetworkBufferPool) -> None:
        """Give every resizable pool of ``nbp`` its share (:meth:`redistribution`)."""
        for pool, size in self.redistribution(nbp):
            self.set_size(pool, size)

    def set_size(self, pool: LocalBufferPool, size: int) -> None:
        """The pool's size becomes ``size`` (at most its maximum), and free segments beyond it
        go back to the global pool (``LocalBufferPool.setNumBuffers``); below the minimum is
        refused as Flink refuses it."""
        pool.resize(size)
        while pool.requested > pool.size and pool.free:
            self.return_segment(pool, pool.free.pop(), pool.owner)
            self.ledger.journal.changes.pool(pool.name)

    # -- the global pools

    def free_in(self, global_name: str) -> int:
        """Segments free in a global pool."""
        return len(self.network[global_name].free)

    def take(self, global_name: str, count: int, owner: Owner) -> list[int]:
        """``count`` segments straight from a global pool (exclusive buffers); the caller
        made sure they are there."""
        nbp = self.changing(global_name)
        taken = [nbp.free.pop() for _ in range(count)]
        for segment in taken:
            self.ledger.move(segment, nbp.owner, owner)
        self.ledger.journal.changes.network_pool(nbp.name)
        return taken

    def give_back(self, global_name: str, segment: int, holder: Owner) -> None:
        """A segment taken with :meth:`take` returns to its global pool."""
        self.give_back_all(global_name, (segment,), holder)

    def give_back_all(self, global_name: str, segments: tuple[int, ...], holder: Owner) -> None:
        """Segments taken with :meth:`take` return to their global pool together: a listener
        hears once that the pool has segments again (Flink's one recycle of a collection)."""
        nbp = self.changing(global_name)
        was_empty = not nbp.free
        for segment in segments:
            self.ledger.move(segment, holder, nbp.owner)
            nbp.free.append(segment)
        self.ledger.journal.changes.network_pool(nbp.name)
        if was_empty and nbp.free and self.available_listener is not None:
            self.available_listener(global_name)

    def discard_free(self, global_name: str) -> list[int]:
        """The global pool's free segments are freed (``NetworkBufferPool.destroy``): no
        longer in its free list, and returned for the caller to keep account of."""
        nbp = self.changing(global_name)
        freed, nbp.free = nbp.free, []
        return freed

    # -- the local pools

    def can_request(self, pool: LocalBufferPool, for_subpartition: bool) -> bool:
        """Whether ``pool`` would serve a request now (:meth:`LocalBufferPool.can_serve`)."""
        return pool.can_serve(bool(self.network[pool.global_pool].free), for_subpartition)

    def request(self, pool: LocalBufferPool, owner: Owner, subpartition: int = -1) -> int | None:
        """A segment of the pool for ``owner`` (counted against ``subpartition`` if given),
        or None when the pool has none to give. A subpartition at its maximum makes the pool
        unavailable but does not refuse a request a free segment can serve (FLINK-27522):
        whoever asks must check :meth:`can_request` first."""
        changes = self.ledger.journal.changes
        if pool.free:
            segment = pool.free.pop()
        elif pool.requested < pool.size and self.network[pool.global_pool].free:
            nbp = self.changing(pool.global_pool)
            segment = nbp.free.pop()
            self.ledger.move(segment, nbp.owner, pool.owner)
            pool.requested += 1
            changes.network_pool(nbp.name)
        else:
            return None
        changes.pool(pool.name)
        self.ledger.move(segment, pool.owner, owner)
        if subpartition >= 0:
            pool.count_out(subpartition)
        return segment

    def fetch(self, pool: LocalBufferPool) -> bool:
        """One segment of the global pool into the pool's free segments, counted as requested
        (``LocalBufferPool.requestMemorySegmentFromGlobal``); False if the global pool has none.
        The caller checked the pool is below its size."""
        if not self.network[pool.global_pool].free:
            return False
        nbp = self.changing(pool.global_pool)
        segment = nbp.free.pop()
        self.ledger.move(segment, nbp.owner, pool.owner)
        pool.free.append(segment)
        pool.requested += 1
        self.ledger.journal.changes.network_pool(nbp.name)
        self.ledger.journal.changes.pool(pool.name)
        return True

    def stock(self, pool: LocalBufferPool, segments: list[int]) -> None:
        """Segments the pool took straight from the global pool (with :meth:`take`) join its
        free ones without being counted as requested: what ``LocalBufferPool.reserveSegments``
        does."""
        pool.free.extend(segments)
        self.ledger.journal.changes.pool(pool.name)

    def recycle(
        self, pool: LocalBufferPool, segment: int, holder: Owner, subpartition: int = -1
    ) -> None:
        """``holder`` returns a segment to the pool, or to the global pool while the pool
        holds more than its size or is destroyed."""
        if subpartition >= 0:
            pool.count_back(subpartition)
        if pool.over_size:
            self.return_segment(pool, segment, holder)
        else:
            self.ledger.move(segment, holder, pool.owner)
            pool.free.append(segment)
        self.ledger.journal.changes.pool(pool.name)

    def return_segment(self, pool: LocalBufferPool, segment: int, holder: Owner) -> None:
        """A segment of the pool goes back to the global pool, no longer counted as requested
        (``LocalBufferPool.returnMemorySegment``)."""
        pool.requested -= 1
        self.give_back(pool.global_pool, segment, holder)

    def destroy(self, pool: LocalBufferPool) -> None:
        """The pool's free segments go back to the global pool, one at a time, and every
        segment recycled to it from now on (``LocalBufferPool.lazyDestroy``)."""
        while pool.free:
            self.return_segment(pool, pool.free.pop(), pool.owner)
        pool.destroyed = True
        self.ledger.journal.changes.pool(pool.name)

    def copy(self, ledger: SegmentLedger, *, share_local: bool = False) -> BufferPools:
        """A copy moving segments in ``ledger``; ``share_local``: its local pools are this one's
        (a world copies those it changes itself: ``NetworkWorld.own``)."""
        pools = dict(self.local) if share_local else {n: p.copy() for n, p in self.local.items()}
        # the global pools are shared until one of the two changes one (``changing``)
        self.network_shared = set(self.network)
        return BufferPools(
            ledger,
            dict(self.network),
            pools,
            network_shared=set(self.network),
            network_keys=dict(self.network_keys),
        )
