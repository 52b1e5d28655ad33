"""The one list of owner kinds covers every owner the world makes, and every list derived
from it is what it was written out as before."""

from __future__ import annotations

import pytest

from flinkstate.network.metrics import OWNER_KINDS, POOL_KINDS, RECOVERY_KINDS, owner_kind
from flinkstate.network.owners import OwnerKind, OwnerPlace, kinds_at
from flinkstate.recovery.scenarios import run_scenario


@pytest.mark.parametrize(
    "scenario", ["baseline-recovery", "prefilter-heap-segment", "spill-pressure-v2"]
)
def test_every_owner_a_run_makes_has_a_listed_kind(scenario: str) -> None:
    run = run_scenario(scenario, seed=0)
    assert run.simulation is not None
    seen = {owner_kind(m.target) for e in run.simulation.events for m in e.moves}
    seen |= {owner_kind(m.source) for e in run.simulation.events for m in e.moves}
    assert seen <= set(OWNER_KINDS)
    assert seen & RECOVERY_KINDS  # the restart recovered through recovery's owners


def test_each_kind_has_one_place_and_the_derived_lists_hold() -> None:
    assert len(OWNER_KINDS) == len(set(OWNER_KINDS)) == len(OwnerKind)
    places = [kinds_at(place) for place in OwnerPlace]
    assert sum(len(p) for p in places) == len(OwnerKind)
    assert POOL_KINDS == ("network-pool", "pool")
    assert kinds_at(OwnerPlace.READER) <= RECOVERY_KINDS
    assert {
        "recovered",
        "recovered-exclusive",
        "pre-filter",
        "post-filter",
        "spilling",
    } == RECOVERY_KINDS
