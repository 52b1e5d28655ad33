"""What an action may touch: the resources of the model a step of each actor reads or writes.

Partial-order reduction needs to know which actions commute. Two actions of different actors
commute where they touch nothing in common: each leaves the other enabled and the two orders
reach one state. An actor's resources follow from the job as built (a task's own state, the
pipes it reads and writes, the pools its buffers come from; a remote channel's transport, the
pipe it carries and the pools at both ends), so they are computed once here; which of its
actions stay within them depends on the state the action is taken in, which
:mod:`flinkstate.runtime.world.independence` decides.

A pipe (``LINK``) is a subpartition's queue together with a local channel, which reads that
queue directly, so the two are one resource. An input channel's own state (what a remote one
received and its credit, its recovered data, its demultiplexer) is a resource of its own
(``CHANNEL``): a producer writes the queue, its consumer the channel, and only a remote
channel's transport touches both.
A task picking the channel to poll reads of the others only whether they have something
(``POLLABLE``), which adding behind what is already there does not change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from flinkstate.runtime.buffer.buffer import network_pool_name
from flinkstate.runtime.tasks.task import Task


class ResourceKind(StrEnum):
    """What an action may read or write."""

    TASK = "task"
    #: a subpartition's queue, and a local channel reading it (a local channel reads the queue)
    LINK = "link"
    #: an input channel's own state: what a remote one received and its credit, its recovered
    #: data, its demultiplexer, whether it finished
    CHANNEL = "channel"
    #: whether an input channel has something for its task to poll: what a task reads of the
    #: channels it does not poll when it picks the one it polls
    POLLABLE = "pollable"
    #: the buffer a subpartition's producer is writing (not yet in its queue)
    BUILDER = "builder"
    POOL = "pool"
    NETWORK_POOL = "network-pool"
    #: record ids, drawn in emission order
    RECORDS = "records"
    #: whether any source has records left, which a source without splits of its own reads
    #: to know when to finish
    SOURCES = "sources"
    #: a task's channel-state reader and V2 drainer, by the task's name: a helper thread's
    #: own state, which its steps change without the task's (copied with the task's too)
    HELPER = "helper"
    #: the heap recovery takes outside the network pools (its bytes and their peak, which the
    #: order of two takings changes)
    HEAP = "heap"
    #: the checkpoint in progress and the channel-state writers
    CHECKPOINT = "checkpoint"
    #: watermarks and the late records behind them
    EVENT_TIME = "event-time"


class Resource(NamedTuple):
    kind: ResourceKind
    name: str = ""


RECORDS = Resource(ResourceKind.RECORDS)
SOURCES = Resource(ResourceKind.SOURCES)
CHECKPOINT = Resource(ResourceKind.CHECKPOINT)
EVENT_TIME = Resource(ResourceKind.EVENT_TIME)
HEAP = Resource(ResourceKind.HEAP)

#: a local pool's name with its TaskManager's network pool
PoolOf = tuple[str, Resource]


class TaskFootprint(NamedTuple):
    """A task's resources, by what its actions use: itself; each output subpartition's
    pipe, builder and pool; all its outputs together (finishing touches them all); its input
    channels (each channel's own state, and a local one's pipe); the pipes of every input
    channel (the end of the upstream's recovered output unblocks them); the pools a buffer it
    read goes back to; and its network pool."""

    task: Resource
    links: Mapping[str, Resource]
    builders: Mapping[str, Resource]
    output_pools: Mapping[str, PoolOf]
    outputs: frozenset[Resource]
    output_pool_list: tuple[PoolOf, ...]
    #: by input channel: what polling it touches (the channel, and a local one's pipe)
    inputs: Mapping[str, frozenset[Resource]]
    #: every input channel's own state (the reader and conversions write them all)
    channels: frozenset[Resource]
    upstream: frozenset[Resource]
    #: whether each input channel has something to poll (read when picking one)
    polled: frozenset[Resource]
    #: by output subpartition read by a local channel: that channel's ``POLLABLE``
    local_pollable: Mapping[str, Resource]
    input_pools: tuple[PoolOf, ...]
    #: its TaskManager's network pool (where recovered buffers go back to)
    network_pool: Resource
    #: its reader's and drainer's own state
    helper: Resource


class TransportFootprint(NamedTuple):
    """A remote channel's transport: the pipe it carries, the channel it carries into and
    whether that has something to poll, the gate's pool a floating buffer comes from, and the
    producer's pool a sent buffer goes back to."""

    link: Resource
    channel: Resource
    pollable: Resource
    gate_pool: PoolOf
    producer_pool: PoolOf


@dataclass(frozen=True)
class Footprints:
    """Per actor, the resources its actions use (when they stay local at all): by task name,
    and by remote channel for its transport. A network pool is not among them: an action
    touches it only when it takes from it or gives back to it, which its local pool's state
    decides (``independence``)."""

    tasks: Mapping[str, TaskFootprint]
    transports: Mapping[str, TransportFootprint]

    @classmethod
    def of(cls, tasks: Iterable[Task]) -> Footprints:
        tasks = list(tasks)
        producer_pool: dict[str, PoolOf] = {}  # by channel
        local = {
            c.name for task in tasks for gate in task.gates for c in gate.channels if not c.remote
        }
        for task in tasks:
            for partition in task.partitions:
                for sub in partition.subpartitions:
                    producer_pool[sub.channel] = (partition.pool.name, _network_pool(task))
        by_task: dict[str, TaskFootprint] = {}
        transports: dict[str, TransportFootprint] = {}
        for task in tasks:
            here = _network_pool(task)
            links: dict[str, Resource] = {}
            builders: dict[str, Resource] = {}
            output_pools: dict[str, PoolOf] = {}
            local_pollable: dict[str, Resource] = {}
            for partition in task.partitions:
                for sub in partition.subpartitions:
                    links[sub.name] = Resource(ResourceKind.LINK, sub.channel)
                    if sub.channel in local:
                        local_pollable[sub.name] = Resource(ResourceKind.POLLABLE, sub.channel)
                    builders[sub.name] = Resource(ResourceKind.BUILDER, sub.channel)
                    output_pools[sub.name] = (partition.pool.name, here)
            inputs: dict[str, frozenset[Resource]] = {}
            channels: list[Resource] = []
            upstream: list[Resource] = []
            input_pools: list[PoolOf] = []
            for gate in task.gates:
                input_pools.append((gate.pool.name, here))
                for channel in gate.channels:
                    link = Resource(ResourceKind.LINK, channel.name)
                    upstream.append(link)
                    own = Resource(ResourceKind.CHANNEL, channel.name)
                    channels.append(own)
                    inputs[channel.name] = frozenset((own,) if channel.remote else (own, link))
                    if channel.remote:
                        transports[channel.name] = TransportFootprint(
                            link,
                            own,
                            Resource(ResourceKind.POLLABLE, channel.name),
                            (gate.pool.name, here),
                            producer_pool[channel.name],
                        )
                    else:  # a buffer read locally goes back to its producer's pool
                        input_pools.append(producer_pool[channel.name])
            output_pool_list = tuple(dict.fromkeys(output_pools.values()))
            by_task[task.name] = TaskFootprint(
                Resource(ResourceKind.TASK, task.name),
                links,
                builders,
                output_pools,
                frozenset(
                    [
                        *links.values(),
                        *builders.values(),
                        *(Resource(ResourceKind.POOL, name) for name, _ in output_pool_list),
                    ]
                ),
                output_pool_list,
                inputs,
                frozenset(channels),
                frozenset(upstream),
                frozenset(Resource(ResourceKind.POLLABLE, name) for name in inputs),
                local_pollable,
                tuple(dict.fromkeys(input_pools)),
                here,
                Resource(ResourceKind.HELPER, task.name),
            )
        return cls(by_task, transports)


def _network_pool(task: Task) -> Resource:
    return Resource(ResourceKind.NETWORK_POOL, network_pool_name(task.task_manager))
