"""When one actor's actions may be followed alone: the world's half of persistent sets.

The reach of each actor (:class:`~flinkstate.runtime.world.exploration.interference.Interference`)
is a static over-approximation of what its steps touch, and it holds only while the run is
*calm*: no checkpoint in progress or possible any more and no barrier in flight (barriers,
snapshots and the coordinator may touch anything), no recovery under way (readers, drainers,
recovered channels), no failover and no failure armed, no watermarks. Outside calm states no
actor's actions are a persistent set (``NetworkWorld.isolates``); in a calm one, an actor's
actions are where no other actor that may still act has what they touch, or their guard, in
its reach (:func:`interferes`). :func:`verify_reach` checks, in a calm state, that every
enabled action stays within its actor's reach: the tests run it at every state an exploration
reaches.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.checkpoint.coordinator import sources_have_data
from flinkstate.runtime.events import BARRIER
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.world import independence
from flinkstate.runtime.world.exploration.footprint import Resource
from flinkstate.runtime.world.state import NetworkState
from flinkstate.sim.action import Action

_TASK = ActorKind.TASK


def interferes(
    world: NetworkState, actions: Sequence[Action], touched: frozenset[Resource]
) -> bool:
    """Whether another actor may, from ``world`` (calm) on and before the actor of
    ``actions`` (all it has enabled) steps, touch any of ``touched`` (what they touch) or what
    decides them (``Interference.guard``).

    Examples:
        >>> from flinkstate.catalogue.topologies import topology
        >>> two = {"parallelism": 1, "source_parallelism": 2, "checkpoint_interval": 0}
        >>> world = topology("keyed").build(two)
        >>> first = world.enabled_actions()[0]
        >>> str(first)  # both sources emit, drawing record ids the other draws too
        'task source[0]: emit'
        >>> interferes(world, [first], world.footprint(first))
        True
    """
    found = world.interference
    actor = actions[0].actor
    guarded = set(touched)
    for action in actions:
        guard = found.guard(actor, action.kind)
        if guard is None:
            return True
        guarded |= guard
    return found.touched_by_others(actor, guarded, lambda other: live(world, other))


def live(world: NetworkState, actor: str) -> bool:
    """Whether ``actor`` may still act: every actor but a finished task.

    Examples:
        >>> from flinkstate.catalogue.topologies import topology
        >>> world = topology("keyed").build({"parallelism": 1, "source_parallelism": 1})
        >>> live(world, "task source[0]"), live(world, "checkpoint-coordinator")
        (True, True)
    """
    ref = world.actions.index.refs.get(actor)
    if ref is None or ref.kind is not _TASK:
        return True
    return not world.tasks[ref.task].finished


def calm(world: NetworkState) -> bool:
    """Whether every step any actor may still take stays within its reach: no checkpoint in
    progress or still to come and no barrier in flight, no recovery or failover under way or
    armed, no watermarks.

    Examples:
        >>> from flinkstate.catalogue.topologies import topology
        >>> quiet = {"parallelism": 1, "source_parallelism": 1, "checkpoint_interval": 0}
        >>> calm(topology("keyed").build(quiet))
        True
        >>> calm(topology("keyed").build({**quiet, "checkpoint_interval": 4}))
        False
    """
    checkpoints = world.checkpoints
    if (
        world.failover is not None
        or checkpoints.job_failed
        or checkpoints.pending is not None
        or world.graph.event_time
        or _checkpoints_to_come(world)
    ):
        return False
    if any(not r.finished for r in world.readers.values()) or any(
        not d.finished and d.state is not None for d in world.drainers.values()
    ):
        return False
    if any(w.requests for w in world.writers.values()):
        return False
    for task in world.tasks.values():
        if not task.finished and (
            task.phase is not TaskPhase.RUNNING or task.fail_after >= 0 or task.trigger
        ):
            return False
    return not _barriers_or_recovery(world)


def _checkpoints_to_come(world: NetworkState) -> bool:
    """Whether the coordinator may still trigger a checkpoint (``can_trigger`` less what only
    time changes: once false here, it stays false)."""
    options = world.options
    return (
        options.checkpoint_interval > 0
        and len(world.checkpoints.completed) < options.checkpoints
        and not any(world.tasks[key].finished for key in world.source_keys)
        and sources_have_data(world)
    )


def _barriers_or_recovery(world: NetworkState) -> bool:
    """A barrier in a subpartition or a channel, a subpartition blocked by one, or a channel
    still recovered, in recovery or persisting."""
    for sub in world.subpartitions.values():
        if sub.blocked or _has_barrier(sub.queue):
            return True
    for channel in world.channels.values():
        if (
            channel.recovered
            or channel.recoverable.in_recovery
            or channel.persister.persisting
            or _has_barrier(channel.received)
        ):
            return True
    return False


def _has_barrier(buffers: Iterable[object]) -> bool:
    return any(getattr(b, "event", None) == BARRIER for b in buffers)


def verify_reach(world: NetworkState, enabled: Sequence[Action]) -> int:
    """Raise ``AssertionError`` unless, in a calm ``world``, every action of ``enabled`` (its
    enabled actions) has a footprint within its actor's reach (and its guard too): how many
    actions were checked (none outside calm states).

    Examples:
        >>> from flinkstate.catalogue.topologies import topology
        >>> quiet = {"parallelism": 1, "source_parallelism": 1, "checkpoint_interval": 0}
        >>> world = topology("keyed").build(quiet)
        >>> verify_reach(world, world.enabled_actions())  # the source's first emit
        1
    """
    if not calm(world):
        return 0
    interference = world.interference
    checked = 0
    for action in enabled:
        touched = independence.footprint(world, action)
        reach = interference.reach.get(action.actor)
        if touched is None or reach is None:
            raise AssertionError(
                f"step {world.journal.step}: {action} may touch anything in a calm state"
            )
        guard = interference.guard(action.actor, action.kind)
        outside = (touched | (guard or frozenset())) - reach
        if outside:
            raise AssertionError(
                f"step {world.journal.step}: {action} touches {sorted(outside)}, outside the "
                f"reach of {action.actor}"
            )
        checked += 1
    return checked
