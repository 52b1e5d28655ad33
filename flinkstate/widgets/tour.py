"""A guided tour over the recovery stepper: chapters, back and continue, a text per stop, and
"explore from here", which hands the very state on display to the free stepper.

The tour owns a :class:`RecoveryStepper` and only moves it with ``goto``; its own controls are
hidden until the learner chooses to explore, and then they appear under the narration, beside
the canvas, at the step the tour left it (:mod:`~flinkstate.widgets.lesson_frame` lays it out).
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets
import mistune

from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.views.tours import Tour, get_tour, locate
from flinkstate.views.tours.runs import CatalogueRun, TourRun
from flinkstate.widgets.controls import icon_button, refused_no_choice
from flinkstate.widgets.lesson_frame import TOUR_TEXT_HEIGHT, tour_frame
from flinkstate.widgets.recovery_stepper import RecoveryStepper


class TourWidget:
    """One tour: its stops located once, then shown one at a time."""

    def __init__(self, tour: str | Tour) -> None:
        self.tour = get_tour(tour) if isinstance(tour, str) else tour
        self.steps = locate(self.tour)
        self.stepper = stepper_for(self.tour.opening())
        self.chapters = widgets.ToggleButtons(
            options=[(f"{n}. {stop.title}", n - 1) for n, stop in enumerate(self.tour.stops, 1)],
            value=None,
            style={"button_width": "auto"},
            tooltips=[f"go to step {step}" for step in self.steps],
        )
        self.chapters.add_class("flinkstate-tour-chapters")
        self.text = widgets.HTML()
        self.text.add_class("flinkstate-tour-text")
        self.back_button = icon_button("back", "arrow-left", "the previous stop of the tour")
        self.continue_button = icon_button("continue", "arrow-right", "the next stop of the tour")
        self.continue_button.add_class("flinkstate-tour-continue")
        self.explore_button = icon_button(
            "explore from here",
            "compass",
            "leave the tour: the stepper's own controls appear, at exactly this step",
        )
        self.heading = widgets.HTML(
            f"<h3 style='margin:0'>Tour: {html.escape(self.tour.title)}</h3>"
            "<p style='margin:.15em 0;font-size:13px;line-height:1.4'>"
            f"{html.escape(self.tour.introduce(self._start()))}</p>"
        )
        self.text.layout = widgets.Layout(max_height=TOUR_TEXT_HEIGHT, overflow="auto")
        moves = widgets.HBox(
            [self.back_button, self.continue_button, self.explore_button],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        self.panel = widgets.VBox(
            [self.heading, self.chapters],
            layout=widgets.Layout(padding="4px 10px 0 10px"),
        )
        self.frame = tour_frame(moves, self.text, self.stepper)
        self.stop = -1
        self.exploring = False
        self.chapters.observe(self._on_chapter, names="value")
        self.back_button.on_click(lambda _: self.show(self.stop - 1))
        self.continue_button.on_click(lambda _: self.show(self.stop + 1))
        self.explore_button.on_click(lambda _: self.explore())
        self.stepper.controls.layout.display = "none"
        self.stepper.stepping.layout.display = "none"
        self.show(0)

    def _start(self) -> NetworkWorld:
        """The run's world at step 0, where the stepper opens (the introduction's figures)."""
        world = self.stepper.world
        assert isinstance(world, NetworkWorld)
        assert self.stepper.current_step == 0
        return world

    @property
    def widget(self) -> widgets.Widget:
        whole = widgets.VBox(
            [self.panel, self.frame],
            layout=widgets.Layout(border="1px solid #e5e7eb", padding="0 0 6px 0"),
        )
        whole.add_class("flinkstate-tour")
        return whole

    def _on_chapter(self, change: dict[str, Any]) -> None:
        if change["new"] is None:
            if self.stop >= 0:  # no chapter, set from code: refused, the stop's chapter back
                refused_no_choice(self.chapters, change, self.stepper.message, "the chapter")
            return
        if change["new"] != self.stop:
            self.show(int(change["new"]))

    def show(self, index: int) -> None:
        """Go to stop ``index`` (out of the tour's range is ignored: the buttons say so)."""
        if not 0 <= index < len(self.tour.stops):
            return
        stop = self.tour.stops[index]
        step = self.steps[index]
        self.stop = index
        self.stepper.goto(step)
        world = self.stepper.world
        simulation = self.stepper.simulation
        assert isinstance(world, NetworkWorld)
        assert simulation is not None
        event = simulation.events[-1] if simulation.events else None
        scene = self.stepper.scene
        assert scene is not None
        self.stepper.pin(step, stop.highlight(event, world, scene))
        body = mistune.html(stop.describe(event, world))
        self.text.value = (
            f"<div style='font-size:14px;line-height:1.5'><b>Stop {index + 1} of "
            f"{len(self.tour.stops)}, step {step}: {html.escape(stop.title)}</b>{body}</div>"
        )
        self.chapters.value = index
        self.back_button.disabled = index == 0
        self.continue_button.disabled = index == len(self.tour.stops) - 1

    def explore(self) -> None:
        """Show the stepper's own controls, at the step on display."""
        self.exploring = True
        self.stepper.controls.layout.display = ""
        self.stepper.stepping.layout.display = ""
        self.explore_button.disabled = True
        self.text.value += (
            "<p style='font-size:13px;line-height:1.4'><i>Exploring: the stepper's controls "
            "are above this text, beside the canvas, at the step the tour left; the chapters "
            "take you back to a stop.</i></p>"
        )


def stepper_for(run: TourRun) -> RecoveryStepper:
    """A recovery stepper showing the tour's run at step 0, as the learner would open it: a
    scenario's phase by its settings (following a counterexample's recorded actions as a
    loaded trace does), a forecast with ``open_forecast``."""
    if isinstance(run, CatalogueRun):
        stepper = RecoveryStepper(
            run.scenario, seed=run.seed, overrides=dict(run.overrides), phase=run.phase
        )
        actions = run.recorded()
        if actions:
            stepper.recorded = actions  # stepping follows them, back and forward
            stepper.load()
        return stepper
    stepper = RecoveryStepper()
    stepper.open_forecast(run.prepare())
    return stepper
