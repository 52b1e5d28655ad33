"""Known hazards found by exploring every interleaving of a scenario's restart from a minimal
configuration, and their fixed variants explored within stated bounds with nothing found
(docs/research/exploring-interleavings.md#hazards)."""

from __future__ import annotations

import pytest

from flinkstate.lab.reproducers import HAZARDS, Checked, Hazard, blocked_priority_heads
from flinkstate.runtime.partition.consumer.result_subpartition_view import sub_head
from flinkstate.sim.explore import FindingKind, StopReason

BY_NAME = {h.name: h for h in HAZARDS}


@pytest.mark.slow
@pytest.mark.parametrize("hazard", HAZARDS, ids=lambda h: h.name)
def test_the_hazard_is_found_from_its_minimal_configuration(hazard: Hazard) -> None:
    result = hazard.before.explore()
    finding = hazard.before.found(result)
    assert finding is not None, result.summary()
    assert finding.found_after <= hazard.before.within


@pytest.mark.slow
@pytest.mark.parametrize("hazard", HAZARDS, ids=lambda h: h.name)
def test_the_fixed_variant_shows_nothing_within_its_bounds(hazard: Hazard) -> None:
    result = hazard.fixed_variant.explore(hazard.fixed_bounds)
    assert result.findings == (), result.summary()
    if hazard.fixed_bounds.max_depth is None:
        assert result.exhausted, result.summary()
        assert result.finished >= 1
    else:
        assert result.stopped_by is StopReason.MAX_DEPTH
        assert result.depth == hazard.fixed_bounds.max_depth


@pytest.mark.slow
def test_the_selective_reader_deadlocks_in_every_interleaving_that_ends() -> None:
    result = BY_NAME["selective-reading-all-gates"].before.explore()
    assert result.exhausted
    assert [f.kind for f in result.findings] == [FindingKind.DEADLOCK]
    # the task waits for its gate's conversion, the conversion for the task
    assert result.findings[0].name == (
        "request-partitions sequential[0]<first -> task sequential[0] -> "
        "request-partitions sequential[0]<first"
    )
    assert result.finished == 0  # no interleaving gets through


@pytest.mark.slow
def test_the_fixed_subpartition_hands_out_the_barrier_the_held_one_withholds() -> None:
    """The held variant's shortest counterexample, replayed on the fixed variant (the two are
    the same until a barrier meets a blocked subpartition): there the barrier heads the blocked
    subpartition too, and its consumer is given it, so the fixed variant's exploration met the
    situation the property is about and found it handled."""
    hazard = BY_NAME["barrier-held-by-blocked-subpartition"]
    finding = hazard.before.found(hazard.before.explore())
    assert finding is not None
    fixed = hazard.fixed_variant.start()
    assert isinstance(fixed, Checked)
    for action in finding.trace:
        fixed.apply(action)
    heads = blocked_priority_heads(fixed.world)
    assert heads
    for channel in heads:
        sub = fixed.world.subpartitions[channel.subpartition]
        assert sub_head(fixed.world, channel) is sub.queue[0]
    assert fixed.violations == []
