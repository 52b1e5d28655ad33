"""A real checkpoint summed up for people and machines: operators, keyed state per subtask,
in-flight bytes per channel, and the records of each logical channel (``flinkstate inspect``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.channel_state_file import check_checkpoint_chunks, read_channel
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import KeyGroupsStateHandle
from flinkstate.flinkcheckpoint.inflight import (
    ChannelRecords,
    Edge,
    LogicalChannel,
    channels_of,
    exchange_name,
    read_records,
    record_types,
    resolve_edges,
)
from flinkstate.flinkcheckpoint.key_selector import KeySelector
from flinkstate.flinkcheckpoint.keyed_state import read_keyed_state
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, OperatorState, read_metadata
from flinkstate.flinkcheckpoint.stream_element import RecordTypeError, Row, ValueDecoder
from flinkstate.keygroups import assign_to_key_group, compute_key_group_range_for_operator_index


def checkpoint_dir(path: str | Path) -> Path:
    """A ``chk-N`` directory, from itself or from its ``_metadata`` file.

    Examples
    --------
    >>> checkpoint_dir("/flink-checkpoints/job/chk-48/_metadata").as_posix()
    '/flink-checkpoints/job/chk-48'
    >>> checkpoint_dir("/flink-checkpoints/job/chk-48").as_posix()
    '/flink-checkpoints/job/chk-48'
    """
    target = Path(path)
    return target.parent if target.name == "_metadata" else target


def summarize(
    path: str | Path,
    *,
    edges: Iterable[Edge] | None = None,
    value: ValueDecoder | None = None,
    reroot: Mapping[str, str] | None = None,
    find_record_types: bool = False,
    keys: Mapping[str, KeySelector] | None = None,
    exchanges: Iterable[str] = (),
) -> dict[str, Any]:
    """Everything ``flinkstate inspect`` shows, as plain JSON-ready values.

    Records are framed (length-prefixed) whatever their type, so bytes, records and split
    records need no type; their values need ``value``. Without one, ``find_record_types``
    says per edge which of the usual types read every record (``record_types``); a
    ``value`` that does not read a channel's records is a
    :class:`~flinkstate.flinkcheckpoint.stream_element.RecordTypeError` naming those that do.

    ``keys`` (by exchange, ``UP->DOWN`` or ``UP:P>DOWN:G``; needs ``value``) are the keyBy
    exchanges' key selectors: every in-flight record of such an exchange is checked against
    the key groups of the subtask it goes to (``key_groups``), which is where Flink's
    partitioner sent it, so a record outside them means the key given is not the job's.
    ``exchanges`` names the other exchanges the caller describes (``--exchange``, keyed or not):
    a name, keyed or not, that is no exchange with channel state is refused.

    Examples
    --------
    The keyed job's checkpoint: the in-flight bytes on each side are those Flink's loader found
    (``chk-48.groundtruth.json``), and every record of the keyBy is in the key groups of the subtask
    it goes to:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.key_selector import key_function
    >>> from flinkstate.flinkcheckpoint.stream_element import value_decoder
    >>> summary = summarize(
    ...     real_checkpoint("keyed-hash-p2-p4"),
    ...     value=value_decoder("Tuple2<Long,String>"),
    ...     keys={"to-record->slow-counter": key_function("f0%1000", "Tuple2<Long,String>")},
    ... )
    >>> for name, value in summary["totals"].items():
    ...     print(name, value)
    input_bytes 14180
    output_bytes 50598
    records 1643
    split_records 4
    unclean_channels 0
    >>> check = summary["key_groups"]["checked"][0]
    >>> check["records"], check["outside"]
    (1643, 0)
    >>> summary["logical_channels"][0]["first_value"]
    [23950, 'p23950xxxxxxxxxx']

    Without a record type, the types that read every record:

    >>> summary = summarize(real_checkpoint("rebalance-forward-p2-p3"), find_record_types=True)
    >>> for edge, types in summary["record_types"].items():
    ...     print(edge, types)  # doctest: +NORMALIZE_WHITESPACE
    to-record:0>relay:0 ['Tuple2<Long,String>', 'Tuple2<Double,String>',
    'Tuple3<Integer,Integer,String>']
    """
    directory = checkpoint_dir(path)
    metadata = read_metadata(directory)
    chosen, left_out = resolve_edges(metadata, edges)
    selectors = _selectors(metadata.checkpoint_id, chosen, keys or {}, exchanges)
    if selectors and value is None:
        raise InvalidParameterError("checking keys reads the records' values: give value=")
    checks = {edge: _key_check(edge, key) for edge, key in selectors.items()}
    #: what the reader could not check or had to leave out, said in the tables and the JSON
    warnings = list(left_out)
    operators = []
    keyed: list[dict[str, Any]] = []
    channels: list[dict[str, Any]] = []
    read: dict[int, bytes] = {}  # each channel's bytes, read once for both tables
    with StateFiles(directory, reroot) as files:
        check_checkpoint_chunks(metadata, files)
        for operator in metadata.operators:
            operators.append(_operator_row(operator, files, read, keyed, channels, warnings))
        logical = []
        fitting: dict[str, list[str]] = {}  # by edge: the types that read all its records
        for pair in channels_of(metadata, chosen):
            records = _channel_records(pair, files, value, read)
            if value is None and find_record_types:
                found = record_types(pair, files, lambda h: read[id(h)], records.elements)
                if found is not None:  # a channel without records rules nothing out
                    edge = str(pair.edge)
                    fitting[edge] = [t for t in fitting.get(edge, found) if t in found]
            if records.trailing:
                warnings.append(
                    f"channel {pair.edge} {pair.upstream_subtask}->{pair.downstream_subtask} "
                    f"ends {records.trailing} bytes inside a record: its data is not whole "
                    "records, which Flink never writes"
                )
            if pair.edge in checks:
                down = metadata.operator(pair.edge.downstream)
                _check_keys(checks[pair.edge], selectors[pair.edge], pair, records, down)
            logical.append(_logical_row(pair, records))
    return {
        "checkpoint": str(directory),
        "checkpoint_id": metadata.checkpoint_id,
        "metadata_version": metadata.version,
        "operators": operators,
        "keyed_state": keyed,
        "channels": channels,
        "logical_channels": logical,
        "totals": {
            "input_bytes": sum(c["bytes"] for c in channels if c["side"] == "input"),
            "output_bytes": sum(c["bytes"] for c in channels if c["side"] == "output"),
            "records": sum(c["records"] for c in logical),
            "split_records": sum(c["split_record"] for c in logical),
            "unclean_channels": sum(1 for c in logical if c["trailing_bytes"]),
        },
        "warnings": warnings,
        **({"record_types": fitting} if value is None and find_record_types else {}),
        "key_groups": {
            "checked": list(checks.values()),
            "not_checked": None if checks or not logical else _not_checked(metadata, chosen),
        },
    }


def _operator_row(
    operator: OperatorState,
    files: StateFiles,
    read: dict[int, bytes],
    keyed: list[dict[str, Any]],
    channels: list[dict[str, Any]],
    warnings: list[str],
) -> dict[str, Any]:
    """An operator's row, its state summed over its subtasks; on the way each subtask's keyed
    state and channels get their rows (and the channels' bytes are kept in ``read`` for the
    logical channels, so that each file is read once)."""
    in_flight = {"input": 0, "output": 0}
    keyed_bytes = operator_bytes = 0
    for subtask in operator.subtasks:
        handle = subtask.managed_keyed_state
        if isinstance(handle, KeyGroupsStateHandle):
            keyed_bytes += handle.state_size
            row = _keyed_row(operator, subtask.index, handle, files)
            keyed.append(row)
            if row["entries_unreadable"]:
                warnings.append(
                    f"keyed state entries of {operator.label}[{subtask.index}] not "
                    f"counted: {row['entries_unreadable']}"
                )
        for op_handle in (subtask.managed_operator_state, subtask.raw_operator_state):
            if op_handle is not None:
                operator_bytes += op_handle.state_size
        for channel in subtask.channel_handles():
            data = read_channel(channel, files)
            read[id(channel)] = data.data
            in_flight[channel.kind] += data.size
            channels.append(
                {
                    "operator": operator.label,
                    "subtask": channel.subtask,
                    "side": channel.kind,
                    "gate_or_partition": channel.gate_or_partition,
                    "channel_or_subpartition": channel.channel_or_subpartition,
                    "chunks": len(data.chunks),
                    # where each chunk's length prefix is in the file (Flink's
                    # offsets) and the bytes of data after it
                    "offsets": [chunk.offset for chunk in data.chunks],
                    "lengths": [chunk.length for chunk in data.chunks],
                    "bytes": data.size,
                    "stored_in": files.describe(channel.delegate)
                    if channel.delegate is not None
                    else "",
                }
            )
    return {
        "operator": operator.label,
        "name": operator.name,
        "uid": operator.uid,
        "id": operator.operator_id,
        "parallelism": operator.parallelism,
        "max_parallelism": operator.max_parallelism,
        "subtasks_with_state": len(operator.subtasks),
        "keyed_state_bytes": keyed_bytes,
        "operator_state_bytes": operator_bytes,
        "input_bytes": in_flight["input"],
        "output_bytes": in_flight["output"],
    }


def _keyed_row(
    operator: OperatorState, subtask: int, handle: KeyGroupsStateHandle, files: StateFiles
) -> dict[str, Any]:
    """A subtask's keyed state: its key groups, bytes, and the entries of each state (where
    they can be counted; ``entries_unreadable`` says why not)."""
    snapshot = read_keyed_state(handle, files)
    return {
        "operator": operator.label,
        "subtask": subtask,
        "key_groups": [handle.first_key_group, handle.last_key_group],
        "bytes": handle.state_size,
        "states": [
            {"name": s.name, "kind": s.kind, "entries": count}
            for s, count in zip(
                snapshot.states,
                snapshot.state_entries().values(),
                strict=True,
            )
        ],
        "entries": snapshot.entries,
        "entries_unreadable": snapshot.unreadable,
    }


def _channel_records(
    pair: LogicalChannel, files: StateFiles, value: ValueDecoder | None, read: dict[int, bytes]
) -> ChannelRecords:
    """A logical channel's records from the bytes already read; a value type that does not
    read them is refused naming the types that do."""
    try:
        return read_records(pair, files, value, lambda h: read[id(h)])
    except RecordTypeError as wrong:
        types = record_types(pair, files, lambda h: read[id(h)])
        raise RecordTypeError(
            wrong.file,
            wrong.offset,
            f"{wrong.expected}: not a record of the type given; "
            + types_that_read_text(types or []),
        ) from None


def _logical_row(pair: LogicalChannel, records: ChannelRecords) -> dict[str, Any]:
    """A logical channel's bytes on both sides, its records and its first and last value."""
    values = [r.value for r in records.records if r.value is not None]
    return {
        "edge": str(pair.edge),
        "upstream_subtask": pair.upstream_subtask,
        "downstream_subtask": pair.downstream_subtask,
        "input_bytes": records.input_bytes,
        "output_bytes": records.output_bytes,
        "records": len(records.records),
        "other_elements": len(records.elements) - len(records.records),
        "split_record": records.split,
        "trailing_bytes": records.trailing,
        "first_value": _plain(values[0]) if values else None,
        "last_value": _plain(values[-1]) if values else None,
    }


def _not_checked(metadata: CheckpointMetadata, chosen: tuple[Edge, ...]) -> str:
    """Why no in-flight record was checked against key groups, and how to check them: a keyBy
    exchange's consumer keeps keyed state, so the exchanges into such consumers are the ones
    worth a key; with none, nothing in the checkpoint says any exchange is keyed."""
    keyed = [
        exchange_name(edge)
        for edge in chosen
        if any(
            s.managed_keyed_state is not None or s.raw_keyed_state is not None
            for s in metadata.operator(edge.downstream).subtasks
        )
    ]
    how = (
        "--exchange UP->DOWN=hash:KEY with --record-type checks each in-flight record against "
        "the key groups of the subtask it goes to"
    )
    if not keyed:
        return (
            "no operator that receives in-flight data keeps keyed state, so no exchange here "
            f"looks like a keyBy (to check one all the same: {how})"
        )
    return f"no key given: {how} (e.g. {keyed[0]}=hash:f0; keyed consumers: {', '.join(keyed)})"


def _selectors(
    checkpoint_id: int,
    chosen: tuple[Edge, ...],
    keys: Mapping[str, KeySelector],
    exchanges: Iterable[str] = (),
) -> dict[Edge, KeySelector]:
    """Each chosen edge's key selector, by its ``UP:P>DOWN:G`` or ``UP->DOWN`` name; a name
    (of a key or of ``exchanges``) that is no chosen edge is refused, naming those there are."""
    named = {name: edge for edge in chosen for name in (str(edge), exchange_name(edge))}
    unknown = sorted((set(keys) | set(exchanges)) - set(named))
    if unknown:
        raise InvalidParameterError(
            f"no exchange {', '.join(map(repr, unknown))} carried channel state in checkpoint "
            f"{checkpoint_id}; its exchanges are: "
            + (", ".join(sorted(exchange_name(e) for e in chosen)) or "none")
        )
    return {named[name]: selector for name, selector in keys.items()}


def _key_check(edge: Edge, key: KeySelector) -> dict[str, Any]:
    """An edge's key-group check before any record: what ``_check_keys`` adds up."""
    return {
        "edge": str(edge),
        "exchange": exchange_name(edge),
        "key": key.spec,
        "key_type": key.java_type.java_name,
        "records": 0,
        "outside": 0,
        "outside_input": 0,
        "outside_output": 0,
        "example": None,
    }


def _check_keys(
    check: dict[str, Any],
    key: KeySelector,
    pair: LogicalChannel,
    records: ChannelRecords,
    downstream: OperatorState,
) -> None:
    """Add one logical channel's records to its edge's check: each against the key groups of
    the subtask it goes to (``KeyGroupStreamPartitioner`` sent it there): on the input side
    the subtask holding it, on the output side the one its subpartition leads to. A record
    split between the two sides counts where it starts."""
    max_parallelism = downstream.max_parallelism
    owned = compute_key_group_range_for_operator_index(
        max_parallelism, downstream.parallelism, pair.downstream_subtask
    )
    for record in records.records:
        group = assign_to_key_group(key(record.value), max_parallelism, key.java_type)
        check["records"] += 1
        if group in owned:
            continue
        side = "input" if record.offset < records.input_bytes else "output"
        check["outside"] += 1
        check[f"outside_{side}"] += 1
        if check["example"] is None:
            check["example"] = (
                f"key {key(record.value)!r} of {_plain(record.value)!r} is in key group "
                f"{group}, but this record in the {side} state of channel "
                f"{pair.upstream_subtask}->{pair.downstream_subtask} goes to "
                f"{pair.edge.downstream}[{pair.downstream_subtask}], which owns key groups "
                f"{owned}"
            )


def types_that_read_text(types: list[str]) -> str:
    """The types that read every record sampled, said as a suggestion.

    Examples
    --------
    >>> types_that_read_text(["Tuple2<Long,String>", "Tuple2<Double,String>"])
    'these types read every record sampled: Tuple2<Long,String>, Tuple2<Double,String>'
    """
    if not types:
        return (
            "none of the types tried reads them (scalars, and Tuple2 and Tuple3 of Long, "
            "Integer, String): give the type, or read them raw"
        )
    return "these types read every record sampled: " + ", ".join(types)


def _plain(value: object) -> object:
    if isinstance(value, Row):
        return {"kind": value.kind, "fields": [_plain(v) for v in value.fields]}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value
