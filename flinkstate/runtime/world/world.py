"""The network world: a run's state with its actors' actions, as the simulator steps it.

``NetworkWorld`` is the simulator's ``Model``: it offers every actor's enabled actions (from the
action cache) and applies the one chosen, dispatching it to the behaviour module that knows the
actor's thread. The actors:

* ``task X[i]`` -- a subtask's mailbox thread (``mailbox``, ``record_writer``,
  ``checkpointing``, and while it restores ``recovery`` and ``fetched_channel_state_drainer``);
* ``netty X[i]<Y[j]`` -- the transport of one remote channel (``transport``);
* ``channel-state-writer tmN.k`` -- a channel-state writer thread (``checkpointing``);
* ``channel-state-reader X[i]`` and ``drainer X[i]`` -- a restored task's reader and V2 drainer;
* ``checkpoint-coordinator`` (``coordinator``);
* ``scheduler`` -- the JobMaster's scheduler restarting a failed region (``failover``).

Local channels have no transport: the consumer task reads the producer's subpartition and
recycles the producer's buffer itself (``recycling``). Every segment move is checked against the
ledger as it happens; the other invariants (``invariants``) where the event that could break
them happens, and in a scan every ``invariants.audit_interval`` steps.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, Self, TypeVar

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.action_kind import ActionKind, action, by_text
from flinkstate.runtime.actor_ref import ActorRef
from flinkstate.runtime.buffer.buffer import Buffer, LocalBufferPool
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.checkpoint import coordinator
from flinkstate.runtime.checkpoint.channel import (
    channel_state_filtering,
    classic_recovery,
    fetched_channel_state_drainer,
    spilling_handler,
)
from flinkstate.runtime.checkpoint.channel.channel_state_reader import ChannelStateReader
from flinkstate.runtime.checkpoint.channel.fetched_channel_state import FetchedChannelStateDrainer
from flinkstate.runtime.failover import failover
from flinkstate.runtime.partition import record_writer
from flinkstate.runtime.partition.consumer import transport
from flinkstate.runtime.partition.consumer.input_gate import Channel, Gate
from flinkstate.runtime.partition.result_partition import ResultPartition, Subpartition
from flinkstate.runtime.tasks import barrier_handler, mailbox
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world import builder, independence, invariants, isolation, waits
from flinkstate.runtime.world.actors import EnabledActions
from flinkstate.runtime.world.exploration.footprint import Resource
from flinkstate.runtime.world.exploration.partial_copy import CopyPlan, Owned
from flinkstate.runtime.world.narration import narrate
from flinkstate.runtime.world.state import NetworkState
from flinkstate.sim.action import Action
from flinkstate.sim.core import Event
from flinkstate.sim.deadlock import Wait

#: every how many consistency scans the network pools' free segments are checked one by one
#: (in between, they are counted)
IDLE_POOL_SCAN_EVERY = 16

#: how many components (tasks, subpartitions, channels, gates) a world has before its
#: snapshots copy on write rather than whole: below it a whole copy every ``snapshot_every``
#: steps costs less than a footprint per step (keyed-upscale from P to P / 2: at P = 16, 320
#: components, 1.2 x faster whole; at P = 32, 1,152 components, 1.1 x faster and 0.83 x the
#: memory on write; at P = 64, 1.2 x faster and 0.75 x the memory)
COPY_ON_WRITE_FROM = 512


@dataclass
class NetworkWorld(NetworkState):
    """A run of the job: the state and what its actors do to it; implements the simulation
    core's ``Model`` protocol."""

    # ------------------------------------------------------------------ building

    def __post_init__(self) -> None:
        builder.build(self)

    def clone(self) -> Self:
        """A copy for exploring another interleaving or running on alone.

        Copies every mutable container and component, shares what never changes: the graph,
        the config, records, the actor index, and buffers once queued (only a builder is ever
        written to). Links between components (a gate's channels, a task's current channel)
        point into the copy.
        """
        return self._copy(None)

    def clone_within(self, touched: frozenset[Resource] | None) -> Self:
        """A copy in which one action whose footprint (``footprint``) is ``touched`` is
        applied next: it copies only the components that action can change (``partial_copy``)
        and shares the others with this world; after that action each world copies a shared
        component before it changes it (``snapshot``). A model checker's copies are made so;
        None copies everything (``clone``), each key computed again after the action (those
        equal to this world's kept as its objects)."""
        plan = (
            self.partial_copies.everything(self)
            if touched is None
            else self.partial_copies.plan(self, touched)
        )
        twin = self._copy(plan)
        # the components it shares keep their keys through the action (``fingerprint``)
        twin.inherited_keys = (list(self.known_keys()), plan.key_positions)
        twin.prepared = True
        self.owned = Owned()
        return twin

    def ready_within(self, touched: frozenset[Resource] | None) -> Self:
        """This world, made ready to take one action whose footprint is ``touched`` itself:
        :meth:`clone_within` without the copy, for the last action a model checker takes from
        a state (nothing reads that state once its children are made). The components it
        shares with copies made from it before are copied first (the touched ones only), the
        run-wide state is its own already, and the keys of the components it does not copy
        stay known through the action."""
        plan = (
            self.partial_copies.everything(self)
            if touched is None
            else self.partial_copies.plan(self, touched)
        )
        if self.owned is not None:
            self.own(plan)
        self.inherited_keys = (self.known_keys(), plan.key_positions)
        self.prepared = True
        return self

    def snapshot(self) -> Self:
        """The state as it is, for going back to (``Simulation``'s snapshots): a copy of the
        run-wide parts that shares every component with this world. From then on each of the
        two copies a component before its first change to it, by the footprint of the action
        about to change it (copy on write), so a snapshot costs the run-wide parts and the
        steps after it copy only what they touch; an action that may touch anything copies
        everything not copied yet. Taking a snapshot of a snapshot gives a world to run on
        from it, the snapshot left as it was. A world of fewer than ``COPY_ON_WRITE_FROM``
        components is copied whole instead: finding what each step may change costs it
        more than a whole copy every few hundred steps."""
        if self.component_count < COPY_ON_WRITE_FROM:
            return self.clone()
        twin = self._copy(self.partial_copies.nothing())
        self.owned = Owned()
        return twin

    def _copy(self, plan: CopyPlan | None) -> Self:
        """A copy of the components ``plan`` names (None: of all), the others shared with this
        world; the run-wide state (ledger, journal, records, checkpoints, ...) is always
        copied."""
        # a shallow copy of every field (``copy.copy`` without its protocol: 2.5x faster)
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.component_keys = twin.inherited_keys = None
        twin.stale_keys = ()
        twin.prepared = False
        twin.actions = self.actions.copy()
        twin.journal = self.journal.copy(twin.actions.changes())
        twin.violations = twin.journal.violations
        twin.ledger = self.ledger.copy(twin.journal)
        twin.buffer_pools = self.buffer_pools.copy(twin.ledger, share_local=True)
        twin.subpartitions = dict(self.subpartitions)
        twin.channels = dict(self.channels)
        twin.gates = dict(self.gates)
        twin.tasks = dict(self.tasks)
        twin.writers = dict(self.writers)
        twin.readers = dict(self.readers)
        twin.drainers = dict(self.drainers)
        twin.owned = Owned()
        twin.own(self.partial_copies.everything(self) if plan is None else plan)
        twin.records = dict(self.records)
        twin.deliveries = dict(self.deliveries)
        twin.order = self.order.copy()
        twin.checkpoints = self.checkpoints.copy()
        twin.filtered = dict(self.filtered)
        twin.spill = self.spill.copy()
        twin.recovered_via = dict(self.recovered_via)
        twin.event_time = self.event_time.copy()
        return twin

    def own(self, plan: CopyPlan) -> None:
        """Copy for this world the components of ``plan`` it shares (those not ``owned``),
        and link what holds them to the copies: a gate or task value it shares is replaced by
        a new one linked to the copies (a task only linked keeping its own state as it was);
        one it has its own value of already is re-pointed in place, only at the copies just
        made, so a step after a snapshot costs what it copies, not the size of the gates and
        partitions that hold it. What it owns already it changes in place, so a step whose
        components are all owned costs a look-up. Once it owns every component it shares
        nothing (``owned`` None)."""
        owned = self.owned
        assert owned is not None, "a world that shares nothing owns everything already"
        holders = self.partial_copies.holders(self)
        subs, channels, pools = self.subpartitions, self.channels, self.buffer_pools.local
        new_subs = _copied(plan.subpartitions, subs, owned.subpartitions)
        new_channels = _copied(plan.channels, channels, owned.channels)
        new_pools = _copied(plan.pools, pools, owned.pools)
        readers, drainers = self.readers, self.drainers
        for name in plan.helpers:
            if name not in owned.helpers:
                if name in readers:
                    readers[name] = readers[name].copy()
                if name in drainers:
                    drainers[name] = drainers[name].copy()
                owned.helpers.add(name)
        if plan.writers and not owned.writers:
            self.writers = {n: w.copy() for n, w in self.writers.items()}
            owned.writers = True
        gates, tasks = self.gates, self.tasks
        # gates: a shared one is replaced by a new value, one of its own re-pointed in place
        to_copy = {name for name in plan.gates if name not in owned.gates}
        tasks_to_link: set[str] = set()
        for name in new_channels:
            gate_name = holders.gate_of[name]
            if gate_name in owned.gates:
                channel = channels[name]
                gates[gate_name].channels[channel.index] = channel
                # a gate of its own has a task of its own (linked when the gate was copied)
                task = tasks[holders.gate_task[gate_name]]
                if task.current is not None and task.current.name == name:
                    task.current = channel
            else:
                to_copy.add(gate_name)
        for name in new_pools:
            for gate_name in holders.pool_gates.get(name, ()):
                if gate_name in owned.gates:
                    gates[gate_name].pool = pools[name]
                else:
                    to_copy.add(gate_name)
            tasks_to_link.update(holders.pool_tasks.get(name, ()))
        for name in to_copy:
            gates[name] = self._copy_gate(gates[name], channels, pools)
            owned.gates.add(name)
            tasks_to_link.add(holders.gate_task[name])
        for name in new_subs:
            tasks_to_link.add(holders.subpartition_task[name])
        # tasks: a full copy where the action changes one, else linked to the copies
        for name in plan.tasks:
            if name not in owned.tasks:
                tasks[name] = self._copy_task(tasks[name], gates, subs, channels, pools)
                owned.tasks.add(name)
                owned.linked.discard(name)
                tasks_to_link.discard(name)
        for name in tasks_to_link:
            if name in owned.tasks or name in owned.linked:
                _relink_in_place(tasks[name], gates, subs, channels, pools, new_subs, new_pools)
            else:
                tasks[name] = self._copy_task(
                    tasks[name], gates, subs, channels, pools, own_state=False
                )
                owned.linked.add(name)
        if plan is self.partial_copies.all:
            self.owned = None

    @staticmethod
    def _copy_gate(
        gate: Gate, channels: dict[str, Channel], pools: dict[str, LocalBufferPool]
    ) -> Gate:
        """A copy of ``gate`` linked to the copy's channels and pool."""
        return Gate(
            gate.name,
            gate.exchange,
            gate.task,
            [channels[c.name] for c in gate.channels],
            pools[gate.pool.name],
            gate.exclusive_per_channel,
            gate.next_channel,
            gate.converted,
            gate.demultiplexing,
            gate.plan,
        )

    @staticmethod
    def _copy_task(
        task: Task,
        gates: dict[str, Gate],
        subs: dict[str, Subpartition],
        channels: dict[str, Channel],
        pools: dict[str, LocalBufferPool],
        *,
        own_state: bool = True,
    ) -> Task:
        """A copy of ``task`` linked to the copy's gates, channel and result partitions (its
        own: a partition is part of its task), these linked to the copy's subpartitions and
        pools; without ``own_state`` its queues and counts are shared with ``task`` (a copy
        for an action that does not touch them)."""
        return (task.copy if own_state else task.relinked)(
            [gates[g.name] for g in task.gates],
            [
                ResultPartition(
                    p.name,
                    p.exchange,
                    p.task,
                    [subs[s.name] for s in p.subpartitions],
                    pools[p.pool.name],
                    p.next_channel,
                )
                for p in task.partitions
            ],
            None if task.current is None else channels[task.current.name],
        )

    # ------------------------------------------------------------------ actions

    def invalidate_actions(self) -> None:
        """Forget every cached action: for code that changed the world's state directly."""
        self.actions.invalidate()

    def enabled_actions(self) -> Sequence[Action]:
        """The actions enabled now, in a fixed order: tasks, transports, the coordinator.

        Each actor's actions are cached and recomputed only when a step touched what they
        depend on (the actor itself, a subpartition, a channel or a pool it reads), and the
        result is a view of that cache (``EnabledActions``, good until the next step), so a
        step costs the same however many actors are idle.
        """
        if self.checkpoints.job_failed:
            return []
        cache = self.actions
        index = cache.index
        channels = self.channels
        cache.look_again(lambda name: mailbox.visible_head(self, channels[name]))
        cache.recheck_pools(self._floating_available)
        heads = cache.barrier_heads
        data_heads = cache.data_heads
        for slot in cache.stale:
            name = index.actors[slot]
            if slot < index.task_count:
                task = self.tasks[name]
                known = heads.get(task.name)
                if known is None:  # looked at once whole, then kept up to date
                    known = heads[task.name] = mailbox.barrier_heads(self, task)
                    data_heads[task.name] = mailbox.data_heads(self, task)
                action = mailbox.task_action(
                    self, task, known, data_heads[task.name], cache.consumed
                )
                cache.update(slot, () if action is None else (action,))
            elif slot < index.transport_end:
                offered, waiting = self._transport_actions(self.channels[name])
                cache.wait_for_floating(slot, waiting, self._floating_available)
                cache.update(slot, offered)
            elif slot < index.writer_end:
                cache.update(slot, barrier_handler.writer_actions(self, self.writers[name]))
            elif slot < index.reader_end:
                cache.update(slot, self._reader_action(name))
            else:
                cache.update(slot, self._drainer_action(name))
        cache.stale.clear()
        # alignment timers are looked at every step, as the coordinator's actions are: they
        # depend on the step, which no change notes
        extra = barrier_handler.alignment_timeout_actions(self)
        extra += coordinator.coordinator_actions(self)
        if self.failover is not None:
            extra += failover.scheduler_actions(self, idle=not (cache.total or extra))
        actions = EnabledActions(cache, extra)
        if self.options.check_actions:
            for task in self.tasks.values():
                known = heads.get(task.name)
                barriers = mailbox.barrier_heads(self, task)
                if known is not None and not barriers <= known:
                    raise AssertionError(
                        f"step {self.journal.step}: {task.name}'s channels "
                        f"{sorted(barriers - known)} have a barrier at their head, unnoted"
                    )
                data = data_heads.get(task.name)
                actual = mailbox.data_heads(self, task)
                if data is not None and any(
                    not set(now) <= set(noted) for now, noted in zip(actual, data, strict=True)
                ):
                    raise AssertionError(
                        f"step {self.journal.step}: {task.name}'s channels with data at "
                        f"their head, per gate, are {actual}; noted: {data}"
                    )
            full = self._scan_actions()
            if full != list(actions):
                raise AssertionError(
                    f"step {self.journal.step}: cached actions {actions} differ from a full "
                    f"scan {full}"
                )
        return actions

    def _transport_actions(self, channel: Channel) -> tuple[tuple[Action, ...], bool]:
        """A remote channel's transport: its actions, and whether it waits for floating
        buffers (so reads its gate's pools: ``ActionCache.wait_for_floating``); a channel a
        failover stopped does neither."""
        if self.failover is not None and failover.channel_stopped(self, channel):
            return (), False
        waiting = transport.waits_for_floating(self, channel)
        return tuple(transport.transport_actions(self, channel, waiting)), waiting

    def _floating_available(self, pool: str) -> bool:
        """Whether the local pool ``pool`` can give a waiting transport a floating buffer now
        (what its ``request-floating`` depends on)."""
        pools = self.buffer_pools
        return pools.can_request(pools.local[pool], False)

    def _reader_action(self, name: str) -> tuple[Action, ...]:
        task = self.tasks[self.actions.index.refs[name].task]
        if task.failover is not None:
            return ()
        reader = self.readers[task.name]
        step = classic_recovery.reader_actions(self, reader)
        return () if step is None else (action(reader.name, *step),)

    def _drainer_action(self, name: str) -> tuple[Action, ...]:
        task = self.tasks[self.actions.index.refs[name].task]
        if task.failover is not None:
            return ()
        drainer = self.drainers[task.name]
        step = fetched_channel_state_drainer.drainer_action(self, drainer)
        return () if step is None else (action(drainer.name, *step),)

    def _scan_actions(self) -> list[Action]:
        actions: list[Action] = []
        for task in self.tasks.values():
            action = mailbox.task_action(self, task)
            if action is not None:
                actions.append(action)
        for channel in self.channels.values():
            if channel.remote:
                actions.extend(self._transport_actions(channel)[0])
        for writer in self.writers.values():
            actions.extend(barrier_handler.writer_actions(self, writer))
        for reader in self.readers.values():
            actions.extend(self._reader_action(reader.name))
        for drainer in self.drainers.values():
            actions.extend(self._drainer_action(drainer.name))
        actions.extend(barrier_handler.alignment_timeout_actions(self))
        actions.extend(coordinator.coordinator_actions(self))
        if self.failover is not None:
            actions.extend(failover.scheduler_actions(self, idle=not actions))
        return actions

    def add_input_data(self, channel: Channel, buffer: Buffer) -> None:
        """A persisting channel hands a buffer it received to the channel-state writer
        (``ChannelStateWriter.addInputData``): the barrier handler persists it."""
        barrier_handler.persist_input(self, channel, buffer)

    def visible_head(self, channel: Channel) -> Buffer | None:
        """What the task sees first on a channel (``mailbox.visible_head``)."""
        return mailbox.visible_head(self, channel)

    def waits(self) -> list[Wait[ActorRef | Owner]]:
        """Every actor that cannot proceed, what it waits for and who holds that."""
        return waits.waits(self)

    def apply(self, action: Action) -> Event:
        if self.owned is not None:  # it shares components: copy those the action may change
            if self.prepared:  # a copy made for this action has them
                self.prepared = False
            else:
                touched = independence.footprint(self, action)
                copies = self.partial_copies
                self.own(copies.everything(self) if touched is None else copies.plan(self, touched))
        # what stays known of the components' keys through this step: of a copy made for it,
        # those of the components it shares; nothing otherwise
        inherited = self.inherited_keys
        if inherited is None:
            self.component_keys = None
        else:
            self.component_keys, self.stale_keys = inherited
            self.inherited_keys = None
        actor = action.actor
        cache = self.actions
        task_actor = cache.index.by_task_actor.get(actor)
        if task_actor is not None:
            cache.stale.add(task_actor[0])  # the task that acts
            _TASK_HANDLERS[action.kind](self, self.tasks[task_actor[1]], action)
        else:
            ref = cache.index.refs.get(actor)
            if ref is None:
                raise InvalidParameterError(f"no actor {actor!r} in this world")
            _THREAD_HANDLERS[action.kind](self, ref, action)
        journal = self.journal
        event = journal.event(action, narrate(journal.happenings))
        every = self.audit_every
        if every and journal.step % every == 0:
            scan = journal.step // every
            self.check_consistency(idle_pools=scan % IDLE_POOL_SCAN_EVERY == 0)
        return event

    # ------------------------------------------------------------------ status

    def is_finished(self) -> bool:
        if self.checkpoints.job_failed:
            return True  # Flink restarts the job from its last completed checkpoint
        return (
            all(task.finished for task in self.tasks.values())
            and all(not sub.queue for sub in self.subpartitions.values())
            and all(not c.received for c in self.channels.values())
            and all(not w.requests for w in self.writers.values())
            and all(r.finished for r in self.readers.values())
            and all(d.finished or d.state is None for d in self.drainers.values())
        )

    # ------------------------------------------------------------------ invariants

    def check_consistency(self, *, idle_pools: bool = True) -> None:
        """Every segment is where the ledger says (``invariants.check_consistency``)."""
        invariants.check_consistency(self, idle_pools=idle_pools)

    def check_end(self) -> None:
        """At the end of a finished run: nothing lost, nothing leaked."""
        invariants.check_end(self)

    def footprint(self, action: Action) -> frozenset[Resource] | None:
        """What ``action`` (enabled now) may read or write (``independence.footprint``), for
        partial-order reduction; None: anything."""
        return independence.footprint(self, action)

    def isolates(self) -> bool:
        """Whether the run is calm (``isolation.calm``): only then may an actor's actions be
        a persistent set."""
        return isolation.calm(self)

    def interferes(self, actions: Sequence[Action], touched: frozenset[Resource]) -> bool:
        """Whether another actor may, from this state on and before the actor of ``actions``
        (all it has enabled) steps, touch what they touch (``touched``) or what decides
        which actions it has (``isolation.interferes``): False makes them a persistent set.
        Asked in calm states only (:meth:`isolates`)."""
        return isolation.interferes(self, actions, touched)

    def fingerprint(self) -> Hashable:
        """The state as one value (``NetworkState.state_key``): two worlds with one
        fingerprint are the same state for everything the run does and checks from here on.
        Left out is only what no future step reads: the step in progress (empty between
        steps), the numbers buffers are drawn by, running maxima kept for reports, caches and
        links. A model checker computes it once per state it explores; in a copy made for
        one action (``clone_within``), only the keys of the components it copied are computed
        after that action, those it shares being known already. The keys computed are kept
        until its next step, so that copies made from it inherit the very objects."""
        return self.key_with(self.known_keys())


class _Copyable(Protocol):
    def copy(self) -> Self: ...


_C = TypeVar("_C", bound=_Copyable)


def _copied(names: Iterable[str], components: dict[str, _C], owned: set[str]) -> list[str]:
    """Copy into ``components`` those of ``names`` not ``owned`` yet, now owned: their names."""
    copied = [name for name in names if name not in owned]
    for name in copied:
        components[name] = components[name].copy()
    owned.update(copied)
    return copied


def _relink_in_place(
    task: Task,
    gates: dict[str, Gate],
    subs: dict[str, Subpartition],
    channels: dict[str, Channel],
    pools: dict[str, LocalBufferPool],
    new_subs: list[str],
    new_pools: list[str],
) -> None:
    """Point a task value the world has of its own at the gates, subpartitions, pools and
    channel copied just now (``new_subs``, ``new_pools``; a gate or channel is found
    replaced by its identity): a handful of links, not every subpartition of its
    partitions."""
    for position, gate in enumerate(task.gates):
        current = gates[gate.name]
        if current is not gate:
            task.gates[position] = current
    if new_subs or new_pools:
        for partition in task.partitions:
            if new_pools and partition.pool.name in new_pools:
                partition.pool = pools[partition.pool.name]
            for name in new_subs:
                sub = subs[name]
                if sub.partition == partition.name:
                    partition.subpartitions[sub.index] = sub
    if task.current is not None:
        task.current = channels[task.current.name]


# -- the world's handler of every kind of action

TaskHandler = Callable[[NetworkWorld, Task, Action], None]
ThreadHandler = Callable[[NetworkWorld, ActorRef, Action], None]

#: what a task's action of each kind does: every kind a task's mailbox thread offers
_TASK_HANDLERS: Mapping[str, TaskHandler] = by_text(
    {
        ActionKind.COMPUTE: mailbox.do_compute,
        ActionKind.EMIT: mailbox.do_emit,
        ActionKind.REQUEST_BUFFER: record_writer.do_request_buffer,
        ActionKind.WRITE: record_writer.do_write,
        ActionKind.FINISH: record_writer.do_finish,
        ActionKind.POLL: mailbox.do_poll,
        ActionKind.ALIGNMENT_TIMEOUT: barrier_handler.do_alignment_timeout,
        ActionKind.PROCESS: mailbox.do_process,
        ActionKind.CHECKPOINT: barrier_handler.do_checkpoint,
        ActionKind.BARRIER: barrier_handler.do_barrier,
        ActionKind.RECOVER_OUTPUT: classic_recovery.do_recover_output,
        ActionKind.FINISH_OUTPUT: classic_recovery.do_finish_output,
        ActionKind.CONVERT: classic_recovery.do_convert,
        ActionKind.REQUEST_PARTITIONS: lambda world, task, action: (
            fetched_channel_state_drainer.do_request_partitions(world, task)
        ),
        ActionKind.INSTALL_DRAINER: lambda world, task, action: (
            fetched_channel_state_drainer.do_install_drainer(world, task)
        ),
        ActionKind.FAIL: failover.do_fail,
        ActionKind.CANCEL: failover.do_cancel,
    }
)


def _send(world: NetworkWorld, ref: ActorRef, action: Action) -> None:
    transport.send(world, world.channels[ref.channel])


def _request_floating(world: NetworkWorld, ref: ActorRef, action: Action) -> None:
    transport.request_floating(world, world.channels[ref.channel])


def _write_channel_state(world: NetworkWorld, ref: ActorRef, action: Action) -> None:
    barrier_handler.write_channel_state(world, world.writers[ref.writer])


def _reader_step(step: Callable[[NetworkState, ChannelStateReader], None]) -> ThreadHandler:
    """A step of a channel-state reader: ``step`` on the reader of the task it works for."""

    def handle(world: NetworkWorld, ref: ActorRef, action: Action) -> None:
        reader = world.readers[world.tasks[ref.task].name]
        reader.stepping(world.journal.changes)
        step(world, reader)

    return handle


def _drainer_step(
    step: Callable[[NetworkState, FetchedChannelStateDrainer], None],
) -> ThreadHandler:
    """A step of a V2 drainer: ``step`` on the drainer of the task it works for."""

    def handle(world: NetworkWorld, ref: ActorRef, action: Action) -> None:
        drainer = world.drainers[world.tasks[ref.task].name]
        drainer.stepping(world.journal.changes)
        step(world, drainer)

    return handle


#: what an action of each kind does whose actor is not a task (a transport, a channel-state
#: writer, the coordinator, the scheduler, a reader or a drainer, known by its typed reference):
#: every other kind, and ``write``, which a task (a record) and a writer (channel state) both do
_THREAD_HANDLERS: Mapping[str, ThreadHandler] = by_text(
    {
        ActionKind.SEND: _send,
        ActionKind.REQUEST_FLOATING: _request_floating,
        ActionKind.WRITE: _write_channel_state,
        ActionKind.TRIGGER: lambda world, ref, action: coordinator.trigger(world),
        ActionKind.EXPIRE: lambda world, ref, action: coordinator.expire(world),
        ActionKind.MANUAL_CHECKPOINT: lambda world, ref, action: coordinator.trigger_manual(world),
        ActionKind.RESTART: lambda world, ref, action: failover.restart(world),
        ActionKind.RECOVER_INPUT: _reader_step(classic_recovery.recover_input),
        ActionKind.REQUEST_EXCLUSIVE: _reader_step(classic_recovery.request_exclusive),
        ActionKind.FINISH_INPUT: _reader_step(classic_recovery.finish_input),
        ActionKind.FILTER: _reader_step(channel_state_filtering.filter_step),
        ActionKind.REWRITE: _reader_step(channel_state_filtering.rewrite_step),
        ActionKind.SPILL: _reader_step(spilling_handler.spill_step),
        ActionKind.FINISH_FETCH: _reader_step(spilling_handler.finish_fetch),
        ActionKind.DRAIN: _drainer_step(fetched_channel_state_drainer.drain_step),
        ActionKind.FINISH_DRAIN: _drainer_step(fetched_channel_state_drainer.finish_drain),
    }
)
