"""Figure updates: how long the recovery stepper takes to show the next step.

The subject is one press of *step* on a :class:`RecoveryStepper`: one simulation step, the
ownership graph and its figure, the timelines, and copying both into their live widgets. The
baseline, measured in the same run, is the simulation step alone, so the ratio says what the
pictures cost on top of the model. Targets (issue): under 100 ms a step for a 4x4 job, under
500 ms for a 16x16 one.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from benchmarks.harness import Measurement
from flinkstate.sim.core import Simulation
from flinkstate.widgets.recovery_stepper import RecoveryStepper

#: (label, overrides of the baseline-recovery scenario: sources x counters)
SIZES = (
    ("4x4", {"records": 60, "parallelism": 4, "source_parallelism": 4}),
    ("16x16", {"records": 30, "parallelism": 16, "source_parallelism": 16}),
)


def _median(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[len(ordered) // 2]


def _timed(action: Callable[[], object], times: int) -> list[float]:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return samples


def run(smoke: bool) -> list[Measurement]:
    presses = 5 if smoke else 40
    results = []
    for label, overrides in SIZES:
        stepper = RecoveryStepper("baseline-recovery", overrides=overrides)
        simulation = stepper.simulation
        assert simulation is not None, stepper.message.value
        start = min(stepper.total // 3, 400)
        stepper.goto(start)
        with_figures = _timed(stepper.step, presses)
        # the same steps without pictures: back to where the presses began, step the model
        stepper.goto(start)
        model_only = _timed(_bare_step(simulation), presses)
        results.append(
            Measurement(
                f"stepper step, {label} job (median of {presses})",
                _median(with_figures),
                "the simulation step alone",
                _median(model_only),
                1,
            )
        )
    return results


def _bare_step(simulation: Simulation) -> Callable[[], object]:
    return simulation.step
