"""Two configurations of one scenario side by side: their figures, their timelines, and (when
one gets stuck) its waits-for graph, e.g. the pre-filter deadlock before and after the fix.

Both sides are run to their end when the user presses *compare*; a value a parameter refuses is
reported in the widget and nothing is run.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import pandas as pd

from flinkstate.errors import FlinkstateError
from flinkstate.recovery.scenarios import ScenarioRun, get_scenario, run_scenario
from flinkstate.views.deadlock import deadlock_figure
from flinkstate.views.recovery import owner_timeline_figure
from flinkstate.widgets.controls import (
    ParameterControls,
    live_figure,
    refusal,
    scenario_picker,
    show_spec,
)

#: the figures of a side sample the buffers this often (in steps) for long runs
TIMELINE_POINTS = 400
#: each side's figures fit half the notebook's width
SIDE_WIDTH = 560
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


class ComparisonPanel:
    """A scenario picker, parameters for two sides, a compare button, metrics and figures."""

    def __init__(
        self,
        scenario: str = "prefilter-deadlock",
        left: Mapping[str, object] | None = None,
        right: Mapping[str, object] | None = None,
        *,
        labels: tuple[str, str] = ("A", "B"),
        seed: int = 0,
        max_steps: int = 500_000,
    ) -> None:
        item = get_scenario(scenario)
        self.labels = labels
        self.seed = seed
        self.max_steps = max_steps
        self.scenario = scenario_picker(item.name)
        self.sides = [ParameterControls(item, left), ParameterControls(item, right)]
        self.side_boxes = [widgets.VBox([s.box]) for s in self.sides]
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
        self.scenario.observe(self._on_scenario, names="value")
        self.compare_button.on_click(lambda _: self.compare())

    @property
    def widget(self) -> widgets.Widget:
        columns = [
            widgets.VBox(
                [widgets.HTML(f"<h4>{html.escape(label)}</h4>"), box, timeline, deadlock],
                layout=widgets.Layout(width="50%"),
            )
            for label, box, timeline, deadlock in zip(
                self.labels, self.side_boxes, self.timelines, self.deadlock_boxes, strict=True
            )
        ]
        return widgets.VBox(
            [
                self.scenario,
                widgets.HBox([self.compare_button, self.progress]),
                self.message,
                self.metrics,
                widgets.HBox(columns),
            ]
        )

    def _on_scenario(self, _change: dict[str, Any]) -> None:
        item = get_scenario(self.scenario.value)
        self.sides = [ParameterControls(item), ParameterControls(item)]
        for box, side in zip(self.side_boxes, self.sides, strict=True):
            box.children = [side.box]
        self.runs = []
        self.metrics.value = ""
        self.message.value = ""

    def compare(self) -> bool:
        """Run both sides to their end and show them; a refused value runs nothing."""
        try:
            overrides = [side.values() for side in self.sides]
        except FlinkstateError as error:
            self.message.value = refusal(f"Not run: {error}")
            return False
        self.message.value = ""
        runs = []
        for label, values in zip(self.labels, overrides, strict=True):

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
        self.runs = runs
        self.metrics.value = metrics_table(runs, self.labels).to_html(escape=True)
        for run, label, timeline, deadlock, box in zip(
            runs, self.labels, self.timelines, self.deadlocks, self.deadlock_boxes, strict=True
        ):
            if run.simulation is None:
                show_spec(
                    timeline,
                    {
                        "data": [],
                        "layout": {
                            "title": {"text": f"{label}: {run.outcome.value}, nothing ran"},
                            "width": SIDE_WIDTH,
                        },
                    },
                )
            else:
                every = max(1, len(run.simulation.events) // TIMELINE_POINTS)
                figure = owner_timeline_figure(
                    run.simulation.events,
                    run.initial_owners,
                    every=every,
                    title=f"{label}: buffers per owner during the restart",
                )
                figure.update_layout(width=SIDE_WIDTH, legend={"orientation": "h"})
                show_spec(timeline, figure)
            report = None if run.result is None else run.result.deadlock
            if report is not None:
                # the cycle itself is in the metrics table: a half-width title stays short
                figure = deadlock_figure(report, title=f"{label}: stuck at step {report.step}")
                figure.update_layout(width=SIDE_WIDTH)
                show_spec(deadlock, figure)
                box.layout.display = ""
            else:
                box.layout.display = "none"
        return True


def metrics_table(runs: list[ScenarioRun], labels: tuple[str, ...]) -> pd.DataFrame:
    """One column per run, one row per figure a reviewer compares."""
    columns = {}
    for run, label in zip(runs, labels, strict=True):
        summary = run.summary()
        column = {METRICS[k]: summary[k] for k in METRICS}
        deadlock = run.result.deadlock if run.result is not None else None
        column[METRICS["deadlock"]] = (
            " -> ".join((*deadlock.cycle, deadlock.cycle[0]))
            if deadlock is not None and deadlock.cycle
            else "-"
        )
        peaks = {} if run.buffers is None else run.buffers.peak
        for kind in ("recovered", "recovered-exclusive", "pre-filter", "post-filter"):
            column[f"peak {kind} buffers"] = peaks.get(kind, 0)
        columns[label] = column
    return pd.DataFrame(columns)
