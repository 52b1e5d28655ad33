"""The state of one run: every component, and the few queries the behaviour modules share.

The state is data: segment ledger and journal, buffer pools, the tasks with their result
partitions and input gates, records and where they are, the checkpoint in progress and the
completed ones, the restore's readers and drainers, and the action cache. What the actors do to
it is written in the behaviour modules, which import this module and nothing above it;
:class:`~flinkstate.runtime.world.world.NetworkWorld` puts both together for the simulator.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from flinkstate.rescale.channel_selection import ChannelSelection
from flinkstate.runtime.actor_ref import ActorRef
from flinkstate.runtime.buffer.buffer import Buffer, LocalBufferPool, NetworkBufferPool
from flinkstate.runtime.buffer.ledger import SegmentLedger, StepJournal
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.buffer.pools import BufferPools
from flinkstate.runtime.buffer.records import Fragment, Record
from flinkstate.runtime.checkpoint.channel.channel_state_reader import ChannelStateReader
from flinkstate.runtime.checkpoint.channel.channel_state_writer import ChannelStateWriter
from flinkstate.runtime.checkpoint.channel.fetched_channel_state import (
    FetchedChannelStateDrainer,
    SpillAccount,
)
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint, CheckpointInProgress
from flinkstate.runtime.checkpoint.coordinator_state import CoordinatorState
from flinkstate.runtime.checkpoint.state_assignment import StateAssignment
from flinkstate.runtime.copying import FIXED, Fixed, NotState, StateKey
from flinkstate.runtime.failover import failover
from flinkstate.runtime.failover.failure_handling import FailureHandlingResult
from flinkstate.runtime.jobgraph import JobGraph
from flinkstate.runtime.options import RecoveryGeneration, RecoveryOptions, RunOptions
from flinkstate.runtime.partition.consumer.input_gate import Channel, Gate
from flinkstate.runtime.partition.record_writer import IN_FLIGHT, ProducingTask
from flinkstate.runtime.partition.result_partition import ResultPartition, Subpartition
from flinkstate.runtime.shuffle.config import NetworkConfig
from flinkstate.runtime.tasks import task_cleanup
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.watermark import watermarks
from flinkstate.runtime.watermark.event_time import EventTimeState
from flinkstate.runtime.world import checkpoint_invariants
from flinkstate.runtime.world.actors import ActionCache
from flinkstate.runtime.world.exploration.footprint import Footprints
from flinkstate.runtime.world.exploration.interference import Interference
from flinkstate.runtime.world.exploration.partial_copy import Owned, PartialCopies
from flinkstate.runtime.world.record_order import RecordOrder
from flinkstate.sim.core import Violation


@dataclass
class NetworkState:
    """All mutable state of one run, as components; what the actors do to it lives in the
    behaviour modules and :class:`~flinkstate.runtime.world.world.NetworkWorld`."""

    graph: JobGraph
    config: NetworkConfig
    #: every choice the run was set up with (fixed; shared by copies)
    options: RunOptions = field(default_factory=RunOptions)
    #: the pending checkpoint, the completed and failed ones, whether the job failed
    checkpoints: CoordinatorState = field(default_factory=CoordinatorState)
    #: the failover of a failed subtask's region, once a subtask failed (a value: replaced,
    #: never changed, so copies share it)
    failover: FailureHandlingResult | None = None
    #: the step in progress and the run's violations; every segment's owner
    journal: StepJournal = field(default_factory=StepJournal)
    ledger: SegmentLedger = field(init=False)
    #: the journal's list of violations (read by the engine after every step)
    violations: list[Violation] = field(init=False)
    #: the TaskManagers' network buffer pools and the local pools taken from them
    buffer_pools: BufferPools = field(init=False)
    tasks: dict[str, Task] = field(default_factory=dict)
    subpartitions: dict[str, Subpartition] = field(default_factory=dict)
    channels: dict[str, Channel] = field(default_factory=dict)
    gates: dict[str, Gate] = field(default_factory=dict)
    records: dict[int, Record] = field(default_factory=dict)
    #: each (record, consuming gate): IN_FLIGHT, or the step the record was processed at
    deliveries: dict[tuple[int, str], int] = field(default_factory=dict)
    #: what the order invariants remember: paths, last seqs per path and key, write steps
    order: RecordOrder = field(default_factory=RecordOrder)
    writers: dict[str, ChannelStateWriter] = field(default_factory=dict)
    #: which writer serves each task (fixed once built)
    writer_of: dict[str, str] = field(default_factory=dict)
    #: a restored job: the checkpoint's share of each new subtask (None: a fresh start)
    restore: StateAssignment | None = None
    #: the restore's recovery settings: which code runs and why (None: a fresh start)
    recovery: RecoveryOptions | None = None
    drainers: dict[str, FetchedChannelStateDrainer] = field(default_factory=dict)
    #: V2's spill files counted: bytes written, files alive now and at most
    spill: SpillAccount = field(default_factory=SpillAccount)
    readers: dict[str, ChannelStateReader] = field(default_factory=dict)
    #: records a subtask dropped after rescaling because the partitioner selects another subtask
    filtered: dict[tuple[int, str], int] = field(default_factory=dict)
    next_record: int = 0
    #: the next buffer or write request number (``Buffer.uid``): presentation only, never
    #: part of the fingerprint
    next_uid: int = 0
    #: the old channel a demultiplexed record came through, until it is processed
    recovered_via: dict[tuple[int, str], str] = field(default_factory=dict)
    #: each actor's enabled actions, recomputed only for actors whose state changed
    actions: ActionCache = field(init=False)
    #: each task's key in ``tasks`` by its name ("task map[0]" -> "map[0]"), fixed once built
    task_keys: dict[str, str] = field(init=False)
    key_ordered: frozenset[str] = field(init=False)
    #: operators that read their inputs one after the other (``InputSelectable``)
    sequential: frozenset[str] = field(init=False)
    #: the keys in ``tasks`` of the source subtasks, fixed once built (read every step)
    source_keys: tuple[str, ...] = field(init=False)
    #: the records the restart read back from the checkpoint, by id (empty for a fresh job)
    recovered_records: frozenset[int] = frozenset()
    #: valves, task watermarks and late records (empty in a job without watermarks)
    event_time: EventTimeState = field(default_factory=EventTimeState)
    #: what the run was built from (``configuration_of``), hashed once and shared by copies
    configuration: Fixed = field(init=False)
    #: every how many steps the whole world is audited (``invariants.audit_interval``; fixed
    #: once built)
    audit_every: int = field(init=False)

    #: per actor, the resources its everyday actions stay within (fixed once built)
    footprints: Footprints = field(init=False)
    #: per actor, everything it may ever touch (fixed once built; persistent sets read it)
    interference: Interference = field(init=False)
    #: which components a copy for one action must copy, by footprint (a cache shared by
    #: copies: ``NetworkWorld.clone_within``)
    partial_copies: PartialCopies = field(init=False)
    #: the keys of its per-name components (``COMPONENT_MAPS``, in their order) known for
    #: the state as it is, and the positions among them computed since (None: none known)
    component_keys: list[StateKey] | None = field(default=None, init=False)
    stale_keys: tuple[int, ...] = field(default=(), init=False)
    #: what stays known of them through the one action a copy was made for
    #: (``NetworkWorld.clone_within``): the keys, and the positions of those it copied
    inherited_keys: tuple[list[StateKey], tuple[int, ...]] | None = field(default=None, init=False)
    #: the run-wide parts of the key last computed (of this state or the one it was copied
    #: from), whose objects an equal part is kept as (``key_with``)
    run_keys: tuple[Hashable, ...] | None = field(default=None, init=False)

    #: the components it copied for itself since it last shared them, which it may change in
    #: place (None: it shares none; ``NetworkWorld.snapshot``)
    owned: Owned | None = field(default=None, init=False)
    #: a copy made for one action that has not taken it yet (``NetworkWorld.clone_within``)
    prepared: bool = field(default=False, init=False)
    #: every task found RUNNING and no gate demultiplexing: it stays so (a task's phase only
    #: moves forward, a gate ends its demultiplexing for good), so the coordinator looks once
    restore_over: bool = field(default=False, init=False)
    #: until then, a task (by key) not RUNNING or a gate still demultiplexing (by name), the
    #: coordinator's first look next time: while it is so, the restore is not over
    restore_hint: tuple[str, str] | None = field(default=None, init=False)

    #: what :meth:`state_key` leaves out; the configuration is in it once, as ``configuration``
    NOT_STATE: ClassVar[NotState] = {
        "graph": "configuration (in the key as ``configuration``)",
        "config": "configuration (in the key as ``configuration``)",
        "options": "configuration (in the key as ``configuration``)",
        "restore": "configuration (in the key as ``configuration``)",
        "recovery": "follows from the options and the restore",
        "violations": "the journal's own list, keyed with the journal",
        "writer_of": FIXED,
        "audit_every": FIXED,
        "next_uid": "presentation: numbers buffers and write requests for drawing",
        "actions": "a cache of the actions the state offers (a function of the state)",
        "task_keys": FIXED,
        "footprints": FIXED,
        "interference": FIXED,
        "partial_copies": "a cache of copy plans, shared by copies (a function of the job)",
        "key_ordered": FIXED,
        "sequential": FIXED,
        "source_keys": FIXED,
        "recovered_records": FIXED,
        "component_keys": "a cache of the components' keys (``fingerprint``)",
        "stale_keys": "a cache of the components' keys (``fingerprint``)",
        "inherited_keys": "a cache of the components' keys (``fingerprint``)",
        "run_keys": "a cache of the run-wide parts' keys (``fingerprint``)",
        "owned": "bookkeeping of copies: which components it shares (``snapshot``)",
        "prepared": "bookkeeping of copies: made for its next action (``clone_within``)",
        "restore_over": "a cache of what the tasks' phases and the gates say, once it holds",
        "restore_hint": "a cache: where the coordinator looks first (``restore_over``)",
    }

    # ------------------------------------------------------------------ the state as a value

    def state_key(self) -> StateKey:
        """The run's state as one value: equal for two worlds exactly when they are in the
        same state, so that they behave the same from here on (the same actions enabled, the
        same states and the same invariants broken after the same actions). Built from each
        component's ``state_key``; what is left out is listed in the ``NOT_STATE`` of each
        (the step in progress, the numbers buffers are drawn by, running maxima for reports,
        caches, links between components keyed elsewhere, what is fixed once built). Maps
        that are only looked up (deliveries, paths, ...) are keyed as sets: the order their
        entries were added in depends on the interleaving, and nothing but the order of a
        report's lines reads it.

        Steps noted with records (when each was written, processed, filtered, found late) are
        keyed by what reads them, so that interleavings differing only in when independent
        records moved meet in one state: a write or process step is read only against its
        task's snapshot in the pending checkpoint (``checkpoint_invariants.check_checkpoint``),
        so it is keyed as before or after that snapshot (a snapshot still to come is after
        every step noted so far); the steps of filtered and late records are read by the views
        only.
        Steps that are copied on (a snapshot's, into the completed checkpoint) or that time
        what comes (the step count, a checkpoint's trigger, the last end, a failure) are kept.
        """
        return self.key_with([c.state_key() for c in self.components()], known=False)

    def components(self) -> Iterator[_Keyed]:
        """Its per-name components (tasks, subpartitions, channels, gates, writers, drainers,
        readers, local pools), in the order their keys take in :meth:`state_key`."""
        for name in COMPONENT_MAPS:
            yield from getattr(self, name).values()

    def component_names(self) -> tuple[tuple[str, str], ...]:
        """Its per-name components, each as (map, name), in :meth:`components`' order."""
        return tuple((name, key) for name in COMPONENT_MAPS for key in getattr(self, name))

    @property
    def component_count(self) -> int:
        """Its tasks, subpartitions, channels and gates: what a whole copy copies and the
        audit reads (``invariants.audit_interval``)."""
        return len(self.tasks) + len(self.subpartitions) + len(self.channels) + len(self.gates)

    def known_keys(self) -> list[StateKey]:
        """The keys of its per-name components for the state as it is (:meth:`components`'
        order), computed where not known and kept (``component_keys``) until the next step:
        for a state that stays as it is, as one copied from does
        (``NetworkWorld.clone_within``)."""
        keys = self.component_keys
        if keys is None:
            keys = self.component_keys = [c.state_key() for c in self.components()]
            self.stale_keys = ()
        elif self.stale_keys:
            names = self.partial_copies.names(self)
            for position in self.stale_keys:
                where, name = names[position]
                key = getattr(self, where)[name].state_key()
                # a component copied for an action that left it as it was keeps its key's
                # object: a model checker numbers an unchanged part by identity
                if key != keys[position]:
                    keys[position] = key
            self.stale_keys = ()
        return keys

    def key_with(self, components: list[StateKey], *, known: bool = True) -> StateKey:
        """:meth:`state_key` with its per-name components' keys given (in
        :meth:`components`' order); ``known``: with the ledger's chunks and the global pools'
        keys as they keep them (``SegmentLedger.chunk_keys``, ``BufferPools.state_key``), else
        made afresh."""
        pending = self.checkpoints.pending
        cut = {} if pending is None else pending.cut()
        run_keys = (
            *self.ledger.other_keys(),
            *self.buffer_pools.network_state_key(known=known),
            self.checkpoints.state_key(),
            self.failover,
            # made with increasing ids, never removed
            tuple(self.records.values()),
            self._deliveries_key(cut),
            self.order.state_key(cut),
            self.spill.state_key(),
            # which records were filtered; the step of each is for the captions only
            frozenset(self.filtered),
            self.next_record,
            frozenset(self.recovered_via.items()),
            self.event_time.state_key(),
        )
        # a run-wide part equal to the one this state's key had before (or the key of the
        # state it was copied from) is that very object: a model checker numbers an unchanged
        # part by identity, without hashing it
        before = self.run_keys
        if type(before) is tuple and len(before) == len(run_keys):
            if run_keys == before:  # most steps change none: one comparison in C
                run_keys = before
            else:
                pairs = zip(run_keys, before, strict=True)
                run_keys = tuple([b if a == b else a for a, b in pairs])
        self.run_keys = run_keys
        # one flat tuple of the components' keys (how many tasks, channels, ... a run has is
        # fixed): a model checker stores the parts that did not change once for all states.
        # The ledger's chunks keep their objects themselves (``SegmentLedger.chunk_keys``)
        return (
            self.configuration,
            self.journal.state_key(),
            *self.ledger.chunk_keys(fresh=not known),
            *run_keys,
            *components,
        )

    def _deliveries_key(self, cut: dict[str, int]) -> frozenset[tuple[tuple[int, str], int]]:
        """Each delivery: in flight (``IN_FLIGHT``), or processed before (0) or after (1) its
        consumer's snapshot in the pending checkpoint (``cut``)."""
        if not cut:
            return frozenset(
                [
                    (key, IN_FLIGHT if step == IN_FLIGHT else 0)
                    for key, step in self.deliveries.items()
                ]
            )
        consumer = {name: gate.task for name, gate in self.gates.items()}
        keyed: list[tuple[tuple[int, str], int]] = []
        for key, step in self.deliveries.items():
            if step == IN_FLIGHT:
                keyed.append((key, IN_FLIGHT))
            else:
                task = consumer[key[1]]
                keyed.append((key, int(task in cut and step >= cut[task])))
        return frozenset(keyed)

    # ------------------------------------------------------------------ the ledger, read

    @property
    def step(self) -> int:
        """The number of steps taken (the next step's index)."""
        return self.journal.step

    @property
    def owner(self) -> list[Owner]:
        """Each segment's owner now (``SegmentLedger.owner``)."""
        return self.ledger.owner

    @property
    def home(self) -> list[Owner]:
        return self.ledger.home

    @property
    def shares(self) -> dict[int, list[Owner]]:
        return self.ledger.shares

    @property
    def network_pools(self) -> dict[str, NetworkBufferPool]:
        """Each TaskManager's global pool, by name (``BufferPools.network``)."""
        return self.buffer_pools.network

    @property
    def pools(self) -> dict[str, LocalBufferPool]:
        """Every result partition's and input gate's local pool, by name."""
        return self.buffer_pools.local

    @property
    def heap_bytes(self) -> int:
        return self.ledger.heap_bytes

    @property
    def heap_peak(self) -> int:
        return self.ledger.heap_peak

    @property
    def effective_generation(self) -> RecoveryGeneration:
        """The recovery code that runs: ``options.generation`` if checkpointing during
        recovery is on for this restore, else classic (``RecoveryOptions``)."""
        if self.recovery is None:
            return RecoveryGeneration.CLASSIC
        return self.recovery.effective_generation

    @property
    def recovery_note(self) -> str:
        """Why this restore recovers the way it does, where its settings do not say it alone
        ("" for a fresh start or settings that say it all)."""
        return "" if self.recovery is None else self.recovery.note

    def partition_named(self, name: str) -> ResultPartition:
        """A result partition by its name (where a shared recovered buffer returns: rare, so
        looked up rather than indexed)."""
        for task in self.tasks.values():
            for partition in task.partitions:
                if partition.name == name:
                    return partition
        raise AssertionError(f"no result partition {name}")

    def actor(self, name: str) -> ActorRef:
        """The typed actor this world named ``name`` (a task's, transport's, writer's, reader's,
        drainer's or the coordinator's name, as its actions carry it); KeyError for any other."""
        ref = self.actions.index.refs.get(name)
        if ref is None:
            raise KeyError(f"no actor {name!r} in this world")
        return ref

    def task_named(self, name: str) -> Task:
        """The task of an actor or holder name (``task map[0]``), as channels, readers,
        drainers and write requests record it."""
        return self.tasks[self.task_keys[name]]

    def selected_subtask(self, gate: Gate, record: int) -> int:
        """The subtask the gate's partitioner selects for a record at the new parallelism
        (Flink's ``selectChannel``): every generation's record filter keeps a record only there."""
        down = self.graph.operator(self.task_named(gate.task).operator)
        selection = ChannelSelection.of(gate.exchange.partitioner)
        assert selection is not ChannelSelection.NONE, (
            f"{gate.name}: a partitioner that does not select by key selects no one subtask"
        )
        return selection.select(
            self.records[record].key, down.effective_max_parallelism, down.parallelism
        )

    def new_buffer(
        self,
        segment: int,
        capacity: int,
        used: int = 0,
        fragments: list[Fragment] | None = None,
        *,
        event: str | None = None,
        checkpoint: int = -1,
        priority: bool = False,
        descriptor: tuple[int, int] | None = None,
        recovered: bool = False,
    ) -> Buffer:
        """A new buffer (or heap event) with the next uid, so that it can be followed while
        it travels; every buffer of the world is made here. ``recovered``: it carries channel
        state read back by recovery."""
        uid = self.next_uid
        self.next_uid += 1
        return Buffer(
            segment,
            capacity,
            used,
            [] if fragments is None else fragments,
            event,
            checkpoint,
            priority,
            descriptor,
            uid,
            recovered,
        )

    def recovered_watermark(
        self,
        channel: Channel,
        virtual_channel: tuple[int, int] | None,
        element: Record,
        aggregate: bool,
    ) -> int | None:
        """A watermark or status read back from a virtual channel of ``channel``: the element
        to pass on, or None to hold it back (event time's ``recovered_element``)."""
        return watermarks.recovered_element(self, channel, virtual_channel, element, aggregate)

    def check_completed(self, checkpoint: Checkpoint, progress: CheckpointInProgress) -> None:
        """The checks of a checkpoint the barrier handler completed: a consistent cut that
        holds every unfinished subtask's state (``checkpoint_invariants``)."""
        checkpoint_invariants.check_checkpoint(self, checkpoint, progress)
        checkpoint_invariants.check_checkpoint_completeness(self, checkpoint, progress)

    def fail_job(self, why: str) -> None:
        """The whole job fails over for ``why`` (Flink's ``FailJobCallback.failJob``)."""
        task_cleanup.fail_job(self, why)

    def fail_externally(self, task: str, cause: str) -> None:
        """The task keyed ``task`` fails for ``cause`` (Flink's ``TaskActions.failExternally``):
        its region fails over."""
        failover.fail_task(self, self.tasks[task], cause)

    def partition_of(self, task: ProducingTask, sub: Subpartition) -> ResultPartition:
        for partition in task.partitions:
            if partition.name == sub.partition:
                return partition
        raise AssertionError(f"{sub.name} is not a subpartition of {task.name}")

    def gate_of(self, channel: Channel) -> Gate:
        return self.gates[channel.gate]

    def release_spill(self, task: str) -> bool:
        """Drop one reference to a task's spill files; True when that deleted them."""
        return self._let_go_of_spill(task, close=False)

    def close_spill(self, task: str) -> bool:
        """Delete a task's spill files whatever references remain (``FetchedChannelState.close``);
        True when that deleted them (False: gone already)."""
        return self._let_go_of_spill(task, close=True)

    def _let_go_of_spill(self, task: str, *, close: bool) -> bool:
        """Release or close a task's spill files, counting them once they are deleted."""
        state = self.drainers[task].state
        assert state is not None
        deleted = state.close() if close else state.release()
        if deleted:
            self.spill.deleted(state)
        return deleted


class _Keyed(Protocol):
    def state_key(self) -> StateKey: ...


#: the world's maps of per-name components, in the order their keys take in its key
COMPONENT_MAPS = (
    "tasks",
    "subpartitions",
    "channels",
    "gates",
    "writers",
    "drainers",
    "readers",
    "pools",
)


def configuration_of(state: NetworkState) -> Fixed:
    """What a run is built from, hashed once: the job, the network, the options and the
    restore, which ``assign_state`` makes from the checkpoint, the job at its new parallelism
    and how the mappings are looked up. Every field fixed once the world is built follows
    from it. How often the run is audited (``full_check_every``, ``scale_audits``,
    ``check_actions``) is left out: it decides when the ledger is scanned, not what the state
    is, so a run loaded back from its trace with other audit settings is in the same states."""
    options = dataclasses.replace(
        state.options, full_check_every=0, scale_audits=True, check_actions=False
    )
    restore = state.restore
    restored: Hashable = (
        None
        if restore is None
        else (
            restore.checkpoint,
            restore.graph,
            restore.recover_output_on_downstream,
            restore.connected_mapping,
            restore.input_reassignment,
        )
    )
    return Fixed((state.graph, state.config, options, restored))
