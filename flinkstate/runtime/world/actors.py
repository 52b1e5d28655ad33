"""The world's actors (the threads of a job) and the cache of their enabled actions; an actor's
identity is a value of its own (``runtime/actor_ref``).

Every thread Flink runs for a job is an actor: a subtask's mailbox thread, the transport of one
remote channel, a channel-state writer, a restored task's channel-state reader and V2 drainer,
the checkpoint coordinator, and the scheduler that restarts a failed region. An actor's next
actions depend on a few containers only (its task, the channels and subpartitions it reads, the
pools it requests from), so the cache keeps each actor's actions and recomputes them only when
a step changed one of those. Components do not know who reads them: a step notes what it
changed in the journal's :class:`~flinkstate.runtime.buffer.ledger.Changes`, which marks the actors
the :class:`ActorIndex` says read it.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import overload

from flinkstate.runtime.actor_ref import (
    COORDINATOR,
    SCHEDULER,
    ActorKind,
    ActorRef,
    transport_name,
)
from flinkstate.runtime.buffer.buffer import (
    Buffer,
    LocalBufferPool,
    NetworkBufferPool,
    network_pool_name,
)
from flinkstate.runtime.buffer.ledger import Changes, Marks, ReadersOf
from flinkstate.runtime.checkpoint.channel.channel_state_reader import ChannelStateReader
from flinkstate.runtime.checkpoint.channel.channel_state_writer import ChannelStateWriter
from flinkstate.runtime.checkpoint.channel.fetched_channel_state import FetchedChannelStateDrainer
from flinkstate.runtime.events import BARRIER
from flinkstate.runtime.partition.consumer.input_gate import Channel, DataHeads
from flinkstate.runtime.partition.result_partition import Subpartition
from flinkstate.runtime.tasks.task import Task
from flinkstate.sim.action import Action


@dataclass(frozen=True, slots=True)
class ActorIndex:
    """Which actors read which state, fixed once a world is built.

    Actors have slots: tasks first (by their key in ``tasks``), then the transports of remote
    channels, then the channel-state writers, readers and drainers.
    """

    actors: tuple[str, ...]
    task_count: int
    transport_end: int
    writer_end: int
    reader_end: int
    #: a task's name ("task map[0]") to its slot and its key in ``tasks`` ("map[0]")
    by_task_actor: dict[str, tuple[int, str]]
    #: every actor's typed reference, the coordinator's and the scheduler's included
    refs: dict[str, ActorRef]
    #: each actor's slot by the name its actions carry (a transport's ``netty ...``)
    slot_of_actor: dict[str, int]
    #: each transport's slot to the local and global pool it asks floating buffers from
    floating_pools: dict[int, tuple[str, str]]
    #: each input channel's place: its consumer task (by name), its gate's index among the
    #: task's gates and its own index in the gate (the order a task looks at them in)
    channel_places: dict[str, tuple[str, int, int]]
    #: per task, channel, subpartition, pool, global pool, writer, reader and drainer: the
    #: slots of the actors whose actions depend on it
    readers_of: ReadersOf

    @classmethod
    def of(
        cls,
        tasks: Mapping[str, Task],
        channels: Mapping[str, Channel],
        subpartitions: Mapping[str, Subpartition],
        pools: Mapping[str, LocalBufferPool],
        network_pools: Mapping[str, NetworkBufferPool],
        writers: Mapping[str, ChannelStateWriter],
        readers: Mapping[str, ChannelStateReader],
        drainers: Mapping[str, FetchedChannelStateDrainer],
    ) -> ActorIndex:
        """The index of a world's containers: every actor's slot, its typed reference, and
        which slots read each container."""
        task_keys = list(tasks)
        remote = [name for name, c in channels.items() if c.remote]
        writer_names = list(writers)
        reader_names = [reader.name for reader in readers.values()]
        drainer_names = [drainer.name for drainer in drainers.values()]
        actors = tuple(task_keys + remote + writer_names + reader_names + drainer_names)
        slot_of = {name: slot for slot, name in enumerate(actors)}
        slots = _Slots(
            slot_of,
            {task.name: slot_of[key] for key, task in tasks.items()},
            {r.task: slot_of[r.name] for r in readers.values()},
            {d.task: slot_of[d.name] for d in drainers.values()},
        )
        task_slot = slots.task
        by_channel = {name: slots.consumer_side(c) for name, c in channels.items()}
        by_subpartition = {
            name: (slot_of[s.producer], *by_channel[s.channel]) for name, s in subpartitions.items()
        }
        by_pool, floating = _pool_readers(tasks, slots)
        actor_keys = {task.name: key for key, task in tasks.items()}
        actor_keys.update((transport_name(name), name) for name in remote)
        actor_keys.update((name, name) for name in writer_names + reader_names + drainer_names)
        return cls(
            actors,
            len(task_keys),
            len(task_keys) + len(remote),
            len(task_keys) + len(remote) + len(writer_names),
            len(task_keys) + len(remote) + len(writer_names) + len(reader_names),
            {task.name: (task_slot[task.name], key) for key, task in tasks.items()},
            _refs(tasks, readers, drainers, remote, writer_names),
            {name: slot_of[key] for name, key in actor_keys.items()},
            floating,
            {
                channel.name: (task.name, gate_index, channel_index)
                for task in tasks.values()
                for gate_index, gate in enumerate(task.gates)
                for channel_index, channel in enumerate(gate.channels)
            },
            ReadersOf(
                tasks={name: (slot,) for name, slot in task_slot.items()},
                channels=by_channel,
                subpartitions=by_subpartition,
                pools=by_pool,
                network_pools=_network_pool_readers(
                    tasks, pools, network_pools, bool(readers), by_pool, slots
                ),
                writers={name: (slot_of[name],) for name in writer_names},
                readers={name: (slot_of[name],) for name in reader_names},
                drainers={name: (slot_of[name],) for name in drainer_names},
                channel_of={name: s.channel for name, s in subpartitions.items()},
            ),
        )


@dataclass(frozen=True, slots=True)
class _Slots:
    """The slots :meth:`ActorIndex.of` looks up while it indexes the readers of each
    container: every actor's by its name, and a task's own, reader's and drainer's by the
    task's name."""

    of: dict[str, int]
    task: dict[str, int]
    reader: dict[str, int]
    drainer: dict[str, int]

    def consumer_side(self, channel: Channel) -> tuple[int, ...]:
        """The actors that read an input channel: its task, its transport if remote, and its
        task's channel-state reader and drainer if restored."""
        slots: tuple[int, ...] = (self.task[channel.task],)
        if channel.remote:
            slots += (self.of[channel.name],)
        if channel.task in self.reader:
            slots += (self.reader[channel.task],)
        if channel.task in self.drainer:
            slots += (self.drainer[channel.task],)
        return slots


def _pool_readers(
    tasks: Mapping[str, Task], slots: _Slots
) -> tuple[dict[str, tuple[int, ...]], dict[int, tuple[str, str]]]:
    """The readers of each local pool (a partition's: its task; a gate's: the recovery that
    requests from it), and each remote transport's pools for floating buffers."""
    reader_of, drainer_of = slots.reader, slots.drainer
    by_pool: dict[str, tuple[int, ...]] = {}
    floating: dict[int, tuple[str, str]] = {}
    for task in tasks.values():
        for partition in task.partitions:
            by_pool[partition.pool.name] = (slots.task[task.name],)
        for gate in task.gates:
            # a transport reads its gate's pools only while it waits for floating
            # buffers: it listens then (``ActionCache.wait_for_floating``)
            by_pool[gate.pool.name] = (
                (reader_of[task.name],) if task.name in reader_of else ()
            ) + ((drainer_of[task.name],) if task.name in drainer_of else ())
            for channel in gate.channels:
                if channel.remote:
                    floating[slots.of[channel.name]] = (gate.pool.name, gate.pool.global_pool)
    return by_pool, floating


def _network_pool_readers(
    tasks: Mapping[str, Task],
    pools: Mapping[str, LocalBufferPool],
    network_pools: Mapping[str, NetworkBufferPool],
    restored: bool,
    by_pool: Mapping[str, tuple[int, ...]],
    slots: _Slots,
) -> dict[str, tuple[int, ...]]:
    """The readers of each global pool: those of its local pools and, in a restored job, the
    tasks and readers of its task manager, since recovery takes buffers straight from it."""
    by_network_pool: dict[str, tuple[int, ...]] = {}
    for nbp in network_pools:
        readers_of = {
            slot
            for pool in pools.values()
            if pool.global_pool == nbp
            for slot in by_pool.get(pool.name, ())
        }
        if restored:
            for task in tasks.values():
                if network_pool_name(task.task_manager) == nbp:
                    readers_of.add(slots.task[task.name])
                    if task.name in slots.reader:
                        readers_of.add(slots.reader[task.name])
        by_network_pool[nbp] = tuple(sorted(readers_of))
    return by_network_pool


def _refs(
    tasks: Mapping[str, Task],
    readers: Mapping[str, ChannelStateReader],
    drainers: Mapping[str, FetchedChannelStateDrainer],
    remote: Sequence[str],
    writer_names: Sequence[str],
) -> dict[str, ActorRef]:
    """Every actor's typed reference by its name, the coordinator's and scheduler's included
    (the keys views and waits-for reports follow)."""
    refs = {
        COORDINATOR: ActorRef(ActorKind.COORDINATOR, COORDINATOR),
        SCHEDULER: ActorRef(ActorKind.SCHEDULER, SCHEDULER),
    }
    for key, task in tasks.items():
        refs[task.name] = ActorRef(ActorKind.TASK, task.name, task=key)
        if task.name in readers:
            name = readers[task.name].name
            refs[name] = ActorRef(ActorKind.READER, name, task=key)
        if task.name in drainers:
            name = drainers[task.name].name
            refs[name] = ActorRef(ActorKind.DRAINER, name, task=key)
    for name in remote:
        netty = transport_name(name)
        refs[netty] = ActorRef(ActorKind.NETTY, netty, channel=name)
    for name in writer_names:
        refs[name] = ActorRef(ActorKind.WRITER, name, writer=name)
    return refs


_NONE: frozenset[int] = frozenset()
_NO_POOLS: frozenset[str] = frozenset()


@dataclass(slots=True)
class ActionCache:
    """Each actor's actions as last computed, the slots whose actions are stale, and how
    many actions each slot has, summed in a Fenwick tree.

    Nothing is joined: :class:`EnabledActions` reads the actions in place, finding the
    ``i``-th by the tree in O(log n), so a step costs the same with ten actors or ten
    thousand (a joined list copied for every step cost a P = 64 job a third of its step).
    """

    index: ActorIndex
    cached: list[tuple[Action, ...]]
    stale: set[int]
    #: the Fenwick tree of the slots' action counts (1-based; ``tree[0]`` unused)
    tree: list[int]
    #: every cached action, counted
    total: int = 0
    #: how many times ``cached`` changed: a view of it is good while this stays as it was
    #: (bookkeeping of the views, not of the actions)
    version: int = field(default=0, compare=False)
    #: the transports waiting for floating buffers by the local pool they wait on, and those
    #: local pools by the global pool behind them: only they read those pools (Flink's
    #: ``BufferListener`` registered with the ``LocalBufferPool`` while a ``BufferManager``
    #: waits); values replaced, never changed, so a copy shares them
    waiting_local: dict[str, frozenset[int]] = field(default_factory=dict)
    waiting_global: dict[str, frozenset[str]] = field(default_factory=dict)
    #: per local pool with waiting transports, whether it could give one a floating buffer
    #: when their actions were computed: all a waiting transport reads of its pools, so a
    #: change of the pools marks them stale only where it changed this (``recheck_pools``);
    #: a pool every free segment of which is taken, as behind a back-pressured gate, changes
    #: at every recycle without changing it
    pool_available: dict[str, bool] = field(default_factory=dict)
    #: the local pools with waiting transports changed since (noted by ``Changes``)
    recheck: set[str] = field(default_factory=set)
    #: the channels whose head may have changed since each consumer last looked (noted by
    #: ``Changes``, taken in by :meth:`look_again`)
    touched: set[str] = field(default_factory=set)
    #: per task (by name), the channels whose head is a barrier, or may be (a task not in it
    #: looks at every channel; values replaced, never changed, so a copy shares them)
    barrier_heads: dict[str, frozenset[str]] = field(default_factory=dict)
    #: per task (by name, kept with its ``barrier_heads``), per gate, the indices (ascending) of
    #: the channels whose head is data or an event other than a barrier, or may be: the only
    #: channels its round-robin poll looks at (values replaced, never changed)
    data_heads: dict[str, DataHeads] = field(default_factory=dict)
    #: per gate of a task restoring, how many of its first channels had consumed their
    #: recovered state when last looked (``classic.state_consumed``)
    consumed: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, index: ActorIndex) -> ActionCache:
        """A cache with every actor's actions still to compute."""
        count = len(index.actors)
        return cls(index, [()] * count, set(range(count)), [0] * (count + 1))

    def copy(self) -> ActionCache:
        return ActionCache(
            self.index,
            list(self.cached),
            set(self.stale),
            list(self.tree),
            self.total,
            0,
            dict(self.waiting_local),
            dict(self.waiting_global),
            dict(self.pool_available),
            set(self.recheck),
            set(self.touched),
            dict(self.barrier_heads),
            dict(self.data_heads),
            dict(self.consumed),
        )

    def wait_for_floating(
        self, slot: int, waiting: bool, available: Callable[[str], bool] | None = None
    ) -> None:
        """Whether the transport in ``slot`` waits for floating buffers now: while it does, a
        change of its gate's pool or of that pool's global pool marks it stale where it
        changes whether the pool can give a buffer (``available``, asked of a local pool's
        name when the first transport starts waiting on it: as its actions see it now)."""
        local, global_pool = self.index.floating_pools[slot]
        listeners = self.waiting_local.get(local, _NONE)
        if (slot in listeners) is waiting:
            return
        if waiting:
            if not listeners:
                assert available is not None, "a transport starts waiting: its pool's state"
                self.pool_available[local] = available(local)
                behind = self.waiting_global.get(global_pool, _NO_POOLS)
                self.waiting_global[global_pool] = behind | {local}
            self.waiting_local[local] = listeners | {slot}
        else:
            listeners = listeners - {slot}
            self.waiting_local[local] = listeners
            if not listeners:
                del self.pool_available[local]
                self.waiting_global[global_pool] = self.waiting_global[global_pool] - {local}

    def recheck_pools(self, available: Callable[[str], bool]) -> None:
        """Mark stale the transports waiting on each local pool changed since (``recheck``)
        whose availability (``available``, by the pool's name) is no longer what their actions
        were computed with."""
        recheck = self.recheck
        if not recheck:
            return
        known = self.pool_available
        for name in recheck:
            waiting = self.waiting_local.get(name)
            if waiting:
                now = available(name)
                if now != known[name]:
                    known[name] = now
                    self.stale.update(waiting)
        recheck.clear()

    def update(self, slot: int, actions: tuple[Action, ...]) -> None:
        """An actor's actions as computed now."""
        before = self.cached[slot]
        if actions == before:
            return
        self.cached[slot] = actions
        self.version += 1
        delta = len(actions) - len(before)
        if delta:
            self.total += delta
            tree = self.tree
            position = slot + 1
            size = len(tree)
            while position < size:
                tree[position] += delta
                position += position & -position

    def locate(self, position: int) -> tuple[int, int]:
        """The slot holding the ``position``-th cached action (0-based, in actor order) and
        the action's place among the slot's own."""
        tree = self.tree
        size = len(tree)
        found = 0
        rest = position
        step = 1 << (size - 1).bit_length()
        while step:
            probe = found + step
            if probe < size and tree[probe] <= rest:
                found = probe
                rest -= tree[probe]
            step >>= 1
        return found, rest

    def listen(self, changes: Changes) -> None:
        """The changes a step notes mark this cache's actors stale."""
        changes.attach(self._marks(), self.index.readers_of)

    def changes(self) -> Changes:
        """New changes that mark this cache's actors stale (a copied journal's: ``listen``
        on changes made before)."""
        return Changes.attached(self._marks(), self.index.readers_of)

    def _marks(self) -> Marks:
        return Marks(
            self.stale, self.touched, self.waiting_local, self.waiting_global, self.recheck
        )

    def look_again(self, head_of: Callable[[str], Buffer | None]) -> None:
        """Bring each task's barrier and data heads up to date with the channels touched
        since: ``head_of`` gives, for a channel's name, its head as its consumer sees it now."""
        touched = self.touched
        if not touched:
            return
        places = self.index.channel_places
        heads = self.barrier_heads
        data_heads = self.data_heads
        for channel in touched:
            task, gate_index, index = places[channel]
            known = heads.get(task)
            if known is None:
                continue  # it looks at every channel next time
            head = head_of(channel)
            barrier = head is not None and head.event == BARRIER
            if barrier:
                if channel not in known:
                    heads[task] = known | {channel}
            elif channel in known:
                heads[task] = known - {channel}
            data = data_heads[task]
            indices = data[gate_index]
            position = bisect_left(indices, index)
            present = position < len(indices) and indices[position] == index
            if head is not None and not barrier:
                if present:
                    continue
                indices = (*indices[:position], index, *indices[position:])
            elif present:
                indices = indices[:position] + indices[position + 1 :]
            else:
                continue
            data_heads[task] = (*data[:gate_index], indices, *data[gate_index + 1 :])
        touched.clear()

    def invalidate(self) -> None:
        """Every actor's actions are due again, and every task looks at every channel."""
        self.stale.update(range(len(self.cached)))
        self.barrier_heads.clear()
        self.data_heads.clear()
        self.consumed.clear()
        # every transport computed again starts waiting afresh, its pool's state read anew
        self.waiting_local.clear()
        self.waiting_global.clear()
        self.pool_available.clear()
        self.recheck.clear()


class StaleActionsError(RuntimeError):
    """Enabled actions read after the world they were taken from computed new ones."""


class EnabledActions(Sequence[Action]):
    """The actions enabled in a world now, in actor order, then ``extra`` (the coordinator's
    and the scheduler's): a view of its :class:`ActionCache`, made in constant time.

    It is good until the world computes its actions again (after its next step); reading it
    later raises :class:`StaleActionsError` rather than answering for another state, so a
    caller that keeps the actions across steps keeps ``list(...)`` of them. Equal to a list
    of the same actions.
    """

    __slots__ = ("_cache", "_extra", "_length", "_version")

    def __init__(self, cache: ActionCache, extra: tuple[Action, ...] = ()) -> None:
        self._cache = cache
        self._version = cache.version
        self._extra = extra
        self._length = cache.total + len(extra)

    def _fresh(self) -> ActionCache:
        cache = self._cache
        if cache.version != self._version:
            raise StaleActionsError(
                "enabled actions read after their world moved on: keep list(...) of them"
            )
        return cache

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, position: int) -> Action: ...

    @overload
    def __getitem__(self, position: slice) -> list[Action]: ...

    def __getitem__(self, position: int | slice) -> Action | list[Action]:
        if isinstance(position, slice):
            return list(self)[position]
        if position < 0:
            position += self._length
        if not 0 <= position < self._length:
            raise IndexError(f"action {position} of {self._length}")
        cache = self._fresh()
        if position >= cache.total:
            return self._extra[position - cache.total]
        slot, place = cache.locate(position)
        return cache.cached[slot][place]

    def __iter__(self) -> Iterator[Action]:
        cache = self._fresh()
        return itertools.chain(itertools.chain.from_iterable(cache.cached), self._extra)

    def __contains__(self, action: object) -> bool:
        if not isinstance(action, Action):
            return False
        cache = self._fresh()
        slot = cache.index.slot_of_actor.get(action.actor)
        if slot is not None and action in cache.cached[slot]:
            return True
        # the extra actions: the coordinator's, the scheduler's, and a task's alignment timer
        return action in self._extra

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EnabledActions | list):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EnabledActions({list(self)!r})"
