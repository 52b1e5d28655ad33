"""The netty transport: a remote channel sends only with credit; local channels have none."""

from __future__ import annotations

from flinkstate.sim import Action, RunStatus
from tests.runtime.runs import simulate, world


def test_no_credit_no_send() -> None:
    sim = simulate(
        "backpressure",
        records=60,
        cost=20,
        parallelism=2,
        floating_buffers=1,
        record_size=2000,
        full_check_every=50,
    )
    starved_moments = 0
    for _ in range(3000):
        w = world(sim)
        enabled = set(sim.enabled_actions())
        for channel in (c for c in w.channels.values() if c.remote):
            allowed = {
                channel.owners.exclusive,
                channel.owners.received,
                w.task_named(channel.task).deserializer,
            }
            assert {w.owner[s] for s in channel.buffers.exclusive_segments} <= allowed
            queue = w.subpartitions[channel.subpartition].queue
            if channel.buffers.available == 0 and queue and not queue[0].is_event:
                starved_moments += 1
                assert Action(f"netty {channel.name}", "send") not in enabled
        if sim.step() is None:
            break
    assert starved_moments > 0, "the slow consumer should run out of credit"


def test_local_channels_have_no_transport() -> None:
    sim = simulate(records=5, slots_per_tm=8)
    assert not any(c.remote for c in world(sim).channels.values())
    assert not any(a.actor.startswith("netty") for a in sim.enabled_actions())
    assert sim.run().status is RunStatus.FINISHED
