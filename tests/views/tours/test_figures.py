"""Every number a tour's stop states is one the screen shows at that stop (and every number
its introduction states, one of the job's).

A stop's text is a template; its figures come from the model at the stop's step. A figure
typed into the text instead (``37 KB``, ``eleven are needed``) goes stale as soon as the
scenario changes, and a figure about another moment than the one on display (records filtered
so far against the badge's count to the run's end) reads as a contradiction. So: the template
holds no digit and no number word outside its placeholders (Flink's version and issue numbers
aside), and every number of the rendered text is on screen at that step: in the badge, the
step's caption, or the stop's own figures.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import pytest

from flinkstate.views.tours import TOURS, Stop
from flinkstate.views.tours.base import job_figures
from flinkstate.widgets.tour import TourWidget

#: names that carry digits and are not figures: issues, FLIPs, Flink versions (2.3, 1.20)
NOT_FIGURES = re.compile(r"FLINK-\d+|FLIP-\d+|(?<![\d.,])\d\.\d{1,2}(?![.,]?\d)")
#: a number written out (one is left out: "the one old subtask", "rewriting one")
NUMBER_WORDS = re.compile(
    r"\b(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred|twice)\b",
    re.IGNORECASE,
)
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
NUMBER = re.compile(r"\d[\d,]*")


def literal_figures(text: str) -> list[str]:
    """What a stop's template states outside its placeholders that is a number."""
    fixed = NOT_FIGURES.sub("", PLACEHOLDER.sub("", text))
    return re.findall(r"\d+", fixed) + NUMBER_WORDS.findall(fixed)


def numbers(texts: Iterable[object]) -> set[str]:
    """Every number in ``texts``, thousands separators dropped (75,100 reads as 75100)."""
    found: set[str] = set()
    for text in texts:
        plain = NOT_FIGURES.sub("", html.unescape(re.sub(r"<[^>]+>", " ", str(text))))
        found.update(n.replace(",", "") for n in NUMBER.findall(plain))
    return {n for n in found if n}


@pytest.mark.parametrize("name", sorted(TOURS))
def test_stop_texts_type_no_figure(name: str) -> None:
    stops: tuple[Stop, ...] = TOURS[name].stops
    typed = {
        stop.title: found
        for stop in stops
        if (found := literal_figures(stop.text) + literal_figures(stop.title))
    }
    if found := literal_figures(TOURS[name].introduction):
        typed["(introduction)"] = found
    assert not typed, f"{name}: figures typed into the text instead of computed: {typed}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TOURS))
def test_every_number_of_a_stop_is_on_screen_at_its_step(name: str) -> None:
    tour = TourWidget(name)
    start = tour.stepper.world
    assert start is not None
    introduced = numbers([tour.tour.introduce(start)])
    assert introduced <= numbers(job_figures(None, start).values()), (
        f"{name}: the introduction says {sorted(introduced)}, not all the job's figures"
    )
    summary = tour.stepper.summary  # the run's end: the badge's figures are final from here
    for index, step in enumerate(tour.steps):
        tour.show(index)
        stop = tour.tour.stops[index]
        simulation, world = tour.stepper.simulation, tour.stepper.world
        assert simulation is not None
        assert world is not None
        event = simulation.events[-1] if simulation.events else None
        figures = stop.figures(event, world)
        captions = [text for n, text in tour.stepper.captions() if n == step]
        screen = numbers([tour.stepper.badge.value, *captions, *figures.values(), step])
        said = numbers([stop.describe(event, world)])
        assert said <= screen, (
            f"{name}, stop {index + 1} ({stop.title!r}, step {step}): the text says "
            f"{sorted(said - screen)}, which neither the badge, the caption nor the stop's "
            "figures show"
        )
        if "{filtered_in_all}" in stop.text:  # the badge's *records filtered out*, said early
            assert figures["filtered_in_all"] == summary["filtered_records"]


def test_the_guard_tells_typed_figures_from_placeholders_and_names() -> None:
    old = "The records kept are 37 KB each: ten 4 KiB buffers, eleven are needed."
    assert literal_figures(old) == ["37", "4", "ten", "eleven"]
    named = "{held} of the {available:,} since FLINK-39519, or the heap fallback of 2.3, FLIP-547"
    assert literal_figures(named) == []
    assert numbers(["<b>75,100</b> bytes, 2.3, step 7."]) == {"75100", "7"}
