"""Tour: FLIP-547's motivation, recovered state persisted by every new subtask when a
checkpoint comes before filtering."""

from __future__ import annotations

from collections.abc import Mapping

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event
from flinkstate.views.tours.base import (
    Stop,
    Tour,
    actor_place,
    is_recovered,
    items_where,
    on,
    places_of_kind,
    restore_figures,
    together,
    violated,
)


def _figures(event: Event | None, world: NetworkWorld) -> Mapping[str, object]:
    first = world.violations[0] if world.violations else None
    # the new subtasks with input state to fetch: the counters (the sinks' exchange is aligned)
    restore = world.restore
    fetching = 0 if restore is None else sum(1 for s in restore.subtasks.values() if s.input_state)
    return {
        **restore_figures(event, world),
        "violation": "" if first is None else first.message,
        "invariant": "" if first is None else first.invariant,
        "fetching": fetching,
        "other_fetching": fetching - 1,
    }


FLIP547_DUPLICATION = Tour(
    name="flip-547-duplication",
    title="FLIP-547: recovered state kept by every new subtask",
    scenario="unfiltered-checkpoint-during-recovery",
    introduction=(
        "FLIP-547's example: a job rescaled from {old_counter} counter to {counter}. Without "
        "filtering first, each of the {counter} new counters keeps all of the old counter's "
        "recovered input, so a checkpoint taken during recovery would hold every recovered "
        "record {counter} times."
    ),
    stops=(
        Stop(
            "Every reader fetches the one old subtask",
            "Step {step}: each of the {fetching} new counters' readers will fetch the one old "
            "counter's input state "
            "({recovered:,} bytes in all to put back).",
            None,
            places_of_kind("channel-state-reader"),
            _figures,
        ),
        Stop(
            "Fetched without filtering",
            "The reader of {task} fetched recovered input into its spill files keeping every "
            "record, those of the other {other_fetching} counters too.",
            on(ActionKind.SPILL, ActorKind.READER),
            actor_place,
            _figures,
        ),
        Stop(
            "Drained",
            "The drainer of {task} put recovered bytes into a channel in recovery; the task "
            "will process whatever arrives there.",
            on(ActionKind.DRAIN, ActorKind.DRAINER),
            together(actor_place, items_where(is_recovered)),
            _figures,
        ),
        Stop(
            "Caught",
            "The invariant **{invariant}** stops the run: {violation}. Filtering before the "
            "data reaches the channels (FLIP-547's design) is what prevents it.",
            violated,
            actor_place,
            _figures,
        ),
    ),
)
