"""``flinkstate explore``: every interleaving of a topology's run or a scenario's restart.

The explorer (:mod:`flinkstate.sim.explorer`) starts from the world the name gives: a
topology's fresh job, or a scenario's restart as ``prepare_scenario`` makes it (the job run to
its first checkpoint with the seed's schedule, then restored), or with ``--phase job`` the
scenario's job from its start. It prints each violation and deadlock with the trace that
reaches it, and the verdict; ``--trace-dir`` writes each trace as a run's trace, which loads
back (``load_topology_trace``, ``load_scenario_trace``) and replays to the state found.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flinkstate.cli.interruption import RUN_FAILED, CommandInterrupted, interrupted
from flinkstate.cli.overrides import parse_overrides
from flinkstate.errors import InvalidParameterError
from flinkstate.network.options import FAULTS
from flinkstate.network.topologies import CATALOGUE, topology
from flinkstate.network.topology_trace import topology_trace_header, write_topology_trace
from flinkstate.network.world import NetworkWorld
from flinkstate.output import check_directory_target, directory_written_whole
from flinkstate.recovery.scenario_trace import write_scenario_trace
from flinkstate.recovery.scenarios import PHASES, SCENARIOS, prepare_scenario
from flinkstate.sim.action import Action
from flinkstate.sim.core import Simulation
from flinkstate.sim.explorer import (
    Bounds,
    ExplorationResult,
    Finding,
    PartialOrder,
    Progress,
    Strategy,
    explore,
)
from flinkstate.sim.scheduler import make_scheduler
from flinkstate.sim.trace import MAX_LINE_CHARS, TRACE_FORMAT

#: distinct states explored when no bound is given (a bound keeps memory in hand)
DEFAULT_MAX_STATES = 100_000
#: the scheduler of a scenario's phases before the one explored (``flinkstate run``'s default)
SCHEDULER = "random"
#: actions of a trace shown before and after the ones left out
TRACE_HEAD, TRACE_TAIL = 3, 5
_WHAT = "counterexample traces"


def add_explore_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "explore",
        help="explore every interleaving of a topology's run or a scenario's restart",
        description="Follow every interleaving of the actors' actions from a topology's start "
        "or a scenario's restart (its job run to the first checkpoint with --seed's schedule, "
        "then restored), each distinct state once, checking every invariant and for deadlock "
        "at each. Prints each violation and deadlock with its trace (the shortest, breadth "
        "first) and whether the space was exhausted within the bounds. Exit status 1 when "
        "something was found. Progress on stderr.",
    )
    parser.add_argument(
        "name",
        metavar="NAME",
        help="a topology (flinkstate topologies) or a recovery scenario (flinkstate scenarios)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a parameter; repeatable (small configurations finish)",
    )
    parser.add_argument(
        "--phase",
        choices=PHASES,
        default=None,
        help="of a scenario: its restart (default) or its job from the start",
    )
    parser.add_argument(
        "--strategy",
        default=Strategy.BFS.value,
        help="bfs (default: shortest traces), dfs (little memory) or random-walk (sampling)",
    )
    parser.add_argument(
        "--reduction",
        default=PartialOrder.SLEEP_SETS.value,
        help="sleep-sets (default: transitions into a state reached another way by "
        "independent actions are left out; every state and finding is still reached) or none",
    )
    parser.add_argument(
        "--max-states",
        default=None,
        metavar="N",
        help=f"stop after N distinct states (default {DEFAULT_MAX_STATES:,})",
    )
    parser.add_argument(
        "--max-depth", default=None, metavar="D", help="check states D steps deep, go no deeper"
    )
    parser.add_argument("--time", default=None, metavar="SECONDS", help="stop after this long")
    parser.add_argument(
        "--walks", default=None, metavar="N", help="random-walk: how many walks (default 1000)"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the keys, of a scenario's run to its checkpoint, and of random walks",
    )
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME",
        help="switch on a bug an invariant guards against (of a scenario: in the phase "
        f"explored); repeatable: {', '.join(sorted(FAULTS))}",
    )
    parser.add_argument(
        "--trace-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="write each counterexample as a JSON-lines trace (as flinkstate run --trace "
        "writes one) into DIR, written whole or not at all",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=_explore)


@dataclass(frozen=True)
class Subject:
    """What is explored: the start, and how a trace of it is written as a run's trace."""

    name: str
    kind: str
    phase: str | None
    initial: NetworkWorld
    #: writes the run that takes the given actions from the start to a trace file
    write: Callable[[Path, Sequence[Action]], None]


def _explore(args: argparse.Namespace) -> tuple[str, int]:
    written: list[str] = []
    try:
        return _explore_command(args, written)
    except KeyboardInterrupt:
        raise CommandInterrupted(interrupted(written)) from None


def _explore_command(args: argparse.Namespace, written: list[str]) -> tuple[str, int]:
    overrides = parse_overrides(args.set)
    strategy = Strategy.parse(args.strategy)
    partial_order = PartialOrder.parse(args.reduction)
    bounds = Bounds(
        max_states=_whole(args.max_states, "--max-states", DEFAULT_MAX_STATES),
        max_depth=_whole(args.max_depth, "--max-depth"),
        time=_seconds(args.time),
        walks=_whole(args.walks, "--walks"),
    )
    if args.walks is not None and strategy is not Strategy.RANDOM_WALK:
        raise InvalidParameterError(
            "--walks counts random walks: give it with --strategy random-walk"
        )
    faults = frozenset(args.fault)
    if args.trace_dir is not None:
        args.trace_dir = check_directory_target(args.trace_dir, _is_trace_folder, _WHAT)
    subject = _subject(args, overrides, faults)  # every parameter checked before exploring
    result = _run(
        subject, strategy, bounds, args.seed, partial_order, quiet=args.quiet or args.json
    )
    files: list[str] = []
    if args.trace_dir is not None:
        files = _write_traces(args.trace_dir, subject, result.findings)
        written.append(str(args.trace_dir))
    status = RUN_FAILED if result.findings else 0
    if args.json:
        return json.dumps(_summary(subject, args, overrides, faults, result, files)), status
    lines = _describe(subject, args.seed, partial_order, result, files, args.trace_dir)
    return "\n".join(lines), status


def _whole(raw: str | None, option: str, default: int | None = None) -> int | None:
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise InvalidParameterError(f"{option} takes a whole number of at least 1, got {raw!r}")
    return value


def _seconds(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise InvalidParameterError(f"--time takes a positive number of seconds, got {raw!r}")
    return value


def _subject(
    args: argparse.Namespace, overrides: dict[str, str], faults: frozenset[str]
) -> Subject:
    """The world to explore from, named by a topology or a scenario."""
    if args.name in SCENARIOS:
        return _scenario(args.name, args.phase or "restart", overrides, args.seed, faults)
    if args.name not in CATALOGUE:
        raise InvalidParameterError(
            f"unknown topology or scenario {args.name!r}; topologies: "
            f"{', '.join(sorted(CATALOGUE))}; scenarios: {', '.join(sorted(SCENARIOS))}"
        )
    if args.phase is not None:
        raise InvalidParameterError(
            f"--phase picks a scenario's run; {args.name} is a topology, which runs once"
        )
    item = topology(args.name)
    initial = item.build(overrides, seed=args.seed, faults=faults)  # checks every parameter
    header = dataclasses.replace(
        topology_trace_header(args.name, overrides, seed=args.seed, scheduler=SCHEDULER),
        faults=tuple(sorted(faults)),
    )

    def write(path: Path, actions: Sequence[Action]) -> None:
        simulation = _replayed(
            Simulation(initial.clone, make_scheduler(SCHEDULER, args.seed)), actions
        )
        write_topology_trace(path, header, simulation.events)

    return Subject(args.name, "topology", None, initial, write)


def _scenario(
    name: str, phase: str, overrides: dict[str, str], seed: int, faults: frozenset[str]
) -> Subject:
    def prepare() -> Any:
        return prepare_scenario(
            name, seed=seed, overrides=overrides, scheduler=SCHEDULER, phase=phase, faults=faults
        )

    run = prepare()
    if run.simulation is None:
        raise InvalidParameterError(
            f"{name} has no {phase} to explore: {run.outcome.value}"
            + (f" ({run.message})" if run.message else "")
        )
    initial = run.simulation.model
    assert isinstance(initial, NetworkWorld)

    def write(path: Path, actions: Sequence[Action]) -> None:
        fresh = prepare()  # the earlier phases again, and the explored one from its step 0
        _replayed(fresh.simulation, actions)
        write_scenario_trace(path, fresh)

    return Subject(name, "scenario", phase, initial, write)


def _replayed(simulation: Simulation, actions: Sequence[Action]) -> Simulation:
    for action in actions:
        simulation.step(action)
    return simulation


def _run(
    subject: Subject,
    strategy: Strategy,
    bounds: Bounds,
    seed: int,
    partial_order: PartialOrder,
    *,
    quiet: bool,
) -> ExplorationResult:
    reduction = partial_order.reduction()
    if quiet:
        return explore(
            subject.initial, strategy=strategy, bounds=bounds, seed=seed, reduction=reduction
        )
    from tqdm.auto import tqdm

    with tqdm(
        total=bounds.max_states,
        desc=f"explore {subject.name}",
        unit="state",
        unit_scale=True,
        file=sys.stderr,
    ) as bar:

        def progress(done: Progress) -> None:
            bar.set_postfix(depth=done.depth, reached=done.states, refresh=False)
            bar.update(done.distinct - bar.n)

        return explore(
            subject.initial,
            strategy=strategy,
            bounds=bounds,
            seed=seed,
            reduction=reduction,
            progress=progress,
        )


def _write_traces(folder: Path, subject: Subject, findings: Sequence[Finding]) -> list[str]:
    """Each finding's trace in one folder, swapped in whole when all are written; the files,
    in the order of the findings (a violation's named by its invariant, deadlocks numbered)."""
    names: list[str] = []
    for finding in findings:
        if finding.violation is not None:
            slug = re.sub(r"[^a-z0-9]+", "-", finding.name.lower()).strip("-")
            names.append(f"violation-{slug}.jsonl")
        else:
            names.append(f"deadlock-{sum(n.startswith('deadlock-') for n in names) + 1}.jsonl")
    with directory_written_whole(folder, _is_trace_folder, _WHAT) as temporary:
        for finding, file_name in zip(findings, names, strict=True):
            subject.write(temporary / file_name, finding.trace)
    return [str(folder / file_name) for file_name in names]


def _is_trace_folder(folder: Path) -> bool:
    """A folder that holds only traces (what an earlier ``--trace-dir`` wrote): replaceable."""
    for entry in folder.iterdir():
        if entry.suffix != ".jsonl" or not entry.is_file():
            return False
        try:
            with entry.open(encoding="utf-8") as trace:
                first = json.loads(trace.readline(MAX_LINE_CHARS))
        except (OSError, ValueError):
            return False
        if not isinstance(first, dict) or first.get("format") != TRACE_FORMAT:
            return False
    return True


def _shortened(trace: Sequence[Action]) -> str:
    """A trace's actions, the middle left out of a long one."""
    shown = [str(a) for a in trace]
    if len(shown) > TRACE_HEAD + TRACE_TAIL + 1:
        left = len(shown) - TRACE_HEAD - TRACE_TAIL
        shown = [*shown[:TRACE_HEAD], f"... {left} more ...", *shown[-TRACE_TAIL:]]
    return "; ".join(shown) if shown else "(the start itself)"


def _describe(
    subject: Subject,
    seed: int,
    partial_order: PartialOrder,
    result: ExplorationResult,
    files: list[str],
    folder: Path | None,
) -> list[str]:
    what = subject.name if subject.phase is None else f"{subject.name} ({subject.phase})"
    how = result.strategy.value
    if partial_order is PartialOrder.SLEEP_SETS and result.strategy is not Strategy.RANDOM_WALK:
        how += ", sleep sets"
    lines = [
        f"{what}, {how}, seed {seed}: {result.summary()}",
        f"  {result.states} states reached (with repeats); {result.finished} distinct states "
        "where the run finished",
    ]
    for index, finding in enumerate(result.findings):
        lines += ["", finding.describe(), f"  trace: {_shortened(finding.trace)}"]
        if files:
            lines.append(f"  written to {files[index]}")
    if folder is not None and not result.findings:
        lines += ["", f"no counterexample to write: {folder} is empty"]
    return lines


def _summary(
    subject: Subject,
    args: argparse.Namespace,
    overrides: dict[str, str],
    faults: frozenset[str],
    result: ExplorationResult,
    files: list[str],
) -> dict[str, Any]:
    bounds = result.bounds
    return {
        "name": subject.name,
        "kind": subject.kind,
        "phase": subject.phase,
        "seed": args.seed,
        "overrides": overrides,
        "faults": sorted(faults),
        "strategy": result.strategy.value,
        "reduction": PartialOrder.parse(args.reduction).value,
        "bounds": {
            "max_states": bounds.max_states,
            "max_depth": bounds.max_depth,
            "time": bounds.time,
            "walks": bounds.walks,
        },
        "states": result.states,
        "distinct_states": result.distinct,
        "depth": result.depth,
        "finished_states": result.finished,
        "broken_states": result.broken,
        "elapsed_seconds": result.elapsed,
        "exhausted": result.exhausted,
        "stopped_by": result.stopped_by.value,
        "summary": result.summary(),
        "findings": [
            {
                "kind": f.kind.value,
                "name": f.name,
                "depth": f.depth,
                "found_after": f.found_after,
                "message": f.describe(),
                "trace": [str(a) for a in f.trace],
                "trace_file": files[index] if files else None,
            }
            for index, f in enumerate(result.findings)
        ],
    }
