"""What the JobManager knows of each vertex's old state, and the descriptors it computes
from it before FLINK-27031 and FLINK-31963 (master's plan left as it is)."""

from __future__ import annotations

from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.rescale.descriptor import NO_RESCALE
from flinkstate.rescale.reassignment import StatelessAssignment, VertexState
from flinkstate.runtime.checkpoint.task_state_assignment import (
    rescaling_as_computed,
    vertex_states,
)


def test_the_fast_sink_has_no_state_of_its_own_and_its_source_has_output_state() -> None:
    run = prepare_scenario("stateless-sink-assigned", seed=0)
    assert run.checkpoint is not None
    assert run.checkpoint.graph is not None
    vertices = vertex_states(run.checkpoint, run.checkpoint.graph)
    assert vertices["sink"] == VertexState.stateless(upstream_output=True)
    assert vertices["source"].own
    assert vertices["source"].output
    assert not vertices["source"].input
    assert not vertices["source"].downstream_input


def test_masters_rule_leaves_the_plan_as_it_is() -> None:
    run = prepare_scenario("stateless-sink-assigned", seed=0)
    assert run.checkpoint is not None
    assert run.checkpoint.graph is not None
    assert run.assignment is not None
    graph = run.assignment.graph
    vertices = vertex_states(run.checkpoint, run.checkpoint.graph)
    redistributed = {"source": True, "sink": True}
    kept = rescaling_as_computed(run.assignment.exchanges, graph, vertices, redistributed)
    assert kept == dict(run.assignment.exchanges)
    dropped = rescaling_as_computed(
        run.assignment.exchanges, graph, vertices, redistributed, StatelessAssignment.NOT_ASSIGNED
    )
    (plan,) = dropped.values()
    assert all(gate.descriptor is NO_RESCALE for gate in plan.downstream)
    assert not plan.filters
    # the source has state of its own and computed its output mapping: its partitions keep
    # their descriptors and copy each old subpartition to every sink that reads it
    assert all(partition.descriptor is not NO_RESCALE for partition in plan.upstream)
