"""The state of one run: every component, and the few queries the behaviour modules share.

The state is data: segment ledger and journal, buffer pools, the tasks with their result
partitions and input gates, records and where they are, the checkpoint in progress and the
completed ones, the restore's readers and drainers, and the action cache. What the actors do to
it is written in the behaviour modules, which import this module and nothing above it;
:class:`~flinkstate.network.world.NetworkWorld` puts both together for the simulator.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from flinkstate.keygroups import assign_to_key_group
from flinkstate.network.actors import ActionCache, ActorRef
from flinkstate.network.buffer import Buffer, LocalBufferPool, NetworkBufferPool
from flinkstate.network.channel_state_reader import ChannelStateReader
from flinkstate.network.channel_state_writer import ChannelStateWriter
from flinkstate.network.config import NetworkConfig
from flinkstate.network.consumer import Channel, Gate
from flinkstate.network.coordinator_state import CoordinatorState
from flinkstate.network.event_time import EventTimeState
from flinkstate.network.failure_handling import FailureHandlingResult
from flinkstate.network.fetched_channel_state import (
    FetchedChannelStateDrainer,
    SpillAccount,
)
from flinkstate.network.graph import JobGraph
from flinkstate.network.ledger import SegmentLedger, StepJournal
from flinkstate.network.options import RecoveryGeneration, RecoveryOptions, RunOptions
from flinkstate.network.owners import Owner
from flinkstate.network.partition import ResultPartition, Subpartition
from flinkstate.network.pools import BufferPools
from flinkstate.network.record_order import RecordOrder
from flinkstate.network.records import Fragment, Record
from flinkstate.network.state_assignment import StateAssignment
from flinkstate.network.task import Task
from flinkstate.rescale.owner_rule import OwnerRule
from flinkstate.sim.core import Violation

#: a delivery not processed yet (a processed one holds the step it was processed at)
IN_FLIGHT = -1


@dataclass
class NetworkState:
    """All mutable state of one run, as components; what the actors do to it lives in the
    behaviour modules and :class:`~flinkstate.network.world.NetworkWorld`."""

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
    #: records a subtask dropped after rescaling because another subtask owns them
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
    #: the records the restart read back from the checkpoint, by id (empty for a fresh job)
    recovered_records: frozenset[int] = frozenset()
    #: valves, task watermarks and late records (empty in a job without watermarks)
    event_time: EventTimeState = field(default_factory=EventTimeState)

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

    def record_owner(self, gate: Gate, record: int) -> int:
        """The subtask a record belongs to under the gate's partitioner (new parallelism):
        the rule every generation's record filter applies."""
        down = self.graph.operator(self.task_named(gate.task).operator)
        rule = OwnerRule.of(gate.exchange.partitioner)
        assert rule is not OwnerRule.NONE, f"{gate.name}: no owner without a keyed partitioner"
        return rule.owner(
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

    def partition_of(self, task: Task, sub: Subpartition) -> ResultPartition:
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


@functools.lru_cache(maxsize=65536)
def key_group_of(key: int, max_parallelism: int) -> int:
    """The key group of a (long) key: Flink's arithmetic, computed once per key, as keys
    repeat within a run."""
    return assign_to_key_group(key, max_parallelism, "long")
