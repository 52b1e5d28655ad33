"""A guided tour as one self-contained page: the stop's text beside the canvas, back and next
between stops, and the run's slider and play, opened without a kernel.

The notebooks' tour widget moves a live recovery stepper from stop to stop. A page has no
kernel, so the run is drawn once, as a run page draws it (:mod:`flinkstate.views.page`), and
each stop's text and highlight are computed in that same pass, at the stop's step, from the
world and scene the page then shows: the figures a stop names are the model's at that step,
as in the widget (``tests/views/tours/test_figures.py`` guards them there).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import mistune

from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event
from flinkstate.views.page import record_phase, run_page
from flinkstate.views.tours import Tour, get_tour, locate

#: a stop's markdown as the page shows it: text of the model's own making, HTML escaped
_MARKDOWN = mistune.create_markdown(escape=True)


def tour_page(
    tour: str | Tour,
    *,
    nav: str = "",
    max_steps: int = 400_000,
    progress: Callable[[int], None] | None = None,
) -> str:
    """The page of ``tour``: its run stepped from start to end, its stops told beside the
    canvas, opening on the first stop (``#stop-N`` in the address opens stop N). ``nav`` as
    :func:`~flinkstate.views.page.run_page` takes it; ``progress(step)`` as steps are drawn.

    Examples
    --------
    >>> page = tour_page("failed-as-finished-counterexample")
    >>> page.startswith("<!DOCTYPE html>"), '"stops":' in page, "<script src=" in page
    (True, True, False)
    """
    item = get_tour(tour) if isinstance(tour, str) else tour
    steps = locate(item, max_steps=max_steps)
    simulation = item.opening().simulation()
    result = simulation.run(max_steps=max_steps)
    wanted: dict[int, list[int]] = {}
    for index, step in enumerate(steps):
        wanted.setdefault(step, []).append(index)
    stops: list[dict[str, Any] | None] = [None] * len(steps)
    introduction: list[str] = []

    def visit(
        step: int, event: Event | None, world: NetworkWorld, scene: Mapping[str, Any]
    ) -> None:
        if step == 0:
            introduction.append(item.introduce(world))
        for index in wanted.get(step, ()):
            stops[index] = _stop_data(item, index, step, event, world, scene)

    total = simulation.step_count
    ending = f"the run: {result.status.value} after {total} steps"
    if result.deadlock is not None:
        ending += f"; {result.deadlock.describe().splitlines()[0]}"
    recording = record_phase(
        "tour",
        f"{item.opening().describe()} ({total} steps)",
        simulation,
        ending=ending,
        progress=progress,
        deadlock=result.deadlock,
        visit=visit,
    )
    missing = [item.stops[i].title for i, data in enumerate(stops) if data is None]
    assert not missing, f"tour {item.name}: stops {missing} lie beyond the run's end"
    data = {"name": item.name, "introduction": introduction[0], "stops": stops}
    return run_page(f"Tour: {item.title}", introduction[0], [recording], nav=nav, tour=data)


def _stop_data(
    tour: Tour,
    index: int,
    step: int,
    event: Event | None,
    world: NetworkWorld,
    scene: Mapping[str, Any],
) -> dict[str, Any]:
    """Stop ``index`` as the page reads it: its title, its text as HTML with the figures of
    ``world`` (the model at ``step``), the step, and the ids of the places and items of
    ``scene`` it highlights (those the page's drawing has: a folded lane hides its items)."""
    stop = tour.stops[index]
    shown = {str(p["id"]) for p in scene["places"]} | {str(i["id"]) for i in scene["items"]}
    highlight = [key for key in stop.highlight(event, world, scene) if key in shown]
    return {
        "title": stop.title,
        "html": str(_MARKDOWN(stop.describe(event, world))),
        "step": step,
        "highlight": highlight,
    }
