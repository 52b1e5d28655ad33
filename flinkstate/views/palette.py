"""How every figure looks: one colour per owner kind, node kind and actor kind, and the layout,
hover labels and tables every view shares.

A learner meets the same buffer in several pictures (the timelines, the ownership graph, the
comparison panel), so each owner kind has one colour everywhere. The kinds come from
:data:`~flinkstate.runtime.world.metrics.OWNER_KINDS` and fall into a handful of groups a reader can
follow (in pools, in flight in the network, at the consumer, in recovery, being persisted);
each group has one hue from the Okabe-Ito palette, which stays distinct for colour-blind
readers, and its kinds are lighter and darker shades of it, so they differ by lightness too.

Figures are sized by their container (plotly's ``autosize``, never a fixed width): a notebook
column, half of one, or a report page. Their titles sit below plotly's mode bar and long text
is wrapped, because plotly neither moves titles out of the mode bar's way nor wraps text.
"""

from __future__ import annotations

import html
import math
import numbers
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from flinkstate.runtime.actor_ref import ActorKind
from flinkstate.runtime.buffer.owners import OwnerKind, OwnerPlace, kinds_at
from flinkstate.runtime.world.metrics import OWNER_KINDS, POOL_KINDS, RECOVERY_KINDS

IN_POOLS = "in pools"
IN_FLIGHT = "in flight in the network"
AT_CONSUMER = "at the consumer"
IN_RECOVERY = "in recovery"
PERSISTING = "being persisted"
#: a group's hue (Okabe-Ito), in the order a buffer travels
GROUP_COLOURS: Mapping[str, str] = {
    IN_POOLS: "#7f7f7f",
    IN_FLIGHT: "#0072b2",
    AT_CONSUMER: "#009e73",
    IN_RECOVERY: "#e69f00",
    PERSISTING: "#cc79a7",
}
#: owner kinds on the producer's side of an exchange (being filled, queued in a subpartition)
_PRODUCER_KINDS = kinds_at(OwnerPlace.PRODUCER)
#: owner kinds held for a checkpoint's channel state
_PERSISTING_KINDS = kinds_at(OwnerPlace.WRITER)
#: what is wrong: a waits-for cycle, a blocked place, an expired checkpoint
ALERT = "#d62728"
#: neutral grey for what is no owner kind (the heap, the checkpoint coordinator)
NEUTRAL = "#a0a0a0"
#: what a tour's stop points at on the canvas: magenta, a hue no state, owner kind or source
#: subtask takes (ALERT's red was read as "blocked"), drawn as corner marks, a shape no state has
HIGHLIGHT = "#ff00ff"


def owner_group(kind: OwnerKind) -> str:
    """Where a segment of this owner kind is, in a learner's words."""
    if kind in POOL_KINDS:
        return IN_POOLS
    if kind in RECOVERY_KINDS:
        return IN_RECOVERY
    if kind in _PRODUCER_KINDS:
        return IN_FLIGHT
    if kind in _PERSISTING_KINDS:
        return PERSISTING
    return AT_CONSUMER  # channels' buffers and the task's deserializer


#: group -> its owner kinds, in OWNER_KINDS order
OWNER_GROUPS: Mapping[str, tuple[OwnerKind, ...]] = {
    group: tuple(k for k in OWNER_KINDS if owner_group(k) == group) for group in GROUP_COLOURS
}


def shade(colour: str, amount: float) -> str:
    """``colour`` mixed with white (``amount`` > 0) or black (< 0) by that share: a tint or a
    shade of the same hue, as muted as the colour itself."""
    channels = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    target = 255 if amount > 0 else 0
    share = min(abs(amount), 0.9)
    return "#" + "".join(f"{round(c + (target - c) * share):02x}" for c in channels)


#: tint/shade steps for the kinds of one group: the group's own colour first, then away from it
_STEPS = (0.0, 0.55, -0.35, 0.28, -0.6, 0.78, -0.8)


def _shades(colour: str, count: int) -> list[str]:
    if count > len(_STEPS):
        raise ValueError(f"{count} owner kinds in one group: add shades to the palette")
    return [shade(colour, step) for step in _STEPS[:count]]


#: every owner kind of the model -> its colour (a shade of its group's)
OWNER_COLOURS: Mapping[OwnerKind, str] = {
    kind: colour
    for group, kinds in OWNER_GROUPS.items()
    for kind, colour in zip(kinds, _shades(GROUP_COLOURS[group], len(kinds)), strict=True)
}

#: node kinds of the ownership graph, in legend order, coloured by the owner kind they hold
NODE_COLOURS: Mapping[str, str] = {
    "network-pool": OWNER_COLOURS[OwnerKind.NETWORK_POOL],
    "task": OWNER_COLOURS[OwnerKind.DESERIALIZER],
    "result-partition": OWNER_COLOURS[OwnerKind.POOL],
    "subpartition": OWNER_COLOURS[OwnerKind.QUEUE],
    "remote-channel": OWNER_COLOURS[OwnerKind.RECEIVED],
    # a local channel reads its producer's subpartition and holds nothing of its own
    "local-channel": shade(GROUP_COLOURS[AT_CONSUMER], 0.8),
    "recovered-channel": OWNER_COLOURS[OwnerKind.RECOVERED],
    # the gate's pool (owner kind "pool", like a partition's) in a darker grey: it sits between
    # the channels and the task and must stand apart from both
    "input-gate": shade(GROUP_COLOURS[IN_POOLS], -0.3),
    "channel-state-reader": OWNER_COLOURS[OwnerKind.PRE_FILTER],
    "drainer": OWNER_COLOURS[OwnerKind.SPILLING],
    "channel-state-writer": OWNER_COLOURS[OwnerKind.CHANNEL_STATE_WRITER],
    "heap": shade(NEUTRAL, 0.8),  # memory outside the network pools: nearly white
}
#: the actors of a waits-for graph by kind (the coordinator and request-partitions mails are
#: drawn neutral)
_ACTOR_COLOURS: Mapping[str, str] = {
    ActorKind.TASK: NODE_COLOURS["task"],
    ActorKind.NETTY: GROUP_COLOURS[IN_FLIGHT],
    ActorKind.READER: NODE_COLOURS["channel-state-reader"],
    ActorKind.WRITER: NODE_COLOURS["channel-state-writer"],
    ActorKind.DRAINER: NODE_COLOURS["drainer"],
}
#: the two sides of a channel's persisted state (the consumer's input channels, the producer's
#: subpartitions): blue and orange, as the notebooks describe them
STATE_SIDE_COLOURS: Mapping[str, str] = {"input": "#0072b2", "output": "#e69f00"}
#: the segments the last step moved (the notebooks call them orange arrows)
MOVE = "#ff7f0e"
#: bytes a restored subtask keeps, and those it reads only to drop (another subtask owns them)
KEPT = "#56b4e9"
FILTERED = "#d62728"  # red, as the notebooks call it; apart from the sky blue by lightness too
#: series that are no kind (operators, subtasks, connections): Okabe-Ito, then Tol's muted
CATEGORY_COLOURS = (
    "#0072b2",
    "#e69f00",
    "#009e73",
    "#cc79a7",
    "#56b4e9",
    "#d55e00",
    "#f0e442",
    "#332288",
    "#882255",
    "#117733",
    "#999933",
    "#44aa99",
)


def translucent(colour: str, alpha: float) -> str:
    """``colour`` as ``rgba(...)`` with that opacity (sankey bands over one another)."""
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def actor_colour(kind: str) -> str:
    """Colour of an actor of this kind (an ``ActorKind``'s value: ``task``, ``netty``, ...)."""
    return _ACTOR_COLOURS.get(kind, NEUTRAL)


def subtask_colours(count: int) -> dict[str, Any]:
    """Heatmap settings colouring subtask indices 0..count-1, with a colour bar naming them.

    Up to a dozen subtasks each get a categorical colour, so neighbours never look alike;
    beyond that a continuous scale (viridis, readable without colour vision) with ticks.
    """
    count = max(count, 1)
    bar: dict[str, Any] = {"title": {"text": "subtask"}, "thickness": 14}
    if count > len(CATEGORY_COLOURS):
        return {"colorscale": "Viridis", "zmin": 0, "zmax": count - 1, "colorbar": bar}
    scale: list[tuple[float, str]] = []
    for index in range(count):
        colour = CATEGORY_COLOURS[index]
        scale += [(index / count, colour), ((index + 1) / count, colour)]
    bar.update(tickvals=list(range(count)), ticktext=[str(i) for i in range(count)])
    return {"colorscale": scale, "zmin": -0.5, "zmax": count - 0.5, "colorbar": bar}


def subtask_colour(index: int, count: int) -> str:
    """The colour :func:`subtask_colours` gives subtask ``index`` of ``count`` (for bars)."""
    if count > len(CATEGORY_COLOURS):
        return CATEGORY_COLOURS[index % len(CATEGORY_COLOURS)]
    return CATEGORY_COLOURS[index]


# -- layout --------------------------------------------------------------------------------------

FONT_SIZE = 12
TITLE_SIZE = 15
#: the height plotly's mode bar takes at the top right; a title must start below it
MODEBAR = 34
#: characters per line of a wrapped title and of hover text (a half-width column holds ~70)
TITLE_CHARACTERS = 90
HOVER_CHARACTERS = 64
#: a horizontal legend at the very bottom of the figure, in the bottom margin (give it room):
#: below the axis titles whatever the height, wrapping into rows in a narrow column
LEGEND_BELOW: Mapping[str, Any] = {
    "orientation": "h",
    "x": 0,
    "xanchor": "left",
    "y": 0,
    "yref": "container",
    "yanchor": "bottom",
}
HOVERLABEL: Mapping[str, Any] = {
    "align": "left",
    "namelength": -1,
    "bgcolor": "white",
    "bordercolor": "#888888",
    "font": {"size": FONT_SIZE, "color": "#222222"},
}


def wrap(text: str, width: int = HOVER_CHARACTERS) -> str:
    """Plotly text (lines joined by ``<br>``) with every line broken at spaces to ``width``
    characters: plotly never wraps, so long hover lines leave the plot and titles run under
    the mode bar."""
    lines = text.split("<br>")
    # most lines are short, and the ownership graph's hover texts are wrapped at every step
    if all(len(line) <= width for line in lines):
        return text
    wrapped = [
        line
        if len(line) <= width
        else "<br>".join(textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False))
        or line
        for line in lines
    ]
    return "<br>".join(wrapped)


def figure_layout(
    title: str,
    *,
    height: int,
    subtitle: str = "",
    left: int = 60,
    right: int = 24,
    bottom: int = 50,
    above: int = 0,
    **extra: Any,
) -> dict[str, Any]:
    """A layout as plotly JSON that fills its container's width, with the title (and a smaller
    subtitle) wrapped, left-aligned above the plot and below the mode bar; ``above`` leaves
    that many pixels more between title and plot (for subplot titles); ``extra`` is merged in
    last (axes, legend, annotations)."""
    title = wrap(title, TITLE_CHARACTERS)
    subtitle = wrap(subtitle, round(TITLE_CHARACTERS * TITLE_SIZE / FONT_SIZE)) if subtitle else ""
    lines = title.count("<br>") + 1
    sublines = subtitle.count("<br>") + 1 if subtitle else 0
    top = MODEBAR + 6 + round(lines * TITLE_SIZE * 1.3 + sublines * FONT_SIZE * 1.35) + above
    total = height + top
    heading: dict[str, Any] = {
        "text": title,
        "font": {"size": TITLE_SIZE},
        "x": 0,
        "xref": "paper",
        "xanchor": "left",
        # hung from just below the mode bar (plotly anchors a title's first line, not its block)
        "y": 1 - (MODEBAR + 2) / total,
        "yref": "container",
        "yanchor": "top",
    }
    if subtitle:  # in the title's text: plotly's own subtitle hangs into the plot
        style = f"font-size:{FONT_SIZE}px;color:#555555"
        heading["text"] += f"<br><span style='{style}'>{subtitle}</span>"
    return {
        "autosize": True,
        "height": total,
        "title": heading,
        "font": {"size": FONT_SIZE},
        "margin": {"l": left, "r": right, "t": top, "b": bottom},
        "hoverlabel": dict(HOVERLABEL),
        **extra,
    }


# -- tables --------------------------------------------------------------------------------------

#: long names wrap (at spaces) rather than push the table out of a notebook column
_CELL = "padding:2px 10px;border-bottom:1px solid #ddd;text-align:{align};max-width:22em"


def html_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A small HTML table whose headers line up with their columns: the first column (names)
    left-aligned, the others (figures) right-aligned, header and cells alike; numbers with
    thousands separators, missing values as "-". Styles are inline: a widget's HTML gets no
    notebook table styles."""

    def cell(tag: str, index: int, value: object) -> str:
        style = _CELL.format(align="left" if index == 0 else "right")
        if tag == "th":
            style += ";background:#f4f4f4"
        return f"<{tag} style='{style}'>{html.escape(_text(value))}</{tag}>"

    head = "".join(cell("th", i, name) for i, name in enumerate(header))
    body = "".join(
        "<tr>" + "".join(cell("td", i, value) for i, value in enumerate(row)) + "</tr>"
        for row in rows
    )
    return (
        "<table style='border-collapse:collapse;font-size:13px;margin:4px 0'>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def _text(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        value = float(value)
        if math.isnan(value):
            return "-"
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)
