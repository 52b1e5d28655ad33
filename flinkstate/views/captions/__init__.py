"""One plain sentence for every step: what happened, where, how much, and which Flink class
does it.

A caption is made from the step's event, the world after it, and the scenes before and after
(:mod:`flinkstate.views.scene`): the scenes say which buffers moved where, which barrier went
to the head of which queue and which write requests the step handed to a channel-state writer,
so a caption counts what a learner sees move on the canvas. Every kind of action the world
has (``ActionKind``) is in :data:`CAPTIONS`, by the actors the world's handlers give it to (a
test holds the two tables to each other); another runs every scenario and requires a caption
for each kind that occurs. The captions are written in the rooms of the actors that take
the steps: :mod:`~.tasks`, :mod:`~.transport` (netty), :mod:`~.checkpointing` (writers,
coordinator, scheduler) and :mod:`~.recovery` (the reader and the drainer); what they read of a
step is :class:`~.step.Step`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event
from flinkstate.views.captions import checkpointing, recovery, tasks, transport
from flinkstate.views.captions.step import Scene, Step, scene_items_by_id


def caption(event: Event, world: NetworkWorld, before: Scene | None, after: Scene) -> str:
    """The sentence for ``event``, the step that turned scene ``before`` into ``after``."""
    actor = world.actor(event.action.actor)
    step = Step(event, world, actor, scene_items_by_id(before), scene_items_by_id(after))
    kind = event.action.kind
    try:
        explain = CAPTIONS[actor.kind, ActionKind(kind)]
    except (ValueError, KeyError):  # a kind the world does not have, or not of this actor
        raise KeyError(f"no caption for {actor.kind.value} action {str(kind)!r}") from None
    return explain(step)


#: the caption of every kind of action, by the kind of actor that takes it (``write`` twice: a
#: task's record and a channel-state writer's state)
CAPTIONS: Mapping[tuple[ActorKind, ActionKind], Callable[[Step], str]] = {
    (ActorKind.TASK, ActionKind.EMIT): tasks.emit,
    (ActorKind.TASK, ActionKind.REQUEST_BUFFER): tasks.request_buffer,
    (ActorKind.TASK, ActionKind.WRITE): tasks.write,
    (ActorKind.TASK, ActionKind.COMPUTE): tasks.compute,
    (ActorKind.TASK, ActionKind.POLL): tasks.poll,
    (ActorKind.TASK, ActionKind.PROCESS): tasks.process,
    (ActorKind.TASK, ActionKind.FINISH): tasks.finish,
    (ActorKind.TASK, ActionKind.CHECKPOINT): tasks.source_checkpoint,
    (ActorKind.TASK, ActionKind.BARRIER): tasks.barrier,
    (ActorKind.TASK, ActionKind.ALIGNMENT_TIMEOUT): tasks.alignment_timeout,
    (ActorKind.TASK, ActionKind.RECOVER_OUTPUT): tasks.recover_output,
    (ActorKind.TASK, ActionKind.FINISH_OUTPUT): tasks.finish_output,
    (ActorKind.TASK, ActionKind.CONVERT): tasks.convert,
    (ActorKind.TASK, ActionKind.REQUEST_PARTITIONS): tasks.request_partitions,
    (ActorKind.TASK, ActionKind.INSTALL_DRAINER): tasks.install_drainer,
    (ActorKind.TASK, ActionKind.FAIL): tasks.fail,
    (ActorKind.TASK, ActionKind.CANCEL): tasks.cancel,
    (ActorKind.NETTY, ActionKind.SEND): transport.send,
    (ActorKind.NETTY, ActionKind.REQUEST_FLOATING): transport.request_floating,
    (ActorKind.WRITER, ActionKind.WRITE): checkpointing.write_channel_state,
    (ActorKind.COORDINATOR, ActionKind.TRIGGER): checkpointing.trigger,
    (ActorKind.COORDINATOR, ActionKind.EXPIRE): checkpointing.expire,
    (ActorKind.COORDINATOR, ActionKind.MANUAL_CHECKPOINT): checkpointing.manual_checkpoint,
    (ActorKind.SCHEDULER, ActionKind.RESTART): checkpointing.restart,
    (ActorKind.READER, ActionKind.RECOVER_INPUT): recovery.recover_input,
    (ActorKind.READER, ActionKind.REQUEST_EXCLUSIVE): recovery.request_exclusive,
    (ActorKind.READER, ActionKind.FINISH_INPUT): recovery.finish_input,
    (ActorKind.READER, ActionKind.FILTER): recovery.filter_buffer,
    (ActorKind.READER, ActionKind.REWRITE): recovery.rewrite,
    (ActorKind.READER, ActionKind.SPILL): recovery.spill,
    (ActorKind.READER, ActionKind.FINISH_FETCH): recovery.finish_fetch,
    (ActorKind.DRAINER, ActionKind.DRAIN): recovery.drain,
    (ActorKind.DRAINER, ActionKind.FINISH_DRAIN): recovery.finish_drain,
}
