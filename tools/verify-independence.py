"""Check the footprints partial-order reduction trusts, wider than the tests do.

For every topology (alone and with each fault of ``FAULTS``) and every scenario's restart, at
its default size: every pair of enabled actions the sleep sets would call independent, at every
other state of seeded runs, taken in both orders, and every enabled action there applied to a
copy made for its footprint (``flinkstate.sim.explore.verify_along_runs``). Prints a line per
subject and the total of pairs checked; exits 1 on the first pair that does not commute or the
first action that changes what its footprint does not name, naming it. Progress goes to
stderr.

    python tools/verify-independence.py [--seeds 2] [--limit 500] [--only NAME,...]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator

from flinkstate.catalogue.scenarios import SCENARIOS
from flinkstate.catalogue.topologies import CATALOGUE
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.options import FAULTS
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.explore import IndependenceError, verify_along_runs


def subjects(only: set[str] | None, seeds: int) -> Iterator[tuple[str, NetworkWorld]]:
    """Each topology with no fault and with each fault, then each scenario's restart (one
    per seed: the seed chooses what the checkpoint holds)."""
    for name, item in CATALOGUE.items():
        if only and name not in only:
            continue
        for fault in ("", *sorted(FAULTS)):
            try:
                world = item.build({}, faults=frozenset([fault] if fault else []))
            except InvalidParameterError:
                continue  # a fault the topology cannot show
            yield f"{name}{' +' + fault if fault else ''}", world
    for name in SCENARIOS:
        if only and name not in only:
            continue
        for seed in range(seeds):
            run = prepare_scenario(name, seed=seed)
            if run.simulation is None or not isinstance(run.simulation.model, NetworkWorld):
                continue  # its job completed no checkpoint with this seed: no restart
            yield f"{name} restart (seed {seed})", run.simulation.model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--limit", type=int, default=500, help="steps per run at most")
    parser.add_argument("--only", help="topologies and scenarios, by name, comma separated")
    args = parser.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    total = 0
    started = time.monotonic()
    for label, world in subjects(only, args.seeds):
        try:
            checked = verify_along_runs(world, seeds=args.seeds, limit=args.limit)
        except IndependenceError as error:
            print(f"{label}: {error}")
            return 1
        total += checked
        print(f"{label}: {checked:,} pairs", flush=True)
        print(f"  {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    print(
        f"every one of {total:,} independence claims commutes, and every action checked "
        "changes only what its footprint names"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
