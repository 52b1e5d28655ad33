"""Figures of a checkpoint Flink wrote (from ``flinkcheckpoint.summary.summarize``): where its
in-flight bytes are, channel by channel, and how many records each logical channel holds."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from flinkstate.views.palette import (
    ALERT,
    CATEGORY_COLOURS,
    LEGEND_BELOW,
    STATE_SIDE_COLOURS,
    figure_layout,
    subtask_colour,
)


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
                marker_color=STATE_SIDE_COLOURS[side],
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
            marker={"symbol": "line-ew-open", "size": 28, "color": ALERT, "line": {"width": 3}},
            hoverinfo="skip",
        )
    )
    figure.update_layout(
        figure_layout(
            f"In-flight bytes of checkpoint {summary['checkpoint_id']} per logical channel",
            subtitle="the downstream's input state below the upstream's output state",
            height=320,
            bottom=120,
            barmode="stack",
            yaxis={"title": {"text": "bytes"}},
            legend={**LEGEND_BELOW, "traceorder": "normal"},
        )
    )
    return figure


def records_figure(summary: dict[str, Any]) -> go.Figure:
    """Whole records per logical channel."""
    channels = summary["logical_channels"]
    figure = go.Figure(
        go.Bar(
            x=[f"{c['upstream_subtask']} -> {c['downstream_subtask']}" for c in channels],
            y=[c["records"] for c in channels],
            marker_color=CATEGORY_COLOURS[2],
            hovertemplate="%{x}: %{y:,} records<extra></extra>",
        )
    )
    figure.update_layout(
        figure_layout(
            "Records per logical channel (upstream subtask -> downstream subtask)",
            height=260,
            yaxis={"title": {"text": "records"}},
        )
    )
    return figure


def key_group_figure(rows: list[dict[str, Any]], title: str = "") -> go.Figure:
    """Keyed state entries per key group, a colour per subtask: rows as the dataset's
    ``keyed_state`` table has them (``subtask``, ``key_group``, ``entries``)."""
    figure = go.Figure()
    subtasks = sorted({r["subtask"] for r in rows})
    for subtask in subtasks:
        mine = [r for r in rows if r["subtask"] == subtask]
        figure.add_trace(
            go.Bar(
                name=f"subtask {subtask}",
                marker_color=subtask_colour(subtask, max(subtasks) + 1),
                x=[r["key_group"] for r in mine],
                y=[r["entries"] for r in mine],
                hovertemplate="key group %{x}: %{y:,} entries<extra>subtask "
                + str(subtask)
                + "</extra>",
            )
        )
    figure.update_layout(
        figure_layout(
            title or "Keyed state entries per key group",
            subtitle="a colour per subtask, as in the key-group heatmaps",
            height=300,
            bottom=95,
            bargap=0.1,
            xaxis={"title": {"text": "key group"}},
            yaxis={"title": {"text": "entries"}},
            legend=dict(LEGEND_BELOW),
        )
    )
    return figure
