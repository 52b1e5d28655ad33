"""Every fault the model can put back is found by exploring every interleaving, breadth first,
from its reproducer's small configuration, within the stated bound of distinct states."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.lab.reproducers import FAULT_REPRODUCERS, Reproducer
from flinkstate.runtime.options import FAULTS
from flinkstate.sim.core import end_of_run


def test_every_fault_has_a_reproducer() -> None:
    assert set(FAULT_REPRODUCERS) == set(FAULTS)
    for name, reproducer in FAULT_REPRODUCERS.items():
        assert reproducer.faults == {name}


@pytest.mark.slow
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


def test_plain_runs_are_what_the_explorer_is_measured_against() -> None:
    """The tool's share counts plain seeded runs: a double recycle shows in any, the
    forgotten spill slice not in seed 0's (the explorer finds it from that very restart), and
    a seed whose job completes no checkpoint has no restart to run."""
    assert FAULT_REPRODUCERS["double-recycle"].shows(0)
    slice_ = FAULT_REPRODUCERS["forget-spill-slice"]
    assert slice_.seed == 0
    assert not slice_.shows(0)
    assert slice_.run(12) is None
    with pytest.raises(InvalidParameterError, match="no restart to explore"):
        slice_.initial(12)
