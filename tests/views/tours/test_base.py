"""Locating a tour's stops in its run."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.views.tours import TOURS, Stop, Tour, get_tour, locate, on


@pytest.mark.parametrize("name", sorted(TOURS))
def test_stops_come_in_order(name: str) -> None:
    steps = locate(TOURS[name])
    assert len(steps) == len(TOURS[name].stops)
    assert steps == sorted(steps)


def test_a_stop_that_never_comes_is_named() -> None:
    broken = Tour(
        "broken",
        "never",
        "baseline-recovery",
        "a tour with an impossible stop",
        (Stop("never", "no", on("finish-drain")),),
        overrides={"records": 10},
    )
    with pytest.raises(InvalidParameterError, match="stop 'never' never comes"):
        locate(broken)
    with pytest.raises(InvalidParameterError, match="unknown tour 'nope'"):
        get_tour("nope")
