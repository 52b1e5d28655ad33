"""``flinkstate inspect PATH``: what a checkpoint Flink wrote holds, in-flight data included."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flinkstate.cli.checkpoint_options import (
    RECORD_TYPES,
    ReadingOptions,
    add_reading_options,
    add_segment_size_option,
    reading_options,
    segment_size,
)
from flinkstate.cli.table import render_table
from flinkstate.errors import InvalidParameterError

if TYPE_CHECKING:
    from flinkstate.flinkcheckpoint.stream_element import ValueDecoder


def add_inspect_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "inspect",
        help="summarise a retained Flink checkpoint: operators, state, in-flight data",
        description="Read a checkpoint that Flink wrote (a chk-N directory or its _metadata; "
        "metadata versions 5-7) and print its operators, keyed state per subtask, in-flight "
        "bytes per channel and the records of each logical channel. Nothing in it is executed.",
    )
    parser.add_argument("path", help="the chk-N directory or its _metadata file")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    add_reading_options(
        parser,
        record_type_help=f"how to decode record values: {RECORD_TYPES}, or 'raw' to keep bytes "
        "(default: bytes, records and split records from the framing alone, and the types "
        "that read every record)",
        exchange_note=". A keyed exchange's in-flight records are checked against the key "
        "groups of the subtask they go to, with or without --export",
    )
    parser.add_argument(
        "--export",
        type=Path,
        metavar="DIR",
        help="also write the checkpoint as a dataset (for flinkstate rescale and the notebooks); "
        "needs --exchange for every exchange with state",
    )
    add_segment_size_option(
        parser, prefix="with --export (default: the job-config.txt beside the checkpoint's): "
    )
    parser.add_argument(
        "--job-config",
        type=Path,
        metavar="FILE",
        help="with --export: the job's key=value configuration, whose segment size the dataset "
        "takes (default: job-config.txt beside the checkpoint, as flinkstate forecast reads it)",
    )
    parser.set_defaults(handler=_inspect)


def _inspect(args: argparse.Namespace) -> str:
    from flinkstate.flinkcheckpoint.summary import summarize

    reading = reading_options(args)
    size = segment_size(args)
    if args.export is not None:
        from flinkstate.dataset import check_dataset_target

        check_dataset_target(args.export)  # refused before the checkpoint is read
    elif size is not None:
        raise InvalidParameterError("--segment-size says how to export: give --export DIR too")
    elif args.job_config is not None:
        raise InvalidParameterError("--job-config says how to export: give --export DIR too")
    if reading.record_type == "raw":  # refused before the checkpoint is read
        reading.require_values("")
    value = reading.value()
    summary = summarize(
        args.path,
        edges=reading.edges,
        value=value,
        reroot=reading.reroot,
        find_record_types=reading.record_type is None,
        keys=reading.keys() if value is not None else None,
        exchanges=reading.exchanges,  # a name that is no exchange refused, keyed or not
    )
    if reading.record_type is None:  # the summary found the types that read the records
        reading.require_values(_reading(summary["record_types"]))
    exported = ""
    if args.export is not None:
        exported = _export(args, reading, value, size)
    if args.json:
        return json.dumps(summary, indent=2)
    return render(summary) + exported


def _export(
    args: argparse.Namespace,
    reading: ReadingOptions,
    value: ValueDecoder | None,
    size: int | None,
) -> str:
    """Write the checkpoint as a dataset, its buffers cut at ``--segment-size``, else at the
    job's (its job-config.txt), else at Flink's default; and say which."""
    from flinkstate.dataset import write_dataset
    from flinkstate.flinkcheckpoint.export import to_dataset
    from flinkstate.lab.real_checkpoint import job_segment_size

    if size is None:
        setting = job_segment_size(args.path, args.job_config)
        size, source = int(str(setting.value)), setting.source
        if source.startswith("Flink's default"):
            source = "Flink's default, give --segment-size or a job-config.txt"
    else:
        source = "--segment-size"
    dataset = to_dataset(
        args.path,
        reading.exchanges,
        value=value,
        edges=reading.edges,
        reroot=reading.reroot,
        segment_size=size,
    )
    write_dataset(dataset, args.export)
    tables = dataset.tables
    return (
        f"\nwrote the dataset to {args.export} ({tables['buffers'].num_rows} buffers, "
        f"{tables['fragments'].num_rows} fragments, segment size "
        f"{dataset.manifest['segment_size']}: {source})"
    )


def _reading(by_edge: dict[str, list[str]]) -> str:
    """The types that read every record sampled on every edge, as a suggestion."""
    from flinkstate.flinkcheckpoint.summary import types_that_read_text

    lists = list(by_edge.values())
    common = [t for t in lists[0] if all(t in other for other in lists[1:])] if lists else []
    return types_that_read_text(common)


def render(summary: dict[str, Any]) -> str:
    """The summary as the terminal shows it: a table per kind of state, then the totals, the
    record types, the key-group check and the warnings."""
    parts = [
        f"checkpoint {summary['checkpoint_id']} (metadata version {summary['metadata_version']}) "
        f"at {summary['checkpoint']}",
        "",
        _operators_table(summary["operators"]),
    ]
    if summary["keyed_state"]:
        parts += ["", _keyed_state_table(summary["keyed_state"])]
    parts += ["", _channels_table(summary["channels"])]
    if summary["logical_channels"]:
        parts += ["", _logical_channels_table(summary["logical_channels"])]
    parts += ["", _totals_line(summary["totals"])]
    if summary.get("record_types"):
        from flinkstate.flinkcheckpoint.summary import types_that_read_text

        parts += ["", "record values are read with their type only (--record-type):"]
        parts += [
            f"  {edge}: {types_that_read_text(types)}"
            for edge, types in summary["record_types"].items()
        ]
    parts += _key_groups(summary["key_groups"])
    if summary["warnings"]:
        parts += ["", f"{len(summary['warnings'])} warning(s):"]
        parts += [f"  warning: {w}" for w in summary["warnings"]]
    return "\n".join(parts)


def _operators_table(operators: list[dict[str, Any]]) -> str:
    """Per operator its parallelism and the bytes of each kind of state it holds."""
    return render_table(
        [
            "operator",
            "parallelism",
            "max parallelism",
            "keyed bytes",
            "operator-state bytes",
            "input in flight",
            "output in flight",
        ],
        [
            (
                o["operator"],
                o["parallelism"],
                o["max_parallelism"],
                o["keyed_state_bytes"],
                o["operator_state_bytes"],
                o["input_bytes"],
                o["output_bytes"],
            )
            for o in operators
        ],
    )


def _keyed_state_table(keyed_state: list[dict[str, Any]]) -> str:
    """Per keyed subtask its key groups and the size of its keyed state."""
    return render_table(
        ["operator", "subtask", "key groups", "bytes", "entries", "states"],
        [
            (
                k["operator"],
                k["subtask"],
                f"{k['key_groups'][0]}..{k['key_groups'][1]}",
                k["bytes"],
                "?" if k["entries"] is None else k["entries"],
                _states(k["states"]),
            )
            for k in keyed_state
        ],
    )


def _channels_table(channels: list[dict[str, Any]]) -> str:
    """Per channel or subpartition with in-flight data its chunks and bytes."""
    return render_table(
        [
            "operator",
            "subtask",
            "side",
            "gate/partition",
            "channel/subpartition",
            "chunks",
            "bytes",
        ],
        [
            (
                c["operator"],
                c["subtask"],
                c["side"],
                c["gate_or_partition"],
                c["channel_or_subpartition"],
                c["chunks"],
                c["bytes"],
            )
            for c in channels
        ],
    )


def _logical_channels_table(logical_channels: list[dict[str, Any]]) -> str:
    """Per logical channel (an upstream and a downstream subtask of an edge) its bytes on
    both sides and the records they hold."""
    return render_table(
        [
            "edge",
            "subtasks",
            "input bytes",
            "output bytes",
            "records",
            "split record",
            "first value",
        ],
        [
            (
                c["edge"],
                f"{c['upstream_subtask']}->{c['downstream_subtask']}",
                c["input_bytes"],
                c["output_bytes"],
                c["records"],
                "yes" if c["split_record"] else "-",
                _short(c["first_value"]),
            )
            for c in logical_channels
        ],
    )


def _totals_line(totals: dict[str, Any]) -> str:
    """All in-flight data in one sentence."""
    return (
        f"in flight: {totals['input_bytes']:,} bytes of input state, {totals['output_bytes']:,} "
        f"of output state; {totals['records']:,} records, {totals['split_records']} split "
        "between a channel's input and output state"
        + (
            f"; {totals['unclean_channels']} channel(s) end inside a record"
            if totals["unclean_channels"]
            else ""
        )
    )


def _key_groups(found: dict[str, Any]) -> list[str]:
    """Lines on the check of in-flight records against their subtasks' key groups."""
    if found["not_checked"] is not None:
        return ["", f"key groups not checked: {found['not_checked']}"]
    lines = []
    for check in found["checked"]:
        keyed = f"{check['exchange']} keyed by {check['key']} ({check['key_type']})"
        if not check["outside"]:
            lines.append(
                f"  {keyed}: all {check['records']:,} in-flight records are in the key groups "
                "of the subtask they go to"
            )
            continue
        lines += [
            f"  {keyed}: {check['outside']:,} of {check['records']:,} in-flight records are "
            f"outside the key groups of the subtask they go to ({check['outside_input']:,} in "
            f"input state, {check['outside_output']:,} in output state): the key is not the "
            "one the job keyed by",
            f"    e.g. {check['example']}",
        ]
    return ["", "key groups of in-flight records (--exchange):", *lines] if lines else []


def _states(states: list[dict[str, Any]]) -> str:
    """User states by name with their entries; the timer queues as one count."""
    parts = [
        f"{s['name']} {s['kind'].lower()}: {'?' if s['entries'] is None else s['entries']}"
        for s in states
        if s["kind"] != "TIMERS"
    ]
    timers = [s["entries"] for s in states if s["kind"] == "TIMERS"]
    if timers:
        parts.append(f"timers: {'?' if None in timers else sum(timers)}")
    return ", ".join(parts)


def _short(value: object) -> str:
    text = "-" if value is None else json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
