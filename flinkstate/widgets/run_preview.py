"""A scenario's run stepped to its end beside the run a learner steps, so a stepper opens at once.

The recovery stepper says how a run ends (its outcome, its figures to the end, the slider's
range) before the learner has stepped it, so the run is first taken to its end. At P = 64 that
is tens of thousands of steps: done before the stepper showed anything, and on the stepper's
own simulation, whose snapshots made each step four times dearer only to be dropped by the
``goto(0)`` that followed, opening the large keyed-upscale took 21 s.

A preview runs the same configuration on a simulation of its own that keeps only its start
(nobody goes back in it), a slice of steps at a time. In a kernel the slices are callbacks of
its event loop, so a click between two slices waits for one slice at most and the learner sees
step 0 and the preview's progress at once; elsewhere (a script, a test) it runs to its end at
once. Its end does not depend on the slicing: the scheduler chooses by step number, and a run
checks where to stop only between two steps, so stopping at a slice's end and going on is the
run that never stopped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from flinkstate.lab.scenario_run import ScenarioRun
from flinkstate.sim.core import RunResult, RunStatus, Simulation

#: steps per slice: about 40 ms at P = 64, so a click waits that long at most
SLICE_STEPS = 1_000


@dataclass(frozen=True)
class PreviewEnd:
    """How the previewed run ended: its result and its summary (``ScenarioRun.summary``)."""

    result: RunResult
    summary: dict[str, Any]

    @property
    def steps(self) -> int:
        return self.result.steps


class RunPreview:
    """``run`` (at step 0, as ``prepare_scenario`` gave it) stepped to its end or ``max_steps``
    on a copy: the run handed in is not touched."""

    def __init__(self, run: ScenarioRun, max_steps: int) -> None:
        simulation = run.simulation
        assert simulation is not None, "a run Flink refused has nothing to preview"
        self.max_steps = max_steps
        self._run: ScenarioRun | None = replace(
            run,
            simulation=Simulation(simulation.factory, simulation.scheduler, None),
            earlier=dict(run.earlier),
        )
        self.end: PreviewEnd | None = None
        self._cancelled = False

    @property
    def steps(self) -> int:
        """The steps previewed so far (all of them once it has ended)."""
        if self.end is not None:
            return self.end.steps
        assert self._run is not None
        assert self._run.simulation is not None
        return self._run.simulation.step_count

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        """Stop slicing (a setting changed: this run is not the one on display any more)."""
        self._cancelled = True

    def advance(self, steps: int = SLICE_STEPS) -> bool:
        """Run one slice of at most ``steps`` steps; True once the run has ended."""
        if self.end is not None:
            return True
        run = self._run
        assert run is not None
        assert run.simulation is not None
        simulation = run.simulation
        limit = min(simulation.step_count + steps, self.max_steps)
        result = simulation.run(limit, max_steps=self.max_steps)
        if result.status is RunStatus.STOPPED and simulation.step_count < self.max_steps:
            return False  # the slice's end, not the run's
        run.conclude(result)
        self.end = PreviewEnd(result, run.summary())
        self._run = None  # its world and events are no longer needed: their figures are kept
        return True

    def finish(self) -> PreviewEnd:
        """The run's end, stepping what is left of it now (in slices too: a slice is too
        short for the collector's pass after it, ``collector_paused``, and what the slices
        keep is freed with the preview)."""
        while not self.advance():
            pass
        assert self.end is not None
        return self.end

    def start(self, progress: Callable[[RunPreview], None]) -> None:
        """Step to the end: in a running event loop (a kernel's) a slice per callback, calling
        ``progress`` after each; otherwise now, calling ``progress`` once at the end. A
        cancelled preview stops without calling it again."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.finish()
            progress(self)
            return

        def next_slice() -> None:
            if self._cancelled:
                return
            ended = self.advance()
            progress(self)
            if not ended:
                loop.call_soon(next_slice)

        loop.call_soon(next_slice)
