"""Guided tours: a scenario's run told in a few stops, each a moment worth seeing.

A tour is data (:mod:`flinkstate.views.tours.base`). Each :class:`Stop` says where to stop
(the first step after the previous stop at which its condition holds), a title, a text for the
learner (markdown, with ``{figure}`` placeholders filled from the model at that step, so every
number it states is the model's), and what to highlight on the canvas. :func:`locate` runs the
scenario once and finds the step of every stop; the tour widget then moves the recovery stepper
there, and "explore from here" leaves the learner in the stepper at exactly that state. One
module per tour; :data:`TOURS` lists them in the order of the notebooks.
"""

from __future__ import annotations

from collections.abc import Mapping

from flinkstate.errors import InvalidParameterError
from flinkstate.views.tours.base import Stop, Tour, locate, on
from flinkstate.views.tours.blocked_subpartition import BLOCKED_SUBPARTITION
from flinkstate.views.tours.checkpointing_during_recovery import CHECKPOINTING_DURING_RECOVERY
from flinkstate.views.tours.classic_recovery import CLASSIC_RECOVERY
from flinkstate.views.tours.failed_as_finished_counterexample import (
    FAILED_AS_FINISHED_COUNTEREXAMPLE,
)
from flinkstate.views.tours.flip547_duplication import FLIP547_DUPLICATION
from flinkstate.views.tours.prefilter_deadlock import PREFILTER_DEADLOCK
from flinkstate.views.tours.real_checkpoint_forecast import REAL_CHECKPOINT_FORECAST
from flinkstate.views.tours.rescaling_filtering import RESCALING_FILTERING
from flinkstate.views.tours.runs import CatalogueRun, TourRun
from flinkstate.views.tours.unaligned_capture import UNALIGNED_CAPTURE

TOURS: Mapping[str, Tour] = {
    t.name: t
    for t in (
        UNALIGNED_CAPTURE,
        CLASSIC_RECOVERY,
        PREFILTER_DEADLOCK,
        RESCALING_FILTERING,
        BLOCKED_SUBPARTITION,
        CHECKPOINTING_DURING_RECOVERY,
        REAL_CHECKPOINT_FORECAST,
        FAILED_AS_FINISHED_COUNTEREXAMPLE,
        FLIP547_DUPLICATION,
    )
}

__all__ = ["TOURS", "CatalogueRun", "Stop", "Tour", "TourRun", "get_tour", "locate", "on"]


def get_tour(name: str) -> Tour:
    try:
        return TOURS[name]
    except KeyError:
        raise InvalidParameterError(
            f"unknown tour {name!r}; tours: {', '.join(sorted(TOURS))}"
        ) from None
