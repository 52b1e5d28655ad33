"""Copies of the world made for one action: they copy what the action's footprint names (with
the components linking to it), share the rest with the state they came from, and end where a
whole copy ends; the explorer, which copies so, finds what it finds with whole copies."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from benchmarks.bench_explorer import RESTART
from flinkstate.network import independence
from flinkstate.network.footprint import Resource, ResourceKind
from flinkstate.network.world import NetworkWorld
from flinkstate.sim import Action
from flinkstate.sim.explorer import (
    NO_REDUCTION,
    Bounds,
    ExplorationResult,
    IndependenceError,
    SleepSets,
    explore,
    verify_along_runs,
    verify_partial_copy,
)
from tests.network.test_independence import SMALL, job, restart

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
    assert plan.tasks == frozenset()  # a transport touches no task's own state
    producer, consumer = world.task_keys[channel.producer], world.task_keys[channel.task]
    assert plan.linked == {producer, consumer}
    assert plan.gates == {channel.gate}

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
    untouched = next(name for name in world.tasks if name not in plan.tasks | plan.linked)
    assert twin.tasks[untouched] is world.tasks[untouched]


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
