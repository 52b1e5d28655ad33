"""``flinkstate generate``: a large synthetic checkpoint dataset, streamed to Parquet."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from flinkstate.generator import DEFAULT_BATCH, PARTITIONERS, GeneratorSpec


def add_generate_parser(subparsers: Any) -> None:
    defaults = GeneratorSpec(records=1)
    parser = subparsers.add_parser(
        "generate",
        help="write a large synthetic checkpoint dataset (millions of records) to a folder",
        description="Write a checkpoint of source -keyBy/rebalance-> operator with RECORDS "
        "records in flight, following Flink's routing (key groups, round robin) and framing "
        "(records spanning segment-sized buffers), batch by batch with a progress bar. The "
        "dataset appears whole or not at all: it replaces an earlier dataset in DIR only once "
        "complete, and a DIR holding other files is refused.",
    )
    parser.add_argument("directory", type=Path, metavar="DIR", help="the new dataset's folder")
    parser.add_argument("--records", type=int, required=True, help="records in flight")
    parser.add_argument("--partitioner", choices=list(PARTITIONERS), default=defaults.partitioner)
    parser.add_argument("--source-parallelism", type=int, default=defaults.source_parallelism)
    parser.add_argument(
        "--parallelism", type=int, default=defaults.parallelism, help="of the downstream operator"
    )
    parser.add_argument("--max-parallelism", type=int, default=defaults.max_parallelism)
    parser.add_argument(
        "--record-size", type=int, default=defaults.record_size, help="payload bytes"
    )
    parser.add_argument(
        "--record-size-max",
        type=int,
        default=0,
        help="draw payload sizes uniformly from --record-size to this (0: all equal)",
    )
    parser.add_argument("--keys", type=int, default=defaults.keys, help="distinct Long keys")
    parser.add_argument("--segment-size", type=int, default=defaults.segment_size)
    parser.add_argument(
        "--input-buffers",
        type=int,
        default=defaults.input_buffers,
        help="buffers of each channel the consumer had received (its input state); the rest "
        "were still queued at the producer (output state)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="records per batch")
    parser.set_defaults(handler=_generate)


def _generate(args: argparse.Namespace) -> str:
    from tqdm.auto import tqdm

    from flinkstate.dataset import check_dataset_target
    from flinkstate.generator import check_batch, generate

    spec = GeneratorSpec(
        records=args.records,
        partitioner=args.partitioner,
        source_parallelism=args.source_parallelism,
        parallelism=args.parallelism,
        max_parallelism=args.max_parallelism,
        record_size=args.record_size,
        record_size_max=args.record_size_max,
        keys=args.keys,
        segment_size=args.segment_size,
        input_buffers=args.input_buffers,
        seed=args.seed,
    )
    spec.check()  # refuse before the progress bar appears
    check_batch(args.batch)
    check_dataset_target(args.directory)
    with tqdm(total=spec.records, unit="rec", unit_scale=True, file=sys.stderr) as bar:
        generate(spec, args.directory, batch=args.batch, progress=bar.update)
    return f"wrote {spec.records:,} records to {args.directory}"
