"""Which components a copy of the world must copy so that one action can run in it.

A model checker makes a copy of the state for every transition it takes, and most actions
touch a few components of a job: a transport moves one buffer from a subpartition into a
channel, a task polls one of its channels. An action's footprint
(:mod:`flinkstate.runtime.world.independence`) names every resource it may read or write; the
components behind those resources are the only ones the action can change, so a copy needs
its own copies of those alone and can share every other component with the state it was made
from. Neither changes a shared component afterwards: the copy is made for its one action, and
after it each copies a component before changing it (copy on write, by the same plans).

Components link to each other: a gate holds its channels and its pool, a task its gates and
result partitions (which hold their subpartitions and pool) and the channel it reads. A
component copied is linked from copies of the components holding it (``Structure`` says who
holds whom): a copied channel gets a new gate value, a copied subpartition a new result
partition, a copied pool new gates and partitions drawing on it, and any of these a new value
of the task owning them, whose own state (queues, counts) it shares when the action does not
touch it (``NetworkWorld.own``).
The rest of the state (the segment ledger and journal, the network pools, records, deliveries,
order, checkpoints, event time, the action cache) is copied whole every time: every step
touches it, and it is small.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from flinkstate.runtime.partition.result_partition import ResultPartition
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world.exploration.footprint import Resource, ResourceKind

#: plans kept per world before the cache starts afresh (distinct footprints are few in a
#: run, but nothing bounds them in principle)
MAX_PLANS = 65_536


class CopyPlan(NamedTuple):
    """The components whose own state an action may change, by their keys in the world's
    maps: a copy for it makes them its own (``NetworkWorld.own``, which also links the
    components holding them to the copies, from ``Structure``); the others it shares with the
    state it was copied from."""

    #: tasks whose own state the action touches
    tasks: frozenset[str]
    #: their gates (a gate's state is its task's: the channel it polls next)
    gates: frozenset[str]
    subpartitions: frozenset[str]
    channels: frozenset[str]
    #: local pools, by name
    pools: frozenset[str]
    #: the readers' and drainers' keys (a task's name): those of the tasks whose own state
    #: is touched
    helpers: frozenset[str]
    #: whether the channel-state writers are copied (the checkpoint in progress is touched)
    writers: bool
    #: the positions of the copied components' keys among the world's
    #: (``NetworkState.components``): the keys to compute again after the action
    key_positions: tuple[int, ...]


class Owned:
    """The per-name components a world has copied for itself since it last shared them (with
    a snapshot, or a copy made from it or it from): those it may change in place. A world
    whose ``owned`` is None shares nothing and changes anything in place.

    A plain slotted class rather than a dataclass: a model checker makes two for every
    transition, and the generated initializer with its factories costs twice as much."""

    __slots__ = (
        "channels",
        "gates",
        "helpers",
        "linked",
        "pools",
        "subpartitions",
        "tasks",
        "writers",
    )

    def __init__(self) -> None:
        self.tasks: set[str] = set()
        #: tasks whose value is its own (its links to gates, partitions and the current
        #: channel) while their queues and counts are still shared: linked to copies, not
        #: copied
        self.linked: set[str] = set()
        self.gates: set[str] = set()
        self.subpartitions: set[str] = set()
        self.channels: set[str] = set()
        self.pools: set[str] = set()
        self.helpers: set[str] = set()
        self.writers = False


class Structure(NamedTuple):
    """Who holds whom, read once from the job as built."""

    #: task name ("task map[0]") -> its key in the world's tasks
    task_key: dict[str, str]
    #: channel -> the subpartition feeding it, its gate
    subpartition_of: dict[str, str]
    gate_of: dict[str, str]
    #: gate -> the key of the task reading it
    gate_task: dict[str, str]
    #: subpartition -> the key of the task writing it
    subpartition_task: dict[str, str]
    #: local pool -> the gates and the tasks (through a result partition) drawing on it
    pool_gates: dict[str, tuple[str, ...]]
    pool_tasks: dict[str, tuple[str, ...]]
    #: task key -> its gates' names, and its name (the key of its reader and drainer)
    task_gates: dict[str, tuple[str, ...]]
    task_name: dict[str, str]
    #: each per-name component (map, name) -> the position of its key among the world's
    position: dict[tuple[str, str], int]
    #: the positions of the channel-state writers' keys
    writer_positions: tuple[int, ...]


class Components(Protocol):
    """What a plan is computed from: the world's tasks (which hold the links) and its
    per-name components in the order of their keys."""

    @property
    def tasks(self) -> dict[str, Task]: ...

    def component_names(self) -> tuple[tuple[str, str], ...]: ...


@dataclass
class PartialCopies:
    """Copy plans of one run by footprint, and the structure they are computed from: fixed
    once the world is built, shared by every copy of it (a cache, not state)."""

    structure: Structure | None = None
    plans: dict[frozenset[Resource], CopyPlan] = field(default_factory=dict)
    component_names: tuple[tuple[str, str], ...] | None = None
    #: the plans copying every component and none
    all: CopyPlan | None = None
    none: CopyPlan | None = None

    def everything(self, world: Components) -> CopyPlan:
        """A plan copying every component (an action that may touch anything)."""
        if self.all is None:
            names = self.names(world)

            def of(kind: str) -> frozenset[str]:
                return frozenset(name for where, name in names if where == kind)

            helpers = of("readers") | of("drainers")
            self.all = CopyPlan(
                of("tasks"),
                of("gates"),
                of("subpartitions"),
                of("channels"),
                of("pools"),
                helpers,
                True,
                tuple(range(len(names))),
            )
        return self.all

    def nothing(self) -> CopyPlan:
        """A plan copying no component (a snapshot shares them all)."""
        if self.none is None:
            empty: frozenset[str] = frozenset()
            self.none = CopyPlan(empty, empty, empty, empty, empty, empty, False, ())
        return self.none

    def plan(self, world: Components, touched: frozenset[Resource]) -> CopyPlan:
        """The components whose own state an action with the footprint ``touched`` may
        change."""
        plan = self.plans.get(touched)
        if plan is not None:
            return plan
        structure = self.holders(world)
        if len(self.plans) >= MAX_PLANS:
            self.plans.clear()
        plan = self.plans[touched] = _plan(structure, touched)
        return plan

    def holders(self, world: Components) -> Structure:
        """Who holds whom in the world's job (a channel's gate, a gate's task, ...)."""
        if self.structure is None:
            self.structure = _structure(world.tasks.items(), self.names(world))
        return self.structure

    def names(self, world: Components) -> tuple[tuple[str, str], ...]:
        """The world's per-name components as (map, name), in the order of their keys."""
        if self.component_names is None:
            self.component_names = world.component_names()
        return self.component_names


def _structure(tasks: Iterable[tuple[str, Task]], names: tuple[tuple[str, str], ...]) -> Structure:
    task_key: dict[str, str] = {}
    subpartition_of: dict[str, str] = {}
    gate_of: dict[str, str] = {}
    gate_task: dict[str, str] = {}
    subpartition_task: dict[str, str] = {}
    pool_gates: dict[str, list[str]] = {}
    pool_tasks: dict[str, list[str]] = {}
    task_gates: dict[str, tuple[str, ...]] = {}
    task_name: dict[str, str] = {}
    for key, task in tasks:
        task_key[task.name] = key
        task_name[key] = task.name
        task_gates[key] = tuple(g.name for g in task.gates)
        for gate in task.gates:
            gate_task[gate.name] = key
            pool_gates.setdefault(gate.pool.name, []).append(gate.name)
            for channel in gate.channels:
                gate_of[channel.name] = gate.name
        partition: ResultPartition
        for partition in task.partitions:
            pool_tasks.setdefault(partition.pool.name, []).append(key)
            for sub in partition.subpartitions:
                subpartition_of[sub.channel] = sub.name
                subpartition_task[sub.name] = key
    return Structure(
        task_key,
        subpartition_of,
        gate_of,
        gate_task,
        subpartition_task,
        {name: tuple(gates) for name, gates in pool_gates.items()},
        {name: tuple(dict.fromkeys(owners)) for name, owners in pool_tasks.items()},
        task_gates,
        task_name,
        {name: position for position, name in enumerate(names)},
        tuple(position for position, (where, _) in enumerate(names) if where == "writers"),
    )


def _plan(structure: Structure, touched: frozenset[Resource]) -> CopyPlan:
    tasks: set[str] = set()
    subpartitions: set[str] = set()
    channels: set[str] = set()
    pools: set[str] = set()
    helper_names: set[str] = set()
    writers = False
    for resource in touched:
        kind = resource.kind
        if kind is ResourceKind.TASK:
            tasks.add(structure.task_key[resource.name])
        elif kind is ResourceKind.CHANNEL:
            channels.add(resource.name)
        elif kind is ResourceKind.LINK:  # a subpartition's queue, and a local channel on it
            channels.add(resource.name)
            subpartitions.add(structure.subpartition_of[resource.name])
        elif kind is ResourceKind.BUILDER:
            subpartitions.add(structure.subpartition_of[resource.name])
        elif kind is ResourceKind.POOL:
            pools.add(resource.name)
        elif kind is ResourceKind.CHECKPOINT:
            writers = True
        elif kind is ResourceKind.HELPER:  # a reader's or drainer's step, not its task's
            helper_names.add(resource.name)
        # records, paths, sources, event time, the heap (the ledger) and the network pools are
        # copied every time;
        # whether a channel has something to poll is read (a step adding to an empty queue
        # writes its link or channel)
    # a task's own state: its gates (the channel polled next), its reader and drainer
    helpers = frozenset(helper_names.union(structure.task_name[t] for t in tasks))
    gates = {gate for task in tasks for gate in structure.task_gates[task]}
    position = structure.position
    copied = [
        *(("tasks", name) for name in tasks),
        *(("gates", name) for name in gates),
        *(("subpartitions", name) for name in subpartitions),
        *(("channels", name) for name in channels),
        *(("readers", name) for name in helpers),
        *(("drainers", name) for name in helpers),
        *(("pools", name) for name in pools),
    ]
    return CopyPlan(
        frozenset(tasks),
        frozenset(gates),
        frozenset(subpartitions),
        frozenset(channels),
        frozenset(pools),
        helpers,
        writers,
        tuple(
            sorted(
                [
                    *(position[key] for key in copied if key in position),
                    *(structure.writer_positions if writers else ()),
                ]
            )
        ),
    )
