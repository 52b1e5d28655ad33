"""Record what the simulator does, to prove that a change of its code changed nothing.

``record DIR`` runs every recovery scenario (seeds 0, 1 and 2; its trace holds every phase the
run went through) and every catalogued topology (seed 0) through ``flinkstate run NAME --trace
FILE --json``, and keeps each JSON-lines trace and ``--json`` summary in DIR, with a manifest of
their SHA-256. ``compare BEFORE AFTER`` says which differ, and for a trace the first line where
it does. A refactor records before it moves anything and compares after: every file
byte-identical, except for fixes made on purpose.

It also runs ``flinkstate explore --json`` over ``EXPLORATIONS`` (every strategy, both
reductions, a depth bound, the job phase, faults and scenarios with their own mechanisms) and
keeps each result without its timing, so that a change of the model's copying, footprints or
fingerprints shows as a different count of states or transitions.

    python tools/record-behaviour.py record /tmp/before [--jobs 2] [--only NAME,...]
    python tools/record-behaviour.py compare /tmp/before /tmp/after
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import multiprocessing
import sys
import time
from pathlib import Path

SEEDS = (0, 1, 2)
MANIFEST = "manifest.json"
#: a restart at its smallest (one source, one counter, the checkpoint two steps in)
SMALL = (
    "--set", "parallelism=1", "--set", "source_parallelism=1", "--set", "records=2",
    "--set", "record_size=100", "--set", "cost=0", "--set", "checkpoint_interval=2",
    "--set", "slots_per_tm=2", "--set", "network_buffers=16",
)  # fmt: skip
#: the keyed job 2 x 2, no checkpoint (with its records per source)
TWO_BY_TWO_BARE = (
    "--set", "parallelism=2", "--set", "source_parallelism=2",
    "--set", "slots_per_tm=2", "--set", "checkpoint_interval=0", "--set", "network_buffers=16",
)  # fmt: skip
TWO_BY_TWO = (*TWO_BY_TWO_BARE, "--set", "records=1")
#: the 2 x 2 keyed restart of the explorer's benchmark
RESTART = (
    "--set", "parallelism=2", "--set", "source_parallelism=2", "--set", "records=2",
    "--set", "network_buffers=16", "--set", "checkpoint_interval=4",
)  # fmt: skip
#: the README's selective reader, at parallelism 1
README_SMALL = (
    "--seed", "4", "--set", "parallelism=1", "--set", "source_parallelism=1",
    "--set", "records=2", "--set", "record_size=100", "--set", "cost=0",
    "--set", "checkpoint_interval=2", "--set", "network_buffers=32",
)  # fmt: skip
#: (file stem, ``flinkstate explore`` arguments) of every exploration recorded
EXPLORATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("keyed-bfs", ("keyed", "--max-states", "3000")),
    ("keyed-dfs", ("keyed", "--strategy", "dfs", "--max-states", "3000")),
    ("keyed-dfs-depth", ("keyed", "--strategy", "dfs", "--max-depth", "14", "--max-states", "900")),
    ("keyed-unreduced", ("keyed", "--reduction", "none", "--max-states", "3000")),
    ("keyed-walks", ("keyed", "--strategy", "random-walk", "--walks", "40", "--seed", "3")),
    ("keyed-2x2-exhausted", ("keyed", *TWO_BY_TWO, "--max-states", "50000")),
    ("baseline-job", ("baseline-recovery", "--phase", "job", *SMALL, "--max-states", "3000")),
    ("baseline-restart", ("baseline-recovery", *SMALL, "--max-states", "40000")),
    ("restart-2x2", ("baseline-recovery", *RESTART, "--max-states", "6000")),
    ("upscale-1-to-2", ("keyed-upscale", *SMALL, "--set", "new_parallelism=2",
                        "--max-states", "20000")),
    ("prefilter-deadlock", ("prefilter-deadlock", "--max-states", "3000")),
    ("selective-all-gates", ("selective-reading-all-gates", *README_SMALL)),
    ("selective-per-gate", ("selective-reading-per-gate", *README_SMALL)),
    ("checkpoint-during-drain", ("checkpoint-during-drain", *SMALL, "--max-states", "4000")),
    ("same-upstream", ("same-upstream-first-edge", "--max-states", "3000")),
    ("spill-pressure", ("spill-pressure-v2", *SMALL, "--max-states", "4000")),
    ("fault-no-filter", ("keyed-upscale", *SMALL, "--set", "new_parallelism=2",
                         "--fault", "no-filter")),
    ("fault-lose-record", ("keyed", *TWO_BY_TWO_BARE, "--set", "records=2", "--set", "keys=1",
                           "--fault", "lose-record", "--max-states", "12000")),
    ("fault-double-recycle", ("keyed", *TWO_BY_TWO, "--fault", "double-recycle")),
    ("fault-reorder", ("keyed", *TWO_BY_TWO_BARE, "--set", "records=2", "--set", "keys=1",
                       "--set", "record_size=3000", "--fault", "reorder-buffers",
                       "--max-states", "20000")),
    ("fault-no-barrier", ("checkpoint-during-drain", *SMALL,
                          "--fault", "missing-recovery-barrier", "--max-states", "6000")),
)  # fmt: skip


def catalogues() -> tuple[list[str], list[str]]:
    """The scenarios' and the topologies' names, wherever the package keeps them: the recorder
    runs against the code before a move of modules and after it."""
    import importlib

    for scenarios, topologies in (
        ("flinkstate.catalogue.scenarios", "flinkstate.catalogue.topologies"),
        ("flinkstate.catalogue.scenarios", "flinkstate.catalogue.topologies"),
    ):
        try:
            return (
                list(importlib.import_module(scenarios).SCENARIOS),
                list(importlib.import_module(topologies).CATALOGUE),
            )
        except ModuleNotFoundError:
            continue
    raise SystemExit("record-behaviour: found no catalogue of scenarios and topologies")


def runs(only: set[str] | None) -> list[tuple[str, tuple[str, ...]]]:
    """(file stem, ``flinkstate`` arguments) of every run to record: scenarios, topologies,
    then explorations. ``only`` names scenarios or topologies (every seed of each) and
    explorations by their stem (``explore.keyed-bfs``)."""
    scenarios, topologies = catalogues()
    chosen = [(name, seed) for name in scenarios for seed in SEEDS]
    chosen += [(name, 0) for name in topologies]
    todo = [
        (f"{name}.seed{seed}", ("run", name, "--seed", str(seed), "--json"))
        for name, seed in chosen
        if only is None or name in only
    ]
    todo += [
        (f"explore.{stem}", ("explore", *arguments, "--json", "--quiet"))
        for stem, arguments in EXPLORATIONS
        if only is None or f"explore.{stem}" in only
    ]
    return todo


def record_one(job: tuple[str, tuple[str, ...], str]) -> tuple[str, float, int]:
    """Run one job into ``directory``; (stem, seconds, exit status)."""
    from flinkstate.cli import main

    stem, arguments, directory = job
    path = Path(directory) / stem
    if arguments[0] == "run":
        arguments = (*arguments, "--trace", f"{path}.trace.jsonl")
    started = time.monotonic()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(arguments))
    text = out.getvalue()
    if arguments[0] == "explore" and text.startswith("{"):  # the same, whatever the speed
        result = json.loads(text)
        result.pop("elapsed_seconds", None)
        text = json.dumps(result, indent=1, sort_keys=True) + "\n"
    Path(f"{path}.summary.json").write_text(text + err.getvalue(), encoding="utf-8")
    return stem, time.monotonic() - started, status


def record(directory: Path, jobs: int, only: set[str] | None) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    todo = runs(only)
    if not todo:
        print(f"record-behaviour: nothing to record (unknown names: {only})", file=sys.stderr)
        return 2
    started = time.monotonic()
    context = multiprocessing.get_context("fork")
    with context.Pool(jobs) as pool:
        work = [(stem, arguments, str(directory)) for stem, arguments in todo]
        for done, (stem, seconds, status) in enumerate(
            pool.imap_unordered(record_one, work, chunksize=1), 1
        ):
            print(
                f"[{done}/{len(todo)}] {stem}: {seconds:.1f} s, exit {status}",
                file=sys.stderr,
                flush=True,
            )
    manifest = {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.glob("*.json*"))
        if path.name != MANIFEST
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(
        f"recorded {len(todo)} runs ({len(manifest)} files) in {directory} in "
        f"{time.monotonic() - started:.0f} s"
    )
    return 0


def compare(before: Path, after: Path) -> int:
    old = json.loads((before / MANIFEST).read_text(encoding="utf-8"))
    new = json.loads((after / MANIFEST).read_text(encoding="utf-8"))
    problems = []
    for name in sorted(set(old) | set(new)):
        if name not in new or name not in old:
            problems.append(f"{name}: only in {before if name in old else after}")
        elif old[name] != new[name]:
            problems.append(f"{name}: {first_difference(before / name, after / name)}")
    same = len(set(old) & set(new)) - sum(1 for p in problems if "only in" not in p)
    print(f"{same} of {len(set(old) | set(new))} files byte-identical")
    for problem in problems:
        print(f"  differs: {problem}")
    return 1 if problems else 0


def first_difference(a: Path, b: Path) -> str:
    left = a.read_text(encoding="utf-8").splitlines()
    right = b.read_text(encoding="utf-8").splitlines()
    for number, (x, y) in enumerate(zip(left, right, strict=False), 1):
        if x != y:
            at = next(
                (i for i, (a, b) in enumerate(zip(x, y, strict=False)) if a != b),
                min(len(x), len(y)),
            )
            was, now = x[max(0, at - 60) : at + 80], y[max(0, at - 60) : at + 80]
            return f"line {number}, column {at + 1}: {was!r} became {now!r}"
    return f"{len(left)} lines became {len(right)}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    recording = commands.add_parser("record", help="record every run into a folder")
    recording.add_argument("directory", type=Path)
    recording.add_argument("--jobs", type=int, default=2, help="runs at once")
    recording.add_argument("--only", default=None, help="comma-separated names")
    comparing = commands.add_parser("compare", help="compare two recordings")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "record":
        only = set(args.only.split(",")) if args.only else None
        return record(args.directory, max(1, args.jobs), only)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
