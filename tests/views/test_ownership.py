"""The ownership graph accounts for every segment, keeps its layout, and draws the last moves."""

from __future__ import annotations

from collections import Counter

import plotly.graph_objects as go
import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import ScenarioRun, prepare_scenario
from flinkstate.runtime.buffer.owners import Owner, OwnerKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event
from flinkstate.views.ownership import (
    NODE_KINDS,
    OwnershipLayout,
    owner_node,
    ownership_figure,
    ownership_graph,
    ownership_spec,
)
from flinkstate.views.palette import ALERT, NODE_COLOURS, wrap


def _stepped(name: str, steps: int, **overrides: object) -> ScenarioRun:
    run = prepare_scenario(name, seed=1, overrides=overrides or None)
    assert run.simulation is not None
    run.simulation.run(steps)
    return run


def _world(run: ScenarioRun) -> NetworkWorld:
    world = run.world
    assert world is not None
    return world


@pytest.mark.parametrize(
    ("scenario", "steps"),
    [
        ("baseline-recovery", 400),
        ("prefilter-heap-segment", 300),
        ("prefilter-deadlock", 10_000),
        ("rebalance-rescale", 900),
        ("same-upstream-by-data-set", 600),  # two gates and partitions between one pair
    ],
)
def test_every_segment_is_held_by_exactly_one_node(scenario: str, steps: int) -> None:
    run = _stepped(scenario, steps)
    world = _world(run)
    graph = ownership_graph(world)
    assert sum(data["buffers"] for _, data in graph.nodes(data=True)) == len(world.owner)
    expected = Counter(owner_node(world, owner) for owner in world.owner)
    for node, count in expected.items():
        assert graph.nodes[node]["buffers"] == count, node


def test_owners_map_to_the_places_flink_keeps_buffers() -> None:
    world = _world(_stepped("baseline-recovery", 0))  # a restart: its tasks have readers

    def node(kind: OwnerKind, holder: str) -> str:
        return owner_node(world, Owner(kind, holder))

    assert node(OwnerKind.NETWORK_POOL, "tm0") == "network-pool tm0"
    assert node(OwnerKind.POOL, "counter[0]>sink") == "result-partition counter[0]>sink"
    assert node(OwnerKind.POOL, "counter[0]<source") == "input-gate counter[0]<source"
    assert node(OwnerKind.QUEUE, "source[1]>counter[0]") == "subpartition source[1]>counter[0]"
    assert node(OwnerKind.BUILDER, "source[1]>counter[0]") == "subpartition source[1]>counter[0]"
    assert (
        node(OwnerKind.RECOVERED_EXCLUSIVE, "counter[0]<source[1]")
        == "channel counter[0]<source[1]"
    )
    assert node(OwnerKind.PRE_FILTER, "counter[1]<source[0]") == "channel-state-reader counter[1]"
    assert node(OwnerKind.DESERIALIZER, "task sink[1]") == "task sink[1]"
    assert node(OwnerKind.CHANNEL_STATE_WRITER, "tm0.0") == "channel-state-writer tm0.0"


def test_layout_is_fixed_by_the_job_and_reads_upstream_to_downstream() -> None:
    run = _stepped("baseline-recovery", 0)
    world = _world(run)
    layout = OwnershipLayout.of(world)
    at_start = ownership_graph(world, layout=layout)
    assert run.simulation is not None
    run.simulation.run(2000)
    later = ownership_graph(_world(run), layout=OwnershipLayout.of(_world(run)))
    assert {n: d["pos"] for n, d in at_start.nodes(data=True)} == {
        n: d["pos"] for n, d in later.nodes(data=True)
    }
    pos = layout.positions
    assert pos["task source[0]"][0] < pos["task counter[0]"][0] < pos["task sink[0]"][0]
    # one lane per subtask: same column, distinct heights, subtask 0 on top
    lanes = [pos[f"task counter[{i}]"] for i in range(4)]
    assert len({x for x, _ in lanes}) == 1
    assert [y for _, y in lanes] == sorted((y for _, y in lanes), reverse=True)
    # the channel sits between the producer's subpartition and the consumer's gate
    sub = pos["subpartition source[1]>counter[0]"][0]
    channel = pos["channel counter[0]<source[1]"][0]
    gate = pos["input-gate counter[0]<source"][0]
    assert sub < channel < gate < pos["task counter[0]"][0]


def test_last_step_moves_are_drawn_as_edges_with_counts() -> None:
    run = _stepped("baseline-recovery", 0)
    assert run.simulation is not None
    event: Event | None = None
    while event is None or len(event.moves) < 2:
        event = run.simulation.step()
        assert event is not None
    graph = ownership_graph(_world(run), event)
    world = _world(run)
    nodes = [(owner_node(world, m.source), owner_node(world, m.target)) for m in event.moves]
    moves = Counter((source, target) for source, target in nodes if source != target)
    drawn = {(s, t): d["count"] for s, t, d in graph.edges(data=True) if d["kind"] == "move"}
    assert drawn == dict(moves)
    spec = ownership_spec(graph, OwnershipLayout.of(_world(run)))
    assert len(spec["layout"]["annotations"]) == len(moves)


def test_hover_shows_credits_backlog_and_blocked_state() -> None:
    run = _stepped("baseline-recovery", 3000)
    world = _world(run)
    graph = ownership_graph(world)
    remote = next(c for c in world.channels.values() if c.remote and not c.recovered)
    hover = graph.nodes[f"channel {remote.name}"]["hover"]
    assert f"credits (buffers announced): {remote.buffers.available}" in hover
    sub = world.subpartitions[remote.subpartition]
    assert f"backlog: {sub.backlog} buffer(s)" in graph.nodes[f"subpartition {sub.name}"]["hover"]
    task = world.tasks["counter[0]"]
    assert f"processed: {task.processed}" in graph.nodes["task counter[0]"]["hover"]


def test_a_blocked_subpartition_is_ringed_in_red() -> None:
    run = _stepped("barrier-held-by-blocked-subpartition", 0)
    assert run.simulation is not None
    run.simulation.run(lambda w: any(s.blocked for s in w.subpartitions.values()))
    world = _world(run)
    blocked = next(s for s in world.subpartitions.values() if s.blocked)
    graph = ownership_graph(world)
    node = graph.nodes[f"subpartition {blocked.name}"]
    assert node["blocked"]
    assert "<b>blocked</b>" in node["hover"]
    figure = ownership_figure(world)
    trace = next(t for t in figure.data if t.name == "subpartition")
    index = list(trace.hovertext).index(wrap(node["hover"]))
    assert trace.marker.line.color[index] == ALERT


def test_spec_is_valid_plotly_with_a_trace_per_node_kind() -> None:
    run = _stepped("prefilter-heap-segment", 500)
    world = _world(run)
    assert run.simulation is not None
    figure = ownership_figure(world, run.simulation.events[-1])  # validates every property
    assert figure.layout.title.text == f"Buffer ownership at step {world.step}"
    names = [t.name for t in figure.data]
    assert names[-len(NODE_KINDS) :] == list(NODE_KINDS)
    # every node kind in the palette's colour, shared with the timelines
    for trace in figure.data[-len(NODE_KINDS) :]:
        assert trace.marker.color == NODE_COLOURS[trace.name]
    assert go.Figure(figure.to_plotly_json()).to_plotly_json() == figure.to_plotly_json()


def test_a_layout_of_another_job_is_refused() -> None:
    small = _world(_stepped("baseline-recovery", 0))
    big = _world(_stepped("keyed-upscale", 0))
    with pytest.raises(InvalidParameterError, match="the layout has no place for"):
        ownership_graph(big, layout=OwnershipLayout.of(small))
