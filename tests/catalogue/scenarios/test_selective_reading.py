"""The selective-reading deadlock (docs/concepts/hazards.md#selective-reading) and its fix, as
scenarios: converting recovered gates only together deadlocks a sequential reader; converting
each on its own recovers."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.lab.scenario_run import ScenarioRun, run_scenario
from flinkstate.runtime.actor_ref import ActorKind, ActorRef, request_partitions
from flinkstate.sim.deadlock import Node
from flinkstate.views.deadlock import waits_for_graph

ALL_GATES = "selective-reading-all-gates"
PER_GATE = "selective-reading-per-gate"
SEEDS = range(20)


def recovered_inputs(run: ScenarioRun) -> set[int]:
    """Inputs of the sequential operator restored with in-flight data: its own input state,
    or its upstream's output state."""
    assert run.assignment is not None
    inputs = set()
    for share in run.assignment.subtasks.values():
        if share.operator == "sequential":
            inputs |= {chunk.index for chunk in share.input_state}
        elif share.operator in ("first", "second") and share.output_state:
            inputs.add(0 if share.operator == "first" else 1)
    return inputs


def _sequential_task(run: ScenarioRun, cycle: tuple[Node, ...]) -> ActorRef:
    """The one task of the sequential operator on the cycle (found by its typed actor)."""
    assert run.world is not None
    world = run.world
    (task,) = (
        actor
        for actor in cycle
        if isinstance(actor, ActorRef)
        and actor.kind is ActorKind.TASK
        and world.tasks[actor.task].operator == "sequential"
    )
    return task


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", [ALL_GATES, PER_GATE])
def test_selective_reading_scenarios_reach_their_outcome(name: str, seed: int) -> None:
    run = run_scenario(name, seed=seed)
    assert run.as_expected, run.summary()
    assert recovered_inputs(run) == {0, 1}
    assert run.result is not None
    assert not run.result.violations


def test_the_scenarios_differ_only_in_gate_conversion() -> None:
    all_gates, per_gate = get_scenario(ALL_GATES), get_scenario(PER_GATE)
    assert all_gates.expected is Outcome.DEADLOCK
    assert per_gate.expected is Outcome.RECOVERED
    assert all_gates.topology == per_gate.topology == "sequential-reading"
    assert {**all_gates.parameters, "gate_conversion": "per-gate"} == dict(per_gate.parameters)
    for scenario in (all_gates, per_gate):
        assert "gate_conversion" in scenario.matters
        assert set(scenario.matters) <= set(scenario.resolve())


@pytest.mark.parametrize("seed", range(5))
def test_the_deadlock_cycle_is_the_task_and_its_gate_conversion(seed: int) -> None:
    run = run_scenario(ALL_GATES, seed=seed)
    assert run.result is not None
    report = run.result.deadlock
    assert report is not None
    assert len(report.cycle) == 2, report.describe()
    task = _sequential_task(run, report.cycle)
    subtask = task.task
    conversion = request_partitions(subtask, f"{subtask}<first")
    assert str(conversion) == f"request-partitions {subtask}<first"
    assert set(report.cycle) == {task, conversion}
    waits = {w.actor: w for w in report.waits if w.actor in report.cycle}
    # the task waits for the conversion of input 0 to receive that input's end ...
    assert waits[task].holders == (conversion,)
    assert f"the conversion of {subtask}<first" in waits[task].resource
    assert "input 0 ends only with live data and EndOfPartitionEvent" in waits[task].resource
    # ... and the conversion for input 1's recovered state, which only the task consumes
    assert waits[conversion].holders == (task,)
    assert f"recovered state of {subtask}<second to be consumed" in waits[conversion].resource
    assert "all-gates" in waits[conversion].resource
    graph = waits_for_graph(report)
    assert graph.edges[str(task), str(conversion)]["cycle"]
    assert graph.edges[str(conversion), str(task)]["cycle"]


def test_per_gate_conversion_restores_every_subtask() -> None:
    run = run_scenario(PER_GATE, seed=3)
    assert run.outcome is Outcome.RECOVERED
    assert run.resumed_step is not None
    assert run.checkpoint is not None
    assert run.recovered_bytes >= run.checkpoint.in_flight_bytes > 0


def test_overriding_the_conversion_swaps_the_outcomes() -> None:
    assert run_scenario(ALL_GATES, seed=4, overrides={"gate_conversion": "per-gate"}).outcome is (
        Outcome.RECOVERED
    )
    assert run_scenario(PER_GATE, seed=4, overrides={"gate_conversion": "all-gates"}).outcome is (
        Outcome.DEADLOCK
    )


@pytest.mark.parametrize("seed", range(3))
def test_per_gate_still_hangs_when_the_unselected_state_outgrows_its_buffers(seed: int) -> None:
    """The reader thread appends the end-of-state events only after reading every gate's
    state (``readInputChannelState``: ``readInputData``, then ``finishReadRecoveredState``
    per gate). If input 1's recovered state needs more buffers than its recovered channels
    have, the reader blocks on them, the sequential reader never frees them, and input 0's
    end-of-state event never comes: a cycle of the task and its reader, conversion aside."""
    run = run_scenario(
        PER_GATE,
        seed=seed,
        overrides={
            "recover_output_on_downstream": True,
            "buffers_per_channel": 1,
            "floating_buffers": 1,
        },
    )
    assert run.outcome is Outcome.DEADLOCK
    assert run.result is not None
    report = run.result.deadlock
    assert report is not None
    task = _sequential_task(run, report.cycle)
    (reader,) = set(report.cycle) - {task}
    assert isinstance(reader, ActorRef)
    assert (reader.kind, reader.task) == (ActorKind.READER, task.task)
    assert str(reader) == f"channel-state-reader {task.task}"
    wait = next(w for w in report.waits if w.actor == reader)
    assert "<second[" in wait.resource
