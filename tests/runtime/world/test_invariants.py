"""Each invariant catches the bug it guards against, re-introduced as a fault."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.buffer.owners import OwnerKind
from flinkstate.runtime.world.invariants import AUDIT_UNIT, audit_interval
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import RunStatus, Simulation, make_scheduler


def run_with(fault: str, name: str = "keyed", **overrides: object) -> set[str]:
    item = topology(name)
    sim = Simulation(
        lambda: item.build(
            {"records": 20, **overrides}, seed=5, faults=frozenset({fault}), full_check_every=1
        ),
        make_scheduler("random", 5),
    )
    result = sim.run()
    assert result.status is RunStatus.VIOLATION, result
    return {v.invariant for v in result.violations}


@pytest.mark.parametrize(
    ("fault", "invariant", "overrides"),
    [
        ("double-recycle", "double-recycle", {}),
        ("leak-buffer", "leak", {}),
        ("lose-record", "exactly-once", {}),
        ("duplicate-record", "exactly-once", {}),
        ("reorder-buffers", "channel-order", {"record_size": 3000}),
        ("wrong-key-group", "key-group", {}),
    ],
)
def test_fault_is_caught_by_its_invariant(
    fault: str, invariant: str, overrides: dict[str, object]
) -> None:
    assert invariant in run_with(fault, **overrides)


def test_unknown_fault() -> None:
    with pytest.raises(InvalidParameterError, match="unknown fault"):
        topology("keyed").build(faults=frozenset({"gremlins"}))


def _busy_world() -> NetworkWorld:
    sim = Simulation(
        lambda: topology("keyed").build({"records": 50}, seed=3, full_check_every=0),
        make_scheduler("random", 3),
    )
    sim.run(300)
    world = sim.model
    assert isinstance(world, NetworkWorld)
    world.check_consistency()
    assert not world.violations
    return world


def test_idle_pools_are_counted_between_full_scans() -> None:
    # a segment slipped into a network pool's free list without a move: the count is off, so
    # even the scan that does not look at each free segment finds it and names the segment
    world = _busy_world()
    nbp = next(iter(world.network_pools.values()))
    taken = next(s for s, owner in enumerate(world.owner) if owner.kind is OwnerKind.EXCLUSIVE)
    nbp.free.append(taken)
    world.check_consistency(idle_pools=False)
    assert [v.invariant for v in world.violations] == ["segment-ownership"]
    assert f"segment {taken} is held by both" in world.violations[0].message


def test_full_scan_checks_each_idle_segment() -> None:
    # two free segments of different TaskManagers' pools swapped: the counts still add up,
    # so only the scan that checks each free segment sees it
    world = _busy_world()
    first, second = [nbp.free[0] for nbp in world.network_pools.values()][:2]
    world.owner[first], world.owner[second] = world.owner[second], world.owner[first]
    world.check_consistency(idle_pools=False)
    assert not world.violations
    world.check_consistency()
    assert {v.invariant for v in world.violations} == {"segment-ownership"}
    assert len(world.violations) == 2


def test_a_big_world_is_audited_less_often_in_proportion_to_its_size() -> None:
    assert audit_interval(64, 60) == 64
    assert audit_interval(64, 2 * AUDIT_UNIT - 1) == 64
    assert audit_interval(64, 2 * AUDIT_UNIT) == 128
    assert audit_interval(64, 8_640) == 64 * 270  # P = 64: at most one component a step
    assert audit_interval(1, 8_640, scale=False) == 1
    assert audit_interval(0, 10**6) == 0  # only at the end, at any size
    keyed = topology("keyed")
    assert keyed.build({}).audit_every == 64  # 60 components: the 4 x 4 job
    big = {"parallelism": 16, "source_parallelism": 16, "slots_per_tm": 4}
    assert keyed.build(big).audit_every == 64 * 19  # 624 components
    assert keyed.build(big, scale_audits=False).audit_every == 64


@pytest.mark.parametrize("scale", [True, False])
def test_a_big_world_s_audit_still_names_a_segment_lost_behind_the_ledger_s_back(
    scale: bool,
) -> None:
    # the leaked buffer is found by the scan whichever its interval, just later when scaled
    params = {"parallelism": 16, "source_parallelism": 16, "slots_per_tm": 4, "records": 10}
    sim = Simulation(
        lambda: topology("keyed").build(
            params, seed=5, faults=frozenset({"leak-buffer"}), scale_audits=scale
        ),
        make_scheduler("random", 5),
        snapshot_every=None,
    )
    result = sim.run()
    assert result.status is RunStatus.VIOLATION, result
    leak = result.violations[0]
    assert leak.invariant == "leak"
    assert "is held by nobody" in leak.message
    every = 64 * 19 if scale else 64
    assert leak.step % every == 0  # found by a scan, named with the step count it ran at
