"""Mechanisms of the network model, each on its own, and determinism of whole runs."""

from __future__ import annotations

import copy
import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flinkstate.catalogue.topologies import topology
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.buffer.buffer import HEAP
from flinkstate.runtime.events import BARRIER
from flinkstate.runtime.world import world as world_module
from flinkstate.runtime.world.world import COPY_ON_WRITE_FROM
from flinkstate.sim import RunStatus, Simulation, make_scheduler
from tests.runtime.runs import simulate, world


def test_keyed_job_delivers_every_record_once() -> None:
    sim = simulate(records=30, slots_per_tm=2)
    result = sim.run()
    assert result.status is RunStatus.FINISHED, result
    w = world(sim)
    assert sum(t.processed for t in w.tasks.values() if t.kind == "sink") == 4 * 30
    counted = sum(sum(t.keyed_state.values()) for t in w.tasks.values() if t.kind == "keyed")
    assert counted == 4 * 30


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


@pytest.mark.slow
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
        "floating_buffers": floating + 1,  # a gate always requires one floating buffer
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


def test_every_component_of_a_clone_is_its_own() -> None:
    """A clone equals its original; run to its end, every component of the original still
    equals a deep copy taken before, so none is shared by mistake (V2 spills, so its files
    count)."""
    run = prepare_scenario("checkpoint-during-drain", seed=0)
    assert run.simulation is not None
    run.simulation.run(150)
    original = run.world
    assert original is not None
    before = copy.deepcopy(original)
    twin = original.clone()
    for component in dataclasses.fields(original):  # a copy leaves nothing out
        assert getattr(twin, component.name) == getattr(original, component.name), component
    while actions := twin.enabled_actions():
        twin.apply(actions[0])
    changed = []
    for component in dataclasses.fields(original):
        assert getattr(original, component.name) == getattr(before, component.name), component
        if getattr(twin, component.name) != getattr(before, component.name):
            changed.append(component.name)
    assert {"tasks", "channels", "subpartitions", "ledger", "spill", "drainers"} <= set(changed)


def test_a_task_looks_only_at_the_channels_whose_head_may_be_a_barrier() -> None:
    # each consumer keeps the channels whose head is a barrier, brought up to date from the
    # channels a step notes; the action check finds a barrier put at a head unnoted
    w = topology("keyed").build({"records": 5}, check_actions=True)
    w.enabled_actions()
    heads = w.actions.barrier_heads
    assert heads
    assert all(known == frozenset() for known in heads.values())
    channel = next(c for c in w.channels.values() if not c.remote)
    barrier = w.new_buffer(HEAP, 0, event=BARRIER, checkpoint=1, priority=True)
    w.subpartitions[channel.subpartition].queue.appendleft(barrier)
    w.invalidate_actions()  # said: every task looks at every channel again
    action = next(a for a in w.enabled_actions() if a.kind == "barrier")
    assert action.target == channel.name
    assert w.actions.barrier_heads[channel.task] == {channel.name}
    w.subpartitions[channel.subpartition].queue.popleft()  # a barrier gone, unnoted:
    w.journal.changes.task(channel.task)  # the channel kept is looked at and passed over
    assert all(a.kind != "barrier" for a in w.enabled_actions())
    w.subpartitions[channel.subpartition].queue.appendleft(barrier)
    w.journal.changes.subpartition(channel.subpartition)  # noted: it is looked at
    assert any(a.kind == "barrier" for a in w.enabled_actions())
    other = next(c for c in w.channels.values() if c.remote and c.task != channel.task)
    w.channels[other.name].received.appendleft(barrier)  # a head changed, nothing noted
    with pytest.raises(AssertionError, match="have a barrier at their head, unnoted"):
        w.enabled_actions()


def test_a_task_polls_only_the_channels_whose_head_may_be_data() -> None:
    # each consumer keeps, per gate, the channels whose head is data; its round-robin poll
    # looks at those only (the action check compares every step with a poll of the whole gate)
    # and the check finds data put at a head unnoted
    values = {"records": 30, "parallelism": 6, "source_parallelism": 6, "flush_every_record": True}
    sim = Simulation(
        lambda: topology("keyed").build(values, check_actions=True), make_scheduler("random", 2)
    )
    polled_among_few = 0
    for _ in range(400):
        w = world(sim)
        counters = [t for t in w.tasks.values() if t.operator == "counter"]
        data = [w.actions.data_heads.get(t.name) for t in counters]
        polled_among_few += any(d is not None and 0 < len(d[0]) < 6 for d in data)
        sim.step()
    assert polled_among_few > 100
    w = world(sim)
    channel = next(c for c in w.channels.values() if c.remote and not c.received)
    w.enabled_actions()
    w.channels[channel.name].received.append(w.new_buffer(HEAP, 0, event="EndOfData"))
    with pytest.raises(AssertionError, match="with data at their head"):
        w.enabled_actions()


def test_a_big_world_run_without_snapshots_shares_nothing_so_copies_nothing() -> None:
    # a run nobody steps back through starts from the factory's world, not from a snapshot
    # that shares its components (which would make every step work out what to copy first)
    values = {"parallelism": 32, "source_parallelism": 32, "slots_per_tm": 4, "records": 2}
    built = topology("keyed").build(values)
    assert built.component_count >= COPY_ON_WRITE_FROM
    sim = Simulation(built.clone, make_scheduler("random", 0), snapshot_every=None)
    sim.run(200)
    assert world(sim).owned is None
    stepped = Simulation(built.clone, make_scheduler("random", 0))
    stepped.run(200)
    assert world(stepped).owned is not None  # the stepper's snapshots share, copied on write
    assert world(stepped).fingerprint() == world(sim).fingerprint()


def test_the_world_handles_every_kind_of_action() -> None:
    """Every ``ActionKind`` has a handler: a task's in ``_TASK_HANDLERS``, another actor's in
    ``_THREAD_HANDLERS``. Only ``write`` is in both: a task writes a record into a buffer, a
    channel-state writer writes channel state."""
    tasks, threads = set(world_module._TASK_HANDLERS), set(world_module._THREAD_HANDLERS)
    assert tasks | threads == set(ActionKind)
    assert tasks & threads == {ActionKind.WRITE}
    assert all(type(kind) is ActionKind for kind in tasks | threads)
