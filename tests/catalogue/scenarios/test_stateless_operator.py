"""FLINK-27031 and FLINK-31963: a stateless sink beside a source with output state,
restored by Flink's rule before each fix and by master's."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.rescale.descriptor import NO_RESCALE
from flinkstate.rescale.reassignment import StatelessAssignment
from tests.catalogue.scenarios.pairs import OUTPUT_DOWNSTREAM_EVERY_GENERATION, differ_only_in

PAIRS = [
    ("stateless-sink-not-assigned", "stateless-sink-assigned"),
    ("stateless-sink-not-repartitioned", "stateless-sink-repartitioned"),
]


@pytest.mark.parametrize(("before", "after"), PAIRS)
def test_each_pair_differs_in_the_rule_only(before: str, after: str) -> None:
    differ_only_in(before, after, "stateless_assignment")


@pytest.mark.parametrize(("before", "after"), PAIRS)
def test_the_sink_has_no_state_of_its_own_and_no_descriptor_before_the_fix(
    before: str, after: str
) -> None:
    for name in (before, after):
        run = prepare_scenario(name, seed=0)
        assert run.checkpoint is not None
        assert run.assignment is not None
        owners = {s.owner for s in run.checkpoint.input_channel_state}
        assert not any(owner.startswith("sink[") for owner in owners)
        assert run.checkpoint.result_subpartition_state
        sinks = [s for s in run.assignment.subtasks.values() if s.operator == "sink"]
        kept = name == after
        assert any(g.descriptor is not NO_RESCALE for s in sinks for g in s.gates) is kept


def test_before_flink_27031_only_the_sink_goes_without_a_descriptor() -> None:
    """The source computed its output mapping (it has state, 3 -> 2): its partitions keep
    their descriptors, so the copies the sinks must filter do reach them."""
    run = prepare_scenario("stateless-sink-not-assigned", seed=0)
    assert run.assignment is not None
    assert run.assignment.stateless_assignment is StatelessAssignment.NOT_ASSIGNED
    sources = [s for s in run.assignment.subtasks.values() if s.operator == "source"]
    assert all(p.descriptor is not NO_RESCALE for s in sources for p in s.partitions)


def test_before_flink_31963_the_source_keeps_its_subpartitions_as_they_were() -> None:
    run = prepare_scenario("stateless-sink-not-repartitioned", seed=0)
    assert run.assignment is not None
    for share in run.assignment.subtasks.values():
        if share.operator == "source":
            assert all(p.descriptor is NO_RESCALE for p in share.partitions)
            assert all(c.targets == (c.old_subtask,) for c in share.output_state)


@pytest.mark.parametrize(("before", "after"), PAIRS)
@pytest.mark.parametrize("seed", range(4))
def test_before_a_sink_processes_a_key_it_does_not_own_and_after_it_recovers(
    before: str, after: str, seed: int
) -> None:
    run = run_scenario(before, seed=seed)
    assert run.outcome is Outcome.VIOLATION, run.summary()
    assert run.result is not None
    first = run.result.violations[0]
    assert first.invariant == "exactly-once"
    assert first.message.startswith("task sink[")
    assert "without it being sent" in first.message
    fixed = run_scenario(after, seed=seed)
    assert fixed.outcome is Outcome.RECOVERED, fixed.summary()
    assert fixed.filtered_records > 0


def test_a_sink_downscaled_behind_an_unchanged_source_fails_the_restore_before_31963() -> None:
    """Sink 3 -> 2, the source kept at 3: with no descriptor the source writes old
    subpartition 2 back into a partition of 2 subpartitions, and the restore fails."""
    overrides = {"parallelism": 3, "new_parallelism": 2}
    run = run_scenario("stateless-sink-not-repartitioned", seed=0, overrides=overrides)
    assert run.outcome is Outcome.REJECTED
    assert "Index 2 out of bounds for length 2" in run.message
    fixed = run_scenario("stateless-sink-repartitioned", seed=0, overrides=overrides)
    assert fixed.outcome is Outcome.RECOVERED, fixed.summary()


def test_flink_27031_alone_already_recovers_the_downscale_of_both() -> None:
    """Both 3 -> 2: the source computed its output mapping, so once the sink gets a restore
    (FLINK-27031) its descriptor takes that mapping and filters; FLINK-31963 was not needed."""
    overrides = {"stateless_assignment": StatelessAssignment.ASSIGNED.value}
    for seed in range(3):
        run = run_scenario("stateless-sink-not-assigned", seed=seed, overrides=overrides)
        assert run.outcome is Outcome.RECOVERED, run.summary()


@pytest.mark.parametrize(("before", "after"), PAIRS)
@pytest.mark.parametrize("overrides", OUTPUT_DOWNSTREAM_EVERY_GENERATION)
def test_the_pairs_hold_with_output_recovered_downstream_and_every_generation(
    before: str, after: str, overrides: dict[str, object]
) -> None:
    """Flink before these fixes had no recover-output-on-downstream; in the model the old
    rule still breaks the restore (the sink's channels looked up without a descriptor fail
    it, or records reach a sink that does not own their keys) and master's recovers."""
    assert run_scenario(before, seed=1, overrides=overrides).outcome in (
        Outcome.VIOLATION,
        Outcome.REJECTED,
    )
    fixed = run_scenario(after, seed=1, overrides=overrides)
    assert fixed.outcome is Outcome.RECOVERED, fixed.summary()
