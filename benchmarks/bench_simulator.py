"""Simulator speed: steps per second of a 4x4 keyed job, and the cost of ``back()``.

The baseline is the engine stepping a model whose single action does nothing, measured in the
same run: the ratio says how much of a step is the network model rather than the engine.
Targets (issue): 50,000 steps per second on one core for small topologies; ``back()`` under
10 ms at step 10,000.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Self

from benchmarks.harness import Measurement, best_of
from flinkstate.catalogue.topologies import topology
from flinkstate.sim import Action, Event, FixedPriority, Simulation, Violation, Wait, make_scheduler

_NOOP = Action("noop", "tick")


@dataclass
class NoopModel:
    """One actor whose one action does nothing: the engine's own cost per step."""

    step: int = 0
    violations: list[Violation] = field(default_factory=list)

    def enabled_actions(self) -> Sequence[Action]:
        return (_NOOP,)

    def apply(self, action: Action) -> Event:
        self.step += 1
        return Event(self.step - 1, action)

    def is_finished(self) -> bool:
        return False

    def check_end(self) -> None:
        pass

    def waits(self) -> list[Wait[Hashable]]:
        return []

    def clone(self) -> Self:
        return type(self)(self.step)

    def fingerprint(self) -> Hashable:
        return self.step


def run(smoke: bool) -> list[Measurement]:
    steps = 2_000 if smoke else 10_000
    repeat = 1 if smoke else 3
    records = 40 if smoke else 1000
    keyed = topology("keyed")

    def keyed_run() -> Simulation:
        sim = Simulation(
            lambda: keyed.build(
                {"records": records, "parallelism": 4, "source_parallelism": 4, "slots_per_tm": 2},
                seed=1,
            ),
            make_scheduler("random", 1),
        )
        sim.run(steps)
        return sim

    def noop_run() -> None:
        Simulation(NoopModel, FixedPriority()).run(steps)

    sim = keyed_run()
    taken = sim.step_count
    keyed_seconds = best_of(keyed_run, repeat)
    noop_seconds = best_of(noop_run, repeat)

    start = time.perf_counter()
    sim.back(1)
    back_seconds = time.perf_counter() - start

    # the worst case: one step short of the next snapshot, so going back replays the most
    every = sim.snapshot_every
    assert every is not None  # the default keeps snapshots
    sim.run(-(-(taken + 1) // every) * every - 1)
    worst_at = sim.step_count
    start = time.perf_counter()
    sim.back(1)
    worst_seconds = time.perf_counter() - start
    return [
        Measurement(
            "keyed 4x4 steps", keyed_seconds, "no-op steps", noop_seconds * taken / steps, taken
        ),
        Measurement(
            f"back() at step {taken}", back_seconds, "one keyed step", keyed_seconds / taken, 1
        ),
        Measurement(
            f"back() at step {worst_at} (longest replay)",
            worst_seconds,
            "one keyed step",
            keyed_seconds / taken,
            1,
        ),
    ]
