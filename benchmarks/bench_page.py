"""Writing a run as a page (``flinkstate run SCENARIO --html``, the stepper's *save as page*):
every step of a scenario's two phases drawn, captioned and packed.

Subject: :func:`flinkstate.views.page.scenario_page` for ``prefilter-deadlock``, whose job runs
about 11,500 steps before its restart deadlocks (about 11,700 steps drawn in all). Baseline, in
the same run: the same two phases run without drawing them, as ``flinkstate run`` does without
``--html`` (the scenario prepared and run to its end, twice), so the ratio is what drawing a
page costs over running it. Target (the lessons issue, fast pages): at most 3 s for the page
of a 12,000-step run; it took 22 s before the scenes of consecutive steps were derived from
each other (:mod:`flinkstate.views.scene_steps`). The smoke run draws ``baseline-recovery``
with 20 records a source (a few hundred steps).
"""

from __future__ import annotations

from benchmarks.harness import Measurement, best_of
from flinkstate.lab.scenario_run import PHASES, prepare_scenario
from flinkstate.views.page import scenario_page

#: the scenario drawn and its parameters: the whole run, or the smoke run's
SCENARIO: tuple[str, dict[str, object]] = ("prefilter-deadlock", {})
SMOKE: tuple[str, dict[str, object]] = ("baseline-recovery", {"records": 20})
#: the page of a 12,000-step run, written in at most this many seconds
TARGET_SECONDS = 3.0


def _run_only(name: str, overrides: dict[str, object]) -> int:
    """Both phases run to their end without drawing: the steps taken."""
    steps = 0
    for phase in PHASES:
        run = prepare_scenario(name, overrides=overrides, phase=phase)
        assert run.simulation is not None
        run.conclude(run.simulation.run())
        steps += run.simulation.step_count
    return steps


def run(smoke: bool) -> list[Measurement]:
    name, overrides = SMOKE if smoke else SCENARIO
    repeat = 1 if smoke else 3
    steps = _run_only(name, overrides)
    baseline = best_of(lambda: _run_only(name, overrides), repeat)
    sizes: list[int] = []
    subject = best_of(lambda: sizes.append(len(scenario_page(name, overrides=overrides))), repeat)
    verdict = "met" if subject <= TARGET_SECONDS else "MISSED"
    target = "smoke: no target" if smoke else f"target {TARGET_SECONDS:.0f} s: {verdict}"
    print(
        f"page: {name}, {steps:,} steps drawn into {sizes[-1]:,} bytes in {subject:.2f} s "
        f"({target}); running them alone takes {baseline:.2f} s"
    )
    return [
        Measurement(
            f"the page of {name} ({steps:,} steps; target {TARGET_SECONDS:.0f} s)",
            subject,
            "running both phases without drawing",
            baseline,
            steps,
        )
    ]
