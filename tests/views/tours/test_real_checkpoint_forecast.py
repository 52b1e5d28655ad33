"""The tour of notebook 7: a real checkpoint's forecast, stop by stop."""

from __future__ import annotations

import re

from flinkstate.lab.forecast import run_forecast
from flinkstate.views.tours import get_tour
from flinkstate.views.tours.base import focused_task
from flinkstate.views.tours.real_checkpoint_forecast import notebook_forecast
from tests.views.tours.walk import check_every_stop


def test_every_stop_comes_filled_and_rings_what_is_on_the_canvas() -> None:
    tour = get_tour("real-checkpoint-forecast")
    shown = check_every_stop(tour)
    assert 4 <= len(shown) <= 7
    # the figures are the forecast's: the same run, counted by lab.forecast
    forecast = run_forecast(notebook_forecast(), compare=())
    first, last = shown[0].text, shown[-1].text
    assert f"Checkpoint {forecast.checkpoint_id} holds" in first
    assert f"{forecast.assignment.recovered_bytes:,} bytes" in first
    assert f"Restored as {forecast.to}," in first
    assert shown[-1].step == forecast.result.steps
    dropped = sum(s.dropped for s in forecast.subtasks)
    assert f"{dropped} copies dropped" in last


def test_the_tour_follows_the_first_subtask_that_drains() -> None:
    tour = get_tour("real-checkpoint-forecast")
    followed = focused_task(tour)
    shown = check_every_stop(tour)
    for stop in shown[1:4]:
        named = set(re.findall(r"[\w-]+\[\d+\]", stop.text))
        assert named == {followed}, stop.text
