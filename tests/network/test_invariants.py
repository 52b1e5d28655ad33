"""Each invariant catches the bug it guards against, re-introduced as a fault."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.network.topologies import topology
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
