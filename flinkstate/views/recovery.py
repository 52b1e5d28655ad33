"""Pictures of a recovery: where the buffers are at every step, and what a what-if grid showed.

Pure functions of a run's events or a what-if table; the notebooks display them and the tests
check their data.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.world.metrics import OWNER_KINDS, BufferCounts
from flinkstate.sim.core import Event
from flinkstate.views.palette import (
    ALERT,
    CATEGORY_COLOURS,
    LEGEND_BELOW,
    NEUTRAL,
    figure_layout,
)
from flinkstate.views.timelines import owner_group_traces

#: run outcomes: green for the good ones, the alarm red for a deadlock, apart by lightness too
_OUTCOME_COLOURS = {
    "recovered": CATEGORY_COLOURS[2],
    "finished": CATEGORY_COLOURS[0],
    "deadlock": ALERT,
    "violation": CATEGORY_COLOURS[8],
    "checkpoint-expired": CATEGORY_COLOURS[1],
    "job-failed": CATEGORY_COLOURS[5],
    "rejected": NEUTRAL,
    "no-checkpoint": CATEGORY_COLOURS[10],
    "stopped": CATEGORY_COLOURS[4],
}


def owner_counts(
    events: Sequence[Event], initial_owners: Sequence[Owner], every: int = 1
) -> pd.DataFrame:
    """Segments held per owner kind after every ``every``-th step (one row per sample)."""
    if every < 1:
        raise InvalidParameterError(f"every must be at least 1, got {every}")
    counts = BufferCounts.start(initial_owners)
    current = counts.current
    rows: list[dict[str, int]] = [{"step": 0, **{k: current[k] for k in OWNER_KINDS}}]
    for event in events:
        counts.apply(event)
        step = event.step + 1
        if step % every == 0 or event is events[-1]:
            rows.append({"step": step, **{k: current[k] for k in OWNER_KINDS}})
    return pd.DataFrame(rows, columns=["step", *OWNER_KINDS])


def owner_timeline_figure(
    events: Sequence[Event],
    initial_owners: Sequence[Owner],
    *,
    title: str = "Where the buffers are",
    every: int = 1,
) -> go.Figure:
    """Segments held over the steps, a line per group of owner kinds (each kind's count on
    hover, the pools hidden until their legend entry is clicked), coloured as in every figure."""
    counts = owner_counts(events, initial_owners, every)
    steps = counts["step"].tolist()
    buffers = {kind: _change_points(steps, counts[kind].tolist()) for kind in OWNER_KINDS}
    figure = go.Figure(owner_group_traces(buffers, steps[-1]))
    figure.update_layout(
        figure_layout(
            title,
            height=260,
            bottom=100,
            xaxis={"title": {"text": "step"}, "rangemode": "tozero"},
            yaxis={"title": {"text": "segments held"}, "rangemode": "tozero"},
            hovermode="closest",
            legend=dict(LEGEND_BELOW),
        )
    )
    return figure


def _change_points(steps: list[int], values: list[int]) -> list[tuple[int, int]]:
    points: list[tuple[int, int]] = []
    for step, value in zip(steps, values, strict=True):
        if not points or points[-1][1] != value:
            points.append((step, value))
    return points


def whatif_figure(
    table: pd.DataFrame, x: str, y: str, *, facet: str | None = None, title: str = ""
) -> go.Figure:
    """Each run of a what-if table as a point: ``x`` against ``y``, coloured by outcome."""
    for column in (x, y, *((facet,) if facet else ())):
        if column not in table.columns:
            raise InvalidParameterError(
                f"no column {column!r} in the table; columns: {', '.join(table.columns)}"
            )
    figure = go.Figure()
    groups = [(None, table)] if facet is None else list(table.groupby(facet, sort=False))
    symbols = ["circle", "square", "diamond", "triangle-up", "x", "star"]
    for index, (value, part) in enumerate(groups):
        for outcome, rows in part.groupby("outcome", sort=False):
            label = str(outcome) if value is None else f"{outcome}, {facet}={value}"
            figure.add_trace(
                go.Scatter(
                    x=rows[x].astype(str),
                    y=rows[y],
                    mode="markers",
                    name=label,
                    marker={
                        "color": _OUTCOME_COLOURS.get(str(outcome), NEUTRAL),
                        "symbol": symbols[index % len(symbols)],
                        "size": 11,
                    },
                )
            )
    figure.update_layout(
        figure_layout(
            title or f"{y} against {x}, a point per run coloured by its outcome",
            height=320,
            xaxis={"title": {"text": x}},
            yaxis={"title": {"text": y}},
        )
    )
    return figure
