"""Edges of a drawn graph as one plotly line trace: polylines joined by gaps.

Plotly draws one trace far faster than one per edge, and a ``None`` between two polylines
lifts the pen; every graph view draws its edges this way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

Point = tuple[float, float]


def lines_trace(
    polylines: Iterable[Sequence[Point]], name: str, line: dict[str, Any]
) -> dict[str, Any]:
    """A ``scatter`` trace (plotly JSON) drawing each polyline, not hoverable."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for polyline in polylines:
        for x, y in polyline:
            xs.append(x)
            ys.append(y)
        xs.append(None)
        ys.append(None)
    return {
        "type": "scatter",
        "x": xs,
        "y": ys,
        "mode": "lines",
        "name": name,
        "hoverinfo": "skip",
        "line": line,
    }
