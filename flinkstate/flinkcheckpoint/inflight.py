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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.channel_state_file import read_channel
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import ChannelStateHandle
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, OperatorState
from flinkstate.flinkcheckpoint.stream_element import (
    Element,
    ValueDecoder,
    decode,
    types_that_read,
)


@dataclass(frozen=True, slots=True)
class Edge:
    """An exchange that carried channel state: upstream operator's partition -> downstream
    operator's gate (operators by uid, name or id).

    Examples
    --------
    >>> edge = Edge.parse("to-record:0>slow-counter:0")
    >>> edge
    Edge(upstream='to-record', partition=0, downstream='slow-counter', gate=0)
    >>> str(edge)
    'to-record:0>slow-counter:0'
    """

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


def exchange_name(edge: Edge) -> str:
    """An edge as ``--exchange`` and a dataset name it: ``UP->DOWN``.

    Examples
    --------
    >>> exchange_name(Edge("to-record", 0, "slow-counter", 0))
    'to-record->slow-counter'
    """
    return f"{edge.upstream}->{edge.downstream}"


@dataclass(frozen=True, slots=True)
class LogicalChannel:
    """One (upstream subtask, downstream subtask) pair of an edge: the downstream's input-channel
    handle and the upstream's subpartition handle for it (None where a side has no state).

    Examples
    --------
    From ``to-record`` subtask 0 to counter subtask 1: the counter's input state and the
    upstream's output state for it:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> channel = logical_channels(read_metadata(real_checkpoint("keyed-hash-p2-p4")))[1]
    >>> channel.upstream_subtask, channel.downstream_subtask
    (0, 1)
    >>> channel.input.kind, channel.input.state_size, channel.output.kind, channel.output.state_size
    ('input', 984, 'output', 3128)
    """

    edge: Edge
    upstream_subtask: int
    downstream_subtask: int
    input: ChannelStateHandle | None
    output: ChannelStateHandle | None


@dataclass(frozen=True, slots=True)
class ChannelRecords:
    """A logical channel's stitched bytes, decoded.

    Examples
    --------
    The same channel read: 980 bytes of input state and 3124 of output state, 108 records, one of
    them split between the two (as Flink's loader found, ``chk-48.groundtruth.json``):

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> channel = logical_channels(read_metadata(checkpoint))[1]
    >>> with StateFiles(checkpoint) as files:
    ...     read = read_records(channel, files)
    >>> read.input_bytes, read.output_bytes, len(read.records), read.split, read.trailing
    (980, 3124, 108, True, 0)
    """

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


#: one end of an exchange: (operator id, partition or gate index)
End = tuple[str, int]
Side = dict[End, list[ChannelStateHandle]]


def _sides(metadata: CheckpointMetadata) -> tuple[Side, Side]:
    """Channel handles with data by (operator id, partition) and by (operator id, gate)."""
    outputs: Side = {}
    inputs: Side = {}
    for operator, handle in metadata.channel_handles():
        side = inputs if handle.input else outputs
        side.setdefault((operator.operator_id, handle.gate_or_partition), []).append(handle)
    return outputs, inputs


def _fits(metadata: CheckpointMetadata, up: End, down: End, sides: tuple[Side, Side]) -> bool:
    """Whether a partition may feed a gate: another operator, and every index on each side
    below the other side's parallelism (an input channel's index is the upstream subtask, a
    subpartition's the downstream subtask, on the all-to-all exchanges that carry state)."""
    outputs, inputs = sides
    if up[0] == down[0]:
        return False
    up_op, down_op = metadata.by_id(up[0]), metadata.by_id(down[0])
    return all(h.channel_or_subpartition < up_op.parallelism for h in inputs.get(down, [])) and all(
        h.channel_or_subpartition < down_op.parallelism for h in outputs.get(up, [])
    )


def infer_edges(metadata: CheckpointMetadata) -> tuple[Edge, ...]:
    """The exchanges that carried channel state: every gate with input state matched to its
    own partition with output state, where the indices leave exactly one way to do it.

    A pipelined result partition feeds one gate, so gates and partitions are matched one to
    one (a union's two gates are told apart by which upstream's parallelism their channel
    indices fit). Where no matching or more than one covers all the state, nothing is
    guessed: :class:`InvalidParameterError` lists the ``--edge`` options to give.

    Examples
    --------
    The union job's counter reads two gates, told apart by which upstream's parallelism (2 or 3)
    their channel indices fit:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> for edge in infer_edges(read_metadata(real_checkpoint("union-keyed-p2-p3-p4"))):
    ...     print(edge)
    to-record:0>slow-counter:0
    to-record-b:0>slow-counter:1
    """
    sides = _sides(metadata)
    outputs, inputs = sides
    gates = sorted(inputs)
    partitions = sorted(outputs)
    fits = {g: [p for p in partitions if _fits(metadata, p, g, sides)] for g in gates}
    matchings: list[dict[End, End]] = []

    def match(index: int, chosen: dict[End, End]) -> None:
        if len(matchings) > 1:
            return
        if index == len(gates):
            if set(chosen.values()) == set(partitions):
                matchings.append(dict(chosen))
            return
        gate = gates[index]
        for partition in fits[gate]:
            if partition not in chosen.values():
                chosen[gate] = partition
                match(index + 1, chosen)
                del chosen[gate]

    if len(gates) >= len(partitions):
        match(0, {})
    if len(matchings) == 1:
        (found,) = matchings
        return tuple(
            Edge(metadata.by_id(up[0]).label, up[1], metadata.by_id(down[0]).label, down[1])
            for down, up in sorted(found.items())
        )
    raise InvalidParameterError(
        _ambiguity(metadata, sides, gates, partitions, fits, bool(matchings))
    )


def _ambiguity(
    metadata: CheckpointMetadata,
    sides: tuple[Side, Side],
    gates: list[End],
    partitions: list[End],
    fits: dict[End, list[End]],
    several: bool,
) -> str:
    """Why the edges cannot be inferred, and the ``--edge`` options that would say them."""

    def label(key: End) -> str:
        return f"{metadata.by_id(key[0]).label}:{key[1]}"

    stateless = [o for o in metadata.operators if not any(k[0] == o.operator_id for k in sides[0])]
    options = []
    for gate in gates:
        # upstreams with output state that fit, then those without any (their buffers empty)
        ups = fits[gate] + [
            (o.operator_id, 0)
            for o in stateless
            if _fits(metadata, (o.operator_id, 0), gate, sides)
        ]
        options += [f"--edge '{label(up)}>{label(gate)}'" for up in ups]
    fed = {up for gate in gates for up in fits[gate]}
    for partition in partitions:
        if partition not in fed:
            options += [
                f"--edge '{label(partition)}>{o.label}:GATE'"
                for o in metadata.operators
                if _fits(metadata, partition, (o.operator_id, 0), sides)
            ]
    why = (
        "the in-flight data fits more than one set of exchanges"
        if several
        else "no set of exchanges accounts for all the in-flight data (an upstream or a "
        "downstream side of an exchange has no channel state)"
    )
    return (
        f"cannot tell which output partition feeds which input gate: {why}; name every "
        f"exchange with --edge UP:PARTITION>DOWN:GATE, from: {', '.join(options[:12]) or 'none'}"
    )


def check_edges(metadata: CheckpointMetadata, edges: Iterable[Edge]) -> tuple[str, ...]:
    """Edges the user named, refused unless each is one that can exist: operators that are
    there, state on at least one side, indices that fit, no gate or partition twice. The
    state no edge accounts for comes back as warnings (it is left out of the channels).

    Examples
    --------
    Naming one of the union job's two exchanges leaves the other's state out, with a warning each:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("union-keyed-p2-p3-p4"))
    >>> for warning in check_edges(metadata, [Edge.parse("to-record:0>slow-counter:0")]):
    ...     print(warning)  # doctest: +NORMALIZE_WHITESPACE
    the input state of slow-counter gate 1 (7 channel(s), 51236 bytes) is on no --edge: left out
    of the logical channels
    the output state of to-record-b partition 0 (12 channel(s), 43284 bytes) is on no --edge: left
    out of the logical channels

    An edge the state cannot fit is refused: gate 1's channel indices go up to 2, beyond
    ``to-record``'s 2 subtasks:

    >>> check_edges(metadata, [Edge.parse("to-record:0>slow-counter:1")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: edge to-record:0>slow-counter:1 does not fit: ...
    """
    sides = _sides(metadata)
    outputs, inputs = sides
    used_gates: dict[End, Edge] = {}
    used_partitions: dict[End, Edge] = {}
    for edge in edges:
        up, down = _operator(metadata, edge.upstream), _operator(metadata, edge.downstream)
        out_key, in_key = (up.operator_id, edge.partition), (down.operator_id, edge.gate)
        if up.operator_id == down.operator_id:
            raise InvalidParameterError(f"edge {edge} goes from an operator to itself")
        if out_key not in outputs and in_key not in inputs:
            have_in = sorted({g for (o, g) in inputs if o == down.operator_id})
            have_out = sorted({q for (o, q) in outputs if o == up.operator_id})
            raise InvalidParameterError(
                f"edge {edge} matches no channel state: {down.label} has input state on "
                f"gate(s) {_list(have_in)}, {up.label} has output state on partition(s) "
                f"{_list(have_out)}"
            )
        if not _fits(metadata, out_key, in_key, sides):
            raise InvalidParameterError(
                f"edge {edge} does not fit: {down.label}'s input channels on gate "
                f"{edge.gate} need an upstream of more than {up.parallelism} subtasks, or "
                f"{up.label}'s subpartitions need a downstream of more than "
                f"{down.parallelism} (is the edge reversed?)"
            )
        for used, key in ((used_gates, in_key), (used_partitions, out_key)):
            if key in used:
                raise InvalidParameterError(f"edges {used[key]} and {edge} share an end")
            used[key] = edge
    # An end without state may be real (an output whose buffers were empty), but not while its
    # operator has state on that side at an index no edge names: then the index is wrong.
    for edge in used_gates.values():
        up, down = _operator(metadata, edge.upstream), _operator(metadata, edge.downstream)
        for side, used, operator, index, what in (
            (outputs, used_partitions, up, edge.partition, "output state on partition"),
            (inputs, used_gates, down, edge.gate, "input state on gate"),
        ):
            if (operator.operator_id, index) in side:
                continue
            unnamed = sorted(
                i for (o, i) in side if o == operator.operator_id and (o, i) not in used
            )
            if unnamed:
                raise InvalidParameterError(
                    f"edge {edge}: {operator.label} has no {what} {index}; it has {what}(s) "
                    f"{_list(unnamed)}, which no --edge names"
                )
    warnings = []
    for (operator_id, index), handles in sorted(inputs.items()):
        if (operator_id, index) not in used_gates:
            warnings.append(_left_out(metadata, operator_id, "input", "gate", index, handles))
    for (operator_id, index), handles in sorted(outputs.items()):
        if (operator_id, index) not in used_partitions:
            warnings.append(_left_out(metadata, operator_id, "output", "partition", index, handles))
    return tuple(warnings)


def _left_out(
    metadata: CheckpointMetadata,
    operator_id: str,
    side: str,
    what: str,
    index: int,
    handles: list[ChannelStateHandle],
) -> str:
    size = sum(h.state_size for h in handles)
    return (
        f"the {side} state of {metadata.by_id(operator_id).label} {what} {index} "
        f"({len(handles)} channel(s), {size} bytes) is on no --edge: left out of the logical "
        "channels"
    )


def _list(values: list[int]) -> str:
    return ", ".join(map(str, values)) if values else "none"


def resolve_edges(
    metadata: CheckpointMetadata, edges: Iterable[Edge] | None = None
) -> tuple[tuple[Edge, ...], tuple[str, ...]]:
    """The exchanges to read: inferred (``edges`` None), or the named ones checked, with the
    warnings :func:`check_edges` gives for the state they leave out.

    Examples
    --------
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("rebalance-forward-p2-p3"))
    >>> resolve_edges(metadata)
    ((Edge(upstream='to-record', partition=0, downstream='relay', gate=0),), ())
    """
    if edges is None:
        return infer_edges(metadata), ()
    chosen = tuple(edges)
    return chosen, check_edges(metadata, chosen)


def logical_channels(
    metadata: CheckpointMetadata, edges: Iterable[Edge] | None = None
) -> tuple[LogicalChannel, ...]:
    """Every (upstream subtask, downstream subtask) pair of each edge that has state.

    Examples
    --------
    The keyed job's keyBy from 2 to 4 subtasks: 7 of its 8 (upstream, downstream) pairs have
    state, as Flink's loader found:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> channels = logical_channels(read_metadata(real_checkpoint("keyed-hash-p2-p4")))
    >>> [(c.upstream_subtask, c.downstream_subtask) for c in channels]
    [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 2), (1, 3)]
    """
    return channels_of(metadata, resolve_edges(metadata, edges)[0])


def channels_of(metadata: CheckpointMetadata, edges: Iterable[Edge]) -> tuple[LogicalChannel, ...]:
    """The logical channels of edges already resolved (:func:`resolve_edges`).

    Examples
    --------
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("union-keyed-p2-p3-p4"))
    >>> second = Edge.parse("to-record-b:0>slow-counter:1")
    >>> sorted({c.upstream_subtask for c in channels_of(metadata, [second])})
    [0, 1, 2]
    """
    chosen = tuple(edges)
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
    a handle's bytes where the caller has them already).

    Examples
    --------
    The channel from ``to-record`` subtask 0 to counter subtask 0, all of it output state: 648
    records, the sequence numbers 23950 to 26325 (as Flink's loader read them):

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> from flinkstate.flinkcheckpoint.stream_element import value_decoder
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> channel = logical_channels(read_metadata(checkpoint))[0]
    >>> with StateFiles(checkpoint) as files:
    ...     read = read_records(channel, files, value_decoder("Tuple2<Long,String>"))
    >>> len(read.records), read.records[0].value, read.records[-1].value
    (648, (23950, 'p23950xxxxxxxxxx'), (26325, 'p26325xxxxxxxxxx'))
    """

    head, tail = _stitched(channel, files, read)
    decoded = decode(head + tail, value, source=channel_source(channel))
    boundary = len(head)
    split = bool(tail) and any(
        e.offset < boundary < e.offset + 4 + e.length for e in decoded.elements
    )
    return ChannelRecords(channel, len(head), len(tail), decoded.elements, decoded.trailing, split)


def channel_source(channel: LogicalChannel) -> str:
    """How errors name a logical channel.

    Examples
    --------
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> channel_source(logical_channels(read_metadata(real_checkpoint("keyed-hash-p2-p4")))[1])
    'channel to-record:0>slow-counter:0 0->1'
    """
    return f"channel {channel.edge} {channel.upstream_subtask}->{channel.downstream_subtask}"


def _stitched(
    channel: LogicalChannel,
    files: StateFiles,
    read: Callable[[ChannelStateHandle], bytes] | None,
) -> tuple[bytes, bytes]:
    """A logical channel's input state and output state bytes."""

    def data(handle: ChannelStateHandle | None) -> bytes:
        if handle is None:
            return b""
        return read(handle) if read is not None else read_channel(handle, files).data

    return data(channel.input), data(channel.output)


def record_types(
    channel: LogicalChannel,
    files: StateFiles,
    read: Callable[[ChannelStateHandle], bytes] | None = None,
    elements: Sequence[Element] | None = None,
) -> list[str] | None:
    """The record types tried (``CANDIDATE_TYPES``) that read every record of a logical
    channel (a sample of them): what to suggest where no type was given or the one given
    does not read them; None for a channel without records. ``elements``, where the caller
    framed the channel already (``read_records``), are not framed again.

    Examples
    --------
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("rebalance-forward-p2-p3")
    >>> channel = logical_channels(read_metadata(checkpoint))[0]
    >>> with StateFiles(checkpoint) as files:
    ...     print(record_types(channel, files))
    ['Tuple2<Long,String>', 'Tuple2<Double,String>', 'Tuple3<Integer,Integer,String>']
    """
    head, tail = _stitched(channel, files, read)
    data = head + tail
    if elements is None:
        elements = decode(data, source=channel_source(channel)).elements
    return types_that_read(data, elements)
