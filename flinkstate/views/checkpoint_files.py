"""Figures of a checkpoint Flink wrote (from ``flinkcheckpoint.summary.summarize``): where its
in-flight bytes are, channel by channel, and how many records each logical channel holds."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

_SIDES = {"input": "#1f77b4", "output": "#ff7f0e"}


def in_flight_figure(summary: dict[str, Any]) -> go.Figure:
    """Bytes of every logical channel (upstream subtask -> downstream subtask), stacked: the
    downstream's input state below the upstream's output state; a marker where a record is
    split between the two."""
    channels = summary["logical_channels"]
    labels = [
        f"{c['edge']}<br>{c['upstream_subtask']} -> {c['downstream_subtask']}" for c in channels
    ]
    figure = go.Figure()
    for side in ("input", "output"):
        figure.add_trace(
            go.Bar(
                name=f"{side} state",
                x=labels,
                y=[c[f"{side}_bytes"] for c in channels],
                marker_color=_SIDES[side],
                hovertemplate="%{x}<br>%{y:,} bytes of " + side + " state<extra></extra>",
            )
        )
    split = [c for c in channels if c["split_record"]]
    figure.add_trace(
        go.Scatter(
            name="a record split between the two",
            x=[labels[channels.index(c)] for c in split],
            y=[c["input_bytes"] for c in split],
            mode="markers",
            marker={"symbol": "line-ew-open", "size": 28, "color": "#d62728", "line": {"width": 3}},
            hoverinfo="skip",
        )
    )
    figure.update_layout(
        barmode="stack",
        title=f"In-flight bytes of checkpoint {summary['checkpoint_id']} per logical channel",
        yaxis_title="bytes",
        legend={"orientation": "h", "y": -0.25},
        height=420,
    )
    return figure


def records_figure(summary: dict[str, Any]) -> go.Figure:
    """Whole records per logical channel."""
    channels = summary["logical_channels"]
    figure = go.Figure(
        go.Bar(
            x=[f"{c['upstream_subtask']} -> {c['downstream_subtask']}" for c in channels],
            y=[c["records"] for c in channels],
            marker_color="#2ca02c",
            hovertemplate="%{y:,} records<extra></extra>",
        )
    )
    figure.update_layout(
        title="Records per logical channel (upstream subtask -> downstream subtask)",
        yaxis_title="records",
        height=320,
    )
    return figure


def key_group_figure(rows: list[dict[str, Any]], title: str = "") -> go.Figure:
    """Keyed state entries per key group, a colour per subtask: rows as the dataset's
    ``keyed_state`` table has them (``subtask``, ``key_group``, ``entries``)."""
    figure = go.Figure()
    for subtask in sorted({r["subtask"] for r in rows}):
        mine = [r for r in rows if r["subtask"] == subtask]
        figure.add_trace(
            go.Bar(
                name=f"subtask {subtask}",
                x=[r["key_group"] for r in mine],
                y=[r["entries"] for r in mine],
                hovertemplate="key group %{x}: %{y:,} entries<extra>subtask "
                + str(subtask)
                + "</extra>",
            )
        )
    figure.update_layout(
        title=title or "Keyed state entries per key group",
        xaxis_title="key group",
        yaxis_title="entries",
        bargap=0.1,
        legend={"orientation": "h", "y": -0.25},
        height=380,
    )
    return figure
