"""What-if: one scenario over a grid of parameters, one tidy row per run.

"What if the pool were smaller, the records bigger, the new parallelism 5 instead of 3, the fix
off?" Every combination of the grid is run for every seed; each row says what happened and the
figures to compare (recovered bytes, filtered records, steps until processing resumed, peak
buffers per owner, heap taken outside the network pools). The table is a pandas DataFrame, the
shape plotting and the Spark pipeline expect.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from flinkstate.catalogue.scenario import Scenario
from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import ScenarioRun, run_scenario
from flinkstate.runtime.world.metrics import OWNER_KINDS

#: more runs than this is almost certainly a typo in the grid; ask for it explicitly
MAX_RUNS = 5000


def what_if(
    scenario: str | Scenario,
    grid: Mapping[str, Sequence[object]],
    *,
    seeds: Sequence[int] = (0,),
    base: Mapping[str, object] | None = None,
    scheduler: str = "random",
    max_steps: int = 2_000_000,
    progress: bool | Callable[[int, int], None] = True,
    max_runs: int = MAX_RUNS,
) -> pd.DataFrame:
    """Run ``scenario`` for every combination of ``grid`` (parameter -> values) and seed.

    ``base`` overrides apply to every run. Every combination is checked before anything runs,
    so a bad value fails at once with the parameter's name. ``progress`` shows a progress bar
    (a terminal bar, or a widget in a notebook) or calls ``progress(done, total)``.
    """
    item = scenario if isinstance(scenario, Scenario) else get_scenario(scenario)
    if not seeds:
        raise InvalidParameterError("what-if needs at least one seed")
    repeated = sorted(seed for seed, times in Counter(seeds).items() if times > 1)
    if repeated:
        raise InvalidParameterError(
            f"seed {repeated[0]} is given twice: its runs would repeat; name each seed once"
        )
    names = list(grid)
    for name, values in grid.items():
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise InvalidParameterError(f"grid values for {name!r} must be a non-empty list")
        if name in (base or {}):
            raise InvalidParameterError(
                f"{name} is both set to {(base or {})[name]!r} for every run and varied over "
                f"{list(values)!r}; one would silently win: drop one of them"
            )
    combinations = [
        dict(zip(names, values, strict=True))
        for values in itertools.product(*(grid[n] for n in names))
    ]
    total = len(combinations) * len(seeds)
    if total > max_runs:
        raise InvalidParameterError(
            f"the grid asks for {total} runs, more than {max_runs}; narrow it or raise max_runs"
        )
    for combination in combinations:
        item.resolve({**(base or {}), **combination})  # fail before running anything
    for name, values in grid.items():
        _refuse_repeats(item, name, values, base or {})
    bar = _progress(progress, total, item.name)
    rows = []
    done = 0
    try:
        for combination in combinations:
            for seed in seeds:
                run = run_scenario(
                    item,
                    seed=seed,
                    overrides={**(base or {}), **combination},
                    scheduler=scheduler,
                    max_steps=max_steps,
                )
                rows.append(_row(combination, run))
                done += 1
                bar(done)
    finally:
        bar(-1)
    return pd.DataFrame(rows, columns=[*names, *_COLUMNS])


def _refuse_repeats(
    item: Scenario, name: str, values: Sequence[object], base: Mapping[str, object]
) -> None:
    """Two values of one parameter that mean the same (``1000`` twice, ``true`` and ``1``)
    would run the same combinations twice."""
    seen: dict[object, object] = {}
    for value in values:
        meaning = item.resolve({**base, name: value})[name]
        if meaning in seen:
            raise InvalidParameterError(
                f"grid values for {name!r} repeat: {seen[meaning]!r} and {value!r} are both "
                f"{meaning!r}, so its runs would repeat; name each value once"
            )
        seen[meaning] = value


#: figures copied from each run's summary, in column order
_SUMMARY = [
    "seed",
    "outcome",
    "expected",
    "as_expected",
    "steps",
    "checkpoint_bytes",
    "recovered_bytes",
    "filtered_records",
    "resumed_step",
    "heap_peak_bytes",
    "effective_generation",
    "spilled_bytes",
    "spill_files",
    "spill_segments",
    "spill_files_peak",
    "first_checkpoint_step",
    "failed_checkpoints",
]
_PEAKS = [f"peak_{kind.replace('-', '_')}" for kind in OWNER_KINDS]
_COLUMNS = [*_SUMMARY, *_PEAKS, "deadlock_cycle", "message"]


def _row(combination: Mapping[str, object], run: ScenarioRun) -> dict[str, Any]:
    summary = run.summary()
    row: dict[str, Any] = dict(combination)
    row.update({column: summary[column] for column in (*_SUMMARY, "message")})
    counts = run.buffers
    for kind, column in zip(OWNER_KINDS, _PEAKS, strict=True):
        row[column] = None if counts is None else counts.peak[kind]
    deadlock = None if run.result is None else run.result.deadlock
    row["deadlock_cycle"] = deadlock.cycle_path if deadlock and deadlock.cycle else None
    return row


def _progress(
    progress: bool | Callable[[int, int], None], total: int, label: str
) -> Callable[[int], None]:
    """A callback taking the number of runs done (-1 when finished)."""
    if callable(progress):
        report = progress
        return lambda done: None if done < 0 else report(done, total)
    if not progress:
        return lambda done: None
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc=f"what-if {label}", unit="run")

    def update(done: int) -> None:
        if done < 0:
            bar.close()
        else:
            bar.update(done - bar.n)

    return update
