"""Writing a run as a page (``flinkstate run SCENARIO --html``, the stepper's *save as page*):
every step of a scenario's two phases drawn, captioned and packed.

Subject: :func:`flinkstate.views.page.scenario_page` for ``prefilter-deadlock``, whose job runs
about 11,500 steps before its restart deadlocks (about 11,700 steps drawn in all). Baseline, in
the same run: the same two phases run without drawing them, as ``flinkstate run`` does without
``--html`` (the scenario prepared and run to its end, twice), so the ratio is what drawing a
page costs over running it. Target (the lessons issue, fast pages): at most 3 s for the page
of a 12,000-step run; it took 22 s before the scenes of consecutive steps were derived from
each other (:mod:`flinkstate.views.scene_steps`). The smoke run draws the first 600 steps.
"""

from __future__ import annotations

from benchmarks.harness import Measurement, best_of
from flinkstate.lab.scenario_run import PHASES, prepare_scenario
from flinkstate.views.page import scenario_page

SCENARIO = "prefilter-deadlock"
#: the step limit of each phase: the whole run, or the smoke run's
MAX_STEPS = 2_000_000
SMOKE_STEPS = 600
#: the page of a 12,000-step run, written in at most this many seconds
TARGET_SECONDS = 3.0


def _run_only(max_steps: int) -> int:
    """Both phases run to their end without drawing: the steps taken."""
    steps = 0
    for phase in PHASES:
        run = prepare_scenario(SCENARIO, max_steps=max_steps, phase=phase)
        assert run.simulation is not None
        run.conclude(run.simulation.run(max_steps=max_steps))
        steps += run.simulation.step_count
    return steps


def run(smoke: bool) -> list[Measurement]:
    max_steps = SMOKE_STEPS if smoke else MAX_STEPS
    repeat = 1 if smoke else 3
    steps = _run_only(max_steps)
    baseline = best_of(lambda: _run_only(max_steps), repeat)
    sizes: list[int] = []
    subject = best_of(
        lambda: sizes.append(len(scenario_page(SCENARIO, max_steps=max_steps))), repeat
    )
    verdict = "met" if subject <= TARGET_SECONDS else "MISSED"
    print(
        f"page: {SCENARIO}, {steps:,} steps drawn into {sizes[-1]:,} bytes in {subject:.2f} s "
        f"(target {TARGET_SECONDS:.0f} s for 12,000 steps: {verdict}); running them alone "
        f"takes {baseline:.2f} s"
    )
    return [
        Measurement(
            f"the page of {SCENARIO} ({steps:,} steps; target {TARGET_SECONDS:.0f} s)",
            subject,
            "running both phases without drawing",
            baseline,
            steps,
        )
    ]
