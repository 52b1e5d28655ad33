"""A deadlock as its waits-for graph, with the cycle that keeps it stuck drawn in red.

Every blocked actor points at the actors holding what it waits for. The cycle is what a reader
must see first, so it is drawn large in the middle with what each of its actors waits for
written beside it; everyone stuck because of it sits on rings around it, one ring per wait
away: a fixed, readable layout instead of a force layout that would differ from run to run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import networkx as nx
import plotly.graph_objects as go

from flinkstate.runtime.actor_ref import ActorRef
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.sim.deadlock import DeadlockReport, Node
from flinkstate.views.lines import lines_trace
from flinkstate.views.palette import ALERT, LEGEND_BELOW, actor_colour, figure_layout, wrap


def actor_kind(actor: Node) -> str:
    """What an actor's colour and legend entry go by: a network world's actors (and the
    owners that hold a buffer where no actor does, such as a subpartition's queue) are typed
    and say their kind; the actors of any other model's report are just actors."""
    if isinstance(actor, ActorRef | Owner):
        return actor.kind.value
    return "actor"


def waits_for_graph(report: DeadlockReport) -> nx.DiGraph:
    """Actors and holders as nodes, by name, each with its ``kind``; an edge ``a -> b`` says
    ``a`` waits for something ``b`` holds, with the resource named. Cycle edges carry
    ``cycle=True``."""
    graph = nx.DiGraph(step=report.step)
    cycle = _names(report.cycle)
    on_cycle = set(zip(cycle, (*cycle[1:], *cycle[:1]), strict=True)) if cycle else set()
    for wait in report.waits:
        actor = str(wait.actor)
        graph.add_node(actor, waits_for=wait.resource, kind=actor_kind(wait.actor))
        for node in wait.holders:
            holder = str(node)
            graph.add_node(holder, kind=actor_kind(node))
            previous = graph.get_edge_data(actor, holder, {}).get("resources", ())
            graph.add_edge(
                actor,
                holder,
                resources=(*previous, wait.resource),
                cycle=(actor, holder) in on_cycle,
            )
    for node in graph.nodes:
        graph.nodes[node]["on_cycle"] = node in cycle
    return graph


def _names(actors: tuple[Node, ...]) -> tuple[str, ...]:
    return tuple(map(str, actors))


#: the cycle's ring, and each further ring's distance from the one inside it (data units);
#: the first leaves room for what the cycle's actors wait for, written beside them
_CYCLE_SPACING = 2.4
_FIRST_RING = 2.6
#: a cycle of two actors: one above the other, further apart, each of its two edges bowed
#: to its own side so that what each waits for is written beside its own edge; the first
#: ring leaves room for those words
_PAIR_RADIUS = 1.3
_PAIR_FIRST_RING = 4.2
_PAIR_BOW = 0.6
_RING_STEP = 1.5
#: the least distance between neighbours on one ring, so that their labels do not collide
_SPACING = 1.25


def _depths(graph: nx.DiGraph, cycle: tuple[str, ...]) -> dict[str, int]:
    """How many waits separate each actor from the cycle (0 on it): breadth first along
    "waits for" edges backwards. Actors stuck on something else (another actor waiting on
    itself, a holder nobody releases) start their own tree one ring out."""
    depth: dict[str, int] = {node: 0 for node in cycle}
    frontier = list(cycle)
    while len(depth) < graph.number_of_nodes():
        while frontier:
            following = []
            for node in frontier:
                for waiter in sorted(graph.predecessors(node)):
                    if waiter not in depth:
                        depth[waiter] = depth[node] + 1
                        following.append(waiter)
            frontier = following
        rest = sorted(n for n in graph.nodes if n not in depth)
        if rest:
            stuck = [n for n in rest if graph.has_edge(n, n) or graph.out_degree(n) == 0]
            frontier = stuck or rest[:1]
            for node in frontier:
                depth[node] = 1
    return depth


def _positions(graph: nx.DiGraph, cycle: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    """The cycle on a small ring in the middle (its one actor at the centre), every other actor
    on a ring further out per wait between it and the cycle, beside what it waits for: a fixed
    layout, the same for the same report, instead of a force layout."""
    depth = _depths(graph, cycle)
    positions: dict[str, tuple[float, float]] = {}
    angles: dict[str, float] = {}
    radius = 0.0
    for ring in range(max(depth.values(), default=0) + 1):
        nodes = [n for n in graph.nodes if depth[n] == ring]
        if ring == 0:
            nodes = list(cycle)  # in the cycle's order, so its edges go round
            radius = 0.0 if len(nodes) <= 1 else _CYCLE_SPACING * len(nodes) / (2 * math.pi)
            if len(nodes) == 2:
                radius = _PAIR_RADIUS
        else:
            step = _RING_STEP
            if ring == 1:
                step = _PAIR_FIRST_RING if len(cycle) == 2 else _FIRST_RING
            radius = max(radius + step, _SPACING * len(nodes) / (2 * math.pi))
        for node, angle in _spread(nodes, graph, angles, ring).items():
            angles[node] = angle
            positions[node] = (radius * math.cos(angle), radius * math.sin(angle))
    return positions


def _spread(
    nodes: list[str], graph: nx.DiGraph, placed: dict[str, float], ring: int
) -> dict[str, float]:
    """Angles for one ring: evenly spaced, in the order of the angles of what each waits for,
    the whole ring turned so that everyone sits as close as it can to what it waits for."""
    slot = 2 * math.pi / max(len(nodes), 1)
    wanted: dict[str, float] = {}
    for node in nodes:
        angle = _mean_angle([placed[m] for m in graph.successors(node) if m in placed])
        if angle is not None:
            wanted[node] = angle
    if ring > 0:  # actors stuck on something else go last, in name order
        nodes = sorted(wanted, key=lambda n: (wanted[n], n)) + sorted(
            n for n in nodes if n not in wanted
        )
    turn = math.pi / 2 + (0.5 * slot if ring % 2 else 0.0)  # the first at the top
    if wanted:  # the circular mean of how far each anchored actor is from what it wants
        offsets = [wanted[n] - index * slot for index, n in enumerate(nodes) if n in wanted]
        turn = math.atan2(sum(math.sin(o) for o in offsets), sum(math.cos(o) for o in offsets))
    return {node: (turn + index * slot) % (2 * math.pi) for index, node in enumerate(nodes)}


def _mean_angle(angles: list[float]) -> float | None:
    if not angles:
        return None
    x = sum(math.cos(a) for a in angles)
    y = sum(math.sin(a) for a in angles)
    return math.atan2(y, x) % (2 * math.pi)


def cycle_text(cycle: tuple[Node, ...]) -> str:
    """A waits-for cycle in words: ``a -> b -> a``, or ``a waits for itself``."""
    names = _names(cycle)
    if len(names) == 1:
        return f"{names[0]} waits for itself"
    return " -> ".join((*names, names[0]))


#: marker sizes (px): the cycle's actors, those waiting on them directly, everyone further out
_SIZES = (38, 17, 13)
_LOOP = 0.32


def deadlock_figure(report: DeadlockReport, *, title: str | None = None) -> go.Figure:
    """The waits-for graph drawn: the cycle large in the middle, in red, with what each of its
    actors waits for written on its edge; the actors stuck behind it smaller, around it. Hover
    any actor for what it waits for and who holds it."""
    graph = waits_for_graph(report)
    ring = _names(report.cycle)
    positions = _positions(graph, ring)
    depth = _depths(graph, ring)
    drawing = _Drawing(
        graph,
        positions,
        depth,
        {n: _SIZES[min(depth[n], 2)] for n in graph.nodes},
        len(ring) == 2,
    )
    traces = _edge_traces(drawing)
    annotations = _arrows(drawing) + _cycle_labels(drawing)
    kinds = sorted({graph.nodes[n]["kind"] for n in graph.nodes})
    for kind in kinds:  # a legend entry per actor kind: the markers share one trace
        traces.append(
            {
                "type": "scatter",
                "x": [None],
                "y": [None],
                "mode": "markers",
                "name": kind,
                "marker": {"size": 11, "color": actor_colour(kind)},
                "hoverinfo": "skip",
            }
        )
    traces.append(_actor_trace(drawing))
    if report.cycle:
        heading = title or f"Deadlock at step {report.step}"
        subtitle = f"waits-for cycle: {cycle_text(report.cycle)}"
    else:
        heading = title or f"Stuck at step {report.step}: no cycle, a wait nobody will release"
        subtitle = ""
    reach = max((math.hypot(x, y) for x, y in positions.values()), default=0.0) + 1.1
    return go.Figure(
        {
            "data": traces,
            "layout": figure_layout(
                heading,
                subtitle=subtitle,
                height=int(min(760, max(420, 95 * reach))),
                left=10,
                right=10,
                bottom=40,
                annotations=annotations,
                xaxis={"visible": False, "range": [-reach, reach]},
                # rings become ellipses: the labels are wide, and so is a notebook column
                yaxis={"visible": False, "range": [-reach, reach + 0.3]},
                hovermode="closest",
                legend=dict(LEGEND_BELOW),
            ),
        }
    )


@dataclass(frozen=True)
class _Drawing:
    """The waits-for graph laid out: each actor's place, its rings from the cycle and its
    marker's size; ``pair``: the cycle is two actors, whose edges bow apart."""

    graph: nx.DiGraph
    positions: dict[str, tuple[float, float]]
    depth: dict[str, int]
    size: dict[str, int]
    pair: bool


def _edge_traces(drawing: _Drawing) -> list[dict[str, Any]]:
    """The edges as two traces, the waits off the cycle thin and grey, the cycle's thick and
    red on top; a wait for itself is a loop above its actor."""
    positions = drawing.positions
    traces: list[dict[str, Any]] = []
    for cycle, name, colour, width in (
        (False, "waits for", "#b0b0b0", 1),
        (True, "waits-for cycle", ALERT, 4),
    ):
        polylines: list[list[tuple[float, float]]] = []
        for source, target, data in drawing.graph.edges(data=True):
            if data["cycle"] is not cycle:
                continue
            if source == target:  # waits for itself: a loop above the node
                polylines.append(_loop(positions[source], _LOOP if cycle else _LOOP / 2))
            elif cycle and drawing.pair:
                polylines.append(_bow(positions[source], positions[target]))
            else:
                polylines.append([positions[source], positions[target]])
        traces.append(lines_trace(polylines, name, {"color": colour, "width": width}))
    return traces


def _arrows(drawing: _Drawing) -> list[dict[str, Any]]:
    """An arrowhead at the holder's end of every edge but a loop, larger on the cycle."""
    return [
        {
            **_arrow(
                drawing.positions,
                source,
                target,
                drawing.size[target],
                bowed=data["cycle"] and drawing.pair,
            ),
            "xref": "x",
            "yref": "y",
            "axref": "x",
            "ayref": "y",
            "showarrow": True,
            "arrowhead": 2,
            "arrowsize": 1.3 if data["cycle"] else 1,
            "arrowwidth": 2.5 if data["cycle"] else 1,
            "arrowcolor": ALERT if data["cycle"] else "#b0b0b0",
            "text": "",
        }
        for source, target, data in drawing.graph.edges(data=True)
        if source != target
    ]


def _cycle_labels(drawing: _Drawing) -> list[dict[str, Any]]:
    """What each actor on the cycle waits for, written on its edge (above a loop, beside a
    pair's bow), the first thing a reader should see."""
    positions, pair = drawing.positions, drawing.pair
    labels = []
    for source, target, data in drawing.graph.edges(data=True):
        if not data["cycle"]:
            continue
        (x0, y0), (x1, y1) = positions[source], positions[target]
        above = source == target
        place: dict[str, Any] = {
            "x": x0 if above else (x0 + x1) / 2,
            "y": y0 + 2 * _LOOP if above else (y0 + y1) / 2,
            "yanchor": "bottom" if above else "middle",
        }
        if pair and not above:  # beside the bow's outermost point, on its own side
            (x, y), side = _bow_apex(positions[source], positions[target])
            place = {"x": x, "y": y, "xanchor": "left" if side > 0 else "right"}
        labels.append(
            {
                **place,
                "xref": "x",
                "yref": "y",
                "text": wrap("waits for " + "; ".join(data["resources"]), 26 if pair else 34),
                "showarrow": False,
                "font": {"size": 12, "color": ALERT},
                "bgcolor": "rgba(255,255,255,0.85)",
            }
        )
    return labels


def _hover(graph: nx.DiGraph, node: str) -> str:
    """An actor's hover: what it waits for, who holds that, whether it is on the cycle."""
    lines = [f"<b>{node}</b>"]
    waits = graph.nodes[node].get("waits_for")
    lines.append(f"waits for {waits}" if waits else "not waiting (holds what others need)")
    holders = list(graph.successors(node))
    if holders:
        lines.append("held by " + ", ".join(holders))
    if graph.nodes[node]["on_cycle"]:
        lines.append("on the waits-for cycle")
    return wrap("<br>".join(lines))


def _actor_trace(drawing: _Drawing) -> dict[str, Any]:
    """Every actor as one marker trace in its kind's colour, the cycle's large, outlined in
    red and named in bold."""
    graph, positions = drawing.graph, drawing.positions
    nodes = list(graph.nodes)
    on_cycle = [graph.nodes[n]["on_cycle"] for n in nodes]
    return {
        "type": "scatter",
        "x": [positions[n][0] for n in nodes],
        "y": [positions[n][1] for n in nodes],
        "mode": "markers+text",
        "name": "actors",
        "text": [
            f"<b>{n}</b>" if cycle else n.replace(" ", "<br>", 1)
            for n, cycle in zip(nodes, on_cycle, strict=True)
        ],
        # a pair's upper actor is named above it, clear of the words between the two
        "textposition": [
            "top center"
            if drawing.pair and drawing.depth[n] == 0 and positions[n][1] > 0
            else "bottom center"
            for n in nodes
        ],
        "textfont": {
            "size": [14 if cycle else 11 for cycle in on_cycle],
            "color": [ALERT if cycle else "#333333" for cycle in on_cycle],
        },
        "hovertext": [_hover(graph, n) for n in nodes],
        "hoverinfo": "text",
        "showlegend": False,
        "marker": {
            "size": [drawing.size[n] for n in nodes],
            "color": [actor_colour(graph.nodes[n]["kind"]) for n in nodes],
            "line": {
                "color": [ALERT if cycle else "#444444" for cycle in on_cycle],
                "width": [4 if cycle else 0.5 for cycle in on_cycle],
            },
        },
    }


def _bow_control(
    start: tuple[float, float], end: tuple[float, float]
) -> tuple[tuple[float, float], float]:
    """The control point of an edge bowed to the left of its direction, and which way (in
    x) that is: the two edges of a pair bow to opposite sides."""
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0) or 1.0
    nx_, ny = -(y1 - y0) / length, (x1 - x0) / length
    control = ((x0 + x1) / 2 + 2 * _PAIR_BOW * nx_, (y0 + y1) / 2 + 2 * _PAIR_BOW * ny)
    return control, nx_ if nx_ else 1.0


def _bezier(
    start: tuple[float, float], control: tuple[float, float], end: tuple[float, float], t: float
) -> tuple[float, float]:
    u = 1 - t
    return (
        u * u * start[0] + 2 * u * t * control[0] + t * t * end[0],
        u * u * start[1] + 2 * u * t * control[1] + t * t * end[1],
    )


def _bow(start: tuple[float, float], end: tuple[float, float]) -> list[tuple[float, float]]:
    control, _ = _bow_control(start, end)
    return [_bezier(start, control, end, step / 20) for step in range(21)]


def _bow_apex(
    start: tuple[float, float], end: tuple[float, float]
) -> tuple[tuple[float, float], float]:
    """The bow's outermost point (halfway along it) and its side."""
    control, side = _bow_control(start, end)
    return _bezier(start, control, end, 0.5), side


def _arrow(
    positions: dict[str, tuple[float, float]],
    source: str,
    target: str,
    target_size: int,
    *,
    bowed: bool,
) -> dict[str, float]:
    """Where an edge's arrowhead goes: at its target, stopping short of the marker; on a
    bowed edge halfway along the bow, pointing along it (the bow's ends are hidden under
    the pair's large markers)."""
    if not bowed:
        (ax, ay), (x, y) = positions[source], positions[target]
        return {"x": x, "y": y, "ax": ax, "ay": ay, "standoff": target_size / 2 + 2}
    start, end = positions[source], positions[target]
    control, _ = _bow_control(start, end)
    (ax, ay), (x, y) = _bezier(start, control, end, 0.4), _bezier(start, control, end, 0.56)
    return {"x": x, "y": y, "ax": ax, "ay": ay, "standoff": 0}


def _loop(centre: tuple[float, float], radius: float) -> list[tuple[float, float]]:
    x, y = centre
    return [
        (x + radius * math.sin(a), y + radius - radius * math.cos(a))
        for a in (2 * math.pi * step / 24 for step in range(25))
    ]
