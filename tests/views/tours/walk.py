"""Following a tour as a learner does, for the tests of each tour: every stop shown in order,
with what its text says and what its canvas rings."""

from __future__ import annotations

import re
from dataclasses import dataclass

from flinkstate.views.tours import Tour
from flinkstate.widgets.tour import TourWidget


@dataclass(frozen=True)
class Shown:
    """One stop as shown: its step, its text (markup dropped) and what is ringed."""

    step: int
    text: str
    highlight: list[str]
    #: the ids of every place and item of the scene at that step
    scene: set[str]


def follow(tour: Tour | str) -> tuple[TourWidget, list[Shown]]:
    """Show every stop, first to last, with continue; what each showed."""
    widget = TourWidget(tour)
    shown: list[Shown] = []
    for index, step in enumerate(widget.steps):
        widget.continue_button.click() if index else widget.show(0)
        assert widget.stop == index
        assert widget.stepper.current_step == step
        scene = widget.stepper.canvas.scene
        ids = {p["id"] for p in scene["places"]} | {i["id"] for i in scene["items"]}
        text = re.sub(r"<[^>]+>", " ", widget.text.value)
        shown.append(Shown(step, text, list(widget.stepper.canvas.highlight), ids))
    return widget, shown


def check_every_stop(tour: Tour | str) -> list[Shown]:
    """Every stop comes, in order, with its figures filled and its rings on the canvas."""
    widget, shown = follow(tour)
    assert len(shown) == len(widget.tour.stops)
    steps = [s.step for s in shown]
    assert steps == sorted(steps), steps
    for number, stop in enumerate(shown, 1):
        assert "{" not in stop.text, f"stop {number}: {stop.text}"
        assert "}" not in stop.text, f"stop {number}: {stop.text}"
        assert f"step {stop.step}" in stop.text
        assert stop.highlight, f"stop {number} rings nothing"
        assert set(stop.highlight) <= stop.scene, set(stop.highlight) - stop.scene
    return shown
