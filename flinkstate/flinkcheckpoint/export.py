"""A real checkpoint as a checkpoint dataset (``flinkstate.dataset``), for the Spark pipeline
and the notebooks: one buffer row per persisted chunk, one fragment row per piece of a record
in a chunk, records identified across a channel's input and output state.

What ``_metadata`` does not record has to come from the user: each exchange's partitioner and,
for ``keyBy`` exchanges, how a record's value gives its key and the key's Java type (Long,
Integer or String, from the record type: each is hashed as Flink hashes it; a String key is
kept in ``key_string``, an integer one in ``key``). Flink's operators are listed one by one (a
chain's operators side by side); an operator's kind is ``source`` for a FLIP-27 source (it has
coordinator state), ``keyed`` where it has keyed state, else ``map``. Keyed state is one row per
key group with its entries (every state's, timers included: all of them move with the key
group); where a snapshot's entries cannot be counted (``keyed_state.read_keyed_state`` says
why) its key groups have no rows and the manifest's description says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

import pyarrow as pa

from flinkstate.dataset import FORMAT, SCHEMAS, VERSION, Dataset
from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.channel_state_file import (
    ChannelData,
    check_checkpoint_chunks,
    read_channel,
)
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import ChannelStateHandle, KeyGroupsStateHandle
from flinkstate.flinkcheckpoint.inflight import (
    Edge,
    LogicalChannel,
    exchange_name,
    logical_channels,
)
from flinkstate.flinkcheckpoint.key_selector import KEY_TYPES, KeySelector, key_function
from flinkstate.flinkcheckpoint.keyed_state import read_keyed_state
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, read_metadata
from flinkstate.flinkcheckpoint.stream_element import (
    Decoded,
    ElementTag,
    ValueDecoder,
    decode,
)
from flinkstate.flinkcheckpoint.summary import checkpoint_dir
from flinkstate.javahash import JavaType
from flinkstate.keygroups import assign_to_key_group, compute_key_group_range_for_operator_index
from flinkstate.memory_segment import DEFAULT_SEGMENT_SIZE, check_segment_size
from flinkstate.rescale.partitioner import Partitioner


@dataclass(frozen=True)
class ExchangeSpec:
    """What the job knew about an exchange: its partitioner and, for keyBy, the key and its
    Java type (which decides its ``hashCode()``: a ``KeySelector`` says it; Long otherwise).

    Examples
    --------
    What the keyed job's ``keyBy`` was, which ``_metadata`` does not record: the key ``f0 % 1000``
    of its ``Tuple2<Long,String>`` records, a ``Long``:

    >>> from flinkstate.flinkcheckpoint.key_selector import key_function
    >>> spec = ExchangeSpec("keyBy", key_function("f0%1000", "Tuple2<Long,String>"))
    >>> spec.partitioner.flink_class, spec.java_type.java_name
    ('KeyGroupStreamPartitioner', 'Long')
    >>> ExchangeSpec("keyBy")
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: a keyBy (hash) exchange needs key= to find each key
    """

    partitioner: Partitioner
    key: Callable[[object], object] | None = None
    key_type: JavaType | str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "partitioner", Partitioner.parse(self.partitioner))
        if self.partitioner is Partitioner.HASH and self.key is None:
            raise InvalidParameterError("a keyBy (hash) exchange needs key= to find each key")
        kind = self.key_type
        if kind is None:
            kind = self.key.java_type if isinstance(self.key, KeySelector) else JavaType.LONG
        kind = JavaType.parse(kind)
        if kind not in KEY_TYPES.values():
            raise InvalidParameterError(
                f"an export keys by {', '.join(KEY_TYPES)} keys, not {kind.java_name}"
            )
        object.__setattr__(self, "key_type", kind)

    @property
    def java_type(self) -> JavaType:
        """The key's Java type (resolved: never None)."""
        return JavaType.parse(self.key_type or JavaType.LONG)


def exchange_option(text: str, record_type: str | None) -> tuple[str, ExchangeSpec]:
    """A command line's ``UP->DOWN=PARTITIONER[:KEY]``: the exchange's name and its spec, the
    key's Java type taken from ``record_type`` (None: not given, or ``raw``; a key that reads
    the records' values is then refused by the caller, which knows what to suggest).

    Examples
    --------
    >>> name, spec = exchange_option("to-record->slow-counter=hash:f0%1000", "Tuple2<Long,String>")
    >>> name, spec.partitioner.name, spec.key.spec, spec.java_type.java_name
    ('to-record->slow-counter', 'HASH', 'f0%1000', 'Long')
    >>> exchange_option("to-record->relay=rebalance", None)[1].key is None
    True
    """
    name, sep, how = text.partition("=")
    partitioner, _, key = how.partition(":")
    if not sep or not name or not partitioner:
        raise InvalidParameterError(f"--exchange takes UP->DOWN=PARTITIONER[:KEY], got {text!r}")
    typed = None if record_type in (None, "raw") else record_type
    return name, ExchangeSpec(
        Partitioner.parse(partitioner), key_function(key, typed) if key else None
    )


@dataclass(frozen=True)
class ExportPlan:
    """What a checkpoint's dataset is made from, read from ``_metadata`` alone (and the keyed
    state, one row per key group): its logical channels with each one's spec, the manifest
    and the small tables. The channels' rows are the large part, made from the plan by
    :func:`to_dataset` here or by Spark's executors (``flinkstate.spark.checkpoint_source``).

    Examples
    --------
    The keyed job's checkpoint planned: its 7 logical channels, and a row of keyed state for each
    of the 128 key groups (the counter's four subtasks hold keys in every one):

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.key_selector import key_function
    >>> spec = ExchangeSpec("keyBy", key_function("f0%1000", "Tuple2<Long,String>"))
    >>> plan = plan_export(real_checkpoint("keyed-hash-p2-p4"), {"to-record->slow-counter": spec})
    >>> len(plan.channels), plan.manifest["checkpoint_id"]
    (7, 48)
    >>> plan.tables["operators"].to_pylist()[2]
    {'operator': 'slow-counter', 'kind': 'keyed', 'parallelism': 4, 'max_parallelism': 128}
    >>> plan.tables["keyed_state"].num_rows
    128
    """

    directory: Path
    reroot: Mapping[str, str]
    metadata: CheckpointMetadata
    channels: tuple[LogicalChannel, ...]
    specs: Mapping[Edge, ExchangeSpec]
    manifest: dict[str, Any]
    #: the operators, exchanges and keyed_state tables
    tables: dict[str, pa.Table]


def plan_export(
    path: str | Path,
    exchanges: Mapping[str, ExchangeSpec],
    *,
    edges: Iterable[Edge] | None = None,
    reroot: Mapping[str, str] | None = None,
    segment_size: int = DEFAULT_SEGMENT_SIZE,
) -> ExportPlan:
    """The plan of :func:`to_dataset`, every refusal it makes before reading channel state.

    Examples
    --------
    Everything but the channels' rows, from ``_metadata`` and the keyed state; the checkpoint does
    not record the job's buffer size, which is given (this job's is 4 KiB):

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> plan = plan_export(
    ...     real_checkpoint("rebalance-forward-p2-p3"),
    ...     {"to-record->relay": ExchangeSpec("rebalance")},
    ...     segment_size=4096,
    ... )
    >>> plan.tables["exchanges"].to_pylist()[0]["partitioner"], plan.manifest["segment_size"]
    ('RebalancePartitioner', 4096)

    The forward exchange from ``relay`` to ``slow-relay`` is aligned, so it carried no state:

    >>> from flinkstate.errors import InvalidParameterError
    >>> try:
    ...     plan_export(
    ...         real_checkpoint("rebalance-forward-p2-p3"),
    ...         {"relay->slow-relay": ExchangeSpec("forward")},
    ...     )
    ... except InvalidParameterError as error:
    ...     print(error)  # doctest: +NORMALIZE_WHITESPACE
    no exchange 'relay->slow-relay' carried channel state in checkpoint 7; its exchanges are:
    to-record->relay
    """
    check_segment_size(segment_size)
    directory = checkpoint_dir(path)
    metadata = read_metadata(directory)
    channels = logical_channels(metadata, edges)
    chosen = {c.edge for c in channels}
    named = {name for edge in chosen for name in (str(edge), exchange_name(edge))}
    unknown = sorted(set(exchanges) - named)
    if unknown:
        raise InvalidParameterError(
            f"no exchange {', '.join(map(repr, unknown))} carried channel state in checkpoint "
            f"{metadata.checkpoint_id}; its exchanges are: "
            + (", ".join(sorted(exchange_name(e) for e in chosen)) or "none")
        )
    specs = {edge: _spec(edge, exchanges) for edge in chosen}
    _check_covered(metadata, channels)
    rows: dict[str, list[dict[str, Any]]] = {"keyed_state": []}
    rows["operators"] = [
        {
            "operator": op.label,
            "kind": "source"
            if op.coordinator_state is not None
            else "keyed"
            if any(s.managed_keyed_state is not None for s in op.subtasks)
            else "map",
            "parallelism": op.parallelism,
            "max_parallelism": op.max_parallelism,
        }
        for op in metadata.operators
    ]
    rows["exchanges"] = [
        {
            "exchange": exchange_name(edge),
            "upstream": edge.upstream,
            "downstream": edge.downstream,
            "partitioner": specs[edge].partitioner.flink_class,
            "downstream_mapper": specs[edge].partitioner.downstream_mapper.name,
            "upstream_mapper": specs[edge].partitioner.upstream_mapper.name,
            "unaligned_supported": True,
            "key_type": specs[edge].java_type.java_name
            if specs[edge].partitioner is Partitioner.HASH
            else None,
        }
        for edge in sorted(chosen, key=str)
    ]
    with StateFiles(directory, reroot) as files:
        check_checkpoint_chunks(metadata, files)
        uncounted = _keyed_state_rows(rows, metadata, files)
    description = f"checkpoint {metadata.checkpoint_id} read from {directory}"
    if uncounted:
        description += "; keyed state entries not counted: " + "; ".join(uncounted)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "source": "Flink checkpoint (flinkstate.flinkcheckpoint)",
        "description": description,
        "checkpoint_id": metadata.checkpoint_id,
        "checkpoint_type": "unaligned",
        "segment_size": segment_size,
    }
    tables = {name: pa.Table.from_pylist(rows[name], schema=SCHEMAS[name]) for name in rows}
    return ExportPlan(directory, dict(reroot or {}), metadata, channels, specs, manifest, tables)


def to_dataset(
    path: str | Path,
    exchanges: Mapping[str, ExchangeSpec],
    *,
    value: ValueDecoder | None = None,
    edges: Iterable[Edge] | None = None,
    reroot: Mapping[str, str] | None = None,
    segment_size: int = DEFAULT_SEGMENT_SIZE,
) -> Dataset:
    """The dataset of a checkpoint; ``exchanges`` by edge (``UP:P>DOWN:G``) or by
    ``UP->DOWN``.

    ``segment_size`` is the job's ``taskmanager.memory.segment-size`` (Flink's default
    unless given), which the checkpoint does not record and its chunks do not tell: a chunk
    is often a buffer not full, an input chunk can be larger than a buffer (a record's parts
    put back together), and state inlined in ``_metadata`` larger still.

    Examples
    --------
    The keyed job's checkpoint as a dataset: a row per persisted chunk (29, as Flink's loader
    counted) and a row per piece of a record in a chunk, 1643 records of which 14 span buffers:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.key_selector import key_function
    >>> from flinkstate.flinkcheckpoint.stream_element import value_decoder
    >>> key = key_function("f0%1000", "Tuple2<Long,String>")
    >>> dataset = to_dataset(
    ...     real_checkpoint("keyed-hash-p2-p4"),
    ...     {"to-record->slow-counter": ExchangeSpec("keyBy", key)},
    ...     value=value_decoder("Tuple2<Long,String>"),
    ...     segment_size=4096,
    ... )
    >>> {name: table.num_rows for name, table in dataset.tables.items()}
    {'operators': 4, 'exchanges': 1, 'buffers': 29, 'fragments': 1657, 'keyed_state': 128}
    >>> fragments = dataset.tables["fragments"]
    >>> len(set(fragments["record"].to_pylist())), sum(fragments["continues_into_next"].to_pylist())
    (1643, 14)
    """
    plan = plan_export(path, exchanges, edges=edges, reroot=reroot, segment_size=segment_size)
    rows: dict[str, list[dict[str, Any]]] = {"buffers": [], "fragments": []}
    records = 0
    with StateFiles(plan.directory, reroot) as files:
        for channel in plan.channels:
            records = _channel_rows(
                rows, plan.metadata, channel, plan.specs[channel.edge], files, value, records
            )
    tables = {
        **plan.tables,
        **{name: pa.Table.from_pylist(rows[name], schema=SCHEMAS[name]) for name in rows},
    }
    return Dataset(plan.manifest, {name: tables[name] for name in SCHEMAS})


def _keyed_state_rows(
    rows: dict[str, list[dict[str, Any]]], metadata: CheckpointMetadata, files: StateFiles
) -> list[str]:
    """A row per key group of every keyed-state handle; why a snapshot was not counted."""
    uncounted = []
    for operator in metadata.operators:
        for subtask in operator.subtasks:
            handle = subtask.managed_keyed_state
            if not isinstance(handle, KeyGroupsStateHandle):
                continue
            snapshot = read_keyed_state(handle, files)
            if snapshot.unreadable is not None:
                uncounted.append(f"{operator.label}[{subtask.index}]: {snapshot.unreadable}")
                continue
            rows["keyed_state"] += [
                {
                    "operator": operator.label,
                    "subtask": subtask.index,
                    "key_group_start": handle.first_key_group,
                    "key_group_end": handle.last_key_group,
                    "key_group": group.key_group,
                    "entries": group.total,
                }
                for group in snapshot.key_groups
            ]
    return uncounted


def _spec(edge: Edge, exchanges: Mapping[str, ExchangeSpec]) -> ExchangeSpec:
    for name in (str(edge), exchange_name(edge)):
        if name in exchanges:
            return exchanges[name]
    raise InvalidParameterError(
        f"say how exchange {edge} partitions (exchanges={{'{exchange_name(edge)}': "
        "ExchangeSpec(...)}): the checkpoint does not record it"
    )


def _check_covered(metadata: CheckpointMetadata, channels: Iterable[LogicalChannel]) -> None:
    covered = {id(h) for c in channels for h in (c.input, c.output) if h is not None}
    left = [
        f"{op.label}[{h.subtask}] {h.kind} {h.gate_or_partition}/{h.channel_or_subpartition}"
        for op, h in metadata.channel_handles()
        if id(h) not in covered and h.offsets
    ]
    if left:
        raise InvalidParameterError(
            "channel state no exchange accounts for (name the edges): " + ", ".join(left[:5])
        )


def _channel_rows(
    rows: dict[str, list[dict[str, Any]]],
    metadata: CheckpointMetadata,
    channel: LogicalChannel,
    spec: ExchangeSpec,
    files: StateFiles,
    value: ValueDecoder | None,
    records: int,
) -> int:
    """Buffers and fragments of one logical channel; the next free record id."""
    edge = channel.edge
    parts: list[tuple[str, str, ChannelStateHandle, ChannelData]] = [
        (side, operator, handle, read_channel(handle, files))
        for side, operator, handle in (
            ("input", edge.downstream, channel.input),
            ("output", edge.upstream, channel.output),
        )
        if handle is not None
    ]
    keyed = spec.partitioner is Partitioner.HASH
    decoded = _decode_channel(channel, parts, value if keyed else None, keyed)
    downstream = metadata.operator(edge.downstream)
    max_parallelism = downstream.max_parallelism
    # every record of a keyBy channel is in a key group of the subtask it leads to
    owned = compute_key_group_range_for_operator_index(
        max_parallelism, downstream.parallelism, channel.downstream_subtask
    )
    cursor = _buffer_rows(rows["buffers"], edge, parts)
    for element in decoded.elements:
        if element.tag not in (ElementTag.RECORD, ElementTag.RECORD_WITHOUT_TIMESTAMP):
            continue
        key = spec.key(element.value) if keyed and spec.key is not None else None
        group = (
            assign_to_key_group(key, max_parallelism, spec.java_type) if key is not None else None
        )
        if group is not None and group not in owned:
            raise InvalidParameterError(
                f"a record of {edge} keyed {key!r} is in key group {group}, but it was going "
                f"to {edge.downstream}[{channel.downstream_subtask}], which owns key groups "
                f"{owned}: the key given is not the one the job keyed by (Flink keeps every "
                "in-flight record of a keyBy exchange in the key groups of the subtask it goes "
                "to)"
            )
        total = 4 + element.length
        begin, end = element.offset, element.offset + total
        for buffer_id, position, low, high in cursor.cut(begin, end):
            rows["fragments"].append(
                {
                    "buffer_id": buffer_id,
                    "position": position,
                    "record": records,
                    "key": None if isinstance(key, str) else key,
                    "key_string": key if isinstance(key, str) else None,
                    "key_group": group,
                    "record_bytes": total,
                    "fragment_start": low - begin,
                    "fragment_bytes": high - low,
                    "continues_from_previous": low > begin,
                    "continues_into_next": high < end,
                }
            )
        records += 1
    return records


def _decode_channel(
    channel: LogicalChannel,
    parts: list[tuple[str, str, ChannelStateHandle, ChannelData]],
    value: ValueDecoder | None,
    keyed: bool,
) -> Decoded:
    """The channel's input and output state as one stream of elements (a record may span
    both); refused when a keyed channel's values cannot be read or the stream ends inside a
    record."""
    edge = channel.edge
    stream = b"".join(data.data for *_, data in parts)
    if keyed and value is None:
        raise InvalidParameterError(f"exchange {edge} is keyed: decoding its records needs value=")
    decoded = decode(stream, value, source=f"channel {edge}")
    if decoded.trailing:
        raise InvalidParameterError(
            f"channel {edge} {channel.upstream_subtask}->{channel.downstream_subtask} ends "
            f"inside a record ({decoded.trailing} bytes): not a clean channel"
        )
    return decoded


def _buffer_rows(
    buffers: list[dict[str, Any]],
    edge: Edge,
    parts: list[tuple[str, str, ChannelStateHandle, ChannelData]],
) -> _ChunkCursor:
    """A buffer row per chunk of the channel, in stream order; a cursor over the chunks that
    cuts the records into fragments."""
    ids = []
    sizes = []
    for side, operator, handle, data in parts:
        for order, chunk in enumerate(data.chunks):
            buffer_id = len(buffers)
            buffers.append(
                {
                    "buffer_id": buffer_id,
                    "operator": operator,
                    "subtask": handle.subtask,
                    "side": side,
                    "exchange": exchange_name(edge),
                    "gate_or_partition": handle.gate_or_partition,
                    "channel_or_subpartition": handle.channel_or_subpartition,
                    "order": order,
                    "size": chunk.length,
                }
            )
            ids.append(buffer_id)
            sizes.append(chunk.length)
    return _ChunkCursor(ids, [0, *accumulate(sizes)])


@dataclass
class _ChunkCursor:
    """A channel's chunks (buffer ids) with where each starts in its stream, and how many
    fragments each holds so far. Records come in stream order, so the cursor only moves on."""

    ids: list[int]
    starts: list[int]
    index: int = 0
    positions: dict[int, int] = field(default_factory=dict)

    def cut(self, begin: int, end: int) -> list[tuple[int, int, int, int]]:
        """The pieces of the stream's bytes ``[begin, end)`` (a record) in each chunk it
        touches: (buffer id, position in the buffer, first byte, end byte)."""
        starts = self.starts
        while starts[self.index + 1] <= begin:
            self.index += 1
        pieces = []
        at = self.index
        while at < len(self.ids) and starts[at] < end:
            low, high = max(begin, starts[at]), min(end, starts[at + 1])
            if high > low:
                buffer_id = self.ids[at]
                position = self.positions.get(buffer_id, 0)
                pieces.append((buffer_id, position, low, high))
                self.positions[buffer_id] = position + 1
            at += 1
        return pieces
