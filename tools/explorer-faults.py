"""Measure what exploring every interleaving finds that seeded runs do not.

For every fault of ``FAULTS`` (and with ``--hazards`` every known hazard), from its reproducer
(``flinkstate.lab.reproducers``): how many of the seeds 0..N-1 show the finding in a plain
run (``flinkstate run``'s: the seed chooses the keys, the schedule and, of a scenario, what its
job's checkpoint holds), and after how many distinct states and at what depth breadth first
exploration first meets it. A hazard's fixed variant is explored within its bounds. Prints the
markdown tables of docs/research/exploring-interleavings.md; progress goes to stderr.

    python tools/explorer-faults.py [--seeds 100] [--only NAME,...] [--hazards]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Mapping, Sequence

from flinkstate.lab.reproducers import FAULT_REPRODUCERS, HAZARDS, Hazard, Reproducer
from flinkstate.sim.explore import Bounds, ExplorationResult, Finding, StopReason

#: the most distinct states a measurement explores before it gives up
MAX_STATES = 2_000_000
#: the first bound tried; each try without the finding quadruples it
FIRST_BOUND = 1_000
FINDING_COLUMNS = ("finds", "plain runs showing it", "explorer: states", "depth", "from")
FIXED_COLUMNS = ("fixed variant", "its states", "bound", "verdict")


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def share(reproducer: Reproducer, seeds: int) -> tuple[int, int]:
    """Plain runs that show the finding, and runs there were (a scenario whose job completes
    no checkpoint with a seed has no restart to run)."""
    shown = ran = 0
    for seed in range(seeds):
        result = reproducer.run(seed)
        if result is not None:
            ran += 1
            shown += reproducer.shows_in(result)
    return shown, ran


def first_finding(reproducer: Reproducer) -> tuple[ExplorationResult, Finding | None]:
    """Explore under a bound of distinct states that grows until the finding is in it: the
    explorer goes on after a finding, and breadth first search meets states in the same order
    under every bound, so the first bound that holds it gives the figures no bound would."""
    bound = FIRST_BOUND
    while True:
        result = reproducer.explore(Bounds(max_states=bound))
        finding = reproducer.found(result)
        if finding is not None or result.stopped_by is not StopReason.MAX_STATES:
            return result, finding
        if bound >= MAX_STATES:
            return result, None
        bound = min(bound * 4, MAX_STATES)
        progress(f"{reproducer.name}: not within {result.distinct:,} states, trying {bound:,}")


def measure(reproducer: Reproducer, seeds: int) -> list[str]:
    """The cells of ``FINDING_COLUMNS`` after the name."""
    started = time.monotonic()
    shown, ran = share(reproducer, seeds)
    progress(f"{reproducer.name}: {shown} of {ran} plain runs show {reproducer.finds}")
    result, finding = first_finding(reproducer)
    if finding is None:
        progress(f"{reproducer.name}: not found ({result.summary()})")
        states, depth = f"not within {result.distinct:,}", "-"
    else:
        progress(
            f"{reproducer.name}: found after {finding.found_after:,} states at depth "
            f"{finding.depth} ({time.monotonic() - started:.1f} s)"
        )
        states, depth = f"{finding.found_after:,}", str(finding.depth)
    runs = f"{shown} / {ran}" + ("" if ran == seeds else f" (of {seeds} seeds)")
    start = f"step {reproducer.after} of seed {reproducer.seed}" if reproducer.after else "start"
    return [f"`{reproducer.finds}`", runs, states, depth, start]


def fixed_variant(hazard: Hazard) -> list[str]:
    """The cells of ``FIXED_COLUMNS``: the fix's scenario explored within the hazard's bounds."""
    result = hazard.fixed_variant.explore(hazard.fixed_bounds)
    progress(f"{hazard.name}: fixed variant {hazard.fixed}: {result.summary()}")
    if result.exhausted:
        bound = "exhaustive"
    elif result.stopped_by is StopReason.MAX_DEPTH:
        bound = f"depth {hazard.fixed_bounds.max_depth}"
    else:
        bound = f"stopped by {result.stopped_by.value}"
    found = ", ".join(f.name for f in result.findings)
    verdict = f"found: {found}" if found else "nothing found"
    return [f"`{hazard.fixed}`", f"{result.distinct:,}", bound, verdict]


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def configurations(reproducers: Iterable[Reproducer]) -> list[str]:
    """Each reproducer's topology or scenario, seed and overrides as ``--set`` takes them."""
    rows = []
    for r in reproducers:
        seed = f", seed {r.seed}" if r.seed else ""
        rows.append([r.name, f"`{r.subject}`{seed}", f"`{settings(r.overrides)}`"])
    return table(["name", "topology or scenario", "overrides"], rows)


def settings(overrides: Mapping[str, object]) -> str:
    return " ".join(
        f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in overrides.items()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100, help="plain runs of each (seeds 0..N-1)")
    parser.add_argument("--only", default=None, help="comma-separated faults or hazards")
    parser.add_argument("--hazards", action="store_true", help="also every known hazard")
    args = parser.parse_args()
    if args.seeds < 0:
        parser.error(f"--seeds must not be negative, got {args.seeds}")
    only = None if args.only is None else set(args.only.split(","))
    known = set(FAULT_REPRODUCERS) | {h.name for h in HAZARDS}
    if only is not None and only - known:
        parser.error(
            f"unknown {', '.join(sorted(only - known))}; known: {', '.join(sorted(known))}"
        )
    faults = [r for r in FAULT_REPRODUCERS.values() if only is None or r.name in only]
    hazards = [h for h in HAZARDS if args.hazards and (only is None or h.name in only)]
    lines: list[str] = []
    if faults:
        rows = [[r.name, *measure(r, args.seeds)] for r in faults]
        lines += [*table(["fault", *FINDING_COLUMNS], rows), "", *configurations(faults), ""]
    if hazards:
        rows = [[h.name, *measure(h.before, args.seeds), *fixed_variant(h)] for h in hazards]
        lines += table(["hazard", *FINDING_COLUMNS, *FIXED_COLUMNS], rows)
        lines += ["", *configurations(h.before for h in hazards), ""]
    print("\n".join(lines).rstrip())


if __name__ == "__main__":
    main()
