"""``python -m tests.flinkcheckpoint.fuzz``: the fuzzer's command line (``make fuzz``)."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections import Counter
from pathlib import Path

from tests.flinkcheckpoint.fuzz import __doc__ as overview
from tests.flinkcheckpoint.fuzz.damage import committed_checkpoints
from tests.flinkcheckpoint.fuzz.harness import (
    MEMORY_LIMIT,
    THIS_CODE,
    TIME_LIMIT,
    Outcome,
    run_mutations,
)
from tests.flinkcheckpoint.fuzz.reads import OUTCOMES
from tests.flinkcheckpoint.fuzz.stream import FAMILIES, MIXED, mutations


def table(results: list[Outcome]) -> str:
    """Per family: mutations tried, clean (no read failed) and failed, and the reads'
    outcomes."""
    header = f"{'family':12} {'tried':>6} {'clean':>6} {'failed':>6}   " + " ".join(
        f"{o:>9}" for o in OUTCOMES
    )
    lines = [header]
    families = [f for f in FAMILIES if any(r.family == f for r in results)]
    for family in [*families, "total"]:
        mine = [r for r in results if family in (r.family, "total")]
        reads = Counter(outcome for r in mine for _, outcome, _ in r.reads)
        clean = sum(r.clean for r in mine)
        lines.append(
            f"{family:12} {len(mine):>6} {clean:>6} {len(mine) - clean:>6}   "
            + " ".join(f"{reads[o]:>9}" for o in OUTCOMES)
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(overview or "").split("\n\n")[0],
        epilog="Reads: inspect --json, inspect --json --export, forecast --json.",
    )
    parser.add_argument("--mutations", type=int, default=1000, help="of the mixed stream")
    parser.add_argument("--repoints", type=int, default=0, help="re-pointed chunk offsets")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--family", choices=FAMILIES, help="only this family's mutations")
    parser.add_argument("--jobs", type=int, default=1, help="mutations read at once")
    parser.add_argument(
        "--code",
        type=Path,
        default=THIS_CODE,
        help="the tree whose flinkstate reads (default: this one's)",
    )
    parser.add_argument("--memory", type=int, default=MEMORY_LIMIT, help="bytes a read may map")
    parser.add_argument("--seconds", type=float, default=TIME_LIMIT, help="a read's time limit")
    parser.add_argument("--show", type=int, default=20, help="failures to list")
    parser.add_argument("--results", type=Path, help="write every outcome here (JSON lines)")
    args = parser.parse_args(argv)
    checkpoints = committed_checkpoints()
    mixed = {args.family: 1.0} if args.family and args.family != "repoint" else MIXED
    chosen = list(itertools.islice(mutations(checkpoints, args.seed, mixed), args.mutations))
    chosen += itertools.islice(mutations(checkpoints, args.seed, {"repoint": 1.0}), args.repoints)
    if args.family:
        chosen = [m for m in chosen if m.family == args.family]
    started = time.monotonic()

    def progress(done: int, counts: Counter[str]) -> None:
        if done % 25 == 0 or done == len(chosen):
            line = ", ".join(f"{k} {counts[k]}" for k in OUTCOMES if counts[k])
            print(f"\r{done}/{len(chosen)}: {line}", end="", file=sys.stderr, flush=True)

    results = run_mutations(
        chosen,
        jobs=args.jobs,
        code=args.code,
        memory=args.memory,
        seconds=args.seconds,
        progress=progress,
    )
    print(file=sys.stderr)
    if args.results is not None:
        with args.results.open("w", encoding="utf-8") as out:
            for r in results:
                out.write(json.dumps({"mutation": r.mutation, "reads": r.reads}) + "\n")
    print(
        f"tried {len(results)} mutated checkpoints (seed {args.seed}), each read 3 ways, in "
        f"{time.monotonic() - started:.0f} s, with the flinkstate of {args.code}"
    )
    print(table(results))
    failed = [r for r in results if not r.clean]
    for result in failed[: args.show]:
        print(f"{result.outcome}: {result.mutation}")
        for read, outcome, detail in result.failures:
            print(f"    {read}: {outcome}: {detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
