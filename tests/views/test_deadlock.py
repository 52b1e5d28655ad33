"""The waits-for picture marks exactly the cycle the report found, and puts it first."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from flinkstate.recovery.scenarios import run_scenario
from flinkstate.sim.deadlock import DeadlockReport, Wait, find_deadlock
from flinkstate.views.deadlock import cycle_text, deadlock_figure, waits_for_graph
from flinkstate.views.palette import ALERT, actor_colour


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
    reader = report.cycle[0]
    assert report.cycle == (reader,)
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
    cycle = set(report.cycle)
    distance = {name: math.hypot(x, y) for name, (x, y, _) in nodes.items()}
    assert max(distance[n] for n in cycle) < min(distance[n] for n in nodes if n not in cycle)
    assert min(nodes[n][2] for n in cycle) > max(
        s for n, (_, _, s) in nodes.items() if n not in cycle
    )


def test_three_actor_cycle_is_red_and_bystanders_are_not() -> None:
    waits = [
        Wait("task a[0]", "a buffer of pool a[0]>b", ("task b[0]",)),
        Wait("task b[0]", "input data", ("netty b[0]<c[0]",)),
        Wait("netty b[0]<c[0]", "credit of b[0]<c[0]", ("task a[0]",)),
        Wait("task d[0]", "input data", ("task a[0]",)),
        Wait("task e[0]", "input data", ("task d[0]",)),
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
    assert " -> ".join((*report.cycle, report.cycle[0])) == cycle_text(report.cycle)
    nodes = _nodes(figure)
    distance = {name: math.hypot(x, y) for name, (x, y, _) in nodes.items()}
    # the cycle on the inner ring, who waits on it next, who waits on them further out
    assert max(distance[n] for n in report.cycle) < distance["task d[0]"] < distance["task e[0]"]
    assert nodes["task a[0]"][2] > nodes["task d[0]"][2] > nodes["task e[0]"][2]
    # each cycle edge says what it waits for
    labels = " ".join(a.text.replace("<br>", " ") for a in figure.layout.annotations if a.text)
    for resource in ("a buffer of pool a[0]>b", "input data", "credit of b[0]<c[0]"):
        assert f"waits for {resource}" in labels
    actors = figure.data[-1]
    hover = dict(zip(nodes, actors.hovertext, strict=True))
    assert "waits for credit of b[0]<c[0]" in hover["netty b[0]<c[0]"]
    colours = dict(zip(nodes, actors.marker.color, strict=True))
    assert colours["netty b[0]<c[0]"] == actor_colour("netty b[0]<c[0]")
    assert colours["task d[0]"] == actor_colour("task d[0]")


def test_stuck_without_cycle_says_so() -> None:
    report = DeadlockReport(5, (Wait("task a[0]", "input data", ()),), ())
    figure = deadlock_figure(report)
    assert figure.layout.title.text.startswith("Stuck at step 5: no cycle")
