"""``flinkstate samples``: the sample checkpoints of ``data/``, listed or rebuilt."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from flinkstate.cli.table import render_table


def add_samples_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "samples",
        help="list the sample checkpoints of data/, or write them anew",
        description="List the sample checkpoints (each a scenario's first checkpoint, as a "
        "dataset: data/README.md), or with --write rebuild them from the model.",
    )
    parser.add_argument("names", metavar="NAME", nargs="*", help="only these samples")
    parser.add_argument(
        "--write", type=Path, metavar="DIR", help="write each sample as DIR/NAME/ (e.g. data)"
    )
    parser.set_defaults(handler=_samples)


def _samples(args: argparse.Namespace) -> str:
    from flinkstate.samples import SAMPLES, get_sample, write_samples

    chosen = [get_sample(name) for name in args.names] or list(SAMPLES.values())
    if args.write is not None:
        written = write_samples(args.write, [s.name for s in chosen])
        return "\n".join(f"wrote {path}" for path in written)
    return render_table(
        ["sample", "scenario", "what it shows"], [(s.name, s.scenario, s.shows) for s in chosen]
    )
