"""The waits-for picture marks exactly the cycle the report found."""

from __future__ import annotations

from flinkstate.recovery.scenarios import run_scenario
from flinkstate.sim.deadlock import DeadlockReport, Wait, find_deadlock
from flinkstate.views.deadlock import deadlock_figure, waits_for_graph


def test_prefilter_deadlock_reader_waits_on_itself() -> None:
    run = run_scenario("prefilter-deadlock", seed=0)
    assert run.result is not None
    report = run.result.deadlock
    assert report is not None
    graph = waits_for_graph(report)
    reader = report.cycle[0]
    assert report.cycle == (reader,)
    assert graph.has_edge(reader, reader)
    assert graph.edges[reader, reader]["cycle"]
    assert graph.nodes[reader]["on_cycle"]
    assert sum(1 for *_, d in graph.edges(data=True) if d["cycle"]) == 1
    figure = deadlock_figure(report)
    assert f"waits-for cycle {reader} -> {reader}" in figure.layout.title.text
    cycle_trace = next(t for t in figure.data if t.name == "waits-for cycle")
    assert len([x for x in cycle_trace.x if x is not None]) == 25  # the loop drawn round it


def test_three_actor_cycle_is_red_and_bystanders_are_not() -> None:
    waits = [
        Wait("task a[0]", "a buffer of pool a[0]>b", ("task b[0]",)),
        Wait("task b[0]", "input data", ("netty b[0]<c[0]",)),
        Wait("netty b[0]<c[0]", "credit of b[0]<c[0]", ("task a[0]",)),
        Wait("task d[0]", "input data", ("task a[0]",)),
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
    actors = figure.data[-1]
    names = [text.replace("<br>", " ") for text in actors.text]
    sizes = dict(zip(names, actors.marker.size, strict=True))
    assert sizes["task a[0]"] > sizes["task d[0]"]
    hover = dict(zip(names, actors.hovertext, strict=True))
    assert "waits for credit of b[0]&lt;c[0]" in hover["netty b[0]<c[0]"] or (
        "waits for credit of b[0]<c[0]" in hover["netty b[0]<c[0]"]
    )


def test_stuck_without_cycle_says_so() -> None:
    report = DeadlockReport(5, (Wait("task a[0]", "input data", ()),), ())
    figure = deadlock_figure(report)
    assert figure.layout.title.text.startswith("Stuck at step 5: no cycle")
