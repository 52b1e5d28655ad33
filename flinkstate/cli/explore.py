"""``flinkstate explore``: every interleaving of a topology's run or a scenario's restart.

The explorer (:mod:`flinkstate.sim.explore`) starts from the world the name gives: a
topology's fresh job, or a scenario's restart as ``prepare_scenario`` makes it (the job run to
its first checkpoint with the seed's schedule, then restored), or with ``--phase job`` the
scenario's job from its start. It prints each violation and deadlock with the trace that
reaches it, and the verdict; ``--trace-dir`` writes each trace as a run's trace, which loads
back (``load_topology_trace``, ``load_scenario_trace``) and replays to the state found.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flinkstate.cli.interruption import RUN_FAILED, CommandInterrupted, interrupted
from flinkstate.cli.overrides import parse_overrides
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.counterexample import (
    COUNTEREXAMPLES,
    DEFAULT_MAX_STATES,
    ExplorationSubject,
    exploration_subject,
    is_trace_folder,
    seconds_bound,
    whole_bound,
    write_counterexamples,
)
from flinkstate.lab.scenario_run import PHASES
from flinkstate.output import check_directory_target
from flinkstate.run_rules import SEED
from flinkstate.runtime.options import FAULTS, Fault
from flinkstate.sim.action import Action
from flinkstate.sim.explore import (
    Bounds,
    ExplorationMemoryError,
    ExplorationResult,
    PartialOrder,
    Progress,
    StopReason,
    Strategy,
    explore,
    memory_bound,
)

if TYPE_CHECKING:
    from flinkstate.spark.exploration import LevelProgress

#: actions of a trace shown before and after the ones left out
TRACE_HEAD, TRACE_TAIL = 3, 5


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
        help="bfs (default: shortest traces), dfs (holds its path, not its frontier) or "
        "random-walk (sampling)",
    )
    parser.add_argument(
        "--reduction",
        default=PartialOrder.SLEEP_SETS.value,
        help="sleep-sets (default: transitions into a state reached another way by "
        "independent actions are left out; every state and finding is still reached), "
        "persistent-sets (also fewer states: where no other actor may interfere with one "
        "actor's next step, only that actor's actions are followed; every deadlock and "
        "finding is still reached) or none",
    )
    _add_bounds(parser)
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
    _add_spark(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=_explore)


def _add_spark(parser: argparse.ArgumentParser) -> None:
    """The search on Spark, and its master."""
    parser.add_argument(
        "--spark",
        action="store_true",
        help="breadth first on Spark: the frontier and the states seen partitioned over the "
        "executors, every transition followed (--reduction is not used); the same distinct "
        "states and findings; --time is read between levels; a line per level on stderr",
    )
    parser.add_argument(
        "--master",
        default=None,
        metavar="URL",
        help="with --spark: the Spark master (default: the local Spark Connect server if one "
        "runs, else local[*]; spark://host:7077 for a standalone cluster)",
    )
    parser.add_argument(
        "--swarm",
        default=None,
        metavar="N",
        help="with --spark: N seeded random depth-first searches over the executors instead "
        "(each to --max-depth, default 200, its own --max-states and --time; sampling)",
    )


def _add_bounds(parser: argparse.ArgumentParser) -> None:
    """Where an exploration stops: states, depth, time, walks and the memory budget."""
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
        "--max-memory",
        default=None,
        metavar="SIZE",
        help="stop when the process's resident memory reaches SIZE (as Flink writes memory "
        "sizes: 512mb, 2gb; default: 4gb, or half the machine's memory where that is less)",
    )
    parser.add_argument(
        "--walks", default=None, metavar="N", help="random-walk: how many walks (default 1000)"
    )


def _explore(args: argparse.Namespace) -> tuple[str, int]:
    written: list[str] = []
    try:
        return _explore_command(args, written)
    except KeyboardInterrupt:
        raise CommandInterrupted(interrupted(written)) from None
    except MemoryError:  # outside the search, which says itself what it explored
        pass
    raise ExplorationMemoryError(
        "out of memory before or after the search (the memory budget, --max-memory, bounds "
        "the search only): give a smaller configuration"
    )


def _explore_command(args: argparse.Namespace, written: list[str]) -> tuple[str, int]:
    SEED.check(args.seed)  # the same rule and message as flinkstate run's and the widgets'
    overrides = parse_overrides(args.set)
    strategy = Strategy.parse(args.strategy)
    partial_order = PartialOrder.parse(args.reduction)
    bounds = Bounds(
        max_states=whole_bound(args.max_states, "--max-states", DEFAULT_MAX_STATES),
        max_depth=whole_bound(args.max_depth, "--max-depth"),
        time=seconds_bound(args.time, "--time"),
        walks=whole_bound(args.walks, "--walks"),
        max_memory=memory_bound(args.max_memory, "--max-memory"),
    )
    if args.walks is not None and strategy is not Strategy.RANDOM_WALK:
        raise InvalidParameterError(
            "--walks counts random walks: give it with --strategy random-walk"
        )
    faults = Fault.parse_all(args.fault)
    if args.spark or args.master is not None or args.swarm is not None:
        partial_order = _spark_checked(args, strategy)
    if args.trace_dir is not None:
        args.trace_dir = check_directory_target(args.trace_dir, is_trace_folder, COUNTEREXAMPLES)
    # every parameter checked before exploring
    subject = exploration_subject(
        args.name, overrides=overrides, seed=args.seed, phase=args.phase, faults=faults
    )
    quiet = args.quiet or args.json
    result = (
        _on_spark(subject, bounds, args, quiet=quiet)
        if args.spark
        else _run(subject, strategy, bounds, args.seed, partial_order, quiet=quiet)
    )
    files: list[str] = []
    if args.trace_dir is not None:
        files = [str(f) for f in write_counterexamples(args.trace_dir, subject, result.findings)]
        written.append(str(args.trace_dir))
    status = RUN_FAILED if result.findings else 0
    if args.json:
        return json.dumps(_summary(subject, args, overrides, faults, result, files)), status
    lines = _describe(subject, args.seed, partial_order, result, files, args.trace_dir)
    if args.spark:
        how = "bfs" if args.swarm is None else f"a swarm of {args.swarm} random dfs"
        lines[0] = lines[0].replace(f", {result.strategy.value}, ", f", {how} on Spark, ", 1)
    return "\n".join(lines), status


def _run(
    subject: ExplorationSubject,
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


def _spark_checked(args: argparse.Namespace, strategy: Strategy) -> PartialOrder:
    """--spark's rules, before anything is explored: breadth first, no memory budget (the
    states live in Spark); --master only with it. Its search follows every transition."""
    from flinkstate.spark.session import master_url, probe_master

    if not args.spark:
        raise InvalidParameterError("--master and --swarm are of the search on Spark: give --spark")
    args.swarm = whole_bound(args.swarm, "--swarm")
    if strategy is not Strategy.BFS and args.swarm is None:
        raise InvalidParameterError("--spark explores breadth first only (--strategy bfs)")
    if args.max_memory is not None:
        raise InvalidParameterError(
            "--max-memory bounds a search in this process; with --spark the states live in "
            "Spark (bound it with --max-states, --max-depth or --time)"
        )
    if PartialOrder.parse(args.reduction) is PartialOrder.PERSISTENT_SETS:
        raise InvalidParameterError(
            "--reduction persistent-sets is of the search in this process; --spark follows "
            "every transition (the same distinct states sleep sets reach)"
        )
    probe_master(master_url(args.master))  # a standalone master's address, before any JVM
    args.reduction = PartialOrder.NONE.value
    return PartialOrder.NONE


def _on_spark(
    subject: ExplorationSubject, bounds: Bounds, args: argparse.Namespace, *, quiet: bool
) -> ExplorationResult:
    from flinkstate.lab.spark_exploration import explore_on_spark
    from flinkstate.spark.session import spark_session

    spark = spark_session(args.master)
    if args.swarm is not None:
        from flinkstate.lab.swarm_search import explore_swarm

        return explore_swarm(spark, subject, bounds, args.swarm, args.seed)

    def progress(level: LevelProgress) -> None:
        print(
            f"explore {subject.name} on Spark: depth {level.depth}, {level.frontier:,} states "
            f"on the level, {level.distinct:,} distinct, {level.elapsed:.1f} s",
            file=sys.stderr,
        )

    return explore_on_spark(spark, subject, bounds, None if quiet else progress)


def _shortened(trace: Sequence[Action]) -> str:
    """A trace's actions, the middle left out of a long one."""
    shown = [str(a) for a in trace]
    if len(shown) > TRACE_HEAD + TRACE_TAIL + 1:
        left = len(shown) - TRACE_HEAD - TRACE_TAIL
        shown = [*shown[:TRACE_HEAD], f"... {left} more ...", *shown[-TRACE_TAIL:]]
    return "; ".join(shown) if shown else "(the start itself)"


#: how the verdict line names each reduction
_REDUCTION_WORDS = {
    PartialOrder.SLEEP_SETS: ", sleep sets",
    PartialOrder.PERSISTENT_SETS: ", persistent sets and sleep sets",
}


def _describe(
    subject: ExplorationSubject,
    seed: int,
    partial_order: PartialOrder,
    result: ExplorationResult,
    files: list[str],
    folder: Path | None,
) -> list[str]:
    how = result.strategy.value
    if result.strategy is not Strategy.RANDOM_WALK:
        how += _REDUCTION_WORDS.get(partial_order, "")
    lines = [
        f"{subject.describe()}, {how}, seed {seed}: {result.summary()}",
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
    subject: ExplorationSubject,
    args: argparse.Namespace,
    overrides: dict[str, str],
    faults: frozenset[Fault],
    result: ExplorationResult,
    files: list[str],
) -> dict[str, Any]:
    bounds = result.bounds
    document: dict[str, Any] = {
        "name": subject.name,
        "kind": subject.kind.value,
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
        "persistent_states": result.persistent,
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
    if result.stopped_by is StopReason.MAX_MEMORY:
        document["memory"] = {"max_memory": bounds.max_memory, "resident": result.resident}
    return document
