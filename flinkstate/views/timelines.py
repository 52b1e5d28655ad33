"""How a run changed over its steps: buffers per owner kind, credits and backlog per connection,
records processed per subtask, and checkpoint progress.

Values are read from the world after each step, never recomputed from the events, so they are
exactly what the model holds (a buffer shared by several subpartitions counts in each
backlog). To stay cheap however long a run gets, :class:`Timelines` re-reads only what a step
touched and keeps each series as its change points; going back drops the points after the
step. The figure is built as plotly JSON so that a live widget can copy it every step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import plotly.graph_objects as go

from flinkstate.errors import InvalidParameterError
from flinkstate.network.actors import ActorKind
from flinkstate.network.metrics import OWNER_KINDS, BufferCounts
from flinkstate.network.owners import Owner, OwnerKind
from flinkstate.network.world import NetworkWorld
from flinkstate.sim.core import Event, Simulation, collector_paused
from flinkstate.views.palette import (
    ALERT,
    CATEGORY_COLOURS,
    GROUP_COLOURS,
    IN_POOLS,
    OWNER_COLOURS,
    OWNER_GROUPS,
    figure_layout,
)

#: how many connections the credits/backlog panel draws (those with the highest backlog)
MAX_CONNECTIONS = 12
_CHANNEL_KINDS = frozenset({OwnerKind.EXCLUSIVE, OwnerKind.FLOATING})
_QUEUE_KINDS = frozenset({OwnerKind.BUILDER, OwnerKind.QUEUE})

Points = list[tuple[int, int]]


@dataclass
class Timelines:
    """Change points of every series, from the step the recording started to ``step``."""

    step: int = 0
    buffers: dict[OwnerKind, Points] = field(default_factory=dict)
    #: per remote input channel: buffers it can announce as credit (exclusive + floating)
    credits: dict[str, Points] = field(default_factory=dict)
    #: per subpartition (keyed by the channel that reads it): data buffers queued
    backlog: dict[str, Points] = field(default_factory=dict)
    processed: dict[str, Points] = field(default_factory=dict)
    #: each subtask's operator (its lines share the operator's colour and legend entry)
    operators: dict[str, str] = field(default_factory=dict)
    #: acknowledged subtasks of the checkpoint in progress, checkpoints completed, expired
    checkpoint: dict[str, Points] = field(default_factory=dict)
    tasks: int = 0
    _counts: BufferCounts = field(default_factory=BufferCounts)

    @classmethod
    def start(cls, world: NetworkWorld) -> Timelines:
        timelines = cls(step=world.step, tasks=len(world.tasks))
        timelines.operators = {name: task.operator for name, task in world.tasks.items()}
        counts = timelines._counts = BufferCounts.start(world.owner)
        for kind in dict.fromkeys([*OWNER_KINDS, *counts.current]):
            timelines.buffers[kind] = [(world.step, counts.current[kind])]
        timelines._read(world, world.channels, world.tasks)
        return timelines

    @classmethod
    def of_simulation(cls, simulation: Simulation) -> Timelines:
        """Timelines of a recorded run, replayed on a fresh world from the simulation's factory
        (a finished run keeps only its last state)."""
        world = simulation.factory()
        if not isinstance(world, NetworkWorld):
            raise InvalidParameterError("timelines are drawn for network worlds only")
        timelines = cls.start(world)
        with collector_paused():
            for action in simulation.history:
                timelines.record(world, world.apply(action))
        return timelines

    def record(self, world: NetworkWorld, event: Event) -> None:
        """Sample what ``event`` (just applied to ``world``) can have changed."""
        self.step = world.step
        channels: set[str] = set()
        for move in event.moves:
            for owner in (cast(Owner, move.source), cast(Owner, move.target)):
                if owner.kind in _CHANNEL_KINDS:
                    channels.add(owner.holder)
                elif owner.kind in _QUEUE_KINDS:
                    channels.add(world.subpartitions[owner.holder].channel)
        for kind in self._counts.apply(event):
            _put(self.buffers.setdefault(kind, []), self.step, self._counts.current[kind])
        ref = world.actor(event.action.actor)
        actor_kind = ref.kind
        tasks: list[str] = []
        if actor_kind is ActorKind.TASK:
            task = world.tasks[ref.task]
            tasks.append(ref.task)
            channels.update(c.name for g in task.gates for c in g.channels)
            channels.update(s.channel for p in task.partitions for s in p.subpartitions)
        elif actor_kind is ActorKind.NETTY:
            channels.add(ref.channel)
        elif actor_kind is ActorKind.READER:
            task = world.tasks[ref.task]
            channels.update(c.name for g in task.gates for c in g.channels)
        elif actor_kind is ActorKind.COORDINATOR:
            channels.update(world.channels)
        self._read(world, channels, tasks)

    def rewind(self, step: int) -> None:
        """Forget everything after ``step`` (the simulation went back to it)."""
        self.step = min(self.step, step)
        for family in (self.buffers, self.credits, self.backlog, self.processed, self.checkpoint):
            for points in family.values():
                while len(points) > 1 and points[-1][0] > step:
                    points.pop()
        self._counts = BufferCounts(
            Counter({kind: points[-1][1] for kind, points in self.buffers.items()})
        )

    def _read(self, world: NetworkWorld, channels: Iterable[str], tasks: Iterable[str]) -> None:
        step = world.step
        for name in channels:
            channel = world.channels[name]
            if channel.remote:
                _put(self.credits.setdefault(name, []), step, channel.buffers.available)
            backlog = world.subpartitions[channel.subpartition].backlog
            _put(self.backlog.setdefault(name, []), step, backlog)
        for name in tasks:
            _put(self.processed.setdefault(name, []), step, world.tasks[name].processed)
        progress = world.checkpoints.pending
        values = {
            "acknowledged": 0 if progress is None else len(progress.acknowledged),
            "completed": len(world.checkpoints.completed),
            "expired": len(world.checkpoints.expired),
        }
        for name, value in values.items():
            _put(self.checkpoint.setdefault(name, []), step, value)

    def value(self, family: str, name: str) -> int:
        """The series' value now (the last change point)."""
        return int(getattr(self, family)[name][-1][1])


def _put(points: Points, step: int, value: int) -> None:
    if points and points[-1][1] == value:
        return
    if points and points[-1][0] == step:
        points[-1] = (step, value)
        if len(points) > 1 and points[-2][1] == value:
            points.pop()
        return
    points.append((step, value))


def _line(points: Points, until: int) -> tuple[list[int], list[int]]:
    """x and y of a step line through the change points, held to ``until``."""
    xs = [p[0] for p in points if p[0] <= until]
    ys = [p[1] for p in points if p[0] <= until]
    if xs and xs[-1] < until:
        xs.append(until)
        ys.append(ys[-1])
    return xs, ys


def _merged(series: list[Points], until: int) -> tuple[np.ndarray, np.ndarray]:
    """The steps where any of ``series`` changes (up to ``until``, held to it) and every
    series' value there, one column per series: numpy, because a live figure copies these
    every step and plotly checks a list element by element."""
    clipped = [[(x, y) for x, y in points if x <= until] for points in series]
    steps = np.unique(np.array([x for points in clipped for x, _ in points] + [until], np.int64))
    columns = []
    for points in clipped:
        xs = np.array([x for x, _ in points], np.int64)
        ys = np.array([0, *(y for _, y in points)], np.int64)  # 0 before the first change
        columns.append(ys[np.searchsorted(xs, steps, side="right")])
    return steps, np.column_stack(columns)


def owner_group_traces(
    buffers: Mapping[OwnerKind, Points], until: int, **placement: Any
) -> list[dict[str, Any]]:
    """A step line per group of owner kinds (:data:`~flinkstate.views.palette.OWNER_GROUPS`)
    that ever holds a segment, in the group's colour; hovering a point shows each kind's count.

    Fourteen owner kinds as fourteen lines is a legend nobody reads; five groups a learner
    can follow, with the detail on hover, is not. The pools hold most segments and would
    flatten the rest: their line starts hidden and shows when its legend entry is clicked.
    ``placement`` (axes, legend) is added to every trace.
    """
    traces: list[dict[str, Any]] = []
    for group, kinds in OWNER_GROUPS.items():
        present = [k for k in kinds if any(v for _, v in buffers.get(k, ()))]
        if not present:
            continue
        steps, values = _merged([buffers[k] for k in present], until)
        detail = "".join(
            f"<br><span style='color:{OWNER_COLOURS[k]}'>\u25a0</span> {k}: %{{customdata[{i}]}}"
            for i, k in enumerate(present)
        )
        traces.append(
            {
                "type": "scatter",
                "x": steps,
                "y": values.sum(axis=1),
                "customdata": values,
                "mode": "lines",
                "name": group,
                "line": {"shape": "hv", "color": GROUP_COLOURS[group], "width": 2},
                "hovertemplate": f"<b>{group}</b>: %{{y}} at step %{{x}}{detail}<extra></extra>",
                **({"visible": "legendonly"} if group == IN_POOLS else {}),
                **placement,
            }
        )
    return traces


def _busiest(timelines: Timelines, limit: int) -> list[str]:
    peak = {name: max(v for _, v in points) for name, points in timelines.backlog.items()}
    return sorted(peak, key=lambda name: (-peak[name], name))[:limit]


#: height of one panel and of the gap above each (its title and the ticks of the one above), px
_PANEL = 150
_GAP = 48
_PANELS = 4
#: room on the right for each panel's legend
_LEGEND_WIDTH = 200


def timelines_spec(timelines: Timelines, *, title: str | None = None) -> dict[str, Any]:
    """Four panels over the steps, as plotly JSON; a live widget copies it every step.

    Each panel has its own short legend beside it and its title in the gap above it. Series
    that come in dozens (connections, subtasks) are not in the legends: a colour per connection
    or per operator, named on hover.
    """
    until = timelines.step
    traces: list[dict[str, Any]] = []

    def add(points: Points, name: str, panel: int, **style: Any) -> None:
        xs, ys = _line(points, until)
        traces.append(
            {
                "type": "scatter",
                "x": xs,
                "y": ys,
                "mode": "lines",
                "name": name,
                "line": {"shape": "hv", **style.pop("line", {})},
                **_placement(panel),
                **style,
            }
        )

    traces += owner_group_traces(timelines.buffers, until, **_placement(1))
    shown = _busiest(timelines, MAX_CONNECTIONS)
    for name, dash in (("backlog (solid)", "solid"), ("credits (dotted)", "dot")):
        # a key to the line styles: every connection has its own colour and no entry
        traces.append(
            {
                "type": "scatter",
                "x": [None],
                "y": [None],
                "mode": "lines",
                "name": name,
                "line": {"color": "#555555", "dash": dash},
                "hoverinfo": "skip",
                **_placement(2),
            }
        )
    for index, name in enumerate(shown):
        colour = CATEGORY_COLOURS[index % len(CATEGORY_COLOURS)]
        add(
            timelines.backlog[name],
            f"backlog {name}",
            2,
            line={"color": colour},
            showlegend=False,
            hovertemplate=f"{name}: backlog %{{y}} at step %{{x}}<extra></extra>",
        )
        if name in timelines.credits:
            add(
                timelines.credits[name],
                f"credits {name}",
                2,
                line={"color": colour, "dash": "dot"},
                showlegend=False,
                hovertemplate=f"{name}: %{{y}} credits at step %{{x}}<extra></extra>",
            )
    operators: dict[str, str] = {}
    for name in sorted(timelines.processed):
        operator = timelines.operators[name]
        first = operator not in operators
        colour = operators.setdefault(
            operator, CATEGORY_COLOURS[len(operators) % len(CATEGORY_COLOURS)]
        )
        add(
            timelines.processed[name],
            operator if first else name,
            3,
            line={"color": colour, "width": 1.5},
            legendgroup=operator,
            showlegend=first,
            hovertemplate=f"{name}: %{{y}} records processed at step %{{x}}<extra></extra>",
        )
    for name, label, colour in (
        ("acknowledged", "subtasks acknowledged", CATEGORY_COLOURS[0]),
        ("completed", "checkpoints completed", CATEGORY_COLOURS[2]),
        ("expired", "checkpoints expired", ALERT),
    ):
        add(
            timelines.checkpoint.get(name, []),
            label,
            4,
            line={"color": colour},
            hovertemplate=f"{label}: %{{y}} at step %{{x}}<extra></extra>",
        )
    connections = len(timelines.backlog)
    subtitles = (
        "buffers held, by where they are (hover for each owner kind; pools hidden: click them)",
        f"backlog and credits of the {len(shown)} of {connections} connections with the highest "
        "backlog"
        if connections > len(shown)
        else "backlog and credits per connection (a colour per connection)",
        f"records processed per subtask ({len(timelines.processed)} subtasks, "
        "a colour per operator)",
        f"checkpoint progress (of {timelines.tasks} subtasks)",
    )
    plot_height = _PANELS * (_PANEL + _GAP)
    layout = figure_layout(
        title or f"Over the steps, up to step {until}",
        height=plot_height,
        right=_LEGEND_WIDTH,
        bottom=50,
        hovermode="closest",
        uirevision="timelines",
    )
    layout["annotations"] = []
    for panel, subtitle in enumerate(subtitles, start=1):
        top, bottom = _domain(panel, plot_height)
        suffix = "" if panel == 1 else str(panel)
        layout[f"xaxis{suffix}"] = {
            "domain": [0, 1],
            "anchor": f"y{suffix}",
            "range": [0, max(until, 1)],
            **({} if panel == 1 else {"matches": "x"}),
            **({"title": {"text": "step"}} if panel == _PANELS else {}),
        }
        layout[f"yaxis{suffix}"] = {
            "domain": [bottom, top],
            "anchor": f"x{suffix}",
            "rangemode": "tozero",
        }
        layout[f"legend{suffix}"] = {
            "x": 1.02,
            "xanchor": "left",
            "y": top,
            "yanchor": "top",
            "font": {"size": 12},
            "tracegroupgap": 2,
        }
        layout["annotations"].append(
            {
                "text": subtitle,
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": top,
                "yanchor": "bottom",
                "yshift": 4,
                "showarrow": False,
                "xanchor": "left",
                "font": {"size": 13},
            }
        )
    return {"data": traces, "layout": layout}


def _placement(panel: int) -> dict[str, str]:
    """The axes and legend of a panel (1 at the top)."""
    suffix = "" if panel == 1 else str(panel)
    return {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}", "legend": f"legend{suffix}"}


def _domain(panel: int, plot_height: int) -> tuple[float, float]:
    """Top and bottom of a panel in paper coordinates; a gap of fixed pixels above each."""
    top = 1 - (_GAP + (panel - 1) * (_PANEL + _GAP)) / plot_height
    return top, top - _PANEL / plot_height


def timelines_figure(timelines: Timelines, *, title: str | None = None) -> go.Figure:
    return go.Figure(timelines_spec(timelines, title=title))
