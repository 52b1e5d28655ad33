"""Which actions of the network world commute: every independence the footprints claim is
checked by taking both actions in both orders, along seeded runs of small jobs and restarts
(faults included); and exploring with sleep sets reaches the same states and findings as
exploring every transition, with fewer transitions."""

from __future__ import annotations

import random

import pytest

from benchmarks.bench_explorer import RESTART
from flinkstate.catalogue.topologies import topology
from flinkstate.lab.reproducers import SEQUENTIAL_READER
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.options import RecoveryGeneration
from flinkstate.runtime.world import independence
from flinkstate.runtime.world.exploration.footprint import RECORDS, SOURCES, Resource, ResourceKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import Action
from flinkstate.sim.explore import SleepSets, explore, verify_along_runs

#: two sources, two counters, two sinks, one record each: every interleaving in seconds
SMALL = {
    "records": 1,
    "parallelism": 2,
    "source_parallelism": 2,
    "network_buffers": 16,
    "checkpoint_interval": 0,
}
#: records spanning buffers, a checkpoint in flight, two slots per TaskManager (local and
#: remote channels, shared network pools)
BUSY = {
    "records": 4,
    "record_size": 1500,
    "parallelism": 2,
    "source_parallelism": 2,
    "network_buffers": 64,
    "checkpoint_interval": 12,
    "slots_per_tm": 2,
}
#: one subtask per operator, a checkpoint two steps in: every interleaving of its barriers
ONE_BY_ONE: dict[str, object] = {
    "parallelism": 1,
    "source_parallelism": 1,
    "records": 2,
    "checkpoint_interval": 2,
}


def job(name: str, values: dict[str, object], *faults: str) -> NetworkWorld:
    item = topology(name)
    known = {p.name for p in item.parameters}
    return item.build({k: v for k, v in values.items() if k in known}, faults=frozenset(faults))


def restart(name: str, values: dict[str, object], seed: int = 0) -> NetworkWorld:
    run = prepare_scenario(name, overrides=values, seed=seed)
    assert run.simulation is not None, run.message
    model = run.simulation.model
    assert isinstance(model, NetworkWorld)
    return model


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "values", "faults"),
    [
        ("keyed", BUSY, ()),
        ("keyed", {**BUSY, "checkpoint_interval": 4}, ()),  # barriers after the snapshot
        ("keyed", {**BUSY, "flush_every_record": True}, ()),
        ("keyed", {**BUSY, "unaligned": False}, ()),
        ("keyed-chain", BUSY, ()),
        ("two-input", BUSY, ()),
        ("sequential-reading", BUSY, ()),
        ("same-upstream", BUSY, ()),
        ("pipelined-regions", BUSY, ()),
        ("backpressure", {**BUSY, "network_buffers": 24}, ()),
        ("keyed", BUSY, ("lose-record",)),
        ("keyed", BUSY, ("duplicate-record", "reorder-buffers")),
        ("keyed", BUSY, ("double-recycle", "leak-buffer", "persist-twice")),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_actions_said_to_be_independent_commute_along_runs_of_small_jobs(
    name: str, values: dict[str, object], faults: tuple[str, ...]
) -> None:
    assert verify_along_runs(job(name, values, *faults)) > 50


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("baseline-recovery", RESTART),
        ("keyed-downscale", {"records": 10}),
        ("spanning-records-rescale", {"records": 4}),
        ("barrier-hidden-from-credited-reader", {}),
        ("prefilter-heap-fallback", {"records": 6}),
        ("checkpoint-during-drain", {}),
        ("unfiltered-checkpoint-during-recovery", {}),
        ("selective-reading-per-gate", SEQUENTIAL_READER),
        # V2: spilling readers, drainers, barriers and checkpoints during the drain
        ("aligned-checkpoint-during-recovery", {}),
        ("spill-pressure-v2", {}),
        ("trigger-no-op-after-drain", {}),
        ("missing-recovery-barrier", {}),
        # sources that emit before their output state is restored (FLINK-19907)
        ("chain-before-output-restored", {}),
        # a reader step that fails its task (FLINK-22376's hook)
        ("recovery-error-recycled-once", {}),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_actions_said_to_be_independent_commute_along_restarts(
    name: str, values: dict[str, object]
) -> None:
    assert verify_along_runs(restart(name, values), seeds=1, limit=800) > 0


def test_an_actors_footprint_names_what_it_works_on() -> None:
    world = job("keyed", SMALL)  # one slot per TaskManager: subtask i runs in tm i
    source = world.footprints.tasks["task source[0]"]
    assert source.task == Resource(ResourceKind.TASK, "task source[0]")
    assert list(source.links.values()) == [
        Resource(ResourceKind.LINK, "counter[0]<source[0]"),
        Resource(ResourceKind.LINK, "counter[1]<source[0]"),
    ]
    assert source.inputs == {}
    counter = world.footprints.tasks["task counter[1]"]
    tm1 = Resource(ResourceKind.NETWORK_POOL, "network-pool tm1")
    # its gate's pool, and source[1]'s pool that the local channel's buffers go back to
    assert counter.input_pools == (("pool counter[1]<source", tm1), ("pool source[1]>counter", tm1))
    # polling a channel touches the channel and, a local one, the pipe it reads directly
    assert counter.inputs == {
        "counter[1]<source[0]": {Resource(ResourceKind.CHANNEL, "counter[1]<source[0]")},
        "counter[1]<source[1]": {
            Resource(ResourceKind.CHANNEL, "counter[1]<source[1]"),
            Resource(ResourceKind.LINK, "counter[1]<source[1]"),
        },
    }
    assert counter.upstream == {
        Resource(ResourceKind.LINK, "counter[1]<source[0]"),
        Resource(ResourceKind.LINK, "counter[1]<source[1]"),
    }
    netty = world.footprints.transports["counter[0]<source[1]"]
    assert netty.producer_pool == ("pool source[1]>counter", tm1)
    assert netty.link == Resource(ResourceKind.LINK, "counter[0]<source[1]")
    assert netty.channel == Resource(ResourceKind.CHANNEL, "counter[0]<source[1]")
    # each source's only record is its last: sources without splits of their own read that
    # emit; both draw a record id
    assert [world.footprint(a) for a in world.enabled_actions()] == [
        {Resource(ResourceKind.TASK, f"task source[{i}]"), RECORDS, SOURCES} for i in (0, 1)
    ]
    assert world.footprint(Action("checkpoint-coordinator", "trigger")) is None


def test_a_task_touches_its_network_pool_only_to_take_from_it_or_give_back() -> None:
    world = job("keyed", {**SMALL, "records": 30})
    seen: set[tuple[bool, bool]] = set()  # (the pool has a free segment, touches the global)
    for _ in range(2000):
        enabled = world.enabled_actions()
        if not enabled:
            break
        for action in enabled:
            if action.kind == "request-buffer":
                touched = world.footprint(action)
                assert touched is not None
                task = world.tasks[world.actions.index.refs[action.actor].task]
                pool = world.partition_of(task, world.subpartitions[action.target]).pool
                network = any(r.kind is ResourceKind.NETWORK_POOL for r in touched)
                seen.add((bool(pool.free), network))
        world.apply(enabled[-1])
    # an empty pool asks the global pool; a recycled segment waiting in the pool does not
    assert seen == {(False, True), (True, False)}


def _verdict(model: NetworkWorld, strategy: str, reduction: SleepSets | None = None) -> tuple:
    result = (
        explore(model, strategy=strategy)
        if reduction is None
        else explore(model, strategy=strategy, reduction=reduction)
    )
    assert result.exhausted
    findings = [(f.kind, f.name, f.depth if strategy == "bfs" else 0) for f in result.findings]
    # states past a broken invariant end there, and sleep sets need not reach them all
    depth = result.depth if not result.violations else None
    return (result.distinct - result.broken, depth, result.finished, findings), result.states


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
@pytest.mark.parametrize(
    ("subject", "faults"),
    [
        ("keyed", ()),
        ("keyed", ("duplicate-record",)),
        ("keyed", ("lose-record",)),
        ("restart", ()),
        ("barriers", ()),
        ("barriers", ("persist-twice",)),
    ],
    ids=[
        "keyed",
        "duplicate-record",
        "lose-record",
        "selective-reading-restart",
        "checkpoint-barriers",
        "checkpoint-persist-twice",
    ],
)
def test_sleep_sets_reach_every_state_and_finding_with_fewer_transitions(
    strategy: str, subject: str, faults: tuple[str, ...]
) -> None:
    if subject == "restart":
        model = restart("selective-reading-all-gates", SEQUENTIAL_READER, seed=4)
    elif subject == "barriers":  # one source, one counter, one sink: a checkpoint's barriers
        model = job("keyed", {**SMALL, **ONE_BY_ONE}, *faults)
    else:
        model = job(subject, {**SMALL, "slots_per_tm": 2}, *faults)
    plain, transitions = _verdict(model, strategy)
    reduced, fewer = _verdict(model, strategy, SleepSets())
    assert reduced == plain
    assert fewer < transitions


@pytest.mark.slow
def test_the_reduction_factor_on_a_two_by_two_keyed_job() -> None:
    """Measured: 61,289 transitions without, 44,089 with sleep sets (1.39) on 23,677 states;
    a smaller job here, the same kind of saving."""
    model = job("keyed", {**SMALL, "slots_per_tm": 2})
    plain = explore(model)
    reduced = explore(model, reduction=SleepSets())
    assert reduced.distinct == plain.distinct
    assert plain.states / reduced.states > 1.2


def test_a_restarts_reader_and_conversions_stay_within_their_task() -> None:
    world = restart("baseline-recovery", RESTART)
    seen: dict[str, frozenset[Resource] | None] = {}
    rng = random.Random(0)
    while len(seen) < 2:
        enabled = list(world.enabled_actions())
        assert enabled, "the restart ended before its reader and conversion were seen"
        for action in enabled:
            if action.kind in ("finish-input", "convert") and action.kind not in seen:
                seen[action.kind] = world.footprint(action)
                task = world.tasks[world.actions.index.refs[action.actor].task]
                own = world.footprints.tasks[task.name]
                # the end-of-state events go into the task's channels; a conversion also
                # gives back to and takes from the network pool
                expected = {own.task, own.helper, *own.channels}
                if action.kind == "convert":
                    expected.add(own.network_pool)
                assert seen[action.kind] == expected
        world.apply(rng.choice(enabled))


def test_a_v2_restarts_reader_and_drainer_stay_within_their_task() -> None:
    """The spilling reader and the drainer change their own state (``HELPER``), the channel
    they work for and its pools; the drainer never touches its task, the reader's hand-over
    (and its filtering, which reads the task's key groups) does."""
    world = restart("checkpoint-during-drain", {})
    assert world.effective_generation is RecoveryGeneration.V2
    kinds: set[str] = set()
    for _ in range(2000):
        enabled = list(world.enabled_actions())
        if not enabled:
            break
        for action in enabled:
            ref = world.actions.index.refs[action.actor]
            if ref.kind in (ActorKind.READER, ActorKind.DRAINER):
                touched = world.footprint(action)
                assert touched is not None
                own = world.footprints.tasks[world.tasks[ref.task].name]
                assert own.helper in touched
                if action.kind in ("drain", "finish-drain"):
                    assert own.task not in touched
                elif action.kind == "finish-fetch":
                    assert own.task in touched
                kinds.add(action.kind)
        world.apply(enabled[0])
    assert {"spill", "finish-fetch", "drain", "finish-drain"} <= kinds


def test_a_barrier_that_takes_no_snapshot_stays_within_its_task() -> None:
    """Barriers after a task's snapshot touch its task, its channels and the checkpoint in
    progress; the one taking the snapshot notes its step, and commutes with nothing."""
    world = job("keyed", {**BUSY, "checkpoint_interval": 4})
    precise = anything = 0
    rng = random.Random(0)
    for _ in range(3000):
        enabled = list(world.enabled_actions())
        if not enabled:
            break
        for action in enabled:
            if action.kind == "barrier":
                touched = world.footprint(action)
                if touched is None:
                    anything += 1
                else:
                    precise += 1
                    assert not any(r.kind is ResourceKind.LINK for r in touched) or any(
                        r.kind is ResourceKind.TASK for r in touched
                    )
        world.apply(rng.choice(enabled))
    assert precise > 0
    assert anything > 0


def test_every_kind_of_action_has_a_footprint_rule() -> None:
    """``_FOOTPRINTS`` says for every ``ActionKind`` what it touches (``_anything`` where it may
    touch anything), so a new kind fails here until its independence is thought through."""
    assert set(independence._FOOTPRINTS) == set(ActionKind)
    assert all(type(kind) is ActionKind for kind in independence._FOOTPRINTS)
