"""``flinkstate rescale``: what restoring a checkpoint at another parallelism does to its
in-flight data, computed by Spark, printed as tables and optionally written as an HTML report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flinkstate.cli.checkpoint_options import (
    add_reading_options,
    add_segment_size_option,
    reading_options,
    segment_size,
)
from flinkstate.cli.table import render_table
from flinkstate.errors import InvalidParameterError

if TYPE_CHECKING:
    from flinkstate.spark.rescaling import RescaleResult, RescalingPipeline


def add_rescale_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rescale",
        help="what a new parallelism does to a checkpoint's in-flight data (Spark)",
        description="Route a checkpoint dataset's channel state as Flink would on restoring "
        "it at a new parallelism: bytes and records from each old subtask to each new one, "
        "what every new subtask reads and filters out, its virtual channels and spanning "
        "records. Several --to values (or a range) make a what-if sweep in one Spark job. "
        "Spark runs on the local Spark Connect server if one runs ('flinkstate spark-server "
        "start'), else embedded, unless --master or FLINKSTATE_SPARK_MASTER names a cluster. "
        "What can be checked without the data (the dataset's tables, the parallelisms, the "
        "operators, the --html target, the master's address) is checked before Spark starts.",
    )
    parser.add_argument(
        "checkpoint",
        type=Path,
        metavar="CHECKPOINT",
        help="a dataset folder, or a checkpoint Flink wrote (a chk-N folder or its _metadata), "
        "read by Spark's executors (give --exchange, and --record-type for a keyed one)",
    )
    add_reading_options(
        parser,
        prefix="for a Flink checkpoint: ",
        record_type_help="the records' type (e.g. Tuple2<Long,String>), which gives a keyed "
        "exchange's key and its Java type",
    )
    add_segment_size_option(parser, prefix="for a Flink checkpoint: ")
    parser.add_argument(
        "--to",
        required=True,
        action="append",
        metavar="N",
        help="new parallelism: 5, a list 3,5,8, or a range 2-12; repeatable",
    )
    parser.add_argument(
        "--operator",
        action="append",
        metavar="ID",
        help="operator to rescale (repeatable); default: every operator",
    )
    parser.add_argument("--html", type=Path, metavar="FILE", help="write a self-contained report")
    parser.add_argument("--master", help="Spark master URL (default: local[*])")
    parser.add_argument(
        "--driver-host",
        metavar="ADDRESS",
        help="address of this machine where Spark's driver listens, for a cluster's executors "
        "to reach (default: $SPARK_DRIVER_HOST, else 127.0.0.1 unless $SPARK_LOCAL_IP is set)",
    )
    parser.add_argument(
        "--recover-output-on-downstream",
        action="store_true",
        help="execution.checkpointing.unaligned.recover-output-on-downstream.enabled: the "
        "consumers read the producers' output state",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=_rescale)


def parse_targets(values: list[str]) -> list[int]:
    """``["5", "1,8", "2-4"]`` -> ``[5, 1, 8, 2, 3, 4]``; anything else, a parallelism named
    twice too, is refused by name."""
    targets: list[int] = []
    for value in values:
        for item in value.split(","):
            text = item.strip()
            if "-" not in text[1:]:
                targets.append(_whole(text, text))
                continue
            cut = text.index("-", 1)
            low, high = _whole(text[:cut], text), _whole(text[cut + 1 :], text)
            if high < low:
                raise InvalidParameterError(f"--to range {text} runs backwards")
            if high - low > 1000:
                raise InvalidParameterError(f"--to range {text} is too wide")
            targets.extend(range(low, high + 1))
    repeated = sorted({t for t in targets if targets.count(t) > 1})
    if repeated:  # each target is one rescale; a repeated one was run once, silently
        raise InvalidParameterError(
            f"--to names parallelism {', '.join(map(str, repeated))} more than once"
        )
    return targets


def _whole(text: str, given: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InvalidParameterError(
            f"--to {given!r} is not a parallelism (a whole number, a list 3,5,8 or a range 2-12)"
        ) from None


def _rescale(args: argparse.Namespace) -> str:
    from flinkstate.output import check_target
    from flinkstate.spark.rescaling import RescalingPipeline, sweep_plan
    from flinkstate.spark.session import master_hosts, master_url
    from flinkstate.spark.tables import job_shape

    # everything Spark is not needed for, refused before it starts (that takes seconds)
    targets = parse_targets(args.to)
    flink = _flink_checkpoint(args)
    if flink is None and not args.checkpoint.is_dir():
        raise InvalidParameterError(f"{args.checkpoint} is not a folder")
    sweep_plan(
        # the dataset checked, its two small tables read; or the checkpoint's plan
        job_shape(args.checkpoint) if flink is None else _shape(flink[0].tables),
        targets,
        args.operator,
        recover_output_on_downstream=args.recover_output_on_downstream,
    )
    if args.html is not None:
        args.html = check_target(args.html)
    master_hosts(master_url(args.master))

    from flinkstate.spark.session import spark_session
    from flinkstate.spark.tables import load

    spark = spark_session(args.master, driver_host=args.driver_host)
    if flink is None:
        dataset = load(spark, args.checkpoint)
    else:
        from flinkstate.spark.checkpoint_source import load_planned

        dataset = load_planned(spark, flink)
    pipeline = RescalingPipeline(dataset)
    try:
        result = pipeline.analyse(
            targets,
            args.operator,
            recover_output_on_downstream=args.recover_output_on_downstream,
            progress=not args.quiet,
        )
        key_groups = {}
        if args.html is not None:
            keyed = [e for e in result.exchanges if _keyed(pipeline, e)]
            for to in result.targets:
                for exchange in keyed:
                    key_groups[(exchange, to)] = pipeline.key_groups(
                        exchange,
                        result.parallelism[to][pipeline.shape.exchange(exchange).downstream],
                    )
    finally:
        pipeline.close()
    text = _tables(result)
    if args.html is not None:
        from flinkstate.output import write_whole
        from flinkstate.views.report import report_html

        page = report_html(result, key_groups, source=str(args.checkpoint))
        written = write_whole(args.html, page)
        text += f"\n\nwrote {written} ({len(page.encode()) / 1e6:.1f} MB)"
    return text


def _flink_checkpoint(args: argparse.Namespace) -> Any:
    """The plan of reading a checkpoint Flink wrote (``checkpoint_source.plan_read``, every
    refusal made before Spark starts), or None for a dataset folder."""
    path: Path = args.checkpoint
    options = [args.exchange, args.record_type, args.edge, args.reroot, args.segment_size]
    if path.name != "_metadata" and not (path / "_metadata").is_file():
        if any(options):
            raise InvalidParameterError(
                f"{path} is not a checkpoint Flink wrote (no _metadata): --exchange, "
                "--record-type, --edge, --reroot and --segment-size are for one"
            )
        return None
    from flinkstate.memory_segment import DEFAULT_SEGMENT_SIZE
    from flinkstate.spark.checkpoint_source import plan_read

    reading = reading_options(args)
    size = segment_size(args)
    return plan_read(
        path,
        reading.exchanges,
        reading.record_type,
        edges=reading.edges,
        reroot=reading.reroot,
        segment_size=DEFAULT_SEGMENT_SIZE if size is None else size,
    )


def _shape(tables: dict[str, Any]) -> Any:
    from flinkstate.rescale.routes import JobShape

    return JobShape.of_tables(tables)


def _keyed(pipeline: RescalingPipeline, exchange: str) -> bool:
    from flinkstate.rescale.partitioner import Partitioner

    return pipeline.shape.exchange(exchange).partitioner is Partitioner.HASH


def _tables(result: RescaleResult) -> str:
    """What is in flight, what each target parallelism does to it and, for one target, what
    each new subtask reads."""
    persisted = result.persisted
    lines = [
        result.description,
        "",
        "in flight in the checkpoint:",
        render_table(
            ["exchange", "side", "buffers", "bytes", "records", "spanning"],
            persisted[
                ["exchange", "side", "buffers", "bytes", "records", "spanning"]
            ].values.tolist(),
        ),
        "",
        "after rescaling " + (", ".join(result.rescaled) or "nothing") + ":",
        _sweep_table(result),
    ]
    if len(result.targets) == 1:
        for exchange in result.exchanges:
            lines += ["", f"{exchange}: per new subtask", _subtask_table(result, exchange)]
    return "\n".join(lines)


def _sweep_table(result: RescaleResult) -> str:
    """Per target parallelism and exchange: what is read back, moved and filtered, and skew."""
    return render_table(
        [
            "to",
            "exchange",
            "p",
            "read back",
            "x",
            "moved",
            "records",
            "filtered",
            "%",
            "spanning",
            "busiest",
            "skew",
            "virtual ch",
        ],
        [
            (
                r.to,
                r.exchange,
                f"{r.old_parallelism}->{r.new_parallelism}",
                r.delivered_bytes,
                f"{r.amplification:.2f}",
                r.moved_bytes,
                r.records,
                r.filtered_records,
                f"{100 * r.filtered_share:.1f}",
                r.spanning_records,
                r.max_subtask_bytes,
                f"{r.skew:.2f}",
                r.virtual_channels,
            )
            for r in result.sweep.itertuples()
        ],
    )


def _subtask_table(result: RescaleResult, exchange: str) -> str:
    """Per new subtask of one exchange: whose input it reads, what it filters, its virtual
    channels."""
    rows = result.subtasks[result.subtasks["exchange"] == exchange]
    return render_table(
        [
            "subtask",
            "reads input of",
            "buffers",
            "bytes",
            "records",
            "filtered",
            "filtered bytes",
            "spanning",
            "virtual ch",
            "filtering",
            "with data",
        ],
        [
            (
                r.subtask,
                r.reads_from or "-",
                r.buffers,
                r.bytes,
                r.records,
                r.filtered_records,
                r.filtered_bytes,
                r.spanning_records,
                r.virtual_channels,
                r.filtering_virtual_channels,
                r.virtual_channels_with_data,
            )
            for r in rows.itertuples()
        ],
    )
