"""Copies of the world made for one action: they copy what the action's footprint names (with
the components linking to it), share the rest with the state they came from, and end where a
whole copy ends; the explorer, which copies so, finds what it finds with whole copies."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from benchmarks.bench_explorer import RESTART
from flinkstate.runtime.world import independence
from flinkstate.runtime.world import world as world_module
from flinkstate.runtime.world.exploration.footprint import Resource, ResourceKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import Action, Simulation, make_scheduler
from flinkstate.sim.explore import (
    NO_REDUCTION,
    Bounds,
    ExplorationResult,
    IndependenceError,
    SleepSets,
    explore,
    verify_along_runs,
    verify_partial_copy,
)
from tests.runtime.world.test_independence import BUSY, SMALL, job, restart

#: one slot per TaskManager: subtask i of every operator runs in TaskManager i, so each
#: counter reads one local and one remote channel
LOCAL_AND_REMOTE = SMALL
POOLS = frozenset({ResourceKind.POOL, ResourceKind.NETWORK_POOL})


def until(world: NetworkWorld, wanted: Callable[[Action], bool], seed: int = 0) -> Action:
    """Step ``world`` at random until an action ``wanted`` is enabled; that action."""
    rng = random.Random(seed)
    for _ in range(500):
        enabled = list(world.enabled_actions())
        for candidate in enabled:
            if wanted(candidate):
                return candidate
        world.apply(rng.choice(enabled))
    raise AssertionError("no such action within 500 steps")


def test_a_copy_for_a_send_copies_the_pipe_and_relinks_the_tasks_at_its_ends() -> None:
    world = job("keyed", LOCAL_AND_REMOTE)
    send = until(world, lambda a: a.kind == "send")
    channel = world.channels[world.actor(send.actor).channel]
    touched = world.footprint(send)
    assert touched is not None
    plan = world.partial_copies.plan(world, touched)
    assert plan.channels == {channel.name}
    assert plan.subpartitions == {channel.subpartition}
    assert plan.tasks == plan.gates == frozenset()  # a transport touches no task's own state
    producer, consumer = world.task_keys[channel.producer], world.task_keys[channel.task]

    twin = world.clone_within(touched)
    assert twin.channels[channel.name] is not world.channels[channel.name]
    assert twin.subpartitions[channel.subpartition] is not world.subpartitions[channel.subpartition]
    others = [name for name in world.channels if name != channel.name]
    assert all(twin.channels[name] is world.channels[name] for name in others)
    # a relinked task is a new value linked to the copies, its own state shared
    task = twin.tasks[consumer]
    assert task is not world.tasks[consumer]
    assert task.pending is world.tasks[consumer].pending
    assert twin.gates[channel.gate].channels[channel.index] is twin.channels[channel.name]
    assert world.tasks[consumer].gates[0].channels[channel.index] is world.channels[channel.name]
    # so is the producer, whose result partition holds the subpartition copied
    assert twin.tasks[producer] is not world.tasks[producer]
    assert twin.tasks[producer].pending is world.tasks[producer].pending
    relinked = {name for name in world.tasks if twin.tasks[name] is not world.tasks[name]}
    assert relinked == {producer, consumer}
    assert {n for n in world.gates if twin.gates[n] is not world.gates[n]} == {channel.gate}


def test_a_copy_for_a_tasks_step_copies_its_own_state_gates_and_reader() -> None:
    world = restart("baseline-recovery", RESTART)
    convert = until(world, lambda a: a.kind == "convert")
    touched = world.footprint(convert)
    assert touched is not None
    key = world.task_keys[convert.actor]
    plan = world.partial_copies.plan(world, touched)
    assert key in plan.tasks
    assert convert.actor in plan.helpers  # its channel-state reader
    assert set(world.gates).issuperset(plan.gates)
    assert {g.name for g in world.tasks[key].gates} <= plan.gates
    twin = world.clone_within(touched)
    assert twin.tasks[key].pending is not world.tasks[key].pending
    assert twin.readers[convert.actor] is not world.readers[convert.actor]


def test_a_copys_fingerprint_computes_again_only_what_it_copied() -> None:
    world = job("keyed", LOCAL_AND_REMOTE)
    send = until(world, lambda a: a.kind == "send")
    twin = world.clone_within(world.footprint(send))
    twin.apply(send)
    assert twin.inherited_keys is None
    assert twin.stale_keys  # the copied components' keys, computed when asked
    assert twin.fingerprint() == twin.state_key()
    assert twin.stale_keys == ()
    # a second step is not the one the copy was made for: nothing is known after it
    twin.apply(twin.enabled_actions()[0])
    assert twin.component_keys is None
    assert twin.fingerprint() == twin.state_key()


@pytest.mark.slow
@pytest.mark.parametrize(
    "make",
    [
        lambda: job("keyed", LOCAL_AND_REMOTE),
        lambda: job("keyed", {**LOCAL_AND_REMOTE, "records": 3, "checkpoint_interval": 6}),
        lambda: job("two-input", {**LOCAL_AND_REMOTE, "network_buffers": 64}),
        lambda: restart("baseline-recovery", RESTART),
        lambda: restart("keyed-downscale", {"records": 10}),
    ],
    ids=["keyed", "keyed-checkpoint", "two-input", "restart", "rescaled-restart"],
)
def test_a_copy_made_for_an_action_ends_where_a_whole_copy_ends(
    make: Callable[[], NetworkWorld],
) -> None:
    world = make()
    rng = random.Random(3)
    checked = 0
    for _ in range(300):
        enabled = list(world.enabled_actions())
        if not enabled or world.violations:
            break
        for action in enabled:
            verify_partial_copy(world, action)
            checked += 1
        world.apply(rng.choice(enabled))
    assert checked > 50


def test_a_footprint_that_misses_what_its_action_changes_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = job("keyed", LOCAL_AND_REMOTE)
    honest = independence.footprint

    def pools_only(state: NetworkWorld, action: Action) -> frozenset[Resource] | None:
        """A send said to touch its pools only, not the pipe it takes a buffer from."""
        touched = honest(state, action)
        if touched is None or action.kind != "send":
            return touched
        return frozenset(r for r in touched if r.kind in POOLS)

    monkeypatch.setattr(independence, "footprint", pools_only)
    send = until(world, lambda a: a.kind == "send")
    with pytest.raises(IndependenceError, match="its footprint does not name"):
        verify_partial_copy(world, send)
    with pytest.raises(IndependenceError):
        verify_along_runs(job("keyed", LOCAL_AND_REMOTE), every=1)


def outcome(result: ExplorationResult) -> tuple[object, ...]:
    return (
        result.distinct,
        result.states,
        result.depth,
        result.stopped_by,
        result.finished,
        result.broken,
        [(f.kind, f.name, f.trace) for f in result.findings],
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("make", "strategy", "bounds", "sleep_sets"),
    [
        (lambda: job("keyed", SMALL), "bfs", Bounds(), True),
        (lambda: job("keyed", SMALL), "dfs", Bounds(), False),
        (lambda: job("keyed", SMALL, "lose-record"), "bfs", Bounds(max_states=4000), True),
        (
            lambda: job("keyed", LOCAL_AND_REMOTE, "duplicate-record"),
            "bfs",
            Bounds(max_states=3000),
            True,
        ),
        (lambda: restart("baseline-recovery", RESTART), "bfs", Bounds(max_states=4000), True),
        (lambda: restart("baseline-recovery", RESTART), "dfs", Bounds(max_depth=14), True),
    ],
    ids=[
        "job",
        "job-dfs-every-transition",
        "lose-record",
        "duplicate-record",
        "restart",
        "restart-dfs",
    ],
)
def test_exploring_with_partial_copies_finds_what_whole_copies_find(
    make: Callable[[], NetworkWorld], strategy: str, bounds: Bounds, sleep_sets: bool
) -> None:
    start = make()
    before = start.clone().fingerprint()
    results = [
        explore(
            start,
            strategy=strategy,
            bounds=bounds,
            reduction=SleepSets() if sleep_sets else NO_REDUCTION,
            partial=partial,
        )
        for partial in (True, False)
    ]
    assert outcome(results[0]) == outcome(results[1])
    assert start.clone().fingerprint() == before  # the start is left as it was


# -- snapshots copied on write


@pytest.fixture
def copy_on_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every world's snapshots copy on write, however small it is."""
    monkeypatch.setattr(world_module, "COPY_ON_WRITE_FROM", 0)


SNAPSHOTTED = {
    "checkpoints": lambda: job("keyed", {**BUSY, "records": 6, "checkpoints": 2}),
    "failover": lambda: job(
        "pipelined-regions",
        {"records": 6, "bounded_records": 4, "fail_operator": "source", "fail_after_records": 2},
    ),
    "restart": lambda: restart("baseline-recovery", RESTART),
    "rescaled-v2": lambda: restart("keyed-downscale", {"records": 10, "generation": "v2"}),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", SNAPSHOTTED)
def test_snapshots_copied_on_write_stay_as_taken_and_go_back_exactly(
    copy_on_write: None, name: str
) -> None:
    start = SNAPSHOTTED[name]()
    sim = Simulation(start.clone, make_scheduler("random", 3), snapshot_every=5)
    sim.run()
    assert sim.step_count > 40
    assert world_module.COPY_ON_WRITE_FROM == 0
    # each step's state, from whole copies
    states = []
    replayed = start.clone()
    for action in sim.history:
        states.append(replayed.clone().fingerprint())
        replayed.apply(action)
    states.append(replayed.clone().fingerprint())
    final = [e.to_json() for e in sim.events]
    for step in sim.snapshot_steps:
        snapshot = sim.snapshot_at(step)
        assert isinstance(snapshot, NetworkWorld)
        assert snapshot.clone().fingerprint() == states[step], f"snapshot at step {step}"
    for target in (sim.step_count - 1, sim.step_count // 2, 17, 3, 0):
        sim.goto(target)
        assert sim.model.clone().fingerprint() == states[target], f"back to step {target}"
    sim.run()
    assert [e.to_json() for e in sim.events] == final


def broken_links(world: NetworkWorld) -> list[str]:
    """Every link between the world's components that does not lead to the component the
    world holds under that name: what a copy re-pointed wrongly, or a world changed in a
    value it shares with another."""
    pools = world.buffer_pools.local
    broken = []
    for name, gate in world.gates.items():
        broken += [f"{name} -> {c.name}" for c in gate.channels if world.channels[c.name] is not c]
        if pools[gate.pool.name] is not gate.pool:
            broken.append(f"{name} -> {gate.pool.name}")
    for name, task in world.tasks.items():
        broken += [f"{name} -> {g.name}" for g in task.gates if world.gates[g.name] is not g]
        for partition in task.partitions:
            broken += [
                f"{name} -> {s.name}"
                for s in partition.subpartitions
                if world.subpartitions[s.name] is not s
            ]
            if pools[partition.pool.name] is not partition.pool:
                broken.append(f"{name} -> {partition.pool.name}")
        current = task.current
        if current is not None and world.channels[current.name] is not current:
            broken.append(f"{name} -> current {current.name}")
    return broken


@pytest.mark.parametrize("every", [2, 3])
@pytest.mark.parametrize("name", SNAPSHOTTED)
def test_copies_on_write_keep_every_link_of_the_world_and_its_snapshots(
    copy_on_write: None, name: str, every: int
) -> None:
    # snapshots two steps apart meet a channel copied while its task processes from it
    sim = Simulation(SNAPSHOTTED[name]().clone, make_scheduler("random", 0), snapshot_every=every)
    while sim.step() is not None:
        world = sim.model
        assert isinstance(world, NetworkWorld)
        assert broken_links(world) == [], f"step {sim.step_count}"
        if sim.step_count % 7 == 0:
            # the snapshots the world copied from still hold their own links
            for step in sim.snapshot_steps:
                kept = sim.snapshot_at(step)
                assert broken_links(kept) == [], f"snapshot {step} at step {sim.step_count}"


def test_a_snapshot_shares_what_the_steps_after_it_do_not_change(copy_on_write: None) -> None:
    world = job(
        "keyed", {**LOCAL_AND_REMOTE, "records": 10, "checkpoint_interval": 30, "checkpoints": 5}
    )
    send = until(world, lambda a: a.kind == "send" and world.footprint(a) is not None)
    snapshot = world.snapshot()
    assert all(snapshot.channels[n] is c for n, c in world.channels.items())
    channel = world.channels[world.actor(send.actor).channel]
    world.apply(send)
    changed = [n for n, c in world.channels.items() if snapshot.channels[n] is not c]
    assert changed == [channel.name]
    assert world.owned is not None
    assert world.owned.channels == {channel.name}
    # an action that may touch anything copies everything still shared
    world.apply(until(world, lambda a: world.footprint(a) is None))
    assert world.owned is None
    assert not any(snapshot.channels[n] is c for n, c in world.channels.items())


def test_a_small_worlds_snapshot_is_a_whole_copy() -> None:
    world = job("keyed", LOCAL_AND_REMOTE)
    assert world.component_count < world_module.COPY_ON_WRITE_FROM
    snapshot = world.snapshot()
    assert world.owned is None
    assert not any(snapshot.channels[n] is c for n, c in world.channels.items())


def test_a_local_pools_key_is_computed_again_only_after_an_action_that_may_change_it() -> None:
    """Local pools are keyed with the other per-name components: a copy made for an action
    whose footprint names no pool keeps every pool's key, one made for a buffer request
    computes that pool's again (and its fingerprint is the state's key made afresh)."""
    world = job("keyed", LOCAL_AND_REMOTE)
    names = world.partial_copies.names(world)
    pool_positions = {p for p, (where, _) in enumerate(names) if where == "pools"}
    assert {name for where, name in names if where == "pools"} == set(world.pools)
    emit = until(world, lambda a: a.kind == "emit")
    twin = world.clone_within(world.footprint(emit))
    twin.apply(emit)
    assert not pool_positions & set(twin.stale_keys)
    assert twin.fingerprint() == twin.state_key()
    request = until(world, lambda a: a.kind == "request-buffer")
    touched = world.footprint(request)
    assert touched is not None
    pools = {r.name for r in touched if r.kind is ResourceKind.POOL}
    assert pools
    twin = world.clone_within(touched)
    twin.apply(request)
    stale = {names[p][1] for p in twin.stale_keys if p in pool_positions}
    assert stale == pools
    assert twin.fingerprint() == twin.state_key()
