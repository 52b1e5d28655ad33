"""A world's fingerprint is exact: every field of every component is in its key or listed, with
the reason, as no state; fields said to be fixed stay fixed; and two states reached along
different interleavings with one fingerprint behave the same from there on."""

from __future__ import annotations

import dataclasses
import random
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.buffer.buffer import Buffer, LocalBufferPool, NetworkBufferPool
from flinkstate.runtime.buffer.ledger import SegmentLedger, StepJournal
from flinkstate.runtime.buffer.pools import BufferPools
from flinkstate.runtime.checkpoint.channel.channel_state_reader import ChannelStateReader
from flinkstate.runtime.checkpoint.channel.channel_state_writer import ChannelStateWriter
from flinkstate.runtime.checkpoint.channel.fetched_channel_state import (
    DrainCursor,
    FetchedChannelState,
    FetchedChannelStateDrainer,
    SpillAccount,
    SpillWriter,
)
from flinkstate.runtime.checkpoint.checkpoint import CheckpointInProgress
from flinkstate.runtime.checkpoint.coordinator_state import CoordinatorState
from flinkstate.runtime.copying import FIXED
from flinkstate.runtime.partition.consumer.input_gate import (
    BufferManager,
    Channel,
    ChannelStatePersister,
    Demultiplexer,
    Gate,
    RecoverableChannelState,
    RecoveredChannelState,
)
from flinkstate.runtime.partition.record_writer import Output
from flinkstate.runtime.partition.result_partition import ResultPartition, Subpartition
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.watermark.event_time import EventTimeState
from flinkstate.runtime.watermark.status_watermark_valve import StatusWatermarkValve
from flinkstate.runtime.watermark.virtual_channel_watermarks import VirtualChannelWatermarks
from flinkstate.runtime.world.record_order import RecordOrder
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import RunStatus, Simulation, make_scheduler
from flinkstate.sim.core import end_of_run

#: every mutable component of a world: each has a ``state_key`` and a ``NOT_STATE``
COMPONENTS: frozenset[type] = frozenset(
    {
        NetworkWorld,
        StepJournal,
        SegmentLedger,
        BufferPools,
        NetworkBufferPool,
        LocalBufferPool,
        Buffer,
        Subpartition,
        ResultPartition,
        Channel,
        BufferManager,
        ChannelStatePersister,
        RecoveredChannelState,
        Demultiplexer,
        RecoverableChannelState,
        Gate,
        Task,
        Output,
        CoordinatorState,
        CheckpointInProgress,
        RecordOrder,
        EventTimeState,
        StatusWatermarkValve,
        VirtualChannelWatermarks,
        ChannelStateReader,
        SpillWriter,
        ChannelStateWriter,
        FetchedChannelStateDrainer,
        FetchedChannelState,
        DrainCursor,
        SpillAccount,
    }
)

#: fields of immutable values (keyed whole, by their equality) that their equality leaves out
VALUE_FIELDS_LEFT_OUT = {
    ("WriteRequest", "uid"): "presentation: the request's drawing number",
    ("WriteRequest", "buffer"): "presentation: the drawing number of the buffer it retains",
    ("Checkpoint", "persisted_buffers"): "presentation: what the canvas outlines as persisted",
    ("JobGraph", "_by_name"): "an index of the operators, made from them",
}

#: scenario restarts and a job that between them hold every kind of component: a pending and
#: completed checkpoints, V2 spill files and drainers, V1 filtering on the reader, classic
#: demultiplexing, event time with merged channels, a failover (overrides keep them short)
SAMPLES: tuple[tuple[str, dict[str, object]], ...] = (
    ("checkpoint-during-drain", {"records": 20}),
    ("prefilter-heap-fallback", {"records": 10}),
    ("keyed-upscale", {"records": 20}),
    ("merged-watermarks-aggregated", {"records": 30}),
    ("failed-task-counted-as-finished", {}),
    ("spill-files-left-on-abort", {"records": 20}),
)


def sample_worlds() -> Iterator[NetworkWorld]:
    """Copies of each sample run's world every few steps, and the keyed job's."""
    runs = []
    for name, overrides in SAMPLES:
        simulation = prepare_scenario(name, overrides=overrides).simulation
        assert simulation is not None
        runs.append(simulation)
    job = topology("keyed").build({"records": 20, "checkpoint_interval": 30, "checkpoints": 2})
    runs.append(Simulation(job.clone, make_scheduler("random", 1)))
    for simulation in runs:
        gap = 8
        while True:
            model = simulation.model
            assert isinstance(model, NetworkWorld)
            yield model.clone()
            if simulation.run(simulation.step_count + gap).status is not RunStatus.STOPPED:
                break
            gap = gap * 3 // 2


def reachable(world: NetworkWorld) -> Iterator[tuple[object, tuple[str, ...]]]:
    """Every dataclass instance the world's state reaches (not through fields its components
    list as no state), with the path to it."""
    seen: set[int] = set()
    stack: list[tuple[object, tuple[str, ...]]] = [(world, ())]
    while stack:
        value, path = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            yield value, path
            skipped = getattr(type(value), "NOT_STATE", {})
            for f in dataclasses.fields(value):
                if f.name not in skipped:
                    stack.append((getattr(value, f.name), (*path, f.name)))
        elif isinstance(value, dict):
            stack.extend((v, (*path, str(k))) for k, v in value.items())
        elif isinstance(value, list | tuple | deque | set | frozenset):
            stack.extend((v, (*path, str(i))) for i, v in enumerate(value))


@pytest.fixture(scope="module")
def instances() -> dict[type, list[object]]:
    found: dict[type, list[object]] = {}
    for world in sample_worlds():
        for value, _ in reachable(world):
            found.setdefault(type(value), []).append(value)
    return found


@pytest.mark.slow
def test_every_mutable_component_has_a_key_and_names_what_it_leaves_out(
    instances: dict[type, list[object]],
) -> None:
    mutable = {cls for cls in instances if not cls.__dataclass_params__.frozen}  # type: ignore[attr-defined]
    assert mutable == COMPONENTS, "a new component needs a state_key and a NOT_STATE"
    for cls in COMPONENTS:
        names = {f.name for f in dataclasses.fields(cls)}
        assert callable(getattr(cls, "state_key", None)), cls
        assert set(cls.NOT_STATE) <= names, (cls, set(cls.NOT_STATE) - names)  # type: ignore[attr-defined]
        assert all(why for why in cls.NOT_STATE.values()), cls  # type: ignore[attr-defined]


@pytest.mark.slow
def test_immutable_values_are_compared_whole(instances: dict[type, list[object]]) -> None:
    for cls in instances:
        if not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
            continue
        for f in dataclasses.fields(cls):
            if not f.compare:
                assert (cls.__name__, f.name) in VALUE_FIELDS_LEFT_OUT, (cls, f.name)


class Touched(Exception):
    """A field a key was not expected to read was read."""


class Spy:
    """Stands in for a field's value: reading it in any way (an attribute, iterating, hashing,
    comparing, testing its truth) raises :class:`Touched`."""

    def __getattr__(self, name: str) -> Any:
        raise Touched(name)

    def __iter__(self) -> Iterator[Any]:
        raise Touched("iter")

    def __len__(self) -> int:
        raise Touched("len")

    def __bool__(self) -> bool:
        raise Touched("bool")

    def __hash__(self) -> int:
        raise Touched("hash")

    def __eq__(self, other: object) -> bool:
        raise Touched("eq")

    def __lt__(self, other: object) -> bool:
        raise Touched("lt")

    def __ge__(self, other: object) -> bool:
        raise Touched("ge")

    def __int__(self) -> int:
        raise Touched("int")


def key_of(component: Any) -> Hashable:
    if isinstance(component, RecordOrder):
        return component.state_key({})
    return component.state_key()  # type: ignore[no-any-return]


def reads(component: Any, name: str) -> bool:
    """Whether the component's key reads the field ``name``: with a spy in its place (on a
    shallow copy), computing the key or comparing it with the real one touches the spy."""
    original = key_of(component)
    twin = object.__new__(type(component))
    for f in dataclasses.fields(component):
        object.__setattr__(twin, f.name, Spy() if f.name == name else getattr(component, f.name))
    try:
        return key_of(twin) != original
    except Touched:
        return True


def test_every_field_is_in_the_key_or_listed_as_no_state(
    instances: dict[type, list[object]],
) -> None:
    for cls in sorted(COMPONENTS, key=lambda c: c.__name__):
        component = instances[cls][-1]
        listed = cls.NOT_STATE  # type: ignore[attr-defined]
        for f in dataclasses.fields(cls):
            if f.name in listed:
                assert not reads(component, f.name), (
                    f"{cls.__name__}.{f.name} is listed as no state"
                )
            else:
                assert reads(component, f.name), (
                    f"{cls.__name__}.{f.name} is neither in its key nor in its NOT_STATE"
                )


def fixed_fields(world: NetworkWorld) -> dict[tuple[str, ...], object]:
    """Every field said to be fixed once the world is built, by its path."""
    values: dict[tuple[str, ...], object] = {}
    for component, path in reachable(world):
        for name, why in getattr(type(component), "NOT_STATE", {}).items():
            if why == FIXED:
                values[(*path, name)] = getattr(component, name)
    return values


@pytest.mark.slow
@pytest.mark.parametrize(("name", "overrides"), SAMPLES)
def test_fields_said_to_be_fixed_do_not_change(name: str, overrides: dict[str, object]) -> None:
    simulation = prepare_scenario(name, overrides=overrides).simulation
    assert simulation is not None
    start = simulation.model
    assert isinstance(start, NetworkWorld)
    before = fixed_fields(start)
    gap = 8
    while simulation.run(simulation.step_count + gap).status is RunStatus.STOPPED:
        gap = gap * 3 // 2
        model = simulation.model
        assert isinstance(model, NetworkWorld)
        now = fixed_fields(model)
        # components made later (a valve, spill files) bring their own; a pool can go
        common = [path for path in before if path in now]
        assert len(common) > 0.9 * len(before)
        assert {path: now[path] for path in common} == {path: before[path] for path in common}


#: a small job with checkpoints, and restarts from the step their recovery is under way (a
#: drain with checkpoints, demultiplexing, merged watermarks): interleavings that meet often,
#: with steps noted against a pending checkpoint's snapshots
SMALL = {"parallelism": 2, "source_parallelism": 1, "checkpoint_interval": 3, "network_buffers": 32}
CONVERGING: tuple[tuple[str, dict[str, object], Callable[[NetworkWorld], bool]], ...] = (
    (
        "checkpoint-during-drain",
        {**SMALL, "records": 3, "new_parallelism": 3, "restart_checkpoint_interval": 2},
        lambda world: any(d.cursor for d in world.drainers.values()),
    ),
    (
        "keyed-upscale",
        {**SMALL, "records": 3, "new_parallelism": 3},
        lambda world: any(c.demultiplexer.selected for c in world.channels.values()),
    ),
    (
        "merged-watermarks-aggregated",
        {
            **SMALL,
            "records": 4,
            "watermark_interval": 1,
            "new_parallelism": 1,
            "checkpoint_interval": 4,
        },
        lambda world: bool(world.event_time.valves),
    ),
)


def job_with_checkpoints() -> NetworkWorld:
    overrides = {"records": 2, "source_parallelism": 2, "slots_per_tm": 2}
    return topology("keyed").build({**SMALL, **overrides}, full_check_every=1)


def restart_under_way(
    name: str, overrides: dict[str, object], until: Callable[[NetworkWorld], bool]
) -> NetworkWorld:
    simulation = prepare_scenario(name, overrides=overrides).simulation
    assert simulation is not None
    assert simulation.run(until).status is RunStatus.STOPPED
    model = simulation.model
    assert isinstance(model, NetworkWorld)
    return model.clone()


def meetings(start: NetworkWorld, limit: int) -> Iterator[tuple[NetworkWorld, NetworkWorld]]:
    """Breadth first from ``start``, keeping each state's world: every time a state is reached
    along a second path, the world kept and the one just reached."""
    kept = {start.fingerprint(): start}
    level = [start]
    while level and len(kept) < limit:
        following = []
        for world in level:
            if world.violations:
                continue
            for action in world.enabled_actions():
                child = world.clone()
                child.apply(action)
                key = child.fingerprint()
                if key in kept:
                    yield kept[key], child
                else:
                    kept[key] = child
                    following.append(child)
        level = following


def assert_same_future(first: NetworkWorld, second: NetworkWorld, rng: random.Random) -> None:
    """The same actions enabled, and after each next action (one of them each, then a random
    run to the end) the same states, the same invariants broken, the same end."""
    assert first.enabled_actions() == second.enabled_actions()
    for action in first.enabled_actions():
        a, b = first.clone(), second.clone()
        a.apply(action)
        b.apply(action)
        assert a.fingerprint() == b.fingerprint()
    a, b = first.clone(), second.clone()
    while True:
        assert [v.invariant for v in a.violations] == [v.invariant for v in b.violations]
        if a.violations:
            return
        enabled = a.enabled_actions()
        assert enabled == b.enabled_actions()
        if not enabled:
            ends = end_of_run(a, a.step), end_of_run(b, b.step)
            assert ends[0].status is ends[1].status
            assert [v.invariant for v in ends[0].violations] == [
                v.invariant for v in ends[1].violations
            ]
            return
        action = enabled[rng.randrange(len(enabled))]
        a.apply(action)
        b.apply(action)
        assert a.fingerprint() == b.fingerprint()


def check_meetings(start: NetworkWorld, limit: int) -> None:
    rng = random.Random(7)
    met = stamped = 0
    for kept, arrived in meetings(start, limit):
        met += 1
        # the interleavings differ in when records moved, not only in the order of the maps
        if (
            kept.deliveries != arrived.deliveries
            or kept.order.emitted_at != arrived.order.emitted_at
        ):
            stamped += 1
        if met % 7 == 1:  # each meeting checked one step ahead, every 7th to its end
            assert_same_future(kept, arrived, rng)
        else:
            assert kept.enabled_actions() == arrived.enabled_actions()
    assert met > 20
    assert stamped > 0


@pytest.mark.slow
def test_states_with_one_fingerprint_behave_the_same_in_a_job_with_checkpoints() -> None:
    check_meetings(job_with_checkpoints(), 1200)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "overrides", "until"), CONVERGING, ids=[c[0] for c in CONVERGING])
def test_states_with_one_fingerprint_behave_the_same_in_a_restart(
    name: str, overrides: dict[str, object], until: Callable[[NetworkWorld], bool]
) -> None:
    check_meetings(restart_under_way(name, overrides, until), 500)


def test_a_copy_keeps_the_key_parts_its_action_left_as_they_were() -> None:
    """A model checker numbers a part of a state's key that is the very object of its parent's
    key by identity: every part an action leaves equal must be that object, whether the copy
    shared the component, copied it for an action that left it as it was, or rebuilt a
    run-wide part; and the parts that differ are keyed afresh."""
    world = job_with_checkpoints()
    rng = random.Random(7)
    kept = changed = 0
    for _ in range(300):
        enabled = world.enabled_actions()
        if not enabled or world.violations:
            break
        before = world.fingerprint()
        for action in enabled:
            child = world.clone_within(world.footprint(action))
            child.apply(action)
            after = child.fingerprint()
            assert after == child.state_key()  # what the caches keep is what a key made anew is
            for position, (old, new) in enumerate(zip(before, after, strict=True)):
                if old == new:
                    assert old is new, f"{action}: part {position} of the key is a new object"
                    kept += 1
                else:
                    changed += 1
        world.apply(rng.choice(enabled))
    assert kept > 4 * changed > 0


def test_a_fingerprint_holds_the_configuration() -> None:
    build = topology("keyed").build
    assert build({"records": 5}).fingerprint() == build({"records": 5}).fingerprint()
    # what the run is built from, even where nothing has happened yet to show it
    assert (
        build({"records": 5}).fingerprint()
        != build({"records": 5, "checkpoint_interval": 7}).fingerprint()
    )
    # how often the ledger is audited is not the state
    assert (
        build({"records": 5}, full_check_every=1).fingerprint()
        == build({"records": 5}).fingerprint()
    )


def test_steps_noted_with_records_are_keyed_against_the_pending_checkpoint() -> None:
    world = job_with_checkpoints()
    simulation = Simulation(world.clone, make_scheduler("random", 3))

    def counter_snapshotted(world: NetworkWorld) -> bool:
        pending = world.checkpoints.pending
        return pending is not None and "task counter[0]" in pending.snapshots

    assert simulation.run(counter_snapshotted).status is RunStatus.STOPPED
    model = simulation.model
    assert isinstance(model, NetworkWorld)
    assert model.checkpoints.pending is not None
    task = "task counter[0]"
    snapshot = model.checkpoints.pending.cut()[task]
    gate = next(g for g in model.gates.values() if g.task == task)
    key = (10_000, gate.name)  # a delivery of a record, towards the snapshotted task

    def processed_at(step: int) -> Hashable:
        twin = model.clone()
        twin.deliveries[key] = step
        return twin.fingerprint()

    # when before the snapshot (or after it) does not matter; which side of it does
    assert processed_at(snapshot - 2) == processed_at(snapshot - 1)
    assert processed_at(snapshot) == processed_at(snapshot + 3)
    assert processed_at(snapshot - 1) != processed_at(snapshot)

    def written_at(step: int) -> Hashable:
        twin = model.clone()
        twin.order.emitted_at[key] = (step, task)
        return twin.fingerprint()

    assert written_at(snapshot - 2) == written_at(snapshot - 1)
    assert written_at(snapshot) == written_at(snapshot + 3)
    assert written_at(snapshot - 1) != written_at(snapshot)
