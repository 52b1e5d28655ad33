"""How a run changed over its steps: buffers per owner kind, credits and backlog per connection,
records processed per subtask, and checkpoint progress.

Values are read from the world after each step, never recomputed from the events, so they are
exactly what the model holds (a buffer shared by several subpartitions counts in each
backlog). To stay cheap however long a run gets, :class:`Timelines` re-reads only what a step
touched and keeps each series as its change points; going back drops the points after the
step. The figure is built as plotly JSON so that a live widget can copy it every step.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go

from flinkstate.errors import InvalidParameterError
from flinkstate.network.metrics import OWNER_KINDS, POOL_KINDS, owner_kind
from flinkstate.network.world import NetworkWorld
from flinkstate.sim.core import Event, Simulation, collector_paused

#: how many connections the credits/backlog panel draws (those with the highest backlog)
MAX_CONNECTIONS = 12
_CHANNEL_KINDS = frozenset({"exclusive", "floating"})
_QUEUE_KINDS = frozenset({"builder", "queue"})
_PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#ad494a",
)

Points = list[tuple[int, int]]


@dataclass
class Timelines:
    """Change points of every series, from the step the recording started to ``step``."""

    step: int = 0
    buffers: dict[str, Points] = field(default_factory=dict)
    #: per remote input channel: buffers it can announce as credit (exclusive + floating)
    credits: dict[str, Points] = field(default_factory=dict)
    #: per subpartition (keyed by the channel that reads it): data buffers queued
    backlog: dict[str, Points] = field(default_factory=dict)
    processed: dict[str, Points] = field(default_factory=dict)
    #: acknowledged subtasks of the checkpoint in progress, checkpoints completed, expired
    checkpoint: dict[str, Points] = field(default_factory=dict)
    tasks: int = 0
    _kinds: dict[str, int] = field(default_factory=dict)

    @classmethod
    def start(cls, world: NetworkWorld) -> Timelines:
        timelines = cls(step=world.step, tasks=len(world.tasks))
        counts = {kind: 0 for kind in OWNER_KINDS}
        for owner in world.owner:
            kind = owner_kind(owner)
            counts[kind] = counts.get(kind, 0) + 1
        timelines._kinds = counts
        for kind, count in counts.items():
            timelines.buffers[kind] = [(world.step, count)]
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
            for owner in (move.source, move.target):
                kind, _, name = owner.partition(" ")
                if kind in _CHANNEL_KINDS:
                    channels.add(name)
                elif kind in _QUEUE_KINDS:
                    channels.add(world.subpartitions[name].channel)
            source, target = owner_kind(move.source), owner_kind(move.target)
            if source != target:
                for kind, delta in ((source, -1), (target, 1)):
                    self._kinds[kind] = self._kinds.get(kind, 0) + delta
                    _put(self.buffers.setdefault(kind, []), self.step, self._kinds[kind])
        actor_kind, _, actor = event.action.actor.partition(" ")
        tasks: list[str] = []
        if actor_kind == "task":
            task = world.tasks[actor]
            tasks.append(actor)
            channels.update(c.name for g in task.gates for c in g.channels)
            channels.update(s.channel for p in task.partitions for s in p.subpartitions)
        elif actor_kind == "netty":
            channels.add(actor)
        elif actor_kind == "channel-state-reader":
            task = world.tasks[actor]
            channels.update(c.name for g in task.gates for c in g.channels)
        elif actor_kind == "checkpoint-coordinator":
            channels.update(world.channels)
        self._read(world, channels, tasks)

    def rewind(self, step: int) -> None:
        """Forget everything after ``step`` (the simulation went back to it)."""
        self.step = min(self.step, step)
        for family in (self.buffers, self.credits, self.backlog, self.processed, self.checkpoint):
            for points in family.values():
                while len(points) > 1 and points[-1][0] > step:
                    points.pop()
        self._kinds = {kind: points[-1][1] for kind, points in self.buffers.items()}

    def _read(self, world: NetworkWorld, channels: Iterable[str], tasks: Iterable[str]) -> None:
        step = world.step
        for name in channels:
            channel = world.channels[name]
            if channel.remote:
                _put(self.credits.setdefault(name, []), step, channel.available)
            backlog = world.subpartitions[channel.subpartition].backlog
            _put(self.backlog.setdefault(name, []), step, backlog)
        for name in tasks:
            _put(self.processed.setdefault(name, []), step, world.tasks[name].processed)
        progress = world.checkpoint
        values = {
            "acknowledged": 0 if progress is None else len(progress.acknowledged),
            "completed": len(world.completed),
            "expired": len(world.expired),
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


def _busiest(timelines: Timelines, limit: int) -> list[str]:
    peak = {name: max(v for _, v in points) for name, points in timelines.backlog.items()}
    return sorted(peak, key=lambda name: (-peak[name], name))[:limit]


def timelines_spec(timelines: Timelines, *, title: str | None = None) -> dict[str, Any]:
    """Four panels over the steps, as plotly JSON; a live widget copies it every step."""
    until = timelines.step
    traces: list[dict[str, Any]] = []

    def add(points: Points, name: str, axis: int, **style: Any) -> None:
        xs, ys = _line(points, until)
        suffix = "" if axis == 1 else str(axis)
        traces.append(
            {
                "type": "scatter",
                "x": xs,
                "y": ys,
                "mode": "lines",
                "name": name,
                "line": {"shape": "hv", **style.pop("line", {})},
                "xaxis": f"x{suffix}",
                "yaxis": f"y{suffix}",
                **style,
            }
        )

    for kind in OWNER_KINDS:
        points = timelines.buffers.get(kind, [])
        if kind in POOL_KINDS or not any(v for _, v in points):
            continue
        add(points, kind, 1, legendgroup="buffers", legendgrouptitle={"text": "buffers held"})
    shown = _busiest(timelines, MAX_CONNECTIONS)
    for index, name in enumerate(shown):
        colour = _PALETTE[index % len(_PALETTE)]
        add(
            timelines.backlog[name],
            f"backlog {name}",
            2,
            legendgroup="connections",
            line={"color": colour},
            legendgrouptitle={"text": "per connection"},
        )
        if name in timelines.credits:
            add(
                timelines.credits[name],
                f"credits {name}",
                2,
                legendgroup="connections",
                line={"color": colour, "dash": "dot"},
            )
    for name in sorted(timelines.processed):
        add(timelines.processed[name], name, 3, legendgroup="processed", showlegend=False)
    for name, colour in (
        ("acknowledged", "#1f77b4"),
        ("completed", "#2ca02c"),
        ("expired", "#d62728"),
    ):
        add(
            timelines.checkpoint.get(name, []),
            f"checkpoints {name}" if name != "acknowledged" else "subtasks acknowledged",
            4,
            legendgroup="checkpoint",
            line={"color": colour},
            legendgrouptitle={"text": "checkpoint"},
        )
    connections = len(timelines.backlog)
    subtitle = (
        f"backlog (solid) and credits (dotted) of {len(shown)} of {connections} connections, "
        "highest backlog first"
        if connections > len(shown)
        else "backlog (solid) and credits (dotted) per connection"
    )
    domains = ((0.78, 1.0), (0.52, 0.74), (0.26, 0.48), (0.0, 0.22))
    layout: dict[str, Any] = {
        "title": {"text": title or f"Over the steps, up to step {until}"},
        "height": 760,
        "hovermode": "x unified",
        "margin": {"l": 60, "r": 20, "t": 50, "b": 40},
        "annotations": [
            {
                "text": text,
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": top + 0.035,
                "showarrow": False,
                "xanchor": "left",
                "font": {"size": 12},
            }
            for text, (_, top) in zip(
                (
                    "segments held per owner kind (pools left out)",
                    subtitle,
                    f"records processed per subtask ({len(timelines.processed)} subtasks)",
                    f"checkpoint progress (of {timelines.tasks} subtasks)",
                ),
                domains,
                strict=True,
            )
        ],
        "uirevision": "timelines",
    }
    for index, domain in enumerate(domains, start=1):
        suffix = "" if index == 1 else str(index)
        layout[f"xaxis{suffix}"] = {
            "domain": [0, 1],
            "anchor": f"y{suffix}",
            "range": [0, max(until, 1)],
            **({} if index == 1 else {"matches": "x"}),
            # the panels share the steps: only the bottom one labels them
            **({"title": {"text": "step"}} if index == len(domains) else {"showticklabels": False}),
        }
        layout[f"yaxis{suffix}"] = {
            "domain": list(domain),
            "anchor": f"x{suffix}",
            "rangemode": "tozero",
        }
    return {"data": traces, "layout": layout}


def timelines_figure(timelines: Timelines, *, title: str | None = None) -> go.Figure:
    return go.Figure(timelines_spec(timelines, title=title))
