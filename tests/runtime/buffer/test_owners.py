"""The one list of owner kinds covers every owner the world makes, every list derived from it
is what it was written out as before, and owners are values that become text only when shown."""

from __future__ import annotations

import itertools

import pytest

from flinkstate.lab.scenario_run import run_scenario
from flinkstate.runtime.buffer.owners import ChannelOwners, Owner, OwnerKind, OwnerPlace, kinds_at
from flinkstate.runtime.world.metrics import OWNER_KINDS, POOL_KINDS, RECOVERY_KINDS


@pytest.mark.parametrize(
    "scenario", ["baseline-recovery", "prefilter-heap-segment", "spill-pressure-v2"]
)
def test_every_owner_a_run_makes_has_a_listed_kind(scenario: str) -> None:
    run = run_scenario(scenario, seed=0)
    assert run.simulation is not None
    owners = {o for e in run.simulation.events for m in e.moves for o in (m.source, m.target)}
    assert all(isinstance(o, Owner) for o in owners)
    seen = {o.kind for o in owners}  # type: ignore[attr-defined]
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


def test_an_owner_reads_as_its_kind_then_its_container_and_sorts_as_its_text() -> None:
    owners = ChannelOwners.of("counter[0]<source[1]")
    assert str(owners.recovered_exclusive) == "recovered-exclusive counter[0]<source[1]"
    assert f"{owners.pre_filter}" == "pre-filter counter[0]<source[1]"
    assert owners.exclusive == Owner(OwnerKind.EXCLUSIVE, "counter[0]<source[1]")
    assert owners.spilling.place is OwnerPlace.READER
    # deadlock reports and violation messages list holders sorted: the values sort as their
    # text does, whichever kinds and containers are compared
    every = [Owner(k, h) for k in OwnerKind for h in ("a", "a[0]", "a[0]<b[1]", "b")]
    for one, other in itertools.combinations(every, 2):
        assert (one < other) == (str(one) < str(other)), (one, other)
