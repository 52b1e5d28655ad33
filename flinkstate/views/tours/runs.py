"""What a tour runs over: a catalogue scenario's run, the same run following recorded actions
(a counterexample the explorer of every interleaving found), or the forecast of a checkpoint
Flink wrote.

A tour locates its stops by stepping a fresh simulation of its run once, and the tour widget
then shows a second one in the recovery stepper; both come from here, so the stops a tour
finds are the steps the learner sees. Each kind says how to make that simulation at step 0;
the widget says, per kind, how the stepper opens it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from flinkstate.errors import InvalidParameterError
from flinkstate.lab.forecast import Forecast
from flinkstate.lab.scenario_run import ScenarioRun, prepare_scenario
from flinkstate.sim.action import Action
from flinkstate.sim.core import Simulation
from flinkstate.sim.scheduler import Recorded


def _no_actions() -> tuple[Action, ...]:
    return ()


@dataclass(frozen=True)
class CatalogueRun:
    """A catalogue scenario's phase, as the stepper runs it: its seeded schedule, or, where
    ``recorded`` gives actions, those actions first (a counterexample's trace), then the
    schedule."""

    scenario: str
    phase: str = "restart"
    seed: int = 0
    overrides: Mapping[str, object] = field(default_factory=dict)
    #: the actions to follow from step 1 (computed when asked: an exploration may find them)
    recorded: Callable[[], tuple[Action, ...]] = _no_actions

    def describe(self) -> str:
        return f"{self.scenario} ({self.phase})"

    def prepare(self) -> ScenarioRun:
        """The scenario's phase at step 0, refused in one line where Flink refuses it."""
        run = prepare_scenario(
            self.scenario, seed=self.seed, overrides=self.overrides, phase=self.phase
        )
        if run.simulation is None:
            raise InvalidParameterError(f"{self.describe()}: {run.outcome.value}: {run.message}")
        return run

    def simulation(self) -> Simulation:
        simulation = self.prepare().simulation
        assert simulation is not None
        actions = self.recorded()
        if actions:
            simulation.scheduler = Recorded(actions, simulation.scheduler)
        return simulation


@dataclass(frozen=True)
class ForecastRun:
    """A real checkpoint restored by the simulator (``lab.forecast.prepare_forecast``): the
    learner's own checkpoint, or one of ``data/real-checkpoints``."""

    #: what the forecast restores, as the tour names it
    label: str
    #: a fresh forecast at step 0 (prepare_forecast with the checkpoint and its exchanges)
    prepare: Callable[[], Forecast]

    def describe(self) -> str:
        return f"the forecast of {self.label}"

    def simulation(self) -> Simulation:
        return self.prepare().simulation


#: every kind of run a tour can go over
TourRun = CatalogueRun | ForecastRun
