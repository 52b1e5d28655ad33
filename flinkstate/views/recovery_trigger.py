"""A restored V2 task's recovery checkpoint trigger over a run, and the checkpoints that met it.

While a task recovers with V2 (Flink master) its ``RecoveryCheckpointTrigger`` tells a
checkpoint what to do: NOT_READY during the fetch (declined as not ready), the drainer once it
is installed (a recovery barrier into every channel still in recovery, the spill files cut),
NO_OP once no channel is in recovery. PR #28554's review was about that last change: made as
soon as the drain ends (``NoOpTriggerAfter.DRAIN_DONE``), the trigger is NO_OP while the
channels are still in recovery, and a checkpoint in that window is declined for a missing
recovery barrier.

A :class:`TriggerHistory` lets a reader watch that move for one task. Every value is read from
the world after each step of a recorded run (replayed from its factory, as the timelines are),
never recomputed from the events. :func:`trigger_table` and :func:`trigger_figure` put the
histories of several runs (the draft and master) side by side.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.options import CheckpointFailure, RecoveryCheckpointTrigger
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Simulation
from flinkstate.views.palette import (
    ALERT,
    GROUP_COLOURS,
    IN_RECOVERY,
    LEGEND_BELOW,
    NEUTRAL,
    NODE_COLOURS,
    figure_layout,
    shade,
    wrap,
)


@dataclass(frozen=True)
class TriggerPoint:
    """The task as one step left it; recorded at the start and whenever its trigger, its
    drain or the number of its channels in recovery changed."""

    step: int
    trigger: RecoveryCheckpointTrigger
    #: whether its drainer has queued the end event on every channel
    drain_finished: bool
    #: its channels still in recovery (``RecoverableInputChannel``: end event not yet polled)
    in_recovery: int
    #: what the step did, in the world's words (the step's note)
    what: str


@dataclass(frozen=True)
class CheckpointAtTask:
    """A checkpoint that reached the task: the step it took its snapshot or declined, the
    trigger and the channels in recovery it found there, the decline, and its completion."""

    step: int
    checkpoint: int
    trigger: RecoveryCheckpointTrigger
    in_recovery: int
    drain_finished: bool
    declined: CheckpointFailure | None = None
    #: the step that completed it (None: it never did)
    completed_at: int | None = None

    def describe(self) -> str:
        if self.declined is not None:
            return self.declined.describe()
        what = f"checkpoint {self.checkpoint} reaches it"
        if self.trigger is RecoveryCheckpointTrigger.DRAINER:
            cut = (
                "nothing left in the spill files to cut"
                if self.drain_finished
                else "the spill files cut at the drainer's committed position"
            )
            return (
                f"{what}: a RecoveryCheckpointBarrier into each of its {self.in_recovery} "
                f"channel(s) in recovery, {cut}"
            )
        if not self.in_recovery:
            return f"{what}: no channel in recovery, a snapshot as in any checkpoint"
        return f"{what}: its snapshot taken"


@dataclass(frozen=True)
class TriggerHistory:
    """One task's recovery checkpoint trigger over a run: its change points, the checkpoints
    that reached it, and how the run ended."""

    #: the task's key (``counter[0]``)
    task: str
    #: the task's input channels, in recovery or not
    channels: int
    points: tuple[TriggerPoint, ...]
    checkpoints: tuple[CheckpointAtTask, ...]
    #: the run's last step
    steps: int
    #: the step at which the job failed over and why, in the world's words (None, "": it did not)
    job_failed_at: int | None = None
    job_failed: str = ""
    tolerable_failed_checkpoints: int = 0

    def at(self, step: int) -> TriggerPoint:
        """The task as step ``step`` left it (the last change point at or before it)."""
        return [p for p in self.points if p.step <= step][-1]

    def since(self, trigger: RecoveryCheckpointTrigger) -> int | None:
        """The first step the task's trigger was ``trigger`` (None: never)."""
        return next((p.step for p in self.points if p.trigger is trigger), None)

    @property
    def drain_finished_at(self) -> int | None:
        return next((p.step for p in self.points if p.drain_finished), None)

    def in_window(self) -> tuple[CheckpointAtTask, ...]:
        """The checkpoints that reached the task after its drain had ended while a channel was
        still in recovery: the window PR #28554's review found."""
        return tuple(c for c in self.checkpoints if c.drain_finished and c.in_recovery)


def _in_recovery(task: Task) -> int:
    return sum(c.recoverable.in_recovery for gate in task.gates for c in gate.channels)


def trigger_history(simulation: Simulation, task: str) -> TriggerHistory:
    """Replay ``simulation`` (a restart's recorded run) and follow the V2 task ``task`` (a
    key of ``world.tasks``) through it."""
    world, events = simulation.replay()
    if not isinstance(world, NetworkWorld):
        raise InvalidParameterError("a recovery trigger is followed in network worlds only")
    if task not in world.tasks:
        raise InvalidParameterError(f"no task {task!r}; the tasks are {', '.join(world.tasks)}")
    subtask = world.tasks[task]
    if subtask.name not in world.drainers:
        raise InvalidParameterError(
            f"{task} has no drainer: only a task restored with V2 recovery (checkpointing during "
            f"recovery on) has a recovery checkpoint trigger to follow"
        )
    drainer = world.drainers[subtask.name]

    def state() -> tuple[RecoveryCheckpointTrigger, bool, int]:
        return subtask.recovery_trigger, drainer.finished, _in_recovery(subtask)

    points = [TriggerPoint(world.step, *state(), "the restart begins")]
    reached: dict[int, CheckpointAtTask] = {}
    failures = len(world.checkpoints.failures)
    completed = len(world.checkpoints.completed)
    failed_at: int | None = None
    for event in events:
        step = world.step
        now = state()
        if now != (points[-1].trigger, points[-1].drain_finished, points[-1].in_recovery):
            points.append(TriggerPoint(step, *now, event.note or str(event.action)))
        for failure in world.checkpoints.failures[failures:]:
            if failure.task == subtask.name and failure.checkpoint not in reached:
                reached[failure.checkpoint] = CheckpointAtTask(
                    failure.step, failure.checkpoint, *_found(now), declined=failure
                )
        failures = len(world.checkpoints.failures)
        pending = world.checkpoints.pending
        if pending is not None and subtask.name in pending.snapshots and pending.id not in reached:
            reached[pending.id] = CheckpointAtTask(step, pending.id, *_found(now))
        for checkpoint in world.checkpoints.completed[completed:]:
            mine = next((s for s in checkpoint.subtasks if s.subtask == task), None)
            if checkpoint.id not in reached and mine is not None:  # taken and completed at once
                reached[checkpoint.id] = CheckpointAtTask(step, checkpoint.id, *_found(now))
            if checkpoint.id in reached:
                reached[checkpoint.id] = _completed(reached[checkpoint.id], checkpoint.completed_at)
        completed = len(world.checkpoints.completed)
        if failed_at is None and world.checkpoints.job_failed:
            failed_at = step
    return TriggerHistory(
        task,
        sum(len(gate.channels) for gate in subtask.gates),
        tuple(points),
        tuple(sorted(reached.values(), key=lambda c: c.step)),
        world.step,
        failed_at,
        world.checkpoints.job_failed,
        world.options.tolerable_failed_checkpoints,
    )


def _found(
    now: tuple[RecoveryCheckpointTrigger, bool, int],
) -> tuple[RecoveryCheckpointTrigger, int, bool]:
    trigger, finished, in_recovery = now
    return trigger, in_recovery, finished


def _completed(checkpoint: CheckpointAtTask, step: int) -> CheckpointAtTask:
    return CheckpointAtTask(
        checkpoint.step,
        checkpoint.checkpoint,
        checkpoint.trigger,
        checkpoint.in_recovery,
        checkpoint.drain_finished,
        checkpoint.declined,
        step,
    )


# -- side by side ---------------------------------------------------------------------------------

TRIGGER = "trigger"
IN_RECOVERY_COLUMN = "channels in recovery"
WHAT = "what happened"


def _happenings(history: TriggerHistory) -> dict[int, list[str]]:
    """What happened to the task at each step worth a row, in the world's words."""
    said: dict[int, list[str]] = {}
    for point in history.points:
        said.setdefault(point.step, []).append(point.what)
    for checkpoint in history.checkpoints:
        said.setdefault(checkpoint.step, []).append(checkpoint.describe())
        if checkpoint.completed_at is not None:
            said.setdefault(checkpoint.completed_at, []).append(
                f"checkpoint {checkpoint.checkpoint} completes"
            )
    if history.job_failed_at is not None:
        declined_here = any(
            c.declined is not None and c.step == history.job_failed_at for c in history.checkpoints
        )
        said.setdefault(history.job_failed_at, []).append(
            f"the job fails over ({history.tolerable_failed_checkpoints} failed checkpoint(s) "
            "tolerated)"
            if declined_here
            else f"the job fails over: {history.job_failed}"
        )
    return said


def trigger_table(histories: Mapping[str, TriggerHistory]) -> pd.DataFrame:
    """One row per step at which something happened to the task in any of the runs (labelled
    by the keys of ``histories``); per run its trigger and channels in recovery as that step
    left them, and what happened (blank after the run's end)."""
    said = {label: _happenings(h) for label, h in histories.items()}
    steps = sorted({step for happened in said.values() for step in happened})
    columns: dict[tuple[str, str], list[object]] = {}
    for label, history in histories.items():
        shown = [None if step > history.steps else history.at(step) for step in steps]
        columns[(label, TRIGGER)] = ["" if p is None else p.trigger.name for p in shown]
        columns[(label, IN_RECOVERY_COLUMN)] = [
            "" if p is None else f"{p.in_recovery} of {history.channels}" for p in shown
        ]
        columns[(label, WHAT)] = ["; ".join(said[label].get(step, [])) for step in steps]
    table = pd.DataFrame(columns, index=pd.Index(steps, name="step"))
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    return table


#: a trigger's colour: grey while not ready, the drainer's own while it cuts, light when idle
TRIGGER_COLOURS: Mapping[RecoveryCheckpointTrigger, str] = {
    RecoveryCheckpointTrigger.NOT_READY: NEUTRAL,
    RecoveryCheckpointTrigger.DRAINER: NODE_COLOURS["drainer"],
    RecoveryCheckpointTrigger.NO_OP: shade(NEUTRAL, 0.7),
}


def _spans(history: TriggerHistory, value: Any) -> list[tuple[int, int, Any]]:
    """(start, end, value) of each stretch of steps over which ``value(point)`` held."""
    spans: list[tuple[int, int, Any]] = []
    for point in history.points:
        current = value(point)
        if spans and spans[-1][2] == current:
            continue
        if spans:
            spans[-1] = (spans[-1][0], point.step, spans[-1][2])
        spans.append((point.step, history.steps, current))
    return spans


def trigger_figure(histories: Mapping[str, TriggerHistory], *, title: str = "") -> go.Figure:
    """Per run two bars over the steps: the task's trigger, and how many of its channels are
    in recovery; a dashed line where the drain finished, and a marker per checkpoint that
    reached the task (a red cross for one it declined), and per completed one."""
    traces: list[dict[str, Any]] = []
    rows: list[str] = []
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    legend: set[str] = set()
    for label, history in histories.items():
        trigger_row, recovery_row = len(rows), len(rows) + 1
        rows += [f"{label}: trigger", f"{label}: channels in recovery"]
        traces += _bars(label, history, trigger_row, recovery_row, legend)
        drained = history.drain_finished_at
        if drained is not None:
            shapes.append(
                {
                    "type": "line",
                    "x0": drained,
                    "x1": drained,
                    "y0": trigger_row - 0.5,
                    "y1": recovery_row + 0.5,
                    "line": {"color": "#444444", "dash": "dash", "width": 1},
                }
            )
            traces.append(
                _marker(
                    drained,
                    recovery_row + 0.45,
                    "drain finished",
                    "line-ns",
                    "#444444",
                    f"{label}: drain finished at step {drained}",
                    legend,
                )
            )
        idle = history.since(RecoveryCheckpointTrigger.NO_OP)
        if idle is not None:
            annotations.append(_no_op_note(history, idle, trigger_row))
        traces += _checkpoint_markers(label, history, trigger_row, recovery_row, legend)
    tasks = sorted({h.task for h in histories.values()})
    layout = figure_layout(
        title or f"The recovery checkpoint trigger of {', '.join(tasks)}",
        subtitle="per run, the task's trigger and how many of its channels are in recovery, "
        "over the steps; a marker per checkpoint that reaches the task (hover for what it did)",
        height=80 * len(rows) + 40,
        left=230,
        bottom=90,
        barmode="overlay",
        hovermode="closest",
        shapes=shapes,
        annotations=annotations,
        uniformtext={"minsize": 10, "mode": "hide"},
        legend=dict(LEGEND_BELOW),
        xaxis={"title": {"text": "step"}, "rangemode": "tozero"},
        yaxis={
            "tickvals": list(range(len(rows))),
            "ticktext": rows,
            "autorange": "reversed",
        },
    )
    return go.Figure({"data": traces, "layout": layout})


def _bars(
    label: str, history: TriggerHistory, trigger_row: int, recovery_row: int, legend: set[str]
) -> list[dict[str, Any]]:
    """A run's two rows of bars: a bar per span of one trigger, and per span of one count of
    channels in recovery (lighter as fewer are); each trigger named once in the legend."""
    recovery = GROUP_COLOURS[IN_RECOVERY]
    bars = [
        (trigger_row, start, end, TRIGGER_COLOURS[trigger], trigger.name, trigger.name)
        for start, end, trigger in _spans(history, lambda p: p.trigger)
    ] + [
        (
            recovery_row,
            start,
            end,
            shade(recovery, 0.85 - 0.85 * count / max(history.channels, 1)),
            str(count),
            f"{count} of {history.channels} channels in recovery",
        )
        for start, end, count in _spans(history, lambda p: p.in_recovery)
    ]
    traces = []
    for row, start, end, colour, text, hover in bars:
        # a trigger's colour in the legend (the counts are written on their bars)
        named = row == trigger_row and text not in legend
        if named:
            legend.add(text)
        traces.append(
            {
                "type": "bar",
                "orientation": "h",
                "y": [row],
                "base": [start],
                "x": [max(end - start, 1)],
                "width": 0.7,
                "marker": {"color": colour, "line": {"color": "white", "width": 1}},
                "text": [text],
                "textposition": "inside",
                "insidetextanchor": "middle",
                "name": f"trigger {text}" if row == trigger_row else hover,
                "legendgroup": text if row == trigger_row else "",
                "showlegend": named,
                "hovertemplate": f"{history.task}, {label}: {hover}, steps {start} to {end}"
                "<extra></extra>",
            }
        )
    return traces


def _no_op_note(history: TriggerHistory, idle: int, trigger_row: int) -> dict[str, Any]:
    """Where the trigger became NO_OP and how many channels were still in recovery then: the
    window PR #28554's review was about."""
    return {
        "x": idle,
        # in the gap under the trigger's bar, clear of the title above the plot
        "y": trigger_row + 0.35,
        "text": f"NO_OP from step {idle}, with {history.at(idle).in_recovery} of "
        f"{history.channels} channels in recovery",
        "showarrow": True,
        "arrowhead": 2,
        "ax": 50,
        "ay": 13,
        "xanchor": "left",
        "yanchor": "middle",
        "font": {"size": 11, "color": "#222222"},
        "bgcolor": "rgba(255, 255, 255, 0.85)",
    }


def _checkpoint_markers(
    label: str, history: TriggerHistory, trigger_row: int, recovery_row: int, legend: set[str]
) -> list[dict[str, Any]]:
    """A marker per checkpoint that reached the task (a cross where declined) and per one
    that completed, on the trigger's row; one where the job failed over."""
    traces = []
    for checkpoint in history.checkpoints:
        declined = checkpoint.declined is not None
        traces.append(
            _marker(
                checkpoint.step,
                trigger_row,
                "checkpoint declined" if declined else "checkpoint reaches the task",
                "x" if declined else "circle",
                ALERT if declined else _ON_BAR,
                f"{label}, step {checkpoint.step}: {checkpoint.describe()}",
                legend,
            )
        )
        if checkpoint.completed_at is not None:
            traces.append(
                _marker(
                    checkpoint.completed_at,
                    trigger_row,
                    "checkpoint completes",
                    "star",
                    _ON_BAR,
                    f"{label}: checkpoint {checkpoint.checkpoint} completes at step "
                    f"{checkpoint.completed_at}",
                    legend,
                )
            )
    if history.job_failed_at is not None:
        traces.append(
            _marker(
                history.job_failed_at,
                recovery_row,
                "the job fails over",
                "x-thin-open",
                ALERT,
                f"{label}: the job fails over at step {history.job_failed_at}",
                legend,
            )
        )
    return traces


#: the outline of a marker drawn white on a bar (a checkpoint that reached or completed)
_ON_BAR = "#222222"


def _marker(
    step: int, row: float, name: str, symbol: str, colour: str, hover: str, legend: set[str]
) -> dict[str, Any]:
    """One marker on a row; the first of each name in the legend."""
    shown = name not in legend
    legend.add(name)
    return {
        "type": "scatter",
        "mode": "markers",
        "x": [step],
        "y": [row],
        "name": name,
        "legendgroup": name,
        "showlegend": shown,
        "marker": {
            "symbol": symbol,
            "color": "white" if colour == _ON_BAR else colour,
            "size": 12,
            "line": {"color": colour, "width": 2},
        },
        "hovertemplate": f"{wrap(hover)}<extra></extra>",
    }
