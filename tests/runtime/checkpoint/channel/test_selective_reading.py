"""A two-input operator that reads its inputs one after the other (Flink's InputSelectable),
before and after a restore, and when recovered gates are converted (GateConversion)."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.checkpoint.state_assignment import assign_state
from flinkstate.runtime.events import END_OF_PARTITION
from flinkstate.runtime.jobgraph import Exchange, JobGraph, Operator, OperatorKind
from flinkstate.runtime.options import GateConversion
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import Event, RunStatus, Simulation, make_scheduler

#: small and back-pressured: both inputs hold in-flight data when the checkpoint is taken
PARAMS = {
    "records": 40,
    "record_size": 2000,
    "cost": 4,
    "checkpoint_interval": 150,
    "parallelism": 2,
}
SEEDS = range(4)


def job(seed: int, **overrides: object) -> Simulation:
    return Simulation(
        lambda: topology("sequential-reading").build(
            {**PARAMS, **overrides}, seed=seed, full_check_every=1, check_actions=True
        ),
        make_scheduler("random", seed),
    )


def world(sim: Simulation) -> NetworkWorld:
    assert isinstance(sim.model, NetworkWorld)
    return sim.model


def restored(seed: int, conversion: str, **overrides: object) -> Simulation:
    before = job(seed, **overrides)
    assert before.run().status is RunStatus.FINISHED
    checkpoint = world(before).checkpoints.completed[0]
    assignment = assign_state(checkpoint)
    values = {**PARAMS, **overrides, "checkpoint_interval": 0, "gate_conversion": conversion}
    return Simulation(
        lambda: topology("sequential-reading").build(
            values, seed=seed, full_check_every=1, check_actions=True, restore=assignment
        ),
        make_scheduler("random", seed),
    )


def polls_before_first_input_ended(
    w: NetworkWorld, events: list[Event], kinds: tuple[str, ...] = ("poll",)
) -> list[Event]:
    """Polls (or other ``kinds`` of action) of a ``sequential`` subtask on its second input
    made before every channel of its first input delivered EndOfPartitionEvent, read from the
    events alone."""
    ended: set[str] = set()
    early = []
    for event in events:
        action = event.action
        ref = w.actor(action.actor)
        if ref.kind is not ActorKind.TASK or action.kind not in kinds:
            continue
        if w.tasks[ref.task].operator != "sequential":
            continue
        channel = w.channels[action.target]
        if event.note == f"{END_OF_PARTITION} on {channel.name}":
            ended.add(channel.name)
        task = w.task_named(channel.task)
        first, second = task.gates
        if channel.gate == second.name and not all(c.name in ended for c in first.channels):
            early.append(event)
    return early


def test_the_sequential_operator_needs_two_inputs() -> None:
    with pytest.raises(InvalidParameterError, match="needs at least two inputs, got 1"):
        JobGraph(
            (
                Operator("source", 1, OperatorKind.SOURCE),
                Operator("map", 1, sequential_inputs=True),
            ),
            (Exchange("source", "map", Partitioner.REBALANCE),),
        )


@pytest.mark.parametrize("exchange", ["keyBy", "rebalance"])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_first_input_is_read_to_its_end_before_the_second(seed: int, exchange: str) -> None:
    sim = job(seed, exchange=exchange)
    result = sim.run()
    assert result.status is RunStatus.FINISHED, [str(v) for v in result.violations][:3]
    w = world(sim)
    assert not polls_before_first_input_ended(w, sim.events)
    polled = {e.action.target for e in sim.events if e.action.kind == "poll"}
    assert {c for c in w.channels if c.startswith("sequential[")} <= polled  # both inputs read
    assert w.checkpoints.completed, "the checkpoint completed"


@pytest.mark.parametrize("seed", SEEDS)
def test_unaligned_barriers_are_handled_on_the_unselected_input(seed: int) -> None:
    """Priority events are processed outside the input selection (Flink's
    CheckpointedInputGate.processPriorityEvents), so the checkpoint completes while the
    second input is still unread."""
    sim = job(seed)
    sim.run()
    w = world(sim)
    early = polls_before_first_input_ended(w, sim.events, ("barrier", "poll"))
    assert not [e for e in early if e.action.kind == "poll"]
    assert any(e.note.startswith("barrier of checkpoint 1 on") for e in early)
    assert w.checkpoints.completed


def test_polling_an_unselected_input_is_a_violation() -> None:
    sim = Simulation(
        lambda: topology("sequential-reading").build(
            PARAMS, seed=2, faults=frozenset({"ignore-input-selection"}), full_check_every=1
        ),
        make_scheduler("random", 2),
    )
    result = sim.run()
    assert result.status is RunStatus.VIOLATION
    assert result.violations[0].invariant == "input-selection"
    assert "polled sequential[" in result.violations[0].message


def test_aligned_checkpoints_of_a_sequential_reader_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="aligned barrier on an input not selected"):
        topology("sequential-reading").build({**PARAMS, "unaligned": False})
    # without checkpoints an aligned job is fine
    topology("sequential-reading").build({**PARAMS, "unaligned": False, "checkpoint_interval": 0})


def test_gate_conversion_is_a_checked_choice_defaulting_to_per_gate() -> None:
    built = topology("sequential-reading").build(PARAMS)
    assert built.options.gate_conversion is GateConversion.PER_GATE
    assert topology("keyed").build().options.gate_conversion is GateConversion.PER_GATE
    with pytest.raises(InvalidParameterError, match="gate_conversion must be one of per-gate"):
        topology("keyed").build({"gate_conversion": "lazy"})
    with pytest.raises(InvalidParameterError, match="unknown gate conversion 'lazy'; choose"):
        GateConversion.parse("lazy")


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_per_gate_conversion_lets_the_reader_finish_its_first_input_during_recovery(
    seed: int,
) -> None:
    sim = restored(seed, "per-gate")
    result = sim.run()
    assert result.status is RunStatus.FINISHED, [str(v) for v in result.violations][:3]
    w = world(sim)
    assert not polls_before_first_input_ended(w, sim.events)
    for task in (t for t in w.tasks.values() if t.operator == "sequential"):
        first, second = task.gates
        steps = {e.action.target: e.step for e in sim.events if e.action.kind == "convert"}
        second_read = min(
            e.step
            for e in sim.events
            if e.action.kind == "poll" and w.channels[e.action.target].gate == second.name
        )
        # the first gate converts on its own, before the second input is looked at
        assert steps[first.name] < second_read < steps[second.name]


@pytest.mark.parametrize("seed", SEEDS)
def test_all_gates_conversion_deadlocks_the_sequential_reader(seed: int) -> None:
    sim = restored(seed, "all-gates")
    result = sim.run()
    assert result.status is RunStatus.DEADLOCK
    w = world(sim)
    assert not result.violations
    assert not polls_before_first_input_ended(w, sim.events)
    converted = {e.action.target for e in sim.events if e.action.kind == "convert"}
    assert not [gate for gate in converted if gate.startswith("sequential[")]
    assert converted == {g for g in w.gates if g.startswith("sink[")}  # one gate: no change
    for task in (t for t in w.tasks.values() if t.operator == "sequential"):
        first, second = task.gates
        assert all(c.recovery.state_consumed for c in first.channels)
        assert not any(c.recovery.state_consumed for c in second.channels)


@pytest.mark.slow
def test_clone_and_fingerprint_keep_the_conversion_mode() -> None:
    sim = restored(1, "all-gates")
    sim.run()
    stuck = world(sim)
    twin = stuck.clone()
    assert twin.options.gate_conversion is GateConversion.ALL_GATES
    assert twin.fingerprint() == stuck.fingerprint()
    assert twin.waits() == stuck.waits()
    other = restored(1, "per-gate").model
    assert isinstance(other, NetworkWorld)
    assert other.fingerprint() != restored(1, "all-gates").model.fingerprint()
    # converting a gate shows in the fingerprint
    per_gate = restored(1, "per-gate")
    before = None
    while True:
        fingerprint = world(per_gate).fingerprint()
        event = per_gate.step()
        assert event is not None
        if event.action.kind == "convert":
            before = fingerprint
            break
    assert world(per_gate).fingerprint() != before
