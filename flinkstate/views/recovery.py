"""Pictures of a recovery: where the buffers are at every step, and what a what-if grid showed.

Pure functions of a run's events or a what-if table; the notebooks display them and the tests
check their data.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from flinkstate.errors import InvalidParameterError
from flinkstate.network.metrics import OWNER_KINDS, POOL_KINDS, owner_kind
from flinkstate.sim.core import Event

_OUTCOME_COLOURS = {
    "recovered": "#2ca02c",
    "deadlock": "#d62728",
    "violation": "#9467bd",
    "checkpoint-expired": "#ff7f0e",
    "job-failed": "#8c564b",
    "rejected": "#7f7f7f",
    "no-checkpoint": "#bcbd22",
    "stopped": "#17becf",
    "finished": "#1f77b4",
}


def owner_counts(
    events: Sequence[Event], initial_owners: Sequence[str], every: int = 1
) -> pd.DataFrame:
    """Segments held per owner kind after every ``every``-th step (one row per sample)."""
    if every < 1:
        raise InvalidParameterError(f"every must be at least 1, got {every}")
    current = Counter(owner_kind(o) for o in initial_owners)
    rows = [{"step": 0, **{k: current[k] for k in OWNER_KINDS}}]
    for event in events:
        for move in event.moves:
            current[owner_kind(move.source)] -= 1
            current[owner_kind(move.target)] += 1
        step = event.step + 1
        if step % every == 0 or event is events[-1]:
            rows.append({"step": step, **{k: current[k] for k in OWNER_KINDS}})
    return pd.DataFrame(rows, columns=["step", *OWNER_KINDS])


def owner_timeline_figure(
    events: Sequence[Event],
    initial_owners: Sequence[str],
    *,
    title: str = "Where the buffers are",
    every: int = 1,
) -> go.Figure:
    """One line per owner kind that ever holds a segment (pools left out), over the steps."""
    counts = owner_counts(events, initial_owners, every)
    figure = go.Figure()
    for kind in OWNER_KINDS:
        if kind in POOL_KINDS or not counts[kind].any():
            continue
        figure.add_trace(
            go.Scatter(x=counts["step"], y=counts[kind], mode="lines", name=kind, line_shape="hv")
        )
    figure.update_layout(
        title=title,
        xaxis_title="step",
        yaxis_title="segments held",
        legend_title="owner",
        height=380,
        margin={"l": 50, "r": 20, "t": 50, "b": 40},
    )
    return figure


def whatif_figure(table: pd.DataFrame, x: str, y: str, *, facet: str | None = None) -> go.Figure:
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
                        "color": _OUTCOME_COLOURS.get(str(outcome), "#1f77b4"),
                        "symbol": symbols[index % len(symbols)],
                        "size": 11,
                    },
                )
            )
    figure.update_layout(
        xaxis_title=x, yaxis_title=y, height=380, margin={"l": 50, "r": 20, "t": 30, "b": 40}
    )
    return figure
