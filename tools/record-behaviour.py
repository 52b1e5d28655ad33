"""Record what the simulator does, to prove that a change of its code changed nothing.

``record DIR`` runs every recovery scenario (seeds 0, 1 and 2; its trace holds every phase the
run went through) and every catalogued topology (seed 0) through ``flinkstate run NAME --trace
FILE --json``, and keeps each JSON-lines trace and ``--json`` summary in DIR, with a manifest of
their SHA-256. ``compare BEFORE AFTER`` says which differ, and for a trace the first line where
it does. A refactor records before it moves anything and compares after: every file
byte-identical, except for fixes made on purpose.

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


def runs(only: set[str] | None) -> list[tuple[str, int]]:
    """(name, seed) of every run to record, scenarios then topologies."""
    from flinkstate.network.topologies import CATALOGUE
    from flinkstate.recovery.scenarios import SCENARIOS

    chosen = [(name, seed) for name in SCENARIOS for seed in SEEDS]
    chosen += [(name, 0) for name in CATALOGUE]
    return [(name, seed) for name, seed in chosen if only is None or name in only]


def record_one(job: tuple[str, int, str]) -> tuple[str, int, float, int]:
    """Run one (name, seed) into ``directory``; (name, seed, seconds, exit status)."""
    from flinkstate.cli import main

    name, seed, directory = job
    stem = Path(directory) / f"{name}.seed{seed}"
    started = time.monotonic()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(
            ["run", name, "--seed", str(seed), "--trace", f"{stem}.trace.jsonl", "--json"]
        )
    Path(f"{stem}.summary.json").write_text(out.getvalue() + err.getvalue(), encoding="utf-8")
    return name, seed, time.monotonic() - started, status


def record(directory: Path, jobs: int, only: set[str] | None) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    todo = runs(only)
    if not todo:
        print(f"record-behaviour: nothing to record (unknown names: {only})", file=sys.stderr)
        return 2
    started = time.monotonic()
    context = multiprocessing.get_context("fork")
    with context.Pool(jobs) as pool:
        work = [(name, seed, str(directory)) for name, seed in todo]
        for done, (name, seed, seconds, status) in enumerate(
            pool.imap_unordered(record_one, work), 1
        ):
            print(
                f"[{done}/{len(todo)}] {name} seed {seed}: {seconds:.1f} s, exit {status}",
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
