"""Pictures of what a rescale does to a checkpoint's in-flight data (the Spark pipeline's answer).

Each builder reads the small tables of a :class:`~flinkstate.spark.rescaling.RescaleResult`
(or a key-group table) and returns a plotly figure; none touches Spark, so a figure can be
built again for another exchange or parallelism without recomputing anything.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from flinkstate.errors import InvalidParameterError
from flinkstate.spark.rescaling import RescaleResult

_INPUT = "rgba(31, 119, 180, 0.55)"
_OUTPUT = "rgba(255, 127, 14, 0.55)"
_KEPT = "#1f77b4"
_FILTERED = "#d62728"


def _size(value: float) -> str:
    """Bytes as people read them."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} GiB"


def _check(result: RescaleResult, exchange: str, to: int | None = None) -> None:
    if exchange not in result.exchanges:
        raise InvalidParameterError(
            f"no in-flight data on {exchange!r}; exchanges with channel state: "
            + (", ".join(result.exchanges) or "none")
        )
    if to is not None and to not in result.targets:
        raise InvalidParameterError(
            f"parallelism {to} was not asked; this result has "
            + ", ".join(map(str, result.targets))
        )


def movement_sankey(result: RescaleResult, exchange: str, to: int) -> go.Figure:
    """Old consumer subtasks (left) to new ones (right), a band per side of the channel state,
    as wide as the bytes that go that way."""
    _check(result, exchange, to)
    rows = result.movement[
        (result.movement["to"] == to) & (result.movement["exchange"] == exchange)
    ]
    sweep = result.sweep[(result.sweep["to"] == to) & (result.sweep["exchange"] == exchange)]
    old_p, new_p = int(sweep["old_parallelism"].iloc[0]), int(sweep["new_parallelism"].iloc[0])
    labels = [f"old {i}" for i in range(old_p)] + [f"new {i}" for i in range(new_p)]
    hover = [
        f"{r.side} state of old subtask {r.old_subtask} read by new subtask {r.new_subtask}<br>"
        f"{r.buffers:,} buffers, {_size(r.bytes)}<br>{r.records:,} records "
        f"({r.filtered_records:,} filtered out), {r.spanning_records:,} spanning buffers"
        for r in rows.itertuples()
    ]
    figure = go.Figure(
        go.Sankey(
            arrangement="snap",
            node={
                "label": labels,
                "pad": 12,
                "color": ["#7f7f7f"] * old_p + ["#2ca02c"] * new_p,
            },
            link={
                "source": rows["old_subtask"].tolist(),
                "target": (rows["new_subtask"] + old_p).tolist(),
                "value": rows["bytes"].tolist(),
                "color": [_INPUT if side == "input" else _OUTPUT for side in rows["side"]],
                "customdata": hover,
                "hovertemplate": "%{customdata}<extra></extra>",
            },
        )
    )
    moved = int(sweep["moved_bytes"].iloc[0])
    delivered = int(sweep["delivered_bytes"].iloc[0])
    figure.update_layout(
        title=f"{exchange} at {old_p} -> {new_p}: {_size(delivered)} read back, "
        f"{_size(moved)} by another subtask (blue: input state, orange: output state)",
        height=max(320, 26 * max(old_p, new_p)),
        margin={"l": 20, "r": 20, "t": 50, "b": 20},
    )
    return figure


def subtask_bars(result: RescaleResult, exchange: str, to: int) -> go.Figure:
    """Per new subtask: the bytes it must read back, split into what it keeps and what it
    reads only to filter out."""
    _check(result, exchange, to)
    rows = result.subtasks[
        (result.subtasks["to"] == to) & (result.subtasks["exchange"] == exchange)
    ]
    # filtered bytes are whole records; the rest of what was read is kept
    filtered = rows["filtered_bytes"].clip(upper=rows["bytes"])
    kept = rows["bytes"] - filtered
    share = np.where(
        rows["records"] > 0, rows["filtered_records"] / rows["records"].clip(lower=1), 0
    )
    details = [
        f"{r.buffers:,} buffers ({_size(r.input_bytes)} input state, "
        f"{_size(r.output_bytes)} upstream output state)<br>{r.records:,} records, "
        f"{r.filtered_records:,} filtered ({s:.0%})<br>{r.virtual_channels} virtual channels "
        f"({r.filtering_virtual_channels} filtering, {r.virtual_channels_with_data} with data)"
        f"<br>reads the input state of old subtask(s) {r.reads_from or 'none'}"
        for r, s in zip(rows.itertuples(), share, strict=True)
    ]
    names = [str(s) for s in rows["subtask"]]
    figure = go.Figure(
        [
            go.Bar(
                name="kept",
                x=names,
                y=kept,
                marker_color=_KEPT,
                customdata=details,
                hovertemplate="subtask %{x}: %{y:,} bytes kept<br>%{customdata}<extra></extra>",
            ),
            go.Bar(
                name="filtered out",
                x=names,
                y=filtered,
                marker_color=_FILTERED,
                text=[f"{s:.0%}" if s else "" for s in share],
                textposition="outside",
                customdata=details,
                hovertemplate="subtask %{x}: %{y:,} bytes filtered<br>%{customdata}<extra></extra>",
            ),
        ]
    )
    operator = rows["operator"].iloc[0] if len(rows) else exchange
    figure.update_layout(
        barmode="stack",
        title=f"What each new {operator} subtask reads back at parallelism {to} "
        "(label: share of its records filtered out)",
        xaxis_title=f"new {operator} subtask",
        yaxis_title="bytes",
        height=360,
        margin={"l": 60, "r": 20, "t": 50, "b": 45},
        legend={"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right", "yanchor": "bottom"},
    )
    return figure


def sweep_figure(result: RescaleResult, exchange: str | None = None) -> go.Figure:
    """How the answer changes with the new parallelism: bytes read back and the busiest
    subtask's share (left), records filtered out (right)."""
    frame = result.sweep
    if exchange is not None:
        _check(result, exchange)
        frame = frame[frame["exchange"] == exchange]
    figure = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("bytes read back on recovery", "records read only to be filtered out"),
    )
    for name, group in frame.groupby("exchange", sort=False):
        group = group.sort_values("to")
        figure.add_trace(
            go.Scatter(
                x=group["to"],
                y=group["delivered_bytes"],
                name=f"{name}: all subtasks",
                mode="lines+markers",
                customdata=np.stack([group["amplification"], group["moved_bytes"]], axis=-1),
                hovertemplate="parallelism %{x}: %{y:,} bytes (x%{customdata[0]:.2f} of the "
                "checkpoint), %{customdata[1]:,} by another subtask<extra></extra>",
            ),
            row=1,
            col=1,
        )
        figure.add_trace(
            go.Scatter(
                x=group["to"],
                y=group["max_subtask_bytes"],
                name=f"{name}: busiest subtask",
                mode="lines+markers",
                line={"dash": "dot"},
                customdata=group["skew"],
                hovertemplate="parallelism %{x}: %{y:,} bytes, %{customdata:.2f} x the "
                "mean<extra></extra>",
            ),
            row=1,
            col=1,
        )
        figure.add_trace(
            go.Scatter(
                x=group["to"],
                y=group["filtered_records"],
                name=f"{name}: filtered records",
                mode="lines+markers",
                customdata=group["filtered_share"],
                hovertemplate="parallelism %{x}: %{y:,} records (%{customdata:.1%})<extra></extra>",
            ),
            row=1,
            col=2,
        )
    figure.update_xaxes(title_text="new parallelism", dtick=1)
    figure.update_yaxes(title_text="bytes", row=1, col=1)
    figure.update_yaxes(title_text="records", row=1, col=2)
    figure.update_layout(
        title="What-if: the same checkpoint restored at each parallelism",
        height=380,
        margin={"l": 60, "r": 20, "t": 70, "b": 45},
    )
    return figure


def key_group_heatmap(
    frame: pd.DataFrame, exchange: str, old_parallelism: int, new_parallelism: int
) -> go.Figure:
    """Key groups coloured by owning subtask before (top) and after, with the in-flight
    records and keyed state in each group on hover."""
    groups = frame["key_group"].to_numpy()
    old = frame["old_subtask"].to_numpy()
    new = frame["new_subtask"].to_numpy()
    changes = old != new
    details = np.array(
        [
            f"{r.records:,} in-flight records ({_size(r.bytes)}), {r.state_entries:,} keys "
            "with state"
            for r in frame.itertuples()
        ]
    )
    moving = int(frame.loc[changes, "records"].sum())
    figure = go.Figure(
        go.Heatmap(
            z=[new, old],
            x=groups,
            y=[f"new ({new_parallelism})", f"old ({old_parallelism})"],
            customdata=np.stack([np.stack([new, details], -1), np.stack([old, details], -1)]),
            colorscale="Turbo",
            showscale=False,
            hovertemplate="key group %{x}: subtask %{customdata[0]}<br>%{customdata[1]}"
            "<extra></extra>",
        )
    )
    figure.update_layout(
        title=f"{exchange}: {int(changes.sum())} of {len(groups)} key groups change subtask, "
        f"carrying {moving:,} in-flight records",
        xaxis_title="key group",
        height=260,
        margin={"l": 90, "r": 20, "t": 50, "b": 45},
    )
    return figure
