"""Pictures of a rescale: key-group ownership before and after, and who reads whose state.

Key groups exist only on a keyed exchange: :func:`not_keyed_note` says why there is nothing to
draw for any other, and the widgets show that sentence instead of a chart.

Both builders are pure functions of their arguments. The widgets call them once to create a
figure and then copy the traces' data into a live ``FigureWidget``, so a figure can also be
saved or tested on its own.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import plotly.graph_objects as go

from flinkstate.keygroups import (
    check_parallelism_against_max,
    compute_operator_index_for_key_group_array,
)
from flinkstate.rescale.exchange import ExchangeRescale
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.views.palette import (
    CATEGORY_COLOURS,
    FILTERED,
    LEGEND_BELOW,
    figure_layout,
    subtask_colours,
    wrap,
)

_PLAIN = CATEGORY_COLOURS[0]
_OLD = "#7f7f7f"
_NEW = CATEGORY_COLOURS[2]


def key_group_owners(max_parallelism: int, parallelism: int) -> np.ndarray:
    """Owning subtask of every key group, in key-group order."""
    check_parallelism_against_max(parallelism, max_parallelism)
    return compute_operator_index_for_key_group_array(
        max_parallelism, parallelism, np.arange(max_parallelism)
    )


def not_keyed_note(partitioner: Partitioner | str) -> str | None:
    """Why an exchange has no key groups to draw (None for a keyBy exchange): only a keyed
    exchange routes records by key group; a chart of key groups for any other would be empty
    or, worse, look meaningful."""
    kind = Partitioner.parse(partitioner)
    if kind is Partitioner.HASH:
        return None
    return (
        f"This exchange is not keyed ({kind.datastream_call}): {_ROUTING[kind]}, so there are "
        "no key groups to show."
    )


#: how a non-keyed exchange routes its records, in a learner's words
_ROUTING = {
    Partitioner.FORWARD: "each subtask sends to the one subtask of the same index",
    Partitioner.RESCALE: "each subtask sends to a fixed few subtasks round robin",
    Partitioner.REBALANCE: "records go round robin",
    Partitioner.SHUFFLE: "records go to a random subtask",
    Partitioner.BROADCAST: "every record goes to every subtask",
    Partitioner.GLOBAL: "every record goes to subtask 0",
    Partitioner.CUSTOM: "a user function picks each record's subtask",
}


def key_group_ownership_figure(
    max_parallelism: int, old_parallelism: int, new_parallelism: int
) -> go.Figure:
    """Two bands of key groups coloured by owning subtask, old above new, with a colour bar
    naming the subtasks.

    Key groups whose owner changes are counted in the title: their keyed state moves, and
    in-flight records of those groups are read by a subtask that may have to filter them.
    """
    old = key_group_owners(max_parallelism, old_parallelism)
    new = key_group_owners(max_parallelism, new_parallelism)
    moved = int(np.count_nonzero(old != new))
    return owner_bands(
        np.arange(max_parallelism),
        old,
        new,
        (old_parallelism, new_parallelism),
        f"Key-group ownership, max parallelism {max_parallelism}: "
        f"{moved} of {max_parallelism} key groups change subtask",
    )


def owner_bands(
    groups: np.ndarray,
    old: np.ndarray,
    new: np.ndarray,
    parallelism: tuple[int, int],
    title: str,
    details: np.ndarray | None = None,
) -> go.Figure:
    """Key groups as two bands coloured by owning subtask, old above new, with a colour bar
    naming the subtasks; ``details`` (one line per group) joins the hover text."""
    old_parallelism, new_parallelism = parallelism
    if details is None:
        customdata = np.stack([new, old])
        hover = "key group %{x}<br>subtask %{customdata}<extra>%{y}</extra>"
    else:
        customdata = np.stack([np.stack([new, details], -1), np.stack([old, details], -1)])
        hover = "key group %{x}: subtask %{customdata[0]}<br>%{customdata[1]}<extra>%{y}</extra>"
    figure = go.Figure(
        go.Heatmap(
            z=[new, old],
            x=groups,
            y=[f"new ({new_parallelism})", f"old ({old_parallelism})"],
            customdata=customdata,
            hovertemplate=hover,
            **subtask_colours(max(old_parallelism, new_parallelism)),
        )
    )
    figure.update_layout(
        figure_layout(
            title,
            subtitle="each key group's owning subtask before (old) and after (new) rescaling",
            height=200,
            left=80,
            xaxis={"title": {"text": "key group"}},
        )
    )
    return figure


def state_reading_graph(plan: ExchangeRescale) -> nx.DiGraph:
    """Old downstream subtasks -> new downstream subtasks that read their input state.

    An edge is ``filtered`` when the new subtask shares that old subtask with others and must
    drop the records that now belong elsewhere.
    """
    old_p, new_p = plan.downstream_parallelism
    graph = nx.DiGraph()
    for old in range(old_p):
        graph.add_node(("old", old), layer=0, index=old, label=f"old {old}")
    for new in range(new_p):
        graph.add_node(("new", new), layer=1, index=new, label=f"new {new}")
    for subtask in plan.downstream:
        for old in subtask.input_state_from:
            graph.add_edge(
                ("old", old),
                ("new", subtask.subtask),
                filtered=subtask.descriptor.is_ambiguous(old),
            )
    return graph


def state_reading_figure(plan: ExchangeRescale) -> go.Figure:
    """The graph of :func:`state_reading_graph`, old subtasks left, new right.

    Positions come from the subtask index, never from a force layout, so that changing a
    parameter does not make nodes jump.
    """
    graph = state_reading_graph(plan)
    old_p, new_p = plan.downstream_parallelism
    tallest = max(old_p, new_p, 1)

    def position(node: tuple[str, int]) -> tuple[float, float]:
        side, index = node
        count = old_p if side == "old" else new_p
        offset = (tallest - count) / 2
        return (0.0 if side == "old" else 1.0, -(index + offset))

    traces: list[go.Scatter] = []
    for filtered, colour, name in ((False, _PLAIN, "reads"), (True, FILTERED, "reads, filters")):
        xs: list[float | None] = []
        ys: list[float | None] = []
        for source, target, data in graph.edges(data=True):
            if data["filtered"] is filtered:
                (x0, y0), (x1, y1) = position(source), position(target)
                xs += [x0, x1, None]
                ys += [y0, y1, None]
        traces.append(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                name=name,
                hoverinfo="skip",
                line={"color": colour, "width": 2, "dash": "dot" if filtered else "solid"},
            )
        )
    nodes = list(graph.nodes)
    traces.append(
        go.Scatter(
            x=[position(n)[0] for n in nodes],
            y=[position(n)[1] for n in nodes],
            mode="markers+text",
            text=[graph.nodes[n]["label"] for n in nodes],
            textposition=["middle left" if n[0] == "old" else "middle right" for n in nodes],
            marker={
                "size": 16,
                "color": [_OLD if n[0] == "old" else _NEW for n in nodes],
            },
            textfont={"size": 12},
            hovertext=[wrap(_node_hover(plan, n)) for n in nodes],
            hoverinfo="text",
            name="subtasks",
            showlegend=False,
        )
    )
    kind = plan.partitioner
    title = (
        f"{kind.datastream_call}: who reads whose input channel state "
        f"({old_p} -> {new_p}, mapper {kind.downstream_mapper.name})"
    )
    if not plan.carries_channel_state:
        title = f"{kind.datastream_call}: no in-flight data (barriers are aligned on this exchange)"
    figure = go.Figure(traces)
    figure.update_layout(
        figure_layout(
            title,
            height=max(200, 40 * tallest + 40),
            left=20,
            right=20,
            bottom=40,
            xaxis={"visible": False, "range": [-0.4, 1.4]},
            yaxis={"visible": False},
            legend=dict(LEGEND_BELOW),
        )
    )
    return figure


def _node_hover(plan: ExchangeRescale, node: tuple[str, int]) -> str:
    side, index = node
    if side == "old":
        readers = [d.subtask for d in plan.downstream if index in d.input_state_from]
        return f"old subtask {index}<br>read by new {readers or 'nobody'}"
    subtask = plan.downstream[index]
    vcs = ", ".join(
        f"({vc.old_subtask},{vc.old_channel}){'*' if vc.filtered else ''}"
        for vc in subtask.all_virtual_channels
    )
    return (
        f"new subtask {index}<br>input state of old {list(subtask.input_state_from)}"
        f"<br>virtual channels: {vcs or 'none'}"
    )
