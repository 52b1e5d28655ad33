"""An actor's identity: what kind of thread of a job it stands for and the typed keys into
the world it acts on (Pekko's ``ActorRef``, as Flink's RPC names its endpoints). A value every
layer names actors by: a behaviour names the actor of the actions it offers, a waits-for
report the actors it waits on; the cache of their actions is the world's
(``world/actors``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

COORDINATOR = "checkpoint-coordinator"
#: the JobMaster's scheduler, which restarts a failed region (``DefaultScheduler``)
SCHEDULER = "scheduler"

_Named = TypeVar("_Named")


class ActorKind(StrEnum):
    """What kind of thread an actor of the world stands for."""

    TASK = "task"
    NETTY = "netty"
    WRITER = "channel-state-writer"
    READER = "channel-state-reader"
    DRAINER = "drainer"
    COORDINATOR = "checkpoint-coordinator"
    #: the JobMaster's scheduler: it acts only to restart a failed region
    SCHEDULER = "scheduler"
    #: not a thread but the mail a restored task posts to convert its recovered channels
    #: (``requestPartitions``), named in waits-for reports when it cannot run
    REQUEST_PARTITIONS = "request-partitions"


@dataclass(frozen=True, slots=True)
class ActorRef:
    """An actor as typed keys into the world: ``task`` into ``tasks`` (the task itself, or the
    task a reader, drainer or request-partitions mail works for), ``channel`` into
    ``channels`` (a netty transport), ``writer`` into ``writers``, ``gate`` the gate a
    request-partitions mail converts (V1; V2 converts the task's gates together). Views and
    waits-for reports follow these; ``name`` is its text for traces and captions only."""

    kind: ActorKind
    name: str
    task: str = ""
    channel: str = ""
    writer: str = ""
    gate: str = ""

    def __str__(self) -> str:
        return self.name


def transport_name(channel: str) -> str:
    """The name of a remote channel's netty transport, as its actions and reports carry it."""
    return f"{ActorKind.NETTY} {channel}"


def by_name(actors: Iterable[_Named]) -> tuple[_Named, ...]:
    """Actors (or other holders) in the order of their names, as waits-for reports list
    them."""
    return tuple(sorted(actors, key=str))


def request_partitions(task: str, gate: str = "") -> ActorRef:
    """The request-partitions mail of the task keyed ``task``: of one gate (``gate``), or of
    all its gates at once (V2)."""
    kind = ActorKind.REQUEST_PARTITIONS
    return ActorRef(kind, f"{kind} {gate or task}", task=task, gate=gate)
