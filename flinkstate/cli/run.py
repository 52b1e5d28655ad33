"""``flinkstate topologies`` and ``flinkstate run``: run a catalogued job in the simulator."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flinkstate.catalogue.parameters import by_name
from flinkstate.catalogue.presets import (
    LARGE_PARALLELISM,
    PresetValues,
    fit_network_buffers,
    scenario_preset,
    topology_preset,
)
from flinkstate.catalogue.scenarios import SCENARIOS
from flinkstate.catalogue.topologies import CATALOGUE, topology
from flinkstate.catalogue.topology import Topology
from flinkstate.cli.interruption import RUN_FAILED, CommandInterrupted, interrupted
from flinkstate.cli.overrides import parse_overrides
from flinkstate.cli.run_report import (
    buffer_table,
    event_time_line,
    failover_lines,
    invariant_lines,
    page_line,
    write_run_page,
)
from flinkstate.cli.scenarios import run_scenario_command
from flinkstate.cli.table import render_table
from flinkstate.errors import InsufficientNetworkBuffersError, InvalidParameterError
from flinkstate.lab.topology_trace import topology_trace_header, write_topology_trace
from flinkstate.output import check_target
from flinkstate.run_rules import MAX_STEPS, SEED
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint
from flinkstate.runtime.failover.failover import failover_summary
from flinkstate.runtime.world.metrics import OWNER_KINDS, BufferCounts
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import RunResult, RunStatus, Simulation
from flinkstate.sim.scheduler import make_scheduler


def add_topologies_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("topologies", help="list the catalogued jobs and parameters")
    parser.set_defaults(handler=_topologies)


def add_run_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run a catalogued job or a recovery scenario in the simulator and summarise it",
        description="Run a topology step by step until it finishes, deadlocks or breaks an "
        "invariant (exit status 1 on a deadlock or a broken invariant), or run a recovery "
        "scenario: the job until its first checkpoint, then its restart (exit status 1 only "
        "when the outcome differs from the scenario's expected one).",
    )
    parser.add_argument(
        "name",
        metavar="NAME",
        help="a topology (flinkstate topologies) or a recovery scenario (flinkstate scenarios)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for keys and scheduling")
    parser.add_argument(
        "--scheduler", default="random", help="priority, round-robin or random (default)"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a parameter; repeatable",
    )
    parser.add_argument(
        "--preset",
        default=None,
        metavar="NAME",
        help="start from a preset size: large (every parallelism scaled by one factor, the "
        f"widest operator at most {LARGE_PARALLELISM}, steps between checkpoints alike; --set "
        "still wins)",
    )
    parser.add_argument("--steps", type=int, default=None, help="stop after this many steps")
    parser.add_argument(
        "--trace",
        type=Path,
        default=None,
        metavar="FILE",
        help="write every step as JSON lines (of a scenario: every phase), replayable to the "
        "same state; written whole or not at all",
    )
    parser.add_argument(
        "--export",
        type=Path,
        default=None,
        metavar="DIR",
        help="write the last completed checkpoint as a dataset (Parquet tables, data/README.md)",
    )
    parser.add_argument(
        "--html",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the run as one self-contained page (the canvas, a caption for every "
        "step, a step slider and play; it needs no kernel and no network)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(handler=_run)


def _topologies(args: argparse.Namespace) -> str:
    blocks = []
    for item in CATALOGUE.values():
        rows = [[p.name, str(p.default), p.help] for p in item.parameters]
        blocks.append(
            f"{item.name}: {item.description}\n\n"
            + render_table(["parameter", "default", "meaning"], rows)
        )
    return "\n\n".join(blocks)


def _build_or_refusal(
    item: Topology, values: Mapping[str, object], seed: int
) -> NetworkWorld | InsufficientNetworkBuffersError:
    """The topology's job, or Flink's refusal of it for too few network buffers."""
    try:
        return item.build(values, seed=seed)
    except InsufficientNetworkBuffersError as refused:
        return refused


def _run(args: argparse.Namespace) -> tuple[str, int]:
    written: list[str] = []
    try:
        return _run_command(args, written)
    except KeyboardInterrupt:
        raise CommandInterrupted(interrupted(written)) from None


@dataclass(frozen=True)
class _TopologyRun:
    """A catalogued topology's finished run and the figures its summary and report share."""

    scheduler: str
    preset: PresetValues | None
    result: RunResult
    world: NetworkWorld
    counts: BufferCounts
    events: int
    sources_out: int
    sinks_in: int


def _run_command(args: argparse.Namespace, written: list[str]) -> tuple[str, int]:
    """Run a scenario, or a topology to its end (trace and dataset written), and report it."""
    overrides: dict[str, object] = dict(parse_overrides(args.set))
    _check_options(args)
    if args.name in SCENARIOS:
        preset = None
        if args.preset is not None:
            scenario = SCENARIOS[args.name]
            preset = scenario_preset(args.preset, scenario)
            overrides = scenario.by_name(overrides)
        return run_scenario_command(args, overrides, written, preset)
    if args.name not in CATALOGUE:
        raise InvalidParameterError(
            f"unknown topology or scenario {args.name!r}; topologies: "
            f"{', '.join(sorted(CATALOGUE))}; scenarios: {', '.join(sorted(SCENARIOS))}"
        )
    item = topology(args.name)
    scheduler = make_scheduler(args.scheduler, args.seed)
    initial, preset, overrides = _build(args, item, overrides)
    header = topology_trace_header(
        args.name, overrides, seed=args.seed, scheduler=scheduler.name, max_steps=args.steps
    )
    simulation = Simulation(initial.clone, scheduler, None)  # nobody steps back: no snapshots
    result = simulation.run(args.steps)
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    run = _TopologyRun(
        scheduler.name,
        preset,
        result,
        world,
        BufferCounts.start(initial.owner).apply_all(simulation.events),
        len(simulation.events),
        sum(t.emitted for t in world.tasks.values() if t.kind == "source"),
        sum(t.processed for t in world.tasks.values() if t.kind == "sink"),
    )
    if args.export is not None and not world.checkpoints.completed:
        raise InvalidParameterError(
            "no checkpoint completed, nothing to export (raise --steps or lower "
            "--set checkpoint_interval)"
        )
    if args.trace is not None:
        write_topology_trace(args.trace, header, simulation.events)
        written.append(str(args.trace))
    exported = None if args.export is None else _export(args, run)
    failed = result.status in (RunStatus.DEADLOCK, RunStatus.VIOLATION)
    if args.json:
        summary = _summary(args, run)
        if args.html is not None:
            summary.update(write_run_page(args, overrides, scenario=False))
        return json.dumps(summary), RUN_FAILED if failed else 0
    lines = _report_lines(args, run)
    if args.html is not None:
        lines.append(page_line(write_run_page(args, overrides, scenario=False)))
    if exported is not None:
        lines.append(f"checkpoint {exported} exported to {args.export}")
    return "\n".join(lines), RUN_FAILED if failed else 0


def _check_options(args: argparse.Namespace) -> None:
    """Refuse a bad seed or step count and unwritable outputs before any work, not after it:
    the seed and the step limit by the rules the widgets hold them to."""
    SEED.check(args.seed)  # the same rule and message as the stepper's seed box
    if args.steps is not None:
        MAX_STEPS.check(args.steps, "--steps")
    if args.trace is not None:
        args.trace = check_target(args.trace)  # refused before the run, not after it
    if args.html is not None:
        args.html = check_target(args.html)  # refused before any work
    if args.export is not None:
        from flinkstate.dataset import check_dataset_target

        args.export = check_dataset_target(args.export)  # refused before the run


def _build(
    args: argparse.Namespace, item: Topology, overrides: dict[str, object]
) -> tuple[NetworkWorld, PresetValues | None, dict[str, object]]:
    """The topology's initial world, with the preset (its network buffers doubled until Flink
    accepts them) and the overrides it was built with."""
    if args.preset is None:
        return item.build(overrides, seed=args.seed), None, overrides  # validates every parameter
    preset = topology_preset(args.preset, item)
    built, preset, overrides = fit_network_buffers(
        lambda values: _build_or_refusal(item, values, args.seed),
        preset,
        by_name(overrides, item.parameters),
        lambda built: isinstance(built, InsufficientNetworkBuffersError),
    )
    if isinstance(built, InsufficientNetworkBuffersError):
        raise built
    return built, preset, overrides


def _export(args: argparse.Namespace, run: _TopologyRun) -> int:
    """Write the last completed checkpoint as a dataset; its id."""
    from flinkstate.dataset import write_dataset
    from flinkstate.lab.simulation_export import from_simulation

    last = run.world.checkpoints.completed[-1]
    description = f"{args.name} seed {args.seed} {run.scheduler}: checkpoint {last.id}"
    write_dataset(from_simulation(run.world, last, description), args.export)
    return last.id


def _summary(args: argparse.Namespace, run: _TopologyRun) -> dict[str, Any]:
    """The run as ``--json`` prints it."""
    result, world, counts = run.result, run.world, run.counts
    return {
        "topology": args.name,
        **({} if run.preset is None else {"preset": run.preset.preset.value}),
        "seed": args.seed,
        "scheduler": run.scheduler,
        "status": result.status.value,
        "steps": result.steps,
        "records_emitted_by_sources": run.sources_out,
        "records_processed_by_sinks": run.sinks_in,
        "buffers_at_end": {k: counts.current[k] for k in OWNER_KINDS},
        "buffers_at_peak": {k: counts.peak[k] for k in OWNER_KINDS},
        "checkpoints": [checkpoint_summary(c) for c in world.checkpoints.completed],
        "violations": [str(v) for v in result.violations],
        "deadlock": result.deadlock.describe() if result.deadlock else None,
        **failover_summary(world),
    }


def _report_lines(args: argparse.Namespace, run: _TopologyRun) -> list[str]:
    """The run as the terminal shows it, down to the trace written."""
    result, world = run.result, run.world
    lines = [
        f"{args.name} (seed {args.seed}, scheduler {run.scheduler}): {result.status.value} "
        f"after {result.steps} steps",
        *([] if run.preset is None else [run.preset.describe()]),
        f"records: {run.sources_out} emitted by sources, {run.sinks_in} processed by sinks",
        "",
        buffer_table(run.counts),
        "",
        _checkpoint_table(world),
        "",
        *([event_time_line(world), ""] if world.graph.event_time else []),
        *failover_lines(world),
        *invariant_lines(result),
    ]
    if args.trace is not None:
        lines.append(f"trace: {run.events} events written to {args.trace}")
    return lines


def checkpoint_summary(checkpoint: Checkpoint) -> dict[str, Any]:
    """The figures a reader of a checkpoint looks at first."""
    inputs, outputs = checkpoint.input_channel_state, checkpoint.result_subpartition_state
    fragments = [f for state in (*inputs, *outputs) for f in state.fragments]
    return {
        "id": checkpoint.id,
        "type": "unaligned" if checkpoint.unaligned else "aligned",
        "trigger_step": checkpoint.triggered_at,
        "completion_step": checkpoint.completed_at,
        "input_channels": len(inputs),
        "input_buffers": sum(len(s.buffers) for s in inputs),
        "input_bytes": sum(s.size for s in inputs),
        "output_subpartitions": len(outputs),
        "output_buffers": sum(len(s.buffers) for s in outputs),
        "output_bytes": sum(s.size for s in outputs),
        "records_persisted": len(checkpoint.persisted_records),
        "spanning_fragments": sum(1 for f in fragments if not f.is_whole),
        "keys_in_keyed_state": sum(len(s.keyed_state) for s in checkpoint.subtasks),
    }


def _checkpoint_table(world: NetworkWorld) -> str:
    if not world.checkpoints.completed:
        return "checkpoints: none completed"
    rows: list[list[object]] = []
    for checkpoint in world.checkpoints.completed:
        c = checkpoint_summary(checkpoint)
        rows.append(
            [
                c["id"],
                c["type"],
                f"{c['trigger_step']}-{c['completion_step']}",
                f"{c['input_buffers']} / {c['input_bytes']}",
                f"{c['output_buffers']} / {c['output_bytes']}",
                c["records_persisted"],
                c["spanning_fragments"],
                c["keys_in_keyed_state"],
            ]
        )
    return render_table(
        [
            "checkpoint",
            "type",
            "steps",
            "input buffers / bytes",
            "output buffers / bytes",
            "records",
            "spanning fragments",
            "keys",
        ],
        rows,
    )
