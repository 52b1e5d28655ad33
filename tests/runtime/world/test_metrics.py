"""Buffers per owner kind: the one replay of the moves agrees with the ledger at every step."""

from __future__ import annotations

from collections import Counter

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.buffer.owners import Owner, OwnerKind
from flinkstate.runtime.world.metrics import BufferCounts
from flinkstate.sim import Simulation, make_scheduler
from flinkstate.sim.action import Action
from flinkstate.sim.core import Event, Move


@pytest.mark.slow
def test_replayed_counts_equal_the_owners_at_every_step_and_peaks_are_maxima() -> None:
    sim = Simulation(
        lambda: topology("keyed").build({"records": 30, "checkpoint_interval": 40}, seed=1),
        make_scheduler("random", 1),
    )
    world = sim.model
    counts = BufferCounts.start(world.owner)  # type: ignore[attr-defined]
    before = Counter(counts.current)
    highest = Counter(counts.current)
    while (event := sim.step()) is not None:
        changed = counts.apply(event)
        now = Counter(o.kind for o in world.owner)  # type: ignore[attr-defined]
        assert +counts.current == now
        assert {k for k in set(before) | set(now) if before[k] != now[k]} <= changed
        highest = Counter({k: max(highest[k], now[k]) for k in set(highest) | set(now)})
        before = now
    assert +counts.peak == +highest


def test_apply_names_the_kinds_whose_count_changed() -> None:
    pool, queue = Owner(OwnerKind.POOL, "a"), Owner(OwnerKind.QUEUE, "x>y")
    counts = BufferCounts.start([pool, pool, queue])
    event = Event(
        0,
        Action("task x", "poll"),
        (
            Move(0, pool, Owner(OwnerKind.BUILDER, "x>y")),
            Move(2, queue, Owner(OwnerKind.QUEUE, "x>z")),
        ),
    )
    assert counts.apply(event) == {"pool", "builder"}
    assert counts.current == Counter({"pool": 1, "builder": 1, "queue": 1})
    assert counts.peak["builder"] == 1
