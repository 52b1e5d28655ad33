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
from flinkstate.views.palette import (
    CATEGORY_COLOURS,
    FILTERED,
    KEPT,
    LEGEND_BELOW,
    STATE_SIDE_COLOURS,
    figure_layout,
    translucent,
    wrap,
)
from flinkstate.views.rescaling import owner_bands

_BANDS = {side: translucent(colour, 0.6) for side, colour in STATE_SIDE_COLOURS.items()}


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
        wrap(
            f"{r.side} state of old subtask {r.old_subtask} read by new subtask "
            f"{r.new_subtask}<br>{r.buffers:,} buffers, {_size(r.bytes)}<br>{r.records:,} "
            f"records ({r.filtered_records:,} filtered out), {r.spanning_records:,} spanning "
            "buffers"
        )
        for r in rows.itertuples()
    ]
    figure = go.Figure(
        go.Sankey(
            arrangement="snap",
            node={
                "label": labels,
                "pad": 12,
                "color": ["#7f7f7f"] * old_p + [CATEGORY_COLOURS[2]] * new_p,
            },
            link={
                "source": rows["old_subtask"].tolist(),
                "target": (rows["new_subtask"] + old_p).tolist(),
                "value": rows["bytes"].tolist(),
                "color": [_BANDS[side] for side in rows["side"]],
                "customdata": hover,
                "hovertemplate": "%{customdata}<extra></extra>",
            },
        )
    )
    moved = int(sweep["moved_bytes"].iloc[0])
    delivered = int(sweep["delivered_bytes"].iloc[0])
    # the sankey has no legend: two invisible markers give the band colours one
    for side in ("input", "output"):
        figure.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=f"{side} state",
                marker={"size": 12, "symbol": "square", "color": STATE_SIDE_COLOURS[side]},
                hoverinfo="skip",
            )
        )
    figure.update_layout(
        figure_layout(
            f"{exchange} at {old_p} -> {new_p}: {_size(delivered)} read back, "
            f"{_size(moved)} by another subtask",
            subtitle="old consumer subtasks (left) to the new ones that read their in-flight "
            "data (right), a band as wide as its bytes",
            height=max(280, 30 * max(old_p, new_p)),
            left=20,
            right=20,
            bottom=40,
            xaxis={"visible": False},
            yaxis={"visible": False},
            plot_bgcolor="white",
            legend=dict(LEGEND_BELOW),
        )
    )
    figure.update_traces(textfont={"size": 12}, selector={"type": "sankey"})
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
        wrap(
            f"{r.buffers:,} buffers ({_size(r.input_bytes)} input state, "
            f"{_size(r.output_bytes)} upstream output state)<br>{r.records:,} records, "
            f"{r.filtered_records:,} filtered ({s:.0%})<br>{r.virtual_channels} virtual "
            f"channels ({r.filtering_virtual_channels} filtering, "
            f"{r.virtual_channels_with_data} with data)<br>reads the input state of old "
            f"subtask(s) {r.reads_from or 'none'}"
        )
        for r, s in zip(rows.itertuples(), share, strict=True)
    ]
    names = [str(s) for s in rows["subtask"]]
    figure = go.Figure(
        [
            go.Bar(
                name="kept",
                x=names,
                y=kept,
                marker_color=KEPT,
                customdata=details,
                hovertemplate="subtask %{x}: %{y:,} bytes kept<br>%{customdata}<extra></extra>",
            ),
            go.Bar(
                name="filtered out",
                x=names,
                y=filtered,
                marker_color=FILTERED,
                text=[f"{s:.0%}" if s else "" for s in share],
                textposition="outside",
                customdata=details,
                hovertemplate="subtask %{x}: %{y:,} bytes filtered<br>%{customdata}<extra></extra>",
            ),
        ]
    )
    operator = rows["operator"].iloc[0] if len(rows) else exchange
    figure.update_layout(
        figure_layout(
            f"What each new {operator} subtask reads back at parallelism {to}",
            subtitle="bytes kept and bytes read only to be filtered out; the label is the share "
            "of its records filtered out",
            height=300,
            bottom=85,
            barmode="stack",
            xaxis={"title": {"text": f"new {operator} subtask"}},
            yaxis={"title": {"text": "bytes"}},
            legend={**LEGEND_BELOW, "traceorder": "normal"},
        )
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
        horizontal_spacing=0.1,
        subplot_titles=("bytes read back on recovery", "records read only to be filtered out"),
    )
    for index, (name, group) in enumerate(frame.groupby("exchange", sort=False)):
        group = group.sort_values("to")
        colour = CATEGORY_COLOURS[index % len(CATEGORY_COLOURS)]
        figure.add_trace(
            go.Scatter(
                x=group["to"],
                y=group["delivered_bytes"],
                name=f"{name}: all subtasks",
                mode="lines+markers",
                line={"color": colour},
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
                line={"dash": "dot", "color": colour},
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
                line={"color": colour, "dash": "dash"},
                customdata=group["filtered_share"],
                hovertemplate="parallelism %{x}: %{y:,} records (%{customdata:.1%})<extra></extra>",
            ),
            row=1,
            col=2,
        )
    figure.update_xaxes(title_text="new parallelism", dtick=1)
    figure.update_yaxes(title_text="bytes", row=1, col=1)
    figure.update_yaxes(title_text="records", row=1, col=2)
    figure.update_annotations(font={"size": 13}, yshift=4)  # the panels' titles
    figure.update_layout(
        figure_layout(
            "What-if: the same checkpoint restored at each parallelism",
            height=300,
            bottom=110,
            above=24,
            legend=dict(LEGEND_BELOW),
        )
    )
    return figure


def key_group_heatmap(
    frame: pd.DataFrame, exchange: str, old_parallelism: int, new_parallelism: int
) -> go.Figure:
    """Key groups coloured by owning subtask before (top) and after, a colour bar naming the
    subtasks, with the in-flight records and keyed state in each group on hover.

    ``frame`` is a keyed exchange's key-group table
    (:meth:`~flinkstate.spark.rescaling.RescalingPipeline.key_groups`); any other exchange has
    no key groups (:func:`~flinkstate.views.rescaling.not_keyed_note` says why).
    """
    if frame.empty:
        raise InvalidParameterError(f"{exchange} has no key groups to draw")
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
    return owner_bands(
        groups,
        old,
        new,
        (old_parallelism, new_parallelism),
        f"{exchange}: {int(changes.sum())} of {len(groups)} key groups change subtask, "
        f"carrying {moving:,} in-flight records",
        details,
    )
