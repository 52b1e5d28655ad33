"""What each actor may ever touch: the static half of what a persistent set needs to know.

A persistent set (Godefroid) of a state is a set of its enabled actions that nothing the other
actors can do first depends on. Here a set is one actor's enabled actions, persistent where no
other actor may touch what they touch, nor what decides which actions the actor has (its
*guard*: a task polling reads whether each of its channels has something; a task computing,
writing or processing reads only itself). What each actor may ever touch (its *reach*) follows
from the job as built (:class:`~flinkstate.runtime.world.exploration.footprint.Footprints`),
plus the run-wide resources its kind of step draws on: record ids for a source. When the run
is calm enough for every step to stay within its actor's reach is the world's to say
(:mod:`flinkstate.runtime.world.isolation`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import transport_name
from flinkstate.runtime.jobgraph import OperatorKind
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world.exploration.footprint import (
    CHECKPOINT,
    HEAP,
    RECORDS,
    SOURCES,
    Footprints,
    Resource,
    ResourceKind,
    TaskFootprint,
    TransportFootprint,
)

_POOL = ResourceKind.POOL
_SOURCES = frozenset((SOURCES,))

#: the kinds of a task's step that read only the task itself (and what the step touches) to
#: decide what the task does next: nothing another actor does changes them
_SELF_DECIDED = frozenset(
    {ActionKind.COMPUTE, ActionKind.WRITE, ActionKind.PROCESS, ActionKind.REQUEST_BUFFER}
)


@dataclass(frozen=True)
class Interference:
    """Per actor (by the name its actions carry), everything it may ever touch, and per
    resource the actors that may; fixed once a world is built and shared by its copies."""

    reach: Mapping[str, frozenset[Resource]]
    users: Mapping[Resource, tuple[str, ...]]
    #: per task actor, its resources (its guard is read from them)
    tasks: Mapping[str, TaskFootprint]

    @classmethod
    def of(
        cls, tasks: Iterable[Task], footprints: Footprints, *, lose_record: bool = False
    ) -> Interference:
        """The reach of every task and transport of a job as built (``lose_record``: the
        fault that reads how many records exist is on).

        Examples:
            >>> from flinkstate.catalogue.topologies import topology
            >>> world = topology("keyed").build({"parallelism": 1, "source_parallelism": 1})
            >>> found = Interference.of(world.tasks.values(), world.footprints)
            >>> sorted(found.reach)
            ['task counter[0]', 'task sink[0]', 'task source[0]']
            >>> RECORDS in found.reach["task source[0]"], RECORDS in found.reach["task sink[0]"]
            (True, False)
            >>> found.users[RECORDS]
            ('task source[0]',)
        """
        reach: dict[str, frozenset[Resource]] = {}
        own_of: dict[str, TaskFootprint] = {}
        for task in tasks:
            own = footprints.tasks[task.name]
            drawn = {CHECKPOINT, HEAP}
            if task.kind is OperatorKind.SOURCE:
                drawn.update((RECORDS, SOURCES))
            if task.gates and lose_record:  # the fault reads how many records exist
                drawn.add(RECORDS)
            reach[task.name] = _task_reach(own) | drawn
            own_of[task.name] = own
        for name, transport in footprints.transports.items():
            reach[transport_name(name)] = _transport_reach(transport)
        users: dict[Resource, list[str]] = {}
        for actor, resources in reach.items():
            for resource in resources:
                users.setdefault(resource, []).append(actor)
        return cls(reach, {r: tuple(a) for r, a in users.items()}, own_of)

    def guard(self, actor: str, kind: str) -> frozenset[Resource] | None:
        """What decides which actions ``actor`` has, its next being of ``kind`` (beyond what
        that action touches): a task that computes, writes, processes or asks for a buffer
        decides by itself; a task polling or finishing reads whether each of its channels has
        something, a source also whether any source has records left; a transport reads the
        subpartition it carries, its channel and the pools a floating buffer comes from.
        None for an actor without a reach (a reader, a writer, the coordinator).

        Examples:
            >>> from flinkstate.catalogue.topologies import topology
            >>> found = topology("keyed").build({"parallelism": 1}).interference
            >>> sorted(r.kind.value for r in found.guard("task sink[0]", "process"))
            ['task']
            >>> found.guard("checkpoint-coordinator", "trigger") is None
            True
        """
        own = self.tasks.get(actor)
        if own is None:
            return self.reach.get(actor)
        if kind in _SELF_DECIDED:
            return frozenset((own.task,))
        polled = frozenset((own.task, *own.polled, *own.channels, *own.upstream))
        return polled | (_SOURCES & self.reach[actor])

    def touched_by_others(
        self, actor: str, resources: Iterable[Resource], live: Callable[[str], bool]
    ) -> bool:
        """Whether an actor other than ``actor`` that may still act (``live``) has any of
        ``resources`` in its reach.

        Examples:
            >>> from flinkstate.catalogue.topologies import topology
            >>> world = topology("keyed").build({"parallelism": 1, "source_parallelism": 2})
            >>> found = world.interference
            >>> found.touched_by_others("task source[0]", [RECORDS], lambda actor: True)
            True
            >>> found.touched_by_others("task source[0]", [RECORDS], lambda actor: False)
            False
        """
        users = self.users
        for resource in resources:
            for other in users.get(resource, ()):
                if other != actor and live(other):
                    return True
        return False


def _task_reach(own: TaskFootprint) -> frozenset[Resource]:
    pools = [Resource(_POOL, name) for name, _ in (*own.output_pool_list, *own.input_pools)]
    networks = [network for _, network in (*own.output_pool_list, *own.input_pools)]
    return frozenset(
        (
            own.task,
            own.helper,
            own.network_pool,
            *own.links.values(),
            *own.builders.values(),
            *own.outputs,
            *(r for inputs in own.inputs.values() for r in inputs),
            *own.channels,
            *own.upstream,
            *own.polled,
            *own.local_pollable.values(),
            *pools,
            *networks,
        )
    )


def _transport_reach(own: TransportFootprint) -> frozenset[Resource]:
    gate_pool, gate_network = own.gate_pool
    producer_pool, producer_network = own.producer_pool
    return frozenset(
        (
            own.link,
            own.channel,
            own.pollable,
            Resource(_POOL, gate_pool),
            gate_network,
            Resource(_POOL, producer_pool),
            producer_network,
        )
    )
