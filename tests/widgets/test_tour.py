"""Tours: every stop is found, says only what the model says, highlights what is on the
canvas, and "explore from here" leaves the stepper at that very step."""

from __future__ import annotations

import re

import pytest

from flinkstate.views.tours import TOURS
from flinkstate.widgets.tour import TourWidget


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TOURS))
def test_every_stop_of_every_tour_is_shown_with_its_figures(name: str) -> None:
    tour = TourWidget(name)
    assert tour.steps == sorted(tour.steps)
    for index, step in enumerate(tour.steps):
        tour.continue_button.click() if index else tour.show(0)
        assert tour.stop == index
        assert tour.stepper.current_step == step
        assert not re.search(r"\{\w+\}", tour.text.value), "a figure was left unfilled"
        assert f"step {step}" in tour.text.value
        scene = tour.stepper.canvas.scene
        ids = {p["id"] for p in scene["places"]} | {i["id"] for i in scene["items"]}
        highlight = tour.stepper.canvas.highlight
        assert highlight, f"stop {index + 1} of {name} points at nothing"
        assert set(highlight) <= ids
    assert tour.continue_button.disabled
    assert "flinkstate-tour" in tour.widget._dom_classes  # how a browser finds the tour
    tour.back_button.click()
    assert tour.stop == len(tour.steps) - 2


def test_explore_hands_the_state_to_the_stepper() -> None:
    tour = TourWidget("unaligned-capture")
    tour.chapters.value = 2
    step = tour.stepper.current_step
    assert tour.stepper.controls is not None
    assert tour.stepper.controls.layout.display == "none"
    tour.explore_button.click()
    assert tour.stepper.controls.layout.display == ""
    assert tour.stepper.current_step == step
    tour.stepper.step_button.click()
    assert tour.stepper.current_step == step + 1
    assert tour.stepper.canvas.highlight == []  # the stop's highlight stays with its step


def test_no_chapter_is_refused_in_words_and_the_stop_stays() -> None:
    """``chapters.value = None`` left the stop on show with no chapter marked, without a
    word."""
    tour = TourWidget(sorted(TOURS)[0])
    tour.continue_button.click()
    tour.chapters.value = None
    assert "Not applied: the chapter must be one of its choices, got None" in (
        tour.stepper.message.value
    )
    assert tour.chapters.value == tour.stop == 1
