"""Every fault the model can put back is found by exploring every interleaving, breadth first,
from its reproducer's small configuration, within the stated bound of distinct states."""

from __future__ import annotations

import pytest

from flinkstate.network.options import FAULTS
from flinkstate.recovery.reproducers import FAULT_REPRODUCERS, Reproducer
from flinkstate.sim.core import end_of_run


def test_every_fault_has_a_reproducer() -> None:
    assert set(FAULT_REPRODUCERS) == set(FAULTS)
    for name, reproducer in FAULT_REPRODUCERS.items():
        assert reproducer.faults == {name}


@pytest.mark.parametrize("reproducer", FAULT_REPRODUCERS.values(), ids=lambda r: r.name)
def test_the_explorer_finds_the_fault_within_its_bound(reproducer: Reproducer) -> None:
    result = reproducer.explore()
    finding = reproducer.found(result)
    assert finding is not None, result.summary()
    assert finding.found_after <= reproducer.within
    # the trace replays from the start to a state that breaks the same invariant (at the end
    # of the run, for a loss or a leak)
    model = reproducer.start()
    for action in finding.trace:
        model.apply(action)
    if not model.violations and not model.enabled_actions():
        end_of_run(model, len(finding.trace))
    assert reproducer.finds in {v.invariant for v in model.violations}
