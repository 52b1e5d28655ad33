"""Who holds every network buffer at one step: a networkx graph of the world, drawn with plotly.

Nodes are the places a memory segment can be (network pools, result partitions and their
subpartitions, input channels and gates, tasks' deserializers, channel-state readers and
writers, the heap); each carries how many segments it holds and what a reader of Flink's code
would want to see on hover. Edges are the data paths (subpartition to channel, local or
remote) plus the segment moves of the last step. Positions come from the job's structure alone
(:class:`OwnershipLayout`): upstream on the left, downstream on the right, one lane per subtask,
so that stepping never makes a node jump.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

import networkx as nx
import plotly.graph_objects as go

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.buffer.buffer import HEAP, Buffer, LocalBufferPool, NetworkBufferPool
from flinkstate.runtime.buffer.owners import Owner, OwnerKind, OwnerPlace
from flinkstate.runtime.checkpoint.channel.channel_state_reader import ChannelStateReader
from flinkstate.runtime.checkpoint.channel.channel_state_writer import ChannelStateWriter
from flinkstate.runtime.checkpoint.channel.fetched_channel_state import FetchedChannelStateDrainer
from flinkstate.runtime.partition.consumer.input_gate import Channel, Gate
from flinkstate.runtime.partition.result_partition import ResultPartition, Subpartition
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event
from flinkstate.views.lines import lines_trace
from flinkstate.views.palette import ALERT, MOVE, NODE_COLOURS, figure_layout, wrap

#: node kinds, in legend order, with their colours: each that of the owner kind it holds, as in
#: the timelines (the palette is the one source)
NODE_KINDS: Mapping[str, str] = NODE_COLOURS
_BLOCKED = ALERT
#: horizontal distance between two operator columns (each column has four node columns)
_COLUMN = 6.0
_LANE_SPREAD = 0.8


def owner_node(world: NetworkWorld, owner: Owner) -> str:
    """The graph node that holds segments of ``owner`` (an entry of the world's owner array)."""
    kind, holder = owner
    place = owner.place
    if place is OwnerPlace.POOLS:
        if kind is OwnerKind.NETWORK_POOL:
            return str(owner)  # the pool's name (``network_pool_name``)
        return ("input-gate " if holder in world.gates else "result-partition ") + holder
    if place is OwnerPlace.PRODUCER:
        return f"subpartition {holder}"
    if place is OwnerPlace.CHANNEL:
        return f"channel {holder}"
    if place is OwnerPlace.READER:
        return world.readers[world.channels[holder].task].name
    if place is OwnerPlace.WRITER:
        return str(owner)  # the writer's name (``assign_writers``)
    return holder  # the deserializer's task, by its name ("task X[i]")


def task_node(task: Task) -> str:
    """The node of a task (its deserializer holds the buffer it reads)."""
    return task.name


def partition_node(partition: ResultPartition) -> str:
    return f"result-partition {partition.name}"


def subpartition_node(sub: Subpartition) -> str:
    return f"subpartition {sub.name}"


def gate_node(gate: Gate) -> str:
    return f"input-gate {gate.name}"


def channel_node(channel: Channel) -> str:
    return f"channel {channel.name}"


@dataclass(frozen=True)
class OwnershipLayout:
    """Where every node of a world is drawn; computed once per job, reused at every step."""

    positions: Mapping[str, tuple[float, float]]
    #: x position -> operator name, for the axis labels
    columns: Mapping[float, str]
    height: int

    @classmethod
    def of(cls, world: NetworkWorld) -> OwnershipLayout:
        graph = world.graph
        depth: dict[str, int] = {}
        for name in graph.topological_order():
            inputs = graph.inputs_of(name)
            depth[name] = 1 + max((depth[e.upstream] for e in inputs), default=-1)
        # operators at the same depth share a column and are stacked in blocks of lanes
        lane_start: dict[str, int] = {}
        used: Counter[int] = Counter()
        for name in graph.topological_order():
            lane_start[name] = used[depth[name]]
            used[depth[name]] += graph.operator(name).parallelism + 1
        lanes = max(used.values(), default=1)
        positions: dict[str, tuple[float, float]] = {}
        columns: dict[float, str] = {}
        for name in graph.topological_order():
            x = _COLUMN * depth[name] + 2.0
            columns[x] = name if x not in columns else f"{columns[x]}, {name}"
            for task in (t for t in world.tasks.values() if t.operator == name):
                y = -float(lane_start[name] + task.index)
                positions[task_node(task)] = (x, y)
                _place(positions, [partition_node(p) for p in task.partitions], x + 1, y)
                subs = [s for p in task.partitions for s in p.subpartitions]
                _place(positions, [subpartition_node(s) for s in subs], x + 2, y)
                gate_nodes = [gate_node(g) for g in task.gates]
                _place(positions, gate_nodes, x - 1, y, spread=0.5)
                channels = [c for g in task.gates for c in g.channels]
                _place(positions, [channel_node(c) for c in channels], x - 2, y)
                if task.name in world.readers:
                    positions[world.readers[task.name].name] = (x - 1.0, y - 0.42)
                if task.name in world.drainers:
                    positions[world.drainers[task.name].name] = (x - 1.0, y + 0.42)
        # memory on the left: the network pools (and the heap below them), then the writers
        left = -_COLUMN / 2
        for x, names in (
            (left, [*sorted(world.network_pools), "heap"]),
            (left + 1.5, sorted(world.writers)),
        ):
            gap = max(0.9, (lanes - 2) / max(len(names) - 1, 1))
            for index, name in enumerate(names):
                positions[name] = (x, -index * gap)
        bottom = min(y for _, y in positions.values())
        return cls(positions, columns, height=int(max(380, 75 * (1 - bottom) + 150)))


def _place(
    positions: dict[str, tuple[float, float]],
    nodes: list[str],
    x: float,
    y: float,
    spread: float = _LANE_SPREAD,
) -> None:
    """Spread ``nodes`` evenly over one lane, in order, top to bottom."""
    count = len(nodes)
    for index, node in enumerate(nodes):
        offset = 0.0 if count == 1 else spread * (index / (count - 1) - 0.5)
        positions[node] = (x, y - offset)


@dataclass(frozen=True)
class OwnershipPlaces:
    """The ownership graph's nodes and edges as plain dicts, in the order networkx keeps them
    (a node's first mention, edges by source in that order, then as added), so that a scene
    is built from them without a graph and equals one built from it.

    ``nodes`` maps every node to its attributes, or to None where it was left out (not
    shown: its details, most of the graph's cost at P = 64, were not computed); ``edges``
    maps a source to its targets and the edge's attributes (a move over a data path replaces
    the path's kind, as networkx's ``add_edge`` does)."""

    nodes: Mapping[str, Mapping[str, Any] | None]
    edges: Mapping[str, Mapping[str, Mapping[str, Any]]]


def ownership_places(
    world: NetworkWorld,
    event: Event | None = None,
    layout: OwnershipLayout | None = None,
    shown: Callable[[str], bool] | None = None,
    held: Mapping[str, Counter[OwnerKind]] | None = None,
    tasks: Collection[str] | None = None,
) -> OwnershipPlaces:
    """The world at its current step as nodes that hold segments and edges that carry data;
    nodes ``shown`` rejects are left out (None), their edges kept.

    ``event`` (the step just taken) adds its segment moves as ``move`` edges with a count.
    ``held``: :func:`held_by_node`, where the caller keeps it up to date from the steps'
    moves (counting 8,000 segments at every step was most of a page's cost). ``tasks``: the
    keys of the tasks whose places are wanted (the others' are not walked at all), if not all:
    then only nodes are made, no edges (a caller that keeps the paths from a whole graph).
    """
    layout = layout or OwnershipLayout.of(world)
    if held is None:
        held = held_by_node(world, Counter(world.owner).items())
    shared: Counter[str] = Counter()
    for sharers in world.shares.values():
        for sharer in sharers:
            shared[owner_node(world, sharer)] += 1
    places = _PlacesBuilder(world, layout, shown, held, shared, paths=tasks is None)
    for nbp in world.network_pools.values():
        places.add(
            nbp.name,
            "network-pool",
            nbp.owner.holder,
            partial(_network_pool_details, nbp),
            capacity=nbp.total,
        )
    for key, task in world.tasks.items():
        if tasks is None or key in tasks:
            places.add_task(key, task)
    places.add_recovery()
    places.add(
        "heap",
        "heap",
        "heap",
        partial(_heap_details, world),
    )
    if event is not None:
        places.add_moves(event)
    return OwnershipPlaces(places.nodes, places.edges)


def held_by_node(
    world: NetworkWorld, owners: Iterable[tuple[Owner, int]]
) -> dict[str, Counter[OwnerKind]]:
    """How many segments each node holds, by owner kind, from each owner's count (owners
    holding none left out)."""
    held: dict[str, Counter[OwnerKind]] = {}
    for owner, count in owners:
        if not count:
            continue
        node = owner_node(world, owner)
        if node not in held:
            held[node] = Counter()
        held[node][owner.kind] += count
    return held


#: what a place that holds no segment holds (read, never written)
_HOLDS_NOTHING: Counter[OwnerKind] = Counter()


@dataclass
class _PlacesBuilder:
    """The nodes and edges of :func:`ownership_places` as they are added, in the order the
    figure draws them, with what each node holds and shares."""

    world: NetworkWorld
    layout: OwnershipLayout
    shown: Callable[[str], bool] | None
    held: Mapping[str, Counter[OwnerKind]]
    shared: Counter[str]
    #: whether edges are made (not where only some tasks' nodes are wanted)
    paths: bool = True
    nodes: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    edges: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def add(
        self,
        node: str,
        kind: str,
        label: str,
        details: Callable[[], list[str]],
        blocked: bool = False,
        capacity: int = 0,
    ) -> None:
        """A node with its buffers and hover; a node ``shown`` rejects is only named (its
        details, the costly part, are not computed)."""
        if node not in self.layout.positions:
            raise InvalidParameterError(f"the layout has no place for {node!r}; build it anew")
        if self.shown is not None and not self.shown(node):
            self.nodes.setdefault(node, None)
            return
        holding = self.held.get(node, _HOLDS_NOTHING)
        buffers = sum(holding.values())
        lines = [f"<b>{node}</b>", f"buffers held: {buffers}"]
        lines += [f"  {k}: {v}" for k, v in sorted(holding.items()) if len(holding) > 1]
        if self.shared[node]:
            lines.append(f"also shares: {self.shared[node]} (a buffer held in several places)")
        lines += details()
        if blocked:
            lines.append("<b>blocked</b>")
        attributes = {
            "kind": kind,
            "label": label,
            "buffers": buffers,
            "blocked": blocked,
            "capacity": capacity,
            "pos": self.layout.positions[node],
            "hover": "<br>".join(lines),
        }
        current = self.nodes.get(node)
        if current is None:
            self.nodes[node] = attributes
        else:
            current.update(attributes)

    def edge(self, source: str, target: str, **attributes: Any) -> None:
        """An edge, its ends named as nodes if they are not yet; a later edge between the same
        two updates it (as networkx's ``add_edge`` does)."""
        if not self.paths:
            return
        self.nodes.setdefault(source, None)
        self.nodes.setdefault(target, None)
        self.edges.setdefault(source, {}).setdefault(target, {}).update(attributes)

    def add_task(self, key: str, task: Task) -> None:
        """A task with its partitions, subpartitions, gates and channels, and the data paths
        from each subpartition to the channel that reads it."""
        add, edge = self.add, self.edge
        add(task_node(task), "task", key, partial(_task_details, self.world, task))
        for partition in task.partitions:
            add(
                partition_node(partition),
                "result-partition",
                "",
                partial(_partition_details, partition.pool),
            )
            for sub in partition.subpartitions:
                add(
                    subpartition_node(sub),
                    "subpartition",
                    "",
                    partial(_subpartition_details, sub),
                    sub.blocked,
                )
                edge(partition_node(partition), subpartition_node(sub), kind="structure")
            edge(task_node(task), partition_node(partition), kind="structure")
        for gate in task.gates:
            node = gate_node(gate)
            add(node, "input-gate", "", partial(_gate_details, gate))
            edge(node, task_node(task), kind="structure")
            for channel in gate.channels:
                cnode = channel_node(channel)
                add(
                    cnode,
                    _channel_kind(channel),
                    "",
                    partial(_channel_details, channel),
                    channel.blocked or channel.upstream_blocked,
                )
                edge(cnode, node, kind="structure")
                edge(
                    subpartition_node(self.world.subpartitions[channel.subpartition]),
                    cnode,
                    kind="remote" if channel.remote else "local",
                )

    def add_recovery(self) -> None:
        """The channel-state readers and drainers, with the gates they fill while they do, and
        the channel-state writers."""
        world = self.world
        for reader in world.readers.values():
            self.add(reader.name, "channel-state-reader", "", partial(_reader_details, reader))
        for drainer in world.drainers.values():
            self.add(
                drainer.name,
                "drainer",
                "",
                partial(_drainer_details, world, drainer),
            )
        for source, target, kind in recovery_paths(world):
            self.edge(source, target, kind=kind)
        for writer in world.writers.values():
            self.add(
                writer.name,
                "channel-state-writer",
                writer.owner.holder,
                partial(_writer_details, writer),
            )

    def add_moves(self, event: Event) -> None:
        """The step's segment moves between two places, as ``move`` edges with a count."""
        world = self.world
        moves: Counter[tuple[str, str]] = Counter(
            (owner_node(world, cast(Owner, m.source)), owner_node(world, cast(Owner, m.target)))
            for m in event.moves
        )
        for (source, target), count in moves.items():
            if source != target:
                self.edge(source, target, kind="move", count=count)


def recovery_paths(world: NetworkWorld) -> Iterator[tuple[str, str, str]]:
    """The data paths of recovery as (source, target, kind): each channel-state reader to
    the gates of its task still recovering (``restore``), each drainer installed and not
    finished to its task's gates (``drain``); they come and go as recovery goes on."""
    for reader in world.readers.values():
        task = world.task_named(reader.task)
        for gate in task.gates:
            if not gate.converted:
                yield reader.name, gate_node(gate), "restore"
    for drainer in world.drainers.values():
        if drainer.installed and not drainer.finished:
            task = world.task_named(drainer.task)
            for gate in task.gates:
                yield drainer.name, gate_node(gate), "drain"


def ownership_graph(
    world: NetworkWorld, event: Event | None = None, layout: OwnershipLayout | None = None
) -> nx.DiGraph:
    """The world at its current step as a graph: nodes hold segments, edges carry data
    (:func:`ownership_places` as a networkx graph).

    ``event`` (the step just taken) adds its segment moves as ``move`` edges with a count.
    """
    places = ownership_places(world, event, layout)
    graph = nx.DiGraph(step=world.step)
    graph.add_nodes_from((node, data or {}) for node, data in places.nodes.items())
    graph.add_edges_from(
        (source, target, data)
        for source, targets in places.edges.items()
        for target, data in targets.items()
    )
    return graph


def _network_pool_details(nbp: NetworkBufferPool) -> list[str]:
    return [f"segments: {nbp.total}, free: {len(nbp.free)}, reserved: {nbp.required}"]


def _partition_details(pool: LocalBufferPool) -> list[str]:
    return [
        f"local pool: size {pool.size} (min {pool.minimum}, max {pool.maximum}), "
        f"free {len(pool.free)}, requested {pool.requested}",
        f"max buffers per subpartition: {pool.max_per_subpartition}",
    ]


def _writer_details(writer: ChannelStateWriter) -> list[str]:
    return [
        f"writes channel state of {', '.join(writer.subtasks)}",
        f"requests queued: {len(writer.requests)}",
    ]


def _heap_details(world: NetworkWorld) -> list[str]:
    return [f"heap bytes held for recovery: {world.heap_bytes:,} (peak {world.heap_peak:,})"]


def _gate_details(gate: Gate) -> list[str]:
    pool = gate.pool
    return [
        f"floating pool: size {pool.size} (min {pool.minimum}, max {pool.maximum}), "
        f"free {len(pool.free)}",
        f"exclusive buffers per channel: {gate.exclusive_per_channel}",
        "recovered channels converted" if gate.converted else "still recovering",
        *(["demultiplexing virtual channels"] if gate.demultiplexing else []),
    ]


def _task_details(world: NetworkWorld, task: Task) -> list[str]:
    lines = [f"phase: {task.phase}" + (", finished" if task.finished else "")]
    lines.append(f"records emitted: {task.emitted}, processed: {task.processed}")
    if task.key_groups is not None:
        lines.append(f"key groups {task.key_groups[0]}-{task.key_groups[1]}")
    if task.pending:
        lines.append(f"outputs waiting for a buffer: {len(task.pending)}")
    if task.busy:
        lines.append(f"busy computing for {task.busy} more step(s)")
    if task.output_state:
        lines.append(f"output-state chunks still to read: {len(task.output_state)}")
    progress = world.checkpoints.pending
    if progress is not None:
        state = "acknowledged" if task.name in progress.acknowledged else "not acknowledged"
        lines.append(f"checkpoint {progress.id}: {state}")
    return lines


def _records(buffers: list[Buffer]) -> int:
    return len({f.record for b in buffers for f in b.fragments})


def _subpartition_details(sub: Subpartition) -> list[str]:
    queue = list(sub.queue)
    events = [b.event for b in queue if b.event is not None]
    lines = [
        f"consumer: {sub.consumer}",
        f"backlog: {sub.backlog} buffer(s) with {_records(queue)} record(s)",
    ]
    if sub.builder is not None:
        lines.append(f"buffer being filled: {sub.builder.used} of {sub.builder.capacity} bytes")
    if events:
        lines.append("events queued: " + ", ".join(events))
    return lines


def _channel_kind(channel: Channel) -> str:
    if channel.recovered:
        return "recovered-channel"
    return "remote-channel" if channel.remote else "local-channel"


def _channel_details(channel: Channel) -> list[str]:
    kind = "remote (netty)" if channel.remote else "local"
    lines = [f"{kind} channel from {channel.producer}"]
    if channel.recovered:
        lines.append(
            f"recovered channel: {len(channel.recovery.queue)} buffer(s) queued, "
            + ("state consumed" if channel.recovery.state_consumed else "state still arriving")
        )
    if channel.recoverable.in_recovery:
        lines.append(
            f"in recovery (V2): {len(channel.recovery.queue)} recovered buffer(s) queued"
            + (
                f", {len(channel.recoverable.stash)} event(s) stashed"
                if channel.recoverable.stash
                else ""
            )
        )
    if channel.remote and not channel.recovered and not channel.recoverable.in_recovery:
        lines.append(
            f"credits (buffers announced): {channel.buffers.available}, "
            f"backlog announced: {channel.buffers.backlog_seen}"
        )
    received = list(channel.received)
    lines.append(f"received: {len(received)} buffer(s), {_records(received)} record(s)")
    if channel.partial is not None:
        record, got = channel.partial
        lines.append(f"spanning record {record}: {got} bytes so far")
    if channel.upstream_blocked:
        lines.append("its subpartition is blocked until the gate has all recovered state")
    if channel.finished:
        lines.append("finished")
    return lines


def _drainer_details(world: NetworkWorld, drainer: FetchedChannelStateDrainer) -> list[str]:
    task = world.task_named(drainer.task)
    lines = [f"recovery checkpoint trigger: {task.recovery_trigger.value}"]
    state = drainer.state
    if state is None:
        reader = world.readers.get(drainer.task)
        done = reader is not None and reader.finished
        lines.append("nothing to drain" if done else "waiting for the fetch into spill files")
        return lines
    lines.append(
        f"spill files: {len(state.files)}, segments: {len(state.segments)}, "
        f"{state.size:,} bytes" + (" (deleted)" if state.deleted else "")
    )
    lines.append(f"references to the files: {state.references}")
    cursor = drainer.cursor
    if cursor is None:
        lines.append("not installed yet: a checkpoint now is declined (NOT_READY)")
    elif drainer.finished:
        lines.append("drained: end events delivered")
    else:
        segment = state.segments[min(cursor.segment, len(state.segments) - 1)]
        lines.append(
            f"committed: segment {cursor.segment + 1} of {len(state.segments)}, "
            f"{cursor.consumed:,} of {segment.body_length:,} bytes"
        )
    return lines


def _reader_details(reader: ChannelStateReader) -> list[str]:
    lines = [f"input-state chunks still to read: {len(reader.chunks)}"]
    if reader.finished:
        lines.append("finished")
    if reader.pre is not None:
        where = "a heap buffer" if reader.pre == HEAP else f"segment {reader.pre}"
        lines.append(f"pre-filter buffer: {where} for {reader.pre_channel}")
    if reader.posts:
        lines.append(f"post-filter buffers held: {len(reader.posts)}")
    if reader.heap_segment_allocated:
        lines.append("holds its reusable heap segment")
    if reader.spill is not None and not reader.finished:
        lines.append(
            f"spilled so far: {reader.spill.bytes_written:,} bytes, open segment "
            f"{reader.spill.heap_bytes:,} bytes on the heap"
        )
    return lines


def ownership_figure(
    world: NetworkWorld,
    event: Event | None = None,
    *,
    layout: OwnershipLayout | None = None,
    title: str | None = None,
) -> go.Figure:
    """The ownership graph drawn: marker size grows with the buffers held, red rings mark
    blocked places, orange arrows are the last step's segment moves."""
    layout = layout or OwnershipLayout.of(world)
    return go.Figure(ownership_spec(ownership_graph(world, event, layout), layout, title=title))


def ownership_spec(
    graph: nx.DiGraph, layout: OwnershipLayout, *, title: str | None = None
) -> dict[str, Any]:
    """The figure as plotly's JSON (``data`` and ``layout``).

    A live widget copies this into its ``FigureWidget`` at every step; building plain dicts
    rather than validated plotly objects keeps that well under the 100 ms a step may take.
    """
    traces = _path_traces(graph) + _node_traces(graph)
    step = graph.graph.get("step", 0)
    return {
        "data": traces,
        "layout": figure_layout(
            title or f"Buffer ownership at step {step}",
            # the layout's height counted a one-line title; the operator names sit above
            height=layout.height - 50,
            above=22,
            left=20,
            right=20,
            bottom=20,
            annotations=_move_arrows(graph),
            xaxis={
                "tickvals": list(layout.columns),
                "ticktext": list(layout.columns.values()),
                "tickfont": {"size": 13},
                "showgrid": False,
                "zeroline": False,
                "side": "top",
            },
            yaxis={"visible": False},
            hovermode="closest",
            legend={"orientation": "h", "y": -0.02, "yanchor": "top"},
            uirevision="ownership",  # keep the user's zoom while stepping
        ),
    }


def _path_traces(graph: nx.DiGraph) -> list[dict[str, Any]]:
    """The data paths as thin grey lines, one trace (and legend entry) per kind of path: the
    structure inside a task drawn as local paths."""
    traces = []
    for kind, name, dash in (
        ("local", "local channel (same TaskManager)", "solid"),
        ("remote", "remote channel (netty, credit-based)", "dash"),
        ("restore", "channel-state reader fills the gate", "dot"),
        ("drain", "drainer fills channels in recovery from spill files", "dashdot"),
    ):
        polylines = [
            (graph.nodes[source]["pos"], graph.nodes[target]["pos"])
            for source, target, data in graph.edges(data=True)
            if data["kind"] == kind or (kind == "local" and data["kind"] == "structure")
        ]
        traces.append(lines_trace(polylines, name, {"color": "#c7c7c7", "width": 1, "dash": dash}))
    return traces


def _move_arrows(graph: nx.DiGraph) -> list[dict[str, Any]]:
    """The last step's segment moves as orange arrows, with their count where more than one."""
    annotations = []
    for source, target, data in graph.edges(data=True):
        if data["kind"] != "move":
            continue
        (x0, y0), (x1, y1) = graph.nodes[source]["pos"], graph.nodes[target]["pos"]
        annotations.append(
            {
                "x": x1,
                "y": y1,
                "ax": x0,
                "ay": y0,
                "xref": "x",
                "yref": "y",
                "axref": "x",
                "ayref": "y",
                "showarrow": True,
                "arrowhead": 3,
                "arrowsize": 1.2,
                "arrowwidth": 2.5,
                "arrowcolor": MOVE,
                "opacity": 0.9,
                "text": str(data["count"]) if data["count"] > 1 else "",
                "font": {"color": MOVE},
            }
        )
    return annotations


def _node_traces(graph: nx.DiGraph) -> list[dict[str, Any]]:
    """A marker trace per node kind, in legend order: size by the buffers held, a red ring
    where the place is blocked."""
    by_kind: dict[str, list[dict[str, Any]]] = {kind: [] for kind in NODE_KINDS}
    for _, data in graph.nodes(data=True):
        by_kind[data["kind"]].append(data)
    traces = []
    for kind, colour in NODE_KINDS.items():
        nodes = by_kind[kind]
        traces.append(
            {
                "type": "scatter",
                "x": [d["pos"][0] for d in nodes],
                "y": [d["pos"][1] for d in nodes],
                "mode": "markers+text",
                "name": kind,
                "text": [d["label"] for d in nodes],
                "textposition": "bottom center",
                "textfont": {"size": 11},
                "hovertext": [wrap(d["hover"]) for d in nodes],
                "hoverinfo": "text",
                "marker": {
                    "color": colour,
                    "size": [_size(d["buffers"], d["capacity"]) for d in nodes],
                    "line": {
                        "color": [_BLOCKED if d["blocked"] else "#444" for d in nodes],
                        "width": [3 if d["blocked"] else 0.5 for d in nodes],
                    },
                },
            }
        )
    return traces


def _size(buffers: int, capacity: int) -> float:
    """Marker size: grows with the buffers held; a network pool, which holds thousands, is
    drawn by how full it is instead."""
    if capacity:
        return 10.0 + 16.0 * buffers / capacity
    return min(8.0 + 3.0 * math.sqrt(buffers), 32.0)
