"""``flinkstate scenarios`` and ``flinkstate run SCENARIO``: recovery scenarios."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flinkstate.catalogue.presets import PresetValues, fit_network_buffers
from flinkstate.catalogue.scenario import Outcome, expectation
from flinkstate.catalogue.scenarios import SCENARIOS, get_scenario, scenarios_of_bug
from flinkstate.cli.overrides import parse_overrides
from flinkstate.cli.run_report import (
    buffer_table,
    event_time_line,
    failover_lines,
    invariant_lines,
    page_line,
    write_run_page,
)
from flinkstate.cli.table import render_table
from flinkstate.errors import InsufficientNetworkBuffersError, InvalidParameterError
from flinkstate.lab.scenario_run import ScenarioRun, run_scenario
from flinkstate.output import check_target, written_whole
from flinkstate.run_rules import SEED
from flinkstate.runtime.buffer.records import StreamElementKind
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint
from flinkstate.runtime.jobgraph import JobGraph

#: exit status of a scenario whose outcome differs from the expected one
UNEXPECTED = 1


def add_scenarios_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "scenarios", help="list the recovery scenarios and what each is expected to show"
    )
    parser.add_argument("name", nargs="?", help="show one scenario in full")
    parser.add_argument(
        "--bug",
        metavar="FLINK-NNNNN",
        help="list the scenarios of one of Flink's issues: its fix's before and after",
    )
    parser.set_defaults(handler=_scenarios)


def _scenarios(args: argparse.Namespace) -> str:
    if args.bug is not None:
        if args.name is not None:
            raise InvalidParameterError("give a scenario's name or --bug, not both")
        found = scenarios_of_bug(args.bug)
        rows = [[s.name, s.expected.value, s.title] for s in found]
        return (
            render_table(["scenario", "expected", "what it shows"], rows)
            + "\n\nflinkstate scenarios NAME shows one in full; flinkstate run NAME runs it."
        )
    if args.name is not None:  # an empty name is a name nobody has, not "all of them"
        item = get_scenario(args.name)
        values = item.resolve()
        lines = [
            f"{item.name}: {item.title}",
            "",
            item.explanation,
            "",
            f"topology: {item.topology}",
            f"expected outcome: {item.expected.value}",
            f"from: {item.reference}",
            "parameters that matter: "
            + ", ".join(f"{name}={values[name]}" for name in item.matters),
        ]
        if item.rescale:
            lines.append(
                "restart parallelism: " + ", ".join(f"{k}={v}" for k, v in item.rescale.items())
            )
        return "\n".join(lines)
    rows = [[s.name, s.topology, s.expected.value, s.title] for s in SCENARIOS.values()]
    return (
        render_table(["scenario", "topology", "expected", "what it shows"], rows)
        + "\n\nflinkstate scenarios NAME shows one in full; flinkstate run NAME runs it."
    )


def run_scenario_command(
    args: argparse.Namespace,
    overrides: dict[str, object],
    written: list[str],
    preset: PresetValues | None = None,
) -> tuple[str, int]:
    """Run a scenario (with ``overrides``, a ``preset``'s values among them); with
    ``args.trace`` (a target already checked) write every phase of it, and name in
    ``written`` each output once it is written whole."""
    steps = 2_000_000 if args.steps is None else args.steps

    def attempt(values: Mapping[str, object]) -> ScenarioRun:
        return run_scenario(
            args.name, seed=args.seed, overrides=values, scheduler=args.scheduler, max_steps=steps
        )

    if preset is None:
        run = attempt(overrides)
    else:
        run, preset, overrides = fit_network_buffers(
            attempt,
            preset,
            overrides,
            lambda run: isinstance(run.refused, InsufficientNetworkBuffersError),
        )
    traced = None
    if args.trace is not None:
        from flinkstate.lab.scenario_trace import write_scenario_trace

        write_scenario_trace(args.trace, run)
        written.append(str(args.trace))
        phases = run.phase_events()
        traced = (
            "steps per phase " + ", ".join(f"{name} {len(events)}" for name, events in phases)
            if phases
            else "no phase ran, the header only"
        )
    exported = None
    if args.export is not None and run.checkpoint is not None and run.job is not None:
        from flinkstate.dataset import write_dataset
        from flinkstate.lab.simulation_export import from_simulation

        description = f"scenario {run.scenario.name} seed {run.seed}: checkpoint before restart"
        write_dataset(from_simulation(run.job, run.checkpoint, description), args.export)
        exported = run.checkpoint.id
    status = 0 if run.as_expected else UNEXPECTED
    page = {} if args.html is None else write_run_page(args, overrides, scenario=True)
    if args.json:
        chosen = {} if preset is None else {"preset": preset.preset.value}
        return json.dumps({**run.summary(), **chosen, **page}), status
    lines = _describe(run, exported, args.export, preset)
    if traced is not None:
        lines.append(f"trace: {traced} written to {args.trace}")
    if page:
        lines.append(page_line(page))
    return "\n".join(lines), status


def _checkpoint_line(label: str, checkpoint: Checkpoint) -> str:
    """What a checkpoint holds in flight, in one line."""
    inputs = sum(len(s.buffers) for s in checkpoint.input_channel_state)
    outputs = sum(len(s.buffers) for s in checkpoint.result_subpartition_state)
    kinds = Counter(r.kind for r in checkpoint.records if r.id in checkpoint.persisted_watermarks)
    watermarks = kinds[StreamElementKind.WATERMARK]
    statuses = kinds[StreamElementKind.WATERMARK_STATUS]
    return (
        f"{label}: {checkpoint.in_flight_bytes} bytes in flight ({inputs} input buffers, "
        f"{outputs} output buffers, {len(checkpoint.persisted_records)} records"
        + (f", {watermarks} watermarks" if watermarks else "")
        + (f", {statuses} watermark status(es)" if statuses else "")
        + ")"
    )


def _changes(before: JobGraph | None, after: JobGraph) -> str:
    """The operators whose parallelism a restart changed ("same parallelism" if none)."""
    if before is None:
        return "same parallelism"
    changes = [
        f"{op.name} {op.parallelism} -> {after.operator(op.name).parallelism}"
        for op in before.operators
        if op.parallelism != after.operator(op.name).parallelism
    ]
    return ", ".join(changes) if changes else "same parallelism"


def _describe(
    run: ScenarioRun, exported: int | None, export: object, preset: PresetValues | None
) -> list[str]:
    item = run.scenario
    # the title's figures are the scenario's; say which are not this run's
    differences = run.differences()
    verdict = (
        "as expected"
        if run.as_expected
        else expectation(item.expected.value, other_values=bool(differences))
    )
    lines = [
        f"{item.name} (seed {run.seed}): {run.outcome.value}, {verdict}",
        f"  {item.title} ({item.reference})",
    ]
    if preset is not None:
        lines.append(f"  {preset.describe()}")
        differences = {k: v for k, v in differences.items() if preset.values.get(k) != v}
    if differences:
        lines.append(
            f"  {'beyond the preset, ' if preset is not None else ''}this run differs from "
            "the scenario: " + ", ".join(f"{k}={v}" for k, v in sorted(differences.items()))
        )
    if run.message:
        lines += ["", run.message]
    checkpoint = run.checkpoint
    if checkpoint is not None:
        lines += ["", _checkpoint_line(f"checkpoint {checkpoint.id}", checkpoint)]
    second = run.second_checkpoint
    restored_from = checkpoint
    if second is not None and second.graph is not None and checkpoint is not None:
        # three phases: the first restart ran to its own first checkpoint, restored from again
        lines.append(
            f"first restart: {_changes(checkpoint.graph, second.graph)}; "
            + _checkpoint_line(f"its checkpoint {second.id}", second)
        )
        restored_from = second
    if run.assignment is not None and restored_from is not None:
        which = "restart" if second is None else "second restart"
        lines.append(
            f"{which}: {_changes(restored_from.graph, run.assignment.graph)}"
            f"; {run.recovered_bytes} bytes recovered, {run.filtered_records} records "
            "filtered out"
        )
    result = run.result
    if result is not None:
        resumed = run.resumed_step
        ended = "failed over" if run.outcome is Outcome.JOB_FAILED else result.status.value
        lines.append(
            f"restored job: {ended} after {result.steps} steps"
            + ("" if resumed is None else f"; every task running from step {resumed}")
        )
        world = run.world
        if world is not None:
            lines.append(f"recovery code: {world.effective_generation.value}")
            if world.recovery_note:
                lines.append(f"  {world.recovery_note}")
        if world is not None and world.graph.event_time:
            lines.append(event_time_line(world))
        if world is not None and world.heap_peak:
            lines.append(
                f"heap used by recovery buffers outside the network pools: peak "
                f"{world.heap_peak} bytes"
            )
    if run.buffers is not None:
        lines += ["", buffer_table(run.buffers, only_used=True)]
    if run.world is not None and run.world.failover is not None:
        lines += ["", *failover_lines(run.world)[:-1]]
    if result is not None:
        lines += ["", *invariant_lines(result)]
    if exported is not None:
        lines.append(f"checkpoint {exported} exported to {export}")
    return lines


def add_whatif_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "whatif",
        help="run a scenario over a grid of parameters and tabulate the outcomes",
        description="Run SCENARIO for every combination of the --vary values and every seed; "
        "print one row per run (progress on stderr).",
    )
    parser.add_argument("name", metavar="SCENARIO", help="a scenario (flinkstate scenarios)")
    parser.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="a parameter and the values to try; repeatable (the grid is their product)",
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="fixed for every run"
    )
    parser.add_argument("--seeds", default="0", help="comma-separated seeds (default 0)")
    parser.add_argument("--csv", type=Path, default=None, help="also write the table as CSV")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=_whatif)


_SHOWN = [
    "seed",
    "outcome",
    "as_expected",
    "steps",
    "recovered_bytes",
    "filtered_records",
    "resumed_step",
    "heap_peak_bytes",
]


def _whatif(args: argparse.Namespace) -> tuple[str, int]:
    from flinkstate.lab.whatif import what_if

    grid: dict[str, list[str]] = {}
    for pair in args.vary:
        key, sep, values = pair.partition("=")
        key = key.strip()
        if not sep or not key or not values.strip():
            raise InvalidParameterError(f"--vary takes KEY=V1,V2,..., got {pair!r}")
        if key in grid:
            raise InvalidParameterError(
                f"--vary {key} is given twice; give all its values in one --vary "
                f"{key}={','.join([*grid[key], values.strip()])}"
            )
        grid[key] = [v.strip() for v in values.split(",")]
    try:
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        raise InvalidParameterError(f"--seeds takes whole numbers, got {args.seeds!r}") from None
    for seed in seeds:
        SEED.check(seed, "--seeds")  # each one a run's seed, held to flinkstate run's rule
    if args.csv is not None:
        args.csv = check_target(args.csv)  # refused before the runs, not after them
    table = what_if(
        args.name,
        grid,
        seeds=seeds,
        base=parse_overrides(args.set),
        progress=not args.quiet,
    )
    if args.csv is not None:
        with written_whole(args.csv) as out:
            table.to_csv(out, index=False)
    status = 0 if bool(table["as_expected"].all()) else UNEXPECTED
    if args.json:
        return table.to_json(orient="records"), status
    columns = [*grid, *_SHOWN]
    rows = [[_cell(row[c]) for c in columns] for row in table.to_dict("records")]
    lines = [render_table(columns, rows)]
    unexpected = int((~table["as_expected"]).sum())
    lines.append(
        f"\n{len(table)} runs of {args.name}; "
        + (
            "all as expected"
            if not unexpected
            else f"{unexpected} differ from the expected {get_scenario(args.name).expected.value}"
        )
    )
    if args.csv is not None:
        lines.append(f"table written to {args.csv}")
    return "\n".join(lines), status


def _cell(value: object) -> object:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
