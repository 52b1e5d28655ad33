"""``flinkstate forecast CHECKPOINT --to N``: what restoring a checkpoint Flink wrote at
parallelism N (or some operators at their own, ``--to OPERATOR=N``) will do, computed by the
simulator, as tables, JSON or a page to step through."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flinkstate.cli.checkpoint_options import add_reading_options, reading_options
from flinkstate.cli.overrides import parse_overrides
from flinkstate.cli.table import render_table
from flinkstate.runtime.options import RecoveryGeneration

if TYPE_CHECKING:
    from flinkstate.lab.forecast import Forecast


def add_forecast_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "forecast",
        help="what restoring a Flink checkpoint at a new parallelism will do (the simulator)",
        description="Restore a checkpoint Flink wrote (a chk-N directory or its _metadata) at "
        "parallelism N in the simulator and run its recovery to the end: per new subtask the "
        "bytes and records it reads, filters out and keeps; per gate the buffers configured, "
        "held at peak and needed by Flink 2.3's filtering reader (whether the pre-filter "
        "deadlock can occur); Flink 2.3's heap peak against master's spill files; the step "
        "every task runs; any deadlock or broken invariant. The network settings come from "
        "the job-config.txt beside the checkpoint where it gives them, Flink's defaults "
        "otherwise. The exchanges' partitioners are not in the checkpoint: give --exchange.",
    )
    parser.add_argument("checkpoint", type=Path, metavar="CHECKPOINT")
    parser.add_argument(
        "--to",
        required=True,
        action="append",
        metavar="N|OPERATOR=N",
        help="the new parallelism of every operator, or OPERATOR=N of one (repeatable; the "
        "operators not named keep theirs, or take a plain N given too)",
    )
    parser.add_argument(
        "--generation",
        default=RecoveryGeneration.CLASSIC.value,
        choices=[g.value for g in RecoveryGeneration],
        help="the recovery code: classic (Flink <= 2.2, and 2.3 by default), v1 (Flink 2.3 "
        "with checkpointing during recovery), v2 (master); default classic",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a network or run parameter (flinkstate topologies shows them), over job-config.txt",
    )
    add_reading_options(
        parser,
        record_type_help="the records' type, to find the keys of a keyBy exchange (e.g. "
        "Tuple2<Long,String>; flinkstate inspect CHECKPOINT lists the types that read them)",
    )
    parser.add_argument(
        "--job-config",
        type=Path,
        metavar="FILE",
        help="the job's key=value configuration (default: job-config.txt beside the checkpoint)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the scheduler's seed (default 0)")
    parser.add_argument(
        "--steps", type=int, default=5_000_000, help="stop a run after this many steps"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--html", type=Path, metavar="FILE", help="write the restored run as a page to step through"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(handler=_forecast)


#: seconds a run goes before its progress bar shows
PROGRESS_DELAY = 0.5


def _forecast(args: argparse.Namespace) -> str | tuple[str, int]:
    from flinkstate.lab.forecast import prepare_forecast, run_forecast
    from flinkstate.lab.new_parallelism import NewParallelism
    from flinkstate.output import check_target
    from flinkstate.run_rules import MAX_STEPS, SEED

    # everything that can be refused without running, refused first
    SEED.check(args.seed)  # the rules flinkstate run and the stepper hold them to
    MAX_STEPS.check(args.steps, "--steps")
    to = NewParallelism.parse(args.to)
    html = None if args.html is None else check_target(args.html)
    overrides = parse_overrides(args.set)
    reading = reading_options(args)
    reading.require_values(f"flinkstate inspect {args.checkpoint} lists the types that read them")
    value = reading.value()

    def make(generation: RecoveryGeneration | str) -> Forecast:
        return prepare_forecast(
            args.checkpoint,
            to,
            exchanges=reading.exchanges,
            generation=generation,
            overrides=overrides,
            value=value,
            edges=reading.edges,
            reroot=reading.reroot,
            job_config=args.job_config,
            seed=args.seed,
        )

    progress, close = _progress(args.quiet)
    try:
        forecast = run_forecast(
            make(args.generation), max_steps=args.steps, progress=progress, rerun=make
        )
    finally:
        close()
    page = None if html is None else _write_page(forecast, html, args.quiet)
    status = 0 if forecast.outcome == "recovered" else 1
    if args.json:
        summary = forecast.summary()
        if page is not None:
            summary["page"] = page
        return json.dumps(summary, indent=2), status
    text = render(forecast)
    if page is not None:
        text += f"\n\npage written to {page['page']} ({page['page_bytes']:,} bytes)"
    return text, status


def _progress(quiet: bool) -> tuple[Any, Any]:
    """A bar per generation run on stderr (the steps simulated), and what closes them."""
    if quiet:
        return None, lambda: None
    from tqdm.auto import tqdm

    bars: dict[str, Any] = {}
    started: dict[str, float] = {}

    def progress(generation: str, step: int) -> None:
        # a bar only once a run takes a while: a short one would print a rate made of a
        # single jump from 0 to its end
        begun = started.setdefault(generation, time.monotonic())
        bar = bars.get(generation)
        if bar is None:
            if time.monotonic() - begun < PROGRESS_DELAY:
                return
            for done in bars.values():
                done.close()
            bar = bars[generation] = tqdm(
                desc=f"simulating {generation}", unit="step", file=sys.stderr, leave=False
            )
        bar.n = step
        bar.refresh()

    def close() -> None:
        for bar in bars.values():
            bar.close()

    return progress, close


def _write_page(forecast: Forecast, target: Path, quiet: bool) -> dict[str, Any]:
    """The restored run drawn step by step into one page, written whole."""
    from flinkstate.output import write_whole
    from flinkstate.views.page import forecast_page

    bar = None
    if not quiet:
        from tqdm.auto import tqdm

        bar = tqdm(
            total=forecast.result.steps,
            desc="drawing the run",
            unit="step",
            file=sys.stderr,
            delay=PROGRESS_DELAY,
        )

    def progress(step: int) -> None:
        if bar is not None and (step % 250 == 0 or step == forecast.result.steps):
            bar.n = step
            bar.refresh()

    try:
        page = forecast_page(forecast, progress=progress)
    finally:
        if bar is not None:
            bar.close()
    written = write_whole(target, page)
    return {"page": str(written), "page_bytes": len(page.encode())}


def render(forecast: Forecast) -> str:
    """The forecast as the terminal shows it."""
    from flinkstate.cli.run_report import invariant_lines

    summary = forecast.summary()
    old = {op.name: op.parallelism for op in forecast.job.graph.operators}
    parts = [
        f"checkpoint {forecast.checkpoint_id} restored {forecast.to.describe()} with "
        f"{forecast.generation.value} ({forecast.generation.flink}), seed {forecast.seed}: "
        f"{forecast.outcome} after {forecast.result.steps:,} steps",
        "operators: "
        + ", ".join(f"{name} {old[name]} -> {p}" for name, p in summary["operators"].items()),
        "",
        render_table(
            ["setting", "value", "from"],
            [(s.name, s.value, s.source) for s in forecast.settings],
        ),
        "",
        *_subtask_lines(forecast),
        "",
        _gate_table(forecast),
        _prefilter_line(forecast),
        "",
        _generation_table(forecast),
        "",
        _steps_line(forecast),
        *invariant_lines(forecast.result),
        "",
        "notes:",
        *(f"  {note}" for note in forecast.notes),
    ]
    return "\n".join(parts)


def _subtask_lines(forecast: Forecast) -> list[str]:
    """What each new subtask reads, filters out and keeps, then a line for each subtask whose
    run processed or dropped other records than the state said (the run is the truth)."""
    table = render_table(
        [
            "exchange",
            "new subtask",
            "bytes read",
            "records read",
            "filtered",
            "filtered bytes",
            "kept",
            "kept bytes",
        ],
        [
            (
                s.exchange,
                s.subtask,
                s.bytes,
                s.records,
                s.filtered_records,
                s.filtered_bytes,
                s.kept_records,
                s.kept_bytes,
            )
            for s in forecast.subtasks
        ],
    )
    differ = [
        s
        for s in forecast.subtasks
        if (s.processed, s.dropped) != (s.kept_records, s.filtered_records)
    ]
    return [table] + [
        f"  the run processed or dropped other records than these at {s.operator}[{s.subtask}]: "
        f"{s.processed} processed, {s.dropped} dropped"
        for s in differ
    ]


def _gate_table(forecast: Forecast) -> str:
    """Per gate the buffers configured, held at peak and needed by the 2.3 filtering reader."""
    return render_table(
        [
            "gate",
            "channels",
            "exclusive per channel",
            "floating",
            "held at peak",
            "2.3 reader needs (1 + k)",
        ],
        [
            (
                g.gate,
                g.channels,
                g.exclusive_per_channel,
                g.floating,
                g.peak_held,
                g.prefilter_need,
            )
            for g in forecast.gates
        ],
    )


def _generation_table(forecast: Forecast) -> str:
    """The chosen recovery generation beside the others compared: outcome, heap and spill."""
    return render_table(
        [
            "generation",
            "Flink",
            "outcome",
            "heap peak",
            "spilled bytes",
            "spill files",
            "spill segments",
        ],
        [
            (
                name,
                RecoveryGeneration.parse(name).flink,
                figures["outcome"],
                figures["heap_peak_bytes"],
                figures["spilled_bytes"],
                figures["spill_files"],
                figures["spill_segments"],
            )
            for name, figures in (
                (forecast.generation.value, {"outcome": forecast.outcome, **forecast.memory()}),
                *((k, v) for k, v in forecast.compared.items() if k != forecast.generation),
            )
        ],
    )


def _prefilter_line(forecast: Forecast) -> str:
    hazards = [g for g in forecast.gates if g.prefilter_deadlock]
    if not hazards:
        return (
            "pre-filter deadlock (Flink 2.3's filtering reader on network buffers only, "
            "FLINK-39519): cannot occur, every gate's 1 + k fits its exclusive + floating buffers"
        )
    worst = max(hazards, key=lambda g: g.prefilter_need - g.configured)
    return (
        f"pre-filter deadlock (Flink 2.3's filtering reader on network buffers only, "
        f"FLINK-39519): can occur on {len(hazards)} gate(s), e.g. {worst.gate}: 1 + k = "
        f"{worst.prefilter_need} > {worst.exclusive_per_channel} exclusive + {worst.floating} "
        "floating (2.3's heap fallback and FLINK-39519's heap segment avoid it)"
    )


def _steps_line(forecast: Forecast) -> str:
    running = forecast.running_step
    consumed = forecast.consumed_step
    return (
        "every task RUNNING "
        + ("never" if running is None else f"at step {running:,}")
        + "; the recovered data consumed "
        + ("never" if consumed is None else f"at step {consumed:,}")
    )
