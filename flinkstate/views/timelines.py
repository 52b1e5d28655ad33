"""How a run changed over its steps: buffers per owner kind, credits and backlog per connection,
records processed per subtask, checkpoint progress, and in a job with watermarks the event time:
each task's watermark and the records a keyed operator dropped as late.

Values are read from the world after each step, never recomputed from the events, so they are
exactly what the model holds (a buffer shared by several subpartitions counts in each
backlog). To stay cheap however long a run gets, :class:`Timelines` re-reads only what a step
touched and keeps each series as its change points; going back drops the points after the
step. The figure is built as plotly JSON so that a live widget can copy it every step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, cast

import numpy as np
import plotly.graph_objects as go

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.buffer.owners import Owner, OwnerKind
from flinkstate.runtime.buffer.records import MAX_WATERMARK, MIN_WATERMARK
from flinkstate.runtime.jobgraph import OperatorKind
from flinkstate.runtime.watermark.watermarks import watermark_text
from flinkstate.runtime.world.metrics import OWNER_KINDS, BufferCounts
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event, Simulation
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
#: how many tasks the event-time panel draws a watermark for (those with late records first)
MAX_WATERMARKS = 12
#: up to this many watermark lines each has its own legend entry; beyond, an entry per operator
_NAMED_WATERMARKS = 5
_CHANNEL_KINDS = frozenset({OwnerKind.EXCLUSIVE, OwnerKind.FLOATING})
_QUEUE_KINDS = frozenset({OwnerKind.BUILDER, OwnerKind.QUEUE})

Points = list[tuple[int, int]]


@dataclass(frozen=True)
class LateRecord:
    """A record a keyed operator dropped as late, as the world noted it
    (``EventTimeState.late``)."""

    #: the step that dropped it, counted as the captions count steps
    step: int
    record: int
    #: the task (as ``world.tasks`` names it) and its watermark when it dropped the record
    task: str
    watermark: int
    timestamp: int
    #: where the record came from: its split (an original source subtask) and place in it
    source: str
    seq: int

    def describe(self) -> str:
        return (
            f"record {self.record} (timestamp {self.timestamp}, seq {self.seq} of "
            f"{self.source.removeprefix('task ')}) dropped as late by {self.task} at step "
            f"{self.step}: its watermark was {watermark_text(self.watermark)}"
        )


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
    #: whether the job has event time (a source emits watermarks): only then the two below
    event_time: bool = False
    #: per task reading an input (keyed operators, sinks): its watermark, MIN_WATERMARK before
    #: it has one and MAX_WATERMARK at the end of its input
    watermarks: dict[str, Points] = field(default_factory=dict)
    #: the records keyed operators dropped as late, in the order they did
    late: list[LateRecord] = field(default_factory=list)
    #: where the job's timestamps end (every record's is below): the panel draws MAX there
    end_of_time: int = 0
    _counts: BufferCounts = field(default_factory=BufferCounts)

    @classmethod
    def start(cls, world: NetworkWorld) -> Timelines:
        timelines = cls(step=world.step, tasks=len(world.tasks))
        timelines.operators = {name: task.operator for name, task in world.tasks.items()}
        counts = timelines._counts = BufferCounts.start(world.owner)
        for kind in dict.fromkeys([*OWNER_KINDS, *counts.current]):
            timelines.buffers[kind] = [(world.step, counts.current[kind])]
        if world.graph.event_time:
            timelines.event_time = True
            timelines.end_of_time = max(
                op.records_per_subtask
                for op in world.graph.operators
                if op.kind is OperatorKind.SOURCE
            )
            timelines.watermarks = {
                name: []
                for name, task in world.tasks.items()
                if task.kind is not OperatorKind.SOURCE
            }
        timelines._read(world, world.channels, world.tasks)
        return timelines

    @classmethod
    def of_simulation(cls, simulation: Simulation) -> Timelines:
        """Timelines of a recorded run, replayed on a fresh world from the simulation's factory
        (a finished run keeps only its last state)."""
        world, events = simulation.replay()
        if not isinstance(world, NetworkWorld):
            raise InvalidParameterError("timelines are drawn for network worlds only")
        timelines = cls.start(world)
        for event in events:
            timelines.record(world, event)
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
        for family in (
            self.buffers,
            self.credits,
            self.backlog,
            self.processed,
            self.checkpoint,
            self.watermarks,
        ):
            for points in family.values():
                while len(points) > 1 and points[-1][0] > step:
                    points.pop()
        while self.late and self.late[-1].step > step:
            self.late.pop()
        self._counts = BufferCounts(
            Counter({kind: points[-1][1] for kind, points in self.buffers.items()})
        )

    def _read(self, world: NetworkWorld, channels: Iterable[str], tasks: Collection[str]) -> None:
        step = world.step
        for name in channels:
            channel = world.channels[name]
            if channel.remote:
                _put(self.credits.setdefault(name, []), step, channel.buffers.available)
            backlog = world.subpartitions[channel.subpartition].backlog
            _put(self.backlog.setdefault(name, []), step, backlog)
        for name in tasks:
            _put(self.processed.setdefault(name, []), step, world.tasks[name].processed)
        if self.event_time:
            self._read_event_time(world, tasks)
        progress = world.checkpoints.pending
        values = {
            "acknowledged": 0 if progress is None else len(progress.acknowledged),
            "completed": len(world.checkpoints.completed),
            "expired": len(world.checkpoints.expired),
        }
        for name, value in values.items():
            _put(self.checkpoint.setdefault(name, []), step, value)

    def _read_event_time(self, world: NetworkWorld, tasks: Iterable[str]) -> None:
        """Watermarks of the tasks the step touched (only a task's own step moves its watermark
        or finds a record late), and the late records the world noted since the last read."""
        step = world.step
        for name in tasks:
            if name in self.watermarks:
                task = world.tasks[name]
                watermark = world.event_time.watermark.get(task.name, MIN_WATERMARK)
                _put(self.watermarks[name], step, watermark)
        late = world.event_time.late
        if len(late) > len(self.late):  # a dict keeps the order the world noted them in
            keys = {task.name: name for name, task in world.tasks.items()}
            for (record_id, task_name), (at, watermark) in islice(
                late.items(), len(self.late), None
            ):
                record = world.records[record_id]
                self.late.append(
                    LateRecord(
                        # the engine keeps the event's index; the captions count from 1
                        at + 1,
                        record_id,
                        keys[task_name],
                        watermark,
                        record.timestamp,
                        record.source,
                        record.seq,
                    )
                )

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
    """Four panels over the steps, as plotly JSON; a live widget copies it every step. A job
    with watermarks gets a fifth, its event time (:func:`event_time_traces`); the others are
    the same with or without it.

    Each panel has its own short legend beside it and its title in the gap above it. Series
    that come in dozens (connections, subtasks) are not in the legends: a colour per connection
    or per operator, named on hover.
    """
    until = timelines.step
    traces: list[dict[str, Any]] = []
    traces += owner_group_traces(timelines.buffers, until, **_placement(1))
    shown = _busiest(timelines, MAX_CONNECTIONS)
    traces += _connection_traces(timelines, shown, until)
    colours = _operator_colours(timelines)
    traces += _processed_traces(timelines, colours, until)
    traces += [
        _step_line(
            timelines.checkpoint.get(name, []),
            until,
            label,
            4,
            line={"color": colour},
            hovertemplate=f"{label}: %{{y}} at step %{{x}}<extra></extra>",
        )
        for name, label, colour in (
            ("acknowledged", "subtasks acknowledged", CATEGORY_COLOURS[0]),
            ("completed", "checkpoints completed", CATEGORY_COLOURS[2]),
            ("expired", "checkpoints expired", ALERT),
        )
    ]
    subtitles = _subtitles(timelines, len(shown))
    panels = _PANELS
    event_time: dict[str, Any] = {}
    if timelines.event_time:
        panels += 1
        event_traces, subtitle, event_time = event_time_panel(
            timelines, colours, **_placement(panels)
        )
        traces += event_traces
        subtitles.append(subtitle)
    plot_height = panels * (_PANEL + _GAP)
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
        layout.update(_panel_axes(panel, panels, plot_height, until))
        top, _ = _domain(panel, plot_height)
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
    if event_time:
        layout[f"yaxis{panels}"].update(event_time["yaxis"])
        for key in ("shapes", "annotations"):
            layout[key] = layout.get(key, []) + event_time[key]
    return {"data": traces, "layout": layout}


def _subtitles(timelines: Timelines, shown: int) -> list[str]:
    """The titles of the four panels, each saying how much of its series it draws."""
    connections = len(timelines.backlog)
    return [
        "buffers held, by where they are (hover for each owner kind; pools hidden: click them)",
        f"backlog and credits of the {shown} of {connections} connections with the highest backlog"
        if connections > shown
        else "backlog and credits per connection (a colour per connection)",
        f"records processed per subtask ({len(timelines.processed)} subtasks, "
        "a colour per operator)",
        f"checkpoint progress (of {timelines.tasks} subtasks)",
    ]


def _step_line(points: Points, until: int, name: str, panel: int, **style: Any) -> dict[str, Any]:
    """A series as a step line (it holds its value until its next change point) up to
    ``until``, on ``panel``; ``line`` styles are merged into the step shape."""
    xs, ys = _line(points, until)
    return {
        "type": "scatter",
        "x": xs,
        "y": ys,
        "mode": "lines",
        "name": name,
        "line": {"shape": "hv", **style.pop("line", {})},
        **_placement(panel),
        **style,
    }


def _connection_traces(timelines: Timelines, shown: list[str], until: int) -> list[dict[str, Any]]:
    """The backlog (solid) and credits (dotted) of the connections shown, a colour each and
    named on hover; the legend has a key to the two line styles only."""
    traces = []
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
        traces.append(
            _step_line(
                timelines.backlog[name],
                until,
                f"backlog {name}",
                2,
                line={"color": colour},
                showlegend=False,
                hovertemplate=f"{name}: backlog %{{y}} at step %{{x}}<extra></extra>",
            )
        )
        if name in timelines.credits:
            traces.append(
                _step_line(
                    timelines.credits[name],
                    until,
                    f"credits {name}",
                    2,
                    line={"color": colour, "dash": "dot"},
                    showlegend=False,
                    hovertemplate=f"{name}: %{{y}} credits at step %{{x}}<extra></extra>",
                )
            )
    return traces


def _processed_traces(
    timelines: Timelines, colours: Mapping[str, str], until: int
) -> list[dict[str, Any]]:
    """The records each subtask processed, in its operator's colour, the operator named once
    in the legend."""
    traces = []
    seen: set[str] = set()
    for name in sorted(timelines.processed):
        operator = timelines.operators[name]
        first = operator not in seen
        seen.add(operator)
        traces.append(
            _step_line(
                timelines.processed[name],
                until,
                operator if first else name,
                3,
                line={"color": colours[operator], "width": 1.5},
                legendgroup=operator,
                showlegend=first,
                hovertemplate=f"{name}: %{{y}} records processed at step %{{x}}<extra></extra>",
            )
        )
    return traces


def _panel_axes(panel: int, panels: int, plot_height: int, until: int) -> dict[str, Any]:
    """A panel's x and y axes and legend, stacked by its domain; every x axis matches the
    first, and the lowest is titled."""
    top, bottom = _domain(panel, plot_height)
    suffix = "" if panel == 1 else str(panel)
    return {
        f"xaxis{suffix}": {
            "domain": [0, 1],
            "anchor": f"y{suffix}",
            "range": [0, max(until, 1)],
            **({} if panel == 1 else {"matches": "x"}),
            **({"title": {"text": "step"}} if panel == panels else {}),
        },
        f"yaxis{suffix}": {
            "domain": [bottom, top],
            "anchor": f"x{suffix}",
            "rangemode": "tozero",
        },
        f"legend{suffix}": {
            "x": 1.02,
            "xanchor": "left",
            "y": top,
            "yanchor": "top",
            "font": {"size": 12},
            "tracegroupgap": 2,
        },
    }


#: line styles of one operator's subtasks in the event-time panel (its colour is the operator's)
_DASHES = ("solid", "dot", "dash", "dashdot", "longdash", "longdashdot")


def event_time_panel(
    timelines: Timelines, colours: Mapping[str, str], **placement: Any
) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
    """The event-time panel: a step line per task's watermark and a marker per record dropped
    as late; its traces, its title, and what its y axis adds to the layout (``yaxis``,
    ``shapes``, ``annotations``).

    A watermark is a timestamp: none yet (MIN_WATERMARK) is no line, and MAX_WATERMARK, the end
    of the input, has no place among timestamps: it is drawn on a dotted line just above every
    timestamp of the job. Each line has its operator's colour (``colours``, as in the records
    panel) and a dash per subtask; a late record is an ALERT cross at the step that dropped it,
    at its own timestamp, so it sits at or below the line of the watermark that overtook it.
    ``placement`` (axes, legend) is added to every trace.
    """
    end = timelines.end_of_time
    late_tasks = {late.task for late in timelines.late}
    order = {name: index for index, name in enumerate(timelines.watermarks)}
    shown = sorted(
        timelines.watermarks,
        key=lambda n: (n not in late_tasks, timelines.operators[n], order[n]),
    )[:MAX_WATERMARKS]
    traces, ends = _watermark_traces(
        timelines, sorted(shown, key=order.__getitem__), colours, placement
    )
    if timelines.late:
        traces.append(
            {
                "type": "scatter",
                "x": [late.step for late in timelines.late],
                "y": [late.timestamp for late in timelines.late],
                "customdata": [late.describe() for late in timelines.late],
                "mode": "markers",
                "name": "dropped as late",
                "marker": {"color": ALERT, "symbol": "x", "size": 11},
                "hovertemplate": "%{customdata}<extra></extra>",
                **placement,
            }
        )
    tasks = len(timelines.watermarks)
    which = (
        f"the {len(shown)} of {tasks} tasks reading an input (those with late records first)"
        if tasks > len(shown)
        else "each task reading an input"
    )
    late = len(timelines.late)
    subtitle = (
        f"event time: the watermark of {which} (no line: none yet"
        + ("; the dotted line: MAX" if ends else "")
        + "); "
        + (f"{late} record(s) dropped as late (red crosses)" if late else "no record late")
    )
    axis: dict[str, Any] = {
        "yaxis": {"title": {"text": "timestamp"}},
        "shapes": [],
        "annotations": [],
    }
    if ends:
        _max_watermark_line(axis, end, placement.get("yaxis", "y"))
    return traces, subtitle, axis


def _watermark_traces(
    timelines: Timelines, shown: list[str], colours: Mapping[str, str], placement: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], bool]:
    """A step line per task's watermark shown, its operator's colour and a dash per subtask
    (named one by one when few, else per operator); and whether any reached MAX, drawn at
    the job's end of time."""
    until = timelines.step
    end = timelines.end_of_time
    named = len(shown) <= _NAMED_WATERMARKS
    traces: list[dict[str, Any]] = []
    dashes: dict[str, int] = {}
    ends = False
    for name in shown:
        operator = timelines.operators[name]
        index = dashes[operator] = dashes.get(operator, -1) + 1
        xs, values = _line(timelines.watermarks[name], until)
        ends = ends or MAX_WATERMARK in values
        traces.append(
            {
                "type": "scatter",
                "x": xs,
                "y": [
                    None if v == MIN_WATERMARK else end if v == MAX_WATERMARK else v for v in values
                ],
                "customdata": [watermark_text(v) for v in values],
                "mode": "lines",
                "connectgaps": False,
                "name": name if named else operator,
                "line": {
                    "shape": "hv",
                    "color": colours[operator],
                    "dash": _DASHES[index % len(_DASHES)],
                    "width": 2,
                },
                "legendgroup": name if named else operator,
                "showlegend": named or index == 0,
                "hovertemplate": f"{name}: watermark %{{customdata}} at step %{{x}}<extra></extra>",
                **placement,
            }
        )
    return traces, ends


def _max_watermark_line(axis: dict[str, Any], end: int, yref: str) -> None:
    """MAX_WATERMARK's dotted line and label just above every timestamp, on a fixed axis
    with room for the label (timestamps alone scale themselves)."""
    axis["yaxis"]["range"] = [0, end * 1.15]
    axis["shapes"].append(
        {
            "type": "line",
            "xref": "paper",
            "x0": 0,
            "x1": 1,
            "yref": yref,
            "y0": end,
            "y1": end,
            "line": {"color": "#777777", "dash": "dot", "width": 1},
        }
    )
    axis["annotations"].append(
        {
            "text": "MAX (end of input)",
            "xref": "paper",
            "yref": yref,
            "x": 1,
            "y": end,
            "xanchor": "right",
            "yanchor": "bottom",
            "showarrow": False,
            "font": {"size": 11, "color": "#555555"},
        }
    )


def event_time_figure(timelines: Timelines, *, title: str | None = None) -> go.Figure:
    """The event-time panel alone (a run's watermarks and late records side by side with
    another run's, without the other four panels)."""
    if not timelines.event_time:
        raise InvalidParameterError("this run has no event time: its sources emit no watermark")
    traces, subtitle, axis = event_time_panel(timelines, _operator_colours(timelines))
    layout = figure_layout(
        title or f"Event time, up to step {timelines.step}",
        subtitle=subtitle,
        height=_PANEL + 100,
        right=_LEGEND_WIDTH,
        hovermode="closest",
        xaxis={"range": [0, max(timelines.step, 1)], "title": {"text": "step"}},
        yaxis={"rangemode": "tozero", **axis["yaxis"]},
        shapes=axis["shapes"],
        annotations=axis["annotations"],
    )
    return go.Figure({"data": traces, "layout": layout})


def _operator_colours(timelines: Timelines) -> dict[str, str]:
    """A colour per operator, in the order of its subtasks' names: the records panel's and the
    event-time panel's."""
    colours: dict[str, str] = {}
    for name in sorted(timelines.processed):
        colours.setdefault(
            timelines.operators[name], CATEGORY_COLOURS[len(colours) % len(CATEGORY_COLOURS)]
        )
    return colours


def _placement(panel: int) -> dict[str, str]:
    """The axes and legend of a panel (1 at the top)."""
    suffix = "" if panel == 1 else str(panel)
    return {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}", "legend": f"legend{suffix}"}


def _domain(panel: int, plot_height: int) -> tuple[float, float]:
    """Top and bottom of a panel in paper coordinates; a gap of fixed pixels above each."""
    top = 1 - (_GAP + (panel - 1) * (_PANEL + _GAP)) / plot_height
    return top, max(0.0, top - _PANEL / plot_height)  # the last one ends at 0, give or take


def timelines_figure(timelines: Timelines, *, title: str | None = None) -> go.Figure:
    return go.Figure(timelines_spec(timelines, title=title))
