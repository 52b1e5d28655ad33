"""Why actors wait: the facts a deadlock report's waits-for cycle is built from."""

from __future__ import annotations

from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.sim import RunStatus
from tests.runtime.runs import saturated_backpressure, simulate, world


def test_a_finished_run_waits_for_nothing() -> None:
    sim = simulate(records=10)
    assert sim.run().status is RunStatus.FINISHED
    assert world(sim).waits() == []


def test_a_producer_blocked_on_its_pool_waits_for_whoever_holds_the_pools_buffers() -> None:
    sim = saturated_backpressure()
    w = world(sim)
    blocked = [wait for wait in w.waits() if wait.resource.startswith("a buffer of pool ")]
    assert blocked
    for wait in blocked:
        assert w.actor(str(wait.actor)) == wait.actor  # the task itself, as the index has it
        assert wait.actor.kind is ActorKind.TASK
        assert wait.holders  # the consumers (or transports) of its queued buffers
        for holder in wait.holders:
            assert w.actor(str(holder)) == holder, holder
