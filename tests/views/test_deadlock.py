"""The waits-for picture marks exactly the cycle the report found, and puts it first."""

from __future__ import annotations

import math

import plotly.graph_objects as go
import pytest

from flinkstate.lab.scenario_run import run_scenario
from flinkstate.runtime.actor_ref import ActorKind, ActorRef
from flinkstate.sim.deadlock import DeadlockReport, Wait, find_deadlock
from flinkstate.views.deadlock import cycle_text, deadlock_figure, waits_for_graph
from flinkstate.views.palette import ALERT, NEUTRAL, actor_colour


def _report() -> DeadlockReport:
    run = run_scenario("prefilter-deadlock", seed=0)
    assert run.result is not None
    report = run.result.deadlock
    assert report is not None
    return report


def _nodes(figure: go.Figure) -> dict[str, tuple[float, float, float]]:
    """Each actor's position and marker size, by name (the actor trace comes last)."""
    actors = figure.data[-1]
    names = [
        text.replace("<br>", " ").replace("<b>", "").replace("</b>", "") for text in actors.text
    ]
    return {
        name: (x, y, size)
        for name, x, y, size in zip(names, actors.x, actors.y, actors.marker.size, strict=True)
    }


def test_prefilter_deadlock_reader_waits_on_itself() -> None:
    report = _report()
    graph = waits_for_graph(report)
    (actor,) = report.cycle
    assert isinstance(actor, ActorRef)
    assert actor.kind is ActorKind.READER
    reader = str(actor)  # the graph's nodes are the actors' names, each with its kind
    assert graph.nodes[reader]["kind"] == "channel-state-reader"
    assert graph.has_edge(reader, reader)
    assert graph.edges[reader, reader]["cycle"]
    assert graph.nodes[reader]["on_cycle"]
    assert sum(1 for *_, d in graph.edges(data=True) if d["cycle"]) == 1
    figure = deadlock_figure(report)
    assert f"waits-for cycle: {reader} waits for itself" in figure.layout.title.text
    cycle_trace = next(t for t in figure.data if t.name == "waits-for cycle")
    assert len([x for x in cycle_trace.x if x is not None]) == 25  # the loop drawn round it
    assert cycle_trace.line.color == ALERT
    # what the reader waits for is written on the figure, in red, not only on hover
    (label,) = [a for a in figure.layout.annotations if a.text]
    assert "a buffer of recovered channel" in label.text.replace("<br>", " ")
    assert label.font.color == ALERT


def test_the_cycle_is_in_the_middle_and_largest() -> None:
    report = _report()
    nodes = _nodes(deadlock_figure(report))
    cycle = {str(actor) for actor in report.cycle}
    distance = {name: math.hypot(x, y) for name, (x, y, _) in nodes.items()}
    assert max(distance[n] for n in cycle) < min(distance[n] for n in nodes if n not in cycle)
    assert min(nodes[n][2] for n in cycle) > max(
        s for n, (_, _, s) in nodes.items() if n not in cycle
    )


def _task(key: str) -> ActorRef:
    return ActorRef(ActorKind.TASK, f"task {key}", task=key)


def test_three_actor_cycle_is_red_and_bystanders_are_not() -> None:
    netty = ActorRef(ActorKind.NETTY, "netty b[0]<c[0]", channel="b[0]<c[0]")
    a, b, d, e = (_task(f"{name}[0]") for name in "abde")
    waits = [
        Wait(a, "a buffer of pool a[0]>b", (b,)),
        Wait(b, "input data", (netty,)),
        Wait(netty, "credit of b[0]<c[0]", (a,)),
        Wait(d, "input data", (a,)),
        Wait(e, "input data", (d,)),
    ]
    report = find_deadlock(waits, 17)
    graph = waits_for_graph(report)
    cycle_edges = {(s, t) for s, t, d in graph.edges(data=True) if d["cycle"]}
    assert cycle_edges == {
        ("task a[0]", "task b[0]"),
        ("task b[0]", "netty b[0]<c[0]"),
        ("netty b[0]<c[0]", "task a[0]"),
    }
    assert not graph.nodes["task d[0]"]["on_cycle"]
    figure = deadlock_figure(report)
    assert f"waits-for cycle: {cycle_text(report.cycle)}" in figure.layout.title.text
    assert report.cycle_path == cycle_text(report.cycle)
    nodes = _nodes(figure)
    distance = {name: math.hypot(x, y) for name, (x, y, _) in nodes.items()}
    # the cycle on the inner ring, who waits on it next, who waits on them further out
    inner = max(distance[str(n)] for n in report.cycle)
    assert inner < distance["task d[0]"] < distance["task e[0]"]
    assert nodes["task a[0]"][2] > nodes["task d[0]"][2] > nodes["task e[0]"][2]
    # each cycle edge says what it waits for
    labels = " ".join(a.text.replace("<br>", " ") for a in figure.layout.annotations if a.text)
    for resource in ("a buffer of pool a[0]>b", "input data", "credit of b[0]<c[0]"):
        assert f"waits for {resource}" in labels
    actors = figure.data[-1]
    hover = dict(zip(nodes, actors.hovertext, strict=True))
    assert "waits for credit of b[0]<c[0]" in hover["netty b[0]<c[0]"]
    colours = dict(zip(nodes, actors.marker.color, strict=True))
    assert colours["netty b[0]<c[0]"] == actor_colour(ActorKind.NETTY)
    assert colours["task d[0]"] == actor_colour(ActorKind.TASK)
    assert actor_colour(ActorKind.NETTY) != actor_colour(ActorKind.TASK)
    legend = {t.name for t in figure.data if t.hoverinfo == "skip" and t.mode == "markers"}
    assert legend == {"task", "netty"}


def test_a_toy_models_actors_are_drawn_without_a_kind() -> None:
    """Any model's report can be drawn: actors that are plain names get one neutral kind,
    however their names read (nothing is guessed from the text)."""
    report = find_deadlock(
        [Wait("task a", "x", ("netty b",)), Wait("netty b", "y", ("task a",))], 1
    )
    graph = waits_for_graph(report)
    assert {graph.nodes[n]["kind"] for n in graph.nodes} == {"actor"}
    colours = set(deadlock_figure(report).data[-1].marker.color)
    assert colours == {NEUTRAL}


def test_stuck_without_cycle_says_so() -> None:
    report = DeadlockReport(5, (Wait("task a[0]", "input data", ()),), ())
    figure = deadlock_figure(report)
    assert figure.layout.title.text.startswith("Stuck at step 5: no cycle")


def test_a_two_actor_cycle_writes_each_wait_beside_its_own_edge() -> None:
    """Two actors waiting on each other: the two edges are bowed apart and each one's words
    sit on its own side, clear of the other's and of the two names (the upper one above)."""
    run = run_scenario("selective-reading-all-gates", seed=0)
    assert run.result is not None
    assert run.result.deadlock is not None
    report = run.result.deadlock
    assert len(report.cycle) == 2
    figure = deadlock_figure(report)
    labels = [a for a in figure.layout.annotations if a.text]
    assert len(labels) == 2
    assert {label.xanchor for label in labels} == {"left", "right"}
    left = next(label for label in labels if label.xanchor == "right")
    right = next(label for label in labels if label.xanchor == "left")
    assert left.x < 0 < right.x  # on opposite sides of the pair, which stands upright
    nodes = _nodes(figure)
    upper, lower = sorted((str(actor) for actor in report.cycle), key=lambda n: -nodes[n][1])
    assert nodes[upper][0] == pytest.approx(0, abs=1e-9)
    assert nodes[lower][0] == pytest.approx(0, abs=1e-9)
    positions = dict(zip(nodes, figure.data[-1].textposition, strict=True))
    assert (positions[upper], positions[lower]) == ("top center", "bottom center")
    # each edge's arrowhead sits on its own bow and points the way it waits
    heads = [a for a in figure.layout.annotations if a.showarrow and a.arrowcolor == ALERT]
    assert len(heads) == 2
    assert {math.copysign(1, head.x) for head in heads} == {-1.0, 1.0}
    for head in heads:
        going_down = head.y < head.ay
        assert going_down == (head.x > 0)  # bowed to the left of its direction
