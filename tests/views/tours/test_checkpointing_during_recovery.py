"""The tour of notebook 6 follows one subtask, chosen from the run."""

from __future__ import annotations

import re

from flinkstate.views.tours import get_tour
from flinkstate.views.tours.base import focused_task
from tests.views.tours.walk import check_every_stop


def test_every_stop_is_about_the_subtask_a_checkpoint_meets_while_it_drains() -> None:
    tour = get_tour("checkpointing-during-recovery")
    followed = focused_task(tour)
    for stop in check_every_stop(tour):
        named = set(re.findall(r"\b\w+\[\d+\]", stop.text))
        assert named == {followed}, stop.text
        assert all(followed in key for key in stop.highlight if "[" in key), stop.highlight
