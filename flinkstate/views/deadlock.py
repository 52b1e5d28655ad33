"""A deadlock as its waits-for graph, with the cycle that keeps it stuck drawn in red.

Every blocked actor points at the actors holding what it waits for. The actors on the cycle go
on an inner ring, everyone else (stuck because of them) on an outer one: a fixed, readable
layout instead of a force layout that would differ from run to run.
"""

from __future__ import annotations

import math
from typing import Any

import networkx as nx
import plotly.graph_objects as go

from flinkstate.sim.deadlock import DeadlockReport
from flinkstate.views.lines import lines_trace

_CYCLE = "#d62728"
_ACTOR_COLOURS = {
    "task": "#1f77b4",
    "netty": "#2ca02c",
    "channel-state-reader": "#ff7f0e",
    "channel-state-writer": "#9467bd",
    "checkpoint-coordinator": "#8c564b",
}


def waits_for_graph(report: DeadlockReport) -> nx.DiGraph:
    """Actors and holders as nodes; an edge ``a -> b`` says ``a`` waits for something ``b``
    holds, with the resource named. Cycle edges carry ``cycle=True``."""
    graph = nx.DiGraph(step=report.step)
    cycle = report.cycle
    on_cycle = set(zip(cycle, (*cycle[1:], *cycle[:1]), strict=True)) if cycle else set()
    for wait in report.waits:
        graph.add_node(wait.actor, waits_for=wait.resource)
        for holder in wait.holders:
            graph.add_node(holder)
            previous = graph.get_edge_data(wait.actor, holder, {}).get("resources", ())
            graph.add_edge(
                wait.actor,
                holder,
                resources=(*previous, wait.resource),
                cycle=(wait.actor, holder) in on_cycle,
            )
    for node in graph.nodes:
        graph.nodes[node]["on_cycle"] = node in cycle
    return graph


def _positions(graph: nx.DiGraph, cycle: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    """A radial layout: what everyone ends up waiting for in the middle (the cycle first,
    then other actors waiting on themselves or on nobody), and each waiting actor one ring
    further out, next to what it waits for."""
    roots = list(cycle) + sorted(
        n
        for n in graph.nodes
        if n not in cycle and (graph.has_edge(n, n) or graph.out_degree(n) == 0)
    )
    placed: dict[str, float] = {}  # node -> angle
    positions: dict[str, tuple[float, float]] = {}
    ring = roots
    depth = 0
    while ring:
        if depth > 0:  # order by where what they wait for sits, so edges run outwards
            ring.sort(
                key=lambda n: (
                    _mean_angle([placed[m] for m in graph.successors(n) if m in placed]),
                    n,
                )
            )
        radius = 0.0 if depth == 0 and len(ring) == 1 else 1.3 + 1.5 * depth
        for index, node in enumerate(ring):
            angle = math.pi / 2 - 2 * math.pi * (index + 0.5 * (depth % 2)) / len(ring)
            placed[node] = angle
            positions[node] = (radius * math.cos(angle), radius * math.sin(angle))
        ring = sorted(
            {p for n in ring for p in graph.predecessors(n) if p not in placed},
        )
        depth += 1
        if not ring:  # actors in a separate knot: start it on the next ring
            ring = sorted(n for n in graph.nodes if n not in placed)[:1]
    return positions


def _mean_angle(angles: list[float]) -> float:
    if not angles:
        return 0.0
    x = sum(math.cos(a) for a in angles)
    y = sum(math.sin(a) for a in angles)
    return math.atan2(y, x) % (2 * math.pi)


def deadlock_figure(report: DeadlockReport, *, title: str | None = None) -> go.Figure:
    """The waits-for graph drawn; hover a node for what it waits for."""
    graph = waits_for_graph(report)
    positions = _positions(graph, report.cycle)
    traces: list[dict[str, Any]] = []
    for cycle, name, colour, width in (
        (False, "waits for", "#b0b0b0", 1),
        (True, "waits-for cycle", _CYCLE, 3.5),
    ):
        polylines: list[list[tuple[float, float]]] = []
        for source, target, data in graph.edges(data=True):
            if data["cycle"] is not cycle:
                continue
            if source == target:  # waits for itself: a small loop above the node
                x, y = positions[source]
                polylines.append(
                    [
                        (x + 0.25 * math.sin(a), y + 0.25 - 0.25 * math.cos(a))
                        for a in (2 * math.pi * step / 24 for step in range(25))
                    ]
                )
            else:
                polylines.append([positions[source], positions[target]])
        traces.append(lines_trace(polylines, name, {"color": colour, "width": width}))
    annotations = [
        {
            "x": positions[target][0],
            "y": positions[target][1],
            "ax": positions[source][0],
            "ay": positions[source][1],
            "xref": "x",
            "yref": "y",
            "axref": "x",
            "ayref": "y",
            "showarrow": True,
            "arrowhead": 2,
            "arrowwidth": 2 if data["cycle"] else 1,
            "arrowcolor": _CYCLE if data["cycle"] else "#b0b0b0",
            "standoff": 9,
            "text": "",
        }
        for source, target, data in graph.edges(data=True)
        if source != target
    ]
    nodes = list(graph.nodes)
    hover = []
    for node in nodes:
        lines = [f"<b>{node}</b>"]
        waits = graph.nodes[node].get("waits_for")
        lines.append(f"waits for {waits}" if waits else "not waiting (holds what others need)")
        holders = list(graph.successors(node))
        if holders:
            lines.append("held by " + ", ".join(holders))
        hover.append("<br>".join(lines))
    traces.append(
        {
            "type": "scatter",
            "x": [positions[n][0] for n in nodes],
            "y": [positions[n][1] for n in nodes],
            "mode": "markers+text",
            "name": "actors",
            "text": [n.replace(" ", "<br>", 1) for n in nodes],  # actor kind above its name
            "textposition": "bottom center",
            "textfont": {"size": 10},
            "hovertext": hover,
            "hoverinfo": "text",
            "showlegend": False,
            "marker": {
                "size": [22 if graph.nodes[n]["on_cycle"] else 14 for n in nodes],
                "color": [_ACTOR_COLOURS.get(n.split(" ", 1)[0], "#7f7f7f") for n in nodes],
                "line": {
                    "color": [_CYCLE if graph.nodes[n]["on_cycle"] else "#444" for n in nodes],
                    "width": [4 if graph.nodes[n]["on_cycle"] else 0.5 for n in nodes],
                },
            },
        }
    )
    if report.cycle:
        cycle_text = " -> ".join((*report.cycle, report.cycle[0]))
        heading = title or f"Deadlock at step {report.step}: waits-for cycle {cycle_text}"
    else:
        heading = title or f"Stuck at step {report.step}: no cycle, a wait nobody will release"
    return go.Figure(
        {
            "data": traces,
            "layout": {
                "title": {"text": heading, "font": {"size": 14}},
                "height": 560,
                "annotations": annotations,
                "xaxis": {"visible": False},
                "yaxis": {"visible": False, "scaleanchor": "x"},
                "hovermode": "closest",
                "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
                "legend": {"orientation": "h"},
            },
        }
    )
