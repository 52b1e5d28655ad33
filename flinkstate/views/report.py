"""A rescale's answer as one self-contained HTML page: figures and tables, plotly.js inside.

The page opens offline (design reviews happen on planes, and in tools that strip scripts from
the web); plotly.js is embedded once, every figure after the first reuses it. It is written
with :func:`flinkstate.output.write_whole`: whole or not at all.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from flinkstate.spark.rescaling import RescaleResult
from flinkstate.views.movement import (
    key_group_heatmap,
    movement_sankey,
    subtask_bars,
    sweep_figure,
)

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; margin-top: 2em; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: 2px 8px; text-align: right; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
p.note { color: #555; font-size: 0.9em; }
"""


def report_html(
    result: RescaleResult,
    key_groups: Mapping[tuple[str, int], pd.DataFrame] | None = None,
    *,
    source: str = "",
) -> str:
    """The page for ``result``; ``key_groups`` maps (keyed exchange, to) to its key-group
    table (:meth:`~flinkstate.spark.rescaling.RescalingPipeline.key_groups`)."""
    figures = _Figures()
    parts = [
        f"<h1>Rescaling the in-flight data of {html.escape(source or 'a checkpoint')}</h1>",
        f"<p>{html.escape(result.description)}</p>",
        f"<p class='note'>Rescaled: {html.escape(', '.join(result.rescaled) or 'nothing')}; "
        f"new parallelism: {', '.join(map(str, result.targets))}. Records count once, where "
        "their first byte is; a filtered record is read by a subtask that does not own it and "
        "dropped; output state copied to several new subtasks counts once for each.</p>",
        "<h2>In flight in the checkpoint</h2>",
        _table(result.persisted),
    ]
    if len(result.targets) > 1:
        parts += ["<h2>What-if over the new parallelism</h2>", figures.add(sweep_figure(result))]
    parts.append(_table(result.sweep))
    for to in result.targets:
        parts.append(f"<h2>At parallelism {to}</h2>")
        for exchange in result.exchanges:
            parts.append(f"<h3>{html.escape(exchange)}</h3>")
            parts.append(figures.add(movement_sankey(result, exchange, to)))
            parts.append(figures.add(subtask_bars(result, exchange, to)))
            frame = (key_groups or {}).get((exchange, to))
            if frame is not None:
                plan = result.plans[to][exchange]
                old_p, new_p = plan.downstream_parallelism
                parts.append(figures.add(key_group_heatmap(frame, exchange, old_p, new_p)))
            subtasks = result.subtasks
            rows = subtasks[(subtasks["to"] == to) & (subtasks["exchange"] == exchange)]
            parts.append(_table(rows.drop(columns=["to", "exchange"])))
    if not result.exchanges:
        parts.append("<p>No exchange of this job carries channel state: nothing moves.</p>")
    body = "\n".join(parts)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>flinkstate rescale report</title><style>{_STYLE}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )


class _Figures:
    """Figures as HTML fragments, plotly.js embedded in the first one only."""

    def __init__(self) -> None:
        self.count = 0

    def add(self, figure: go.Figure) -> str:
        self.count += 1
        return str(
            pio.to_html(
                figure,
                full_html=False,
                include_plotlyjs=self.count == 1,
                config={"displaylogo": False},
            )
        )


def _table(frame: pd.DataFrame) -> str:
    formatted = frame.copy()
    for column in formatted.columns:
        if pd.api.types.is_float_dtype(formatted[column]):
            formatted[column] = formatted[column].map(lambda v: f"{v:,.3f}")
        elif pd.api.types.is_integer_dtype(formatted[column]):
            formatted[column] = formatted[column].map(lambda v: f"{v:,}")
    return str(formatted.to_html(index=False, escape=True, border=0))
