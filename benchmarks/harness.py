"""A tiny timing harness: best-of-N wall time, reported as a ratio against a baseline."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Measurement:
    name: str
    subject_seconds: float
    baseline_name: str
    baseline_seconds: float
    items: int

    @property
    def ratio(self) -> float:
        """Subject time over baseline time: below 1 means the subject is faster."""
        return self.subject_seconds / self.baseline_seconds

    @property
    def items_per_second(self) -> float:
        return self.items / self.subject_seconds


def best_of(run: Callable[[], object], repeat: int) -> float:
    """The fastest of ``repeat`` runs: the least disturbed by other work on the machine.

    Each run starts with the collector's work done: otherwise the garbage of the run before
    (a simulation keeps dozens of snapshots) is collected in whichever run's allocation happens
    to cross a threshold, and the timings measure that luck rather than the subject.
    """
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best
