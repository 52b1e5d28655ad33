"""Two configurations of one scenario side by side: their figures, their timelines, and (when
one gets stuck) its waits-for graph, e.g. the pre-filter deadlock before and after the fix.

Both sides are run to their end when the user presses *compare*; a value a parameter refuses is
reported in the widget and nothing is run, and a side Flink refuses to start (or that ends
without a checkpoint, or fails) says why under the button. Each side is named by what sets it
apart from the other (``prefilter_source=heap-segment``), so its headings say what it is after
any change; the metrics table is the one in the panel, redrawn from the runs it shows, and says
so when the parameters no longer match those runs.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import pandas as pd

from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.errors import FlinkstateError
from flinkstate.lab.scenario_run import ScenarioRun, run_scenario
from flinkstate.runtime.buffer.owners import OwnerKind
from flinkstate.views.deadlock import cycle_text, deadlock_figure
from flinkstate.views.palette import html_table, wrap
from flinkstate.views.recovery import owner_timeline_figure
from flinkstate.widgets.controls import (
    ParameterControls,
    live_figure,
    refusal,
    refused_no_choice,
    scenario_picker,
    show_spec,
)

#: the figures of a side sample the buffers this often (in steps) for long runs
TIMELINE_POINTS = 400
#: the sides' letters, for a side whose parameters equal the other's
SIDES = ("A", "B")
#: characters per line of a title in half the notebook's column
HALF_WIDTH_TITLE = 55
#: rows of the metrics table: summary key -> label
METRICS = {
    "outcome": "outcome",
    "steps": "steps of the restart",
    "checkpoint_bytes": "in-flight bytes in the checkpoint",
    "recovered_bytes": "bytes recovered",
    "filtered_records": "records filtered out",
    "resumed_step": "step normal processing resumed",
    "heap_peak_bytes": "heap peak (bytes)",
    "spilled_bytes": "bytes spilled to disk",
    "spill_files": "spill files written",
    "first_checkpoint_step": "step first checkpoint completed",
    "failed_checkpoints": "failed checkpoints",
    "deadlock": "waits-for cycle",
}


def configuration_labels(
    configurations: Sequence[Mapping[str, object]],
    names: Sequence[str] | None = None,
    named: Sequence[Mapping[str, object]] | None = None,
) -> tuple[str, ...]:
    """A label per configuration: the parameters whose values differ between them
    (``prefilter_source=heap-segment``), in the first configuration's order.

    ``names`` are the caller's names for the configurations ``named``; a name is kept (before
    the difference) only while its side still has those values: after a change it may no
    longer be true ("network buffers (deadlock)" with a record size that recovers). Sides with
    the same values are told apart by their letters.
    """
    keys = list(dict.fromkeys(k for c in configurations for k in c))
    differ = [k for k in keys if len({repr(c.get(k)) for c in configurations}) > 1]
    labels = []
    for index, values in enumerate(configurations):
        label = ", ".join(f"{k}={values.get(k)}" for k in differ) or (
            f"{SIDES[index]} (same parameters)" if index < len(SIDES) else f"{index + 1}"
        )
        if names is not None and named is not None and dict(values) == dict(named[index]):
            label = f"{names[index]}, {label}"
        labels.append(label)
    return tuple(labels)


class ComparisonPanel:
    """A scenario picker, parameters for two sides, a compare button, metrics and figures."""

    def __init__(
        self,
        scenario: str = "prefilter-deadlock",
        left: Mapping[str, object] | None = None,
        right: Mapping[str, object] | None = None,
        *,
        labels: tuple[str, str] | None = None,
        seed: int = 0,
        max_steps: int = 500_000,
    ) -> None:
        item = get_scenario(scenario)
        self.seed = seed
        self.max_steps = max_steps
        self.scenario = scenario_picker(item.name)
        self.sides = [ParameterControls(item, left), ParameterControls(item, right)]
        #: the caller's names, for the values each side was given
        self._names = labels
        self._named = [self._resolved(side) for side in self.sides]
        #: the labels of the runs shown (those of the controls until something ran)
        self.labels: tuple[str, ...] = self._control_labels() or SIDES
        self.side_boxes = [widgets.VBox([s.box]) for s in self.sides]
        self.headers = [widgets.HTML(), widgets.HTML()]
        self.compare_button = widgets.Button(
            description="compare", icon="play", button_style="primary"
        )
        self.compare_button.add_class("flinkstate-compare")
        self.progress = widgets.HTML()
        self.message = widgets.HTML()
        self.metrics = widgets.HTML()
        self.timelines = [live_figure(), live_figure()]
        self.deadlocks = [live_figure(), live_figure()]
        self.deadlock_boxes = [
            widgets.VBox([f], layout=widgets.Layout(display="none")) for f in self.deadlocks
        ]
        self.runs: list[ScenarioRun] = []
        #: what the runs shown were run with
        self._ran: list[dict[str, object]] = []
        columns = [
            widgets.VBox(
                [header, box, timeline, deadlock],
                # min_width: a flex item may shrink below its content, so a figure never
                # pushes its half past the middle
                layout=widgets.Layout(width="50%", min_width="0"),
            )
            for header, box, timeline, deadlock in zip(
                self.headers, self.side_boxes, self.timelines, self.deadlock_boxes, strict=True
            )
        ]
        self._widget = widgets.VBox(
            [
                self.scenario,
                widgets.HBox([self.compare_button, self.progress]),
                self.message,
                self.metrics,
                widgets.HBox(columns, layout=widgets.Layout(width="100%")),
            ]
        )
        self.scenario.observe(self._on_scenario, names="value")
        self.compare_button.on_click(lambda _: self.compare())
        self._watch_controls()
        self._clear_figures()

    @property
    def widget(self) -> widgets.Widget:
        return self._widget

    def _control_labels(self) -> tuple[str, ...] | None:
        """The sides' labels from their controls now, or None while a value is refused."""
        try:
            values = [self._resolved(side) for side in self.sides]
        except FlinkstateError:
            return None
        return configuration_labels(values, self._names, self._named)

    def _resolved(self, side: ParameterControls) -> dict[str, object]:
        """Every parameter of a side's run, its controls' first (the order labels name them)."""
        values = side.values()
        return {**values, **side.item.resolve(values)}

    def _watch_controls(self) -> None:
        for side in self.sides:
            side.observe(self._on_parameter)
        self._on_parameter({})

    def _on_parameter(self, _change: Mapping[str, Any]) -> None:
        """Headings follow the controls; a table of runs made with other values says so."""
        labels = self._control_labels()
        if labels is not None:
            for header, label in zip(self.headers, labels, strict=True):
                header.value = f"<h4>{html.escape(label)}</h4>"
        if self.runs:
            try:
                current = [self._resolved(side) for side in self.sides]
            except FlinkstateError:
                current = []
            self._show_metrics(stale=current != self._ran)

    def _on_scenario(self, change: dict[str, Any]) -> None:
        if refused_no_choice(self.scenario, change, self.message):
            return
        item = get_scenario(self.scenario.value)
        self.sides = [ParameterControls(item), ParameterControls(item)]
        self._names, self._named = None, [self._resolved(side) for side in self.sides]
        for box, side in zip(self.side_boxes, self.sides, strict=True):
            box.children = [side.box]
        self.runs, self._ran = [], []
        self.metrics.value = ""
        self.message.value = ""
        self._watch_controls()
        self._clear_figures()

    def _clear_figures(self) -> None:
        """No figure of an earlier run stays up beside controls it does not match."""
        for timeline, box in zip(self.timelines, self.deadlock_boxes, strict=True):
            show_spec(timeline, _empty("press compare to run both sides"))
            box.layout.display = "none"

    def compare(self) -> bool:
        """Run both sides to their end and show them; a refused value runs nothing."""
        try:
            overrides = [side.values() for side in self.sides]
            configurations = [self._resolved(side) for side in self.sides]
        except FlinkstateError as error:
            self.message.value = refusal(f"Not run: {error}")
            return False
        self.message.value = ""
        labels = configuration_labels(configurations, self._names, self._named)
        runs = []
        for label, values in zip(labels, overrides, strict=True):

            def progress(step: int, label: str = label) -> None:
                self.progress.value = f"running {html.escape(label)}: step {step:,}…"

            progress(0)
            runs.append(
                run_scenario(
                    self.scenario.value,
                    seed=self.seed,
                    overrides=values,
                    max_steps=self.max_steps,
                    progress=progress,
                )
            )
        self.progress.value = ""
        self.runs, self.labels, self._ran = runs, labels, configurations
        self.message.value = _reasons(runs, labels)
        self._show_metrics(stale=False)
        for run, label, timeline, deadlock, box in zip(
            runs, labels, self.timelines, self.deadlocks, self.deadlock_boxes, strict=True
        ):
            if run.simulation is None:
                show_spec(timeline, _empty(f"{label}: {run.outcome.value}, nothing ran"))
            else:
                every = max(1, len(run.simulation.events) // TIMELINE_POINTS)
                figure = owner_timeline_figure(
                    run.simulation.events,
                    run.initial_owners,
                    every=every,
                    title=wrap(f"{label}: buffers per owner during the restart", HALF_WIDTH_TITLE),
                )
                show_spec(timeline, figure)
            report = None if run.result is None else run.result.deadlock
            if report is not None:
                box.layout.display = ""  # shown first: the page measures it when drawn
                # the cycle itself is in the metrics table: a half-width title stays short
                title = wrap(f"{label}: stuck at step {report.step}", HALF_WIDTH_TITLE)
                figure = deadlock_figure(report, title=title)
                show_spec(deadlock, figure)
            else:
                box.layout.display = "none"
        return True

    def _show_metrics(self, *, stale: bool) -> None:
        note = (
            "<p style='color:#a05a00'>The parameters changed since these runs: press "
            "<b>compare</b> to run them.</p>"
            if stale
            else ""
        )
        table = metrics_table(self.runs, self.labels)
        rows = [[name, *values] for name, values in zip(table.index, table.values, strict=True)]
        self.metrics.value = note + html_table(["", *table.columns], rows)


def _reasons(runs: Sequence[ScenarioRun], labels: Sequence[str]) -> str:
    """Why each side that says why ended as it did (a refused configuration with Flink's
    message, no checkpoint, a failed job): "rejected" alone does not say what to change."""
    lines = []
    for run, label in zip(runs, labels, strict=True):
        if not run.message:
            continue
        line = f"{label}: {run.outcome.value}: {run.message}"
        lines.append(
            refusal(line)
            if run.outcome is Outcome.REJECTED
            else f"<span>{html.escape(line)}</span>"
        )
    return "<br>".join(lines)


def _empty(text: str) -> dict[str, Any]:
    """A figure with nothing but a line of text: a side that has not run, or did not."""
    return {
        "data": [],
        "layout": {
            "autosize": True,
            "height": 120,
            "title": {
                "text": wrap(html.escape(text), HALF_WIDTH_TITLE),
                "x": 0,
                "xanchor": "left",
                "font": {"size": 14},
            },
            "xaxis": {"visible": False},
            "yaxis": {"visible": False},
            "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        },
    }


def metrics_table(runs: list[ScenarioRun], labels: tuple[str, ...]) -> pd.DataFrame:
    """One column per run, one row per figure a reviewer compares."""
    columns = {}
    for run, label in zip(runs, labels, strict=True):
        summary = run.summary()
        column = {METRICS[k]: summary[k] for k in METRICS}
        deadlock = run.result.deadlock if run.result is not None else None
        column[METRICS["deadlock"]] = (
            cycle_text(deadlock.cycle) if deadlock is not None and deadlock.cycle else "-"
        )
        peaks = {} if run.buffers is None else run.buffers.peak
        for kind in (
            OwnerKind.RECOVERED,
            OwnerKind.RECOVERED_EXCLUSIVE,
            OwnerKind.PRE_FILTER,
            OwnerKind.POST_FILTER,
        ):
            column[f"peak {kind} buffers"] = peaks.get(kind, 0)
        columns[label] = column
    return pd.DataFrame(columns)
