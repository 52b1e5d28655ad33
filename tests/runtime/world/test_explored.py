"""The network world explored: every interleaving of a small job, a fault's violation found
with its shortest trace, and the same job without the fault exhausted with nothing found."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import Simulation, make_scheduler
from flinkstate.sim.explore import Bounds, explore

#: two sources, two counters, two sinks, one record per source, every channel local (two
#: slots per TaskManager): a few thousand states
SMALL = {
    "records": 1,
    "parallelism": 2,
    "source_parallelism": 2,
    "slots_per_tm": 2,
    "checkpoint_interval": 0,
    "network_buffers": 16,
}


def small(*faults: str) -> NetworkWorld:
    return topology("keyed").build(SMALL, faults=frozenset(faults), full_check_every=1)


@pytest.mark.slow
def test_without_a_fault_every_interleaving_is_explored_and_nothing_found() -> None:
    result = explore(small())
    assert result.exhausted
    assert result.findings == ()
    assert result.finished > 1  # the records' interleavings end in different states
    assert result.summary() == (
        f"explored {result.distinct} distinct states to depth {result.depth}: no deadlock, "
        "every invariant holds"
    )


@pytest.mark.slow
def test_a_fault_is_found_breadth_first_with_a_trace_no_longer_than_depth_first() -> None:
    # duplicate-record hands record 1 to its counter twice (the exactly-once invariant)
    bfs = explore(small("duplicate-record"))
    dfs = explore(small("duplicate-record"), strategy="dfs")
    assert bfs.exhausted
    assert dfs.exhausted
    names = {f.name for f in bfs.violations}
    assert "exactly-once" in names
    assert names == {f.name for f in dfs.violations}
    for found in bfs.violations:
        deep = next(f for f in dfs.violations if f.name == found.name)
        assert found.depth <= deep.depth
    # the trace replays to the violation
    shortest = next(f for f in bfs.violations if f.name == "exactly-once")
    simulation = Simulation(small("duplicate-record").clone, make_scheduler("random", 0))
    for action in shortest.trace:
        simulation.step(action)
    assert "exactly-once" in {v.invariant for v in simulation.model.violations}
    assert shortest.violation is not None
    assert shortest.violation.step == shortest.depth - 1  # the last action broke it


@pytest.mark.slow
def test_random_walks_sample_the_same_space() -> None:
    walks = explore(small("duplicate-record"), strategy="random-walk", bounds=Bounds(walks=40))
    assert not walks.exhausted
    assert 0 < walks.distinct < explore(small("duplicate-record")).distinct
