"""FLINK-40269: a task reading one upstream twice, restored at a new parallelism with each
descriptor's channel mapping found by the first edge (before) or by the edge's data set."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.rescale import NO_RESCALE, Partitioner, SubtaskStateMapper
from flinkstate.runtime.options import ConnectedMappingLookup
from tests.catalogue.scenarios.pairs import OUTPUT_DOWNSTREAM_EVERY_GENERATION

BEFORE = "same-upstream-first-edge"
AFTER = "same-upstream-by-data-set"

#: the two IllegalStateExceptions a restored co-map of the before variant meets first:
#: half a record left in a virtual channel at the end of recovery, or bytes of an old
#: subtask its descriptor does not name
FLINK_FAILURES = ("Not all data has been fully consumed", "virtual-channel")


def test_the_pair_differs_in_the_lookup_only() -> None:
    before = run_scenario(BEFORE, seed=0)
    after = run_scenario(AFTER, seed=0)
    assert {k: v for k, v in before.values.items() if k != "connected_mapping_lookup"} == {
        k: v for k, v in after.values.items() if k != "connected_mapping_lookup"
    }
    assert before.assignment is not None
    assert after.assignment is not None
    assert before.assignment.connected_mapping is ConnectedMappingLookup.FIRST_EDGE
    assert after.assignment.connected_mapping is ConnectedMappingLookup.DATA_SET
    # the ITCase's parallelism: 2, restored at 4, source and co-map alike
    for run in (before, after):
        assert run.checkpoint is not None
        assert run.checkpoint.graph is not None
        assert run.assignment is not None
        assert {op.parallelism for op in run.checkpoint.graph.operators} == {2}
        assert {op.parallelism for op in run.assignment.graph.operators} == {4}


def test_before_the_fix_the_keyed_partition_takes_the_rebalance_edges_mapping() -> None:
    """2 -> 4: RANGE copies old subpartition 1 to new co-maps 2 and 3 (the key groups it held).
    The rebalance edge's ROUND_ROBIN keeps old subpartitions 0 and 1 where they were, and the
    upstream's ARBITRARY its old subtasks: both are identities, so before the fix the keyBy
    partition is not even rescaled, and old subpartition 1 goes to co-map 1 alone."""
    assert SubtaskStateMapper.ROUND_ROBIN.new_to_old(2, 4).is_identity
    assert SubtaskStateMapper.ARBITRARY.new_to_old(2, 4).is_identity
    for name, connected, old_1_to in (
        (BEFORE, Partitioner.REBALANCE, (1,)),
        (AFTER, None, (2, 3)),
    ):
        run = prepare_scenario(name, seed=0)
        assert run.assignment is not None
        keyed = run.assignment.exchanges["source->co-map#2"]
        assert keyed.connected is connected
        assert run.assignment.exchanges["source->co-map"].connected is None
        for plan in keyed.upstream:
            if not plan.output_state_from:
                continue
            if name == AFTER:
                assert plan.descriptor.rescaled_channels_mapping == (
                    SubtaskStateMapper.RANGE.new_to_old(2, 4)
                )
                assert plan.new_subpartitions(1) == old_1_to
            else:
                assert plan.descriptor is NO_RESCALE
        chunks = [
            chunk
            for share in run.assignment.subtasks.values()
            if share.operator == "source"
            for chunk in share.output_state
            if chunk.index == 1 and chunk.old_subtask == 1
        ]
        assert chunks, "the checkpoint holds the keyBy partition's old subpartition 1"
        assert {chunk.targets for chunk in chunks} == {old_1_to}


@pytest.mark.parametrize("seed", range(6))
def test_before_the_fix_a_restored_co_map_fails_as_flink_does(seed: int) -> None:
    run = run_scenario(BEFORE, seed=seed)
    assert run.outcome is Outcome.VIOLATION, run.summary()
    assert run.result is not None
    first = str(run.result.violations[0])
    assert any(failure in first for failure in FLINK_FAILURES), first
    assert "#2" in first  # on the keyBy edge, the second between source and co-map
    # the same restart with Flink's lookup since FLINK-40269 recovers
    assert run_scenario(AFTER, seed=seed).outcome is Outcome.RECOVERED


def test_running_on_the_before_variant_meets_bytes_its_descriptor_does_not_name() -> None:
    run = prepare_scenario(BEFORE, seed=0)
    assert run.simulation is not None
    result = run.simulation.run(stop_on_violation=False)
    unknown = [v.message for v in result.violations if v.invariant == "virtual-channel"]
    assert unknown
    assert "old subtask 1" in unknown[0]
    assert "co-map[1]<source[" in unknown[0]
    assert "IllegalStateException" in unknown[0]
    # and records of old subpartition 0 that co-map 0 filtered out reach no one
    assert any("never processed" in v.message for v in result.violations)


@pytest.mark.parametrize("overrides", OUTPUT_DOWNSTREAM_EVERY_GENERATION)
def test_the_pair_holds_with_output_recovered_downstream_and_every_generation(
    overrides: dict[str, object],
) -> None:
    """The ITCase runs with recover-output-on-downstream too: the output state is then
    handed to the co-maps by the same (wrong) mapping; Flink 2.3's and master's readers, which
    filter on the reader thread, stumble over the same bytes."""
    assert run_scenario(BEFORE, seed=1, overrides=overrides).outcome is Outcome.VIOLATION
    after = run_scenario(AFTER, seed=1, overrides=overrides)
    assert after.outcome is Outcome.RECOVERED, after.summary()


def test_a_lookup_flink_does_not_have_is_named() -> None:
    with pytest.raises(InvalidParameterError, match="one of first-edge, data-set"):
        run_scenario(AFTER, overrides={"connected_mapping_lookup": "first"})
