"""Mechanisms of the network model, each on its own, and determinism of whole runs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flinkstate.errors import InvalidParameterError
from flinkstate.network.topologies import topology
from flinkstate.network.world import NetworkWorld
from flinkstate.sim import Action, RunStatus, Simulation, make_scheduler


def simulate(
    name: str = "keyed",
    seed: int = 0,
    scheduler: str = "random",
    full_check_every: int = 1,
    **overrides: object,
) -> Simulation:
    item = topology(name)
    return Simulation(
        lambda: item.build(overrides, seed=seed, full_check_every=full_check_every),
        make_scheduler(scheduler, seed),
    )


def world(sim: Simulation) -> NetworkWorld:
    assert isinstance(sim.model, NetworkWorld)
    return sim.model


def test_keyed_job_delivers_every_record_once() -> None:
    sim = simulate(records=30, slots_per_tm=2)
    result = sim.run()
    assert result.status is RunStatus.FINISHED, result
    w = world(sim)
    assert sum(t.processed for t in w.tasks.values() if t.kind == "sink") == 4 * 30
    counted = sum(sum(t.keyed_state.values()) for t in w.tasks.values() if t.kind == "keyed")
    assert counted == 4 * 30


def test_records_larger_than_a_segment_span_buffers() -> None:
    sim = simulate(records=5, record_size=10_000, parallelism=2, source_parallelism=1)
    result = sim.run()
    assert result.status is RunStatus.FINISHED
    writes = [e for e in sim.events if e.action.kind == "write"]
    # 10,004 serialized bytes into 4,096-byte buffers: every record touches three buffers.
    assert len(writes) >= 5 * 3
    polls = [e for e in sim.events if e.action.kind == "poll" and "0 complete" in e.note]
    assert polls, "a buffer holding only the middle of a record completes nothing"


def test_no_credit_no_send() -> None:
    sim = simulate(
        "backpressure",
        records=60,
        cost=20,
        parallelism=2,
        floating_buffers=0,
        record_size=2000,
        full_check_every=50,
    )
    starved_moments = 0
    for _ in range(3000):
        w = world(sim)
        enabled = set(sim.enabled_actions())
        for channel in (c for c in w.channels.values() if c.remote):
            consumer = channel.task.removeprefix("task ")
            allowed = {
                f"exclusive {channel.name}",
                f"received {channel.name}",
                f"deserializer task {consumer}",
            }
            assert {w.owner[s] for s in channel.exclusive_segments} <= allowed
            queue = w.subpartitions[channel.subpartition].queue
            if channel.available == 0 and queue and not queue[0].is_event:
                starved_moments += 1
                assert Action(f"netty {channel.name}", "send") not in enabled
        if sim.step() is None:
            break
    assert starved_moments > 0, "the slow consumer should run out of credit"


def test_full_subpartition_blocks_the_producer() -> None:
    sim = simulate(
        "backpressure",
        records=60,
        cost=30,
        max_buffers_per_channel=2,
        parallelism=2,
        record_size=2000,
    )
    sim.run(600)
    w = world(sim)
    blocked = [
        t
        for t in w.tasks.values()
        if t.pending and not any(a.actor == t.name for a in sim.enabled_actions())
    ]
    assert blocked, "some producer should wait for a buffer of its saturated pool"
    waits = w.waits()
    assert any("a buffer of pool" in wait.resource for wait in waits)
    assert sim.run().status is RunStatus.FINISHED


def test_local_channels_have_no_transport() -> None:
    sim = simulate(records=5, slots_per_tm=8)
    assert not any(c.remote for c in world(sim).channels.values())
    assert not any(a.actor.startswith("netty") for a in sim.enabled_actions())
    assert sim.run().status is RunStatus.FINISHED


def test_same_seed_same_run_and_back_is_exact() -> None:
    a, b = simulate(seed=7, records=20), simulate(seed=7, records=20)
    a.run()
    b.run()
    assert [e.to_json() for e in a.events] == [e.to_json() for e in b.events]
    c = simulate(seed=8, records=20)
    c.run()
    assert [e.to_json() for e in c.events] != [e.to_json() for e in a.events]
    target = a.step_count // 3
    fresh = simulate(seed=7, records=20)
    fresh.run(target)
    a.back(a.step_count - target)
    assert world(a).fingerprint() == world(fresh).fingerprint()


def test_insufficient_network_buffers_is_flinks_error() -> None:
    with pytest.raises(InvalidParameterError, match="Insufficient number of network buffers"):
        topology("keyed").build({"network_buffers": 10})


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(["keyed", "two-input", "backpressure"]),
    st.integers(0, 2**32),
    st.sampled_from(["random", "round-robin", "priority"]),
    st.integers(1, 3),
    st.sampled_from([4096, 8192]),
    st.integers(0, 9000),
    st.integers(1, 4),
)
def test_invariants_hold_for_random_runs(
    name: str, seed: int, scheduler: str, parallelism: int, segment: int, size: int, slots: int
) -> None:
    sim = simulate(
        name,
        seed=seed,
        scheduler=scheduler,
        full_check_every=7,
        records=8,
        parallelism=parallelism,
        segment_size=segment,
        record_size=size,
        slots_per_tm=slots,
        floating_buffers=1,
    )
    result = sim.run()
    assert result.status is RunStatus.FINISHED, (result, [str(v) for v in result.violations])


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["keyed", "two-input", "backpressure"]),
    st.integers(0, 2**32),
    st.sampled_from(["random", "round-robin", "priority"]),
    st.integers(1, 3),
    st.integers(1, 4),
    st.integers(0, 9000),
    st.integers(0, 2),
    st.integers(0, 2),
    st.booleans(),
    st.booleans(),
)
def test_cached_actions_equal_a_full_scan_at_every_step(
    name: str,
    seed: int,
    scheduler: str,
    parallelism: int,
    slots: int,
    size: int,
    exclusive: int,
    floating: int,
    unaligned: bool,
    flush: bool,
) -> None:
    """The incremental enabled-action cache must never differ from recomputing every actor."""
    item = topology(name)
    overrides = {
        "records": 10,
        "parallelism": parallelism,
        "slots_per_tm": slots,
        "record_size": size,
        "buffers_per_channel": exclusive,
        "floating_buffers": floating + (1 if exclusive == 0 else 0),
        "max_buffers_per_channel": 2,
        "unaligned": unaligned,
        "flush_every_record": flush,
        "checkpoint_interval": 40,
        "checkpoints": 2,
    }
    sim = Simulation(
        lambda: item.build(overrides, seed=seed, check_actions=True),
        make_scheduler(scheduler, seed),
        snapshot_every=16,
    )
    result = sim.run(max_steps=3000)
    sim.back(sim.step_count // 3)  # a restored snapshot carries its cache along
    sim.run(max_steps=3000)
    assert sim.step_count > 0, result


def test_clone_is_independent_of_its_original() -> None:
    sim = simulate("backpressure", seed=3, records=20)
    sim.run(150)
    original = world(sim)
    before = original.fingerprint()
    twin = original.clone()
    for action in [twin.enabled_actions()[0] for _ in range(1)]:
        twin.apply(action)
    while twin.enabled_actions() and twin.step < 400:
        twin.apply(twin.enabled_actions()[-1])
    assert original.fingerprint() == before
    assert twin.fingerprint() != before
