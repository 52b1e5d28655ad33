"""The in-flight data of a real checkpoint as logical channels: each upstream subpartition with
the downstream input channel it feeds, their bytes stitched and their records decoded.

``_metadata`` does not record the job graph, so which operator's output partition feeds which
operator's input gate is inferred: input state is attached to a chain's head operator and output
state to its tail (``OperatorChain.snapshotChannelStates``), and on the all-to-all exchanges that
carry channel state an input channel's index is the upstream subtask and a subpartition's index
the downstream subtask. A partition and a gate fit together when every index on each side is
below the other operator's parallelism; where more than one fits, the caller names the edges.

For one logical channel, the downstream's input state followed by the upstream's output state
is a clean run of whole records (input state starts on a record boundary, output state ends on
one); a record may be split between the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.channel_state_file import read_channel
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import ChannelStateHandle
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, OperatorState
from flinkstate.flinkcheckpoint.stream_element import Element, ValueDecoder, decode


@dataclass(frozen=True, slots=True)
class Edge:
    """An exchange that carried channel state: upstream operator's partition -> downstream
    operator's gate (operators by uid, name or id)."""

    upstream: str
    partition: int
    downstream: str
    gate: int

    @classmethod
    def parse(cls, text: str) -> Edge:
        """``UP:PARTITION>DOWN:GATE``, e.g. ``to-record:0>slow-counter:0``."""
        try:
            up, down = text.split(">")
            upstream, partition = up.rsplit(":", 1)
            downstream, gate = down.rsplit(":", 1)
            return cls(upstream, int(partition), downstream, int(gate))
        except ValueError:
            raise InvalidParameterError(
                f"an edge is UP:PARTITION>DOWN:GATE (e.g. to-record:0>slow-counter:0), got {text!r}"
            ) from None

    def __str__(self) -> str:
        return f"{self.upstream}:{self.partition}>{self.downstream}:{self.gate}"


@dataclass(frozen=True, slots=True)
class LogicalChannel:
    edge: Edge
    upstream_subtask: int
    downstream_subtask: int
    input: ChannelStateHandle | None
    output: ChannelStateHandle | None


@dataclass(frozen=True, slots=True)
class ChannelRecords:
    """A logical channel's stitched bytes, decoded."""

    channel: LogicalChannel
    input_bytes: int
    output_bytes: int
    elements: tuple[Element, ...]
    #: bytes after the last whole record (0 for a clean channel)
    trailing: int
    #: a record begins in the input state and ends in the output state
    split: bool

    @property
    def records(self) -> tuple[Element, ...]:
        return tuple(e for e in self.elements if e.is_record)


def _sides(
    metadata: CheckpointMetadata,
) -> tuple[
    dict[tuple[str, int], list[ChannelStateHandle]], dict[tuple[str, int], list[ChannelStateHandle]]
]:
    outputs: dict[tuple[str, int], list[ChannelStateHandle]] = {}
    inputs: dict[tuple[str, int], list[ChannelStateHandle]] = {}
    for operator, handle in metadata.channel_handles():
        side = inputs if handle.input else outputs
        side.setdefault((operator.operator_id, handle.gate_or_partition), []).append(handle)
    return outputs, inputs


def infer_edges(metadata: CheckpointMetadata) -> tuple[Edge, ...]:
    """The exchanges that carried channel state, where the indices leave one choice."""
    outputs, inputs = _sides(metadata)
    by_id = {o.operator_id: o for o in metadata.operators}
    edges = []
    for (down_id, gate), in_handles in sorted(inputs.items()):
        down = by_id[down_id]
        fits = [
            (up_id, partition)
            for (up_id, partition), out_handles in sorted(outputs.items())
            if up_id != down_id
            and all(h.channel_or_subpartition < by_id[up_id].parallelism for h in in_handles)
            and all(h.channel_or_subpartition < down.parallelism for h in out_handles)
        ]
        if len(fits) == 1:
            up_id, partition = fits[0]
            edges.append(Edge(by_id[up_id].label, partition, down.label, gate))
    return tuple(edges)


def logical_channels(
    metadata: CheckpointMetadata, edges: Iterable[Edge] | None = None
) -> tuple[LogicalChannel, ...]:
    """Every (upstream subtask, downstream subtask) pair of each edge that has state."""
    chosen = infer_edges(metadata) if edges is None else tuple(edges)
    outputs, inputs = _sides(metadata)
    channels = []
    for edge in chosen:
        up = _operator(metadata, edge.upstream)
        down = _operator(metadata, edge.downstream)
        outs = {
            (h.subtask, h.channel_or_subpartition): h
            for h in outputs.get((up.operator_id, edge.partition), [])
        }
        ins = {
            (h.channel_or_subpartition, h.subtask): h
            for h in inputs.get((down.operator_id, edge.gate), [])
        }
        for up_sub, down_sub in sorted(set(outs) | set(ins)):
            if up_sub >= up.parallelism or down_sub >= down.parallelism:
                raise InvalidParameterError(
                    f"edge {edge} does not fit: subtask {up_sub} -> {down_sub} for parallelism "
                    f"{up.parallelism} -> {down.parallelism}"
                )
            channels.append(
                LogicalChannel(
                    edge,
                    up_sub,
                    down_sub,
                    ins.get((up_sub, down_sub)),
                    outs.get((up_sub, down_sub)),
                )
            )
    return tuple(channels)


def _operator(metadata: CheckpointMetadata, key: str) -> OperatorState:
    try:
        return metadata.operator(key)
    except KeyError as missing:
        raise InvalidParameterError(str(missing.args[0])) from None


def read_records(
    channel: LogicalChannel,
    files: StateFiles,
    value: ValueDecoder | None = None,
    read: Callable[[ChannelStateHandle], bytes] | None = None,
) -> ChannelRecords:
    """Input state ++ output state of one logical channel, framed and decoded (``read`` gives
    a handle's bytes where the caller has them already)."""

    def data(handle: ChannelStateHandle | None) -> bytes:
        if handle is None:
            return b""
        return read(handle) if read is not None else read_channel(handle, files).data

    head, tail = data(channel.input), data(channel.output)
    decoded = decode(
        head + tail,
        value,
        source=f"channel {channel.edge} {channel.upstream_subtask}->{channel.downstream_subtask}",
    )
    boundary = len(head)
    split = bool(tail) and any(
        e.offset < boundary < e.offset + 4 + e.length for e in decoded.elements
    )
    return ChannelRecords(channel, len(head), len(tail), decoded.elements, decoded.trailing, split)
