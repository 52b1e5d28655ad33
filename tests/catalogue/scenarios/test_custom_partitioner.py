"""FLINK-35351: a custom partitioner's producer rescaled, its consumer kept at its
parallelism, restored with the consumer's input state kept in place (before) or split anew."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.rescale import MappingType
from flinkstate.rescale.reassignment import InputReassignment
from tests.catalogue.scenarios.pairs import OUTPUT_DOWNSTREAM_EVERY_GENERATION, differ_only_in

BEFORE = "custom-partitioner-input-kept"
AFTER = "custom-partitioner-input-split"


def test_the_pair_differs_in_the_rule_only() -> None:
    differ_only_in(BEFORE, AFTER, "input_reassignment")


def test_the_itcase_row_rescales_the_source_alone() -> None:
    """UnalignedCheckpointRescaleITCase (downscale, CUSTOM_PARTITIONER, 3, 2): the source
    goes from 3 to 2, the sink stays at 3."""
    run = prepare_scenario(AFTER, seed=0)
    assert run.checkpoint is not None
    assert run.checkpoint.graph is not None
    assert run.assignment is not None
    old = {op.name: op.parallelism for op in run.checkpoint.graph.operators}
    new = {op.name: op.parallelism for op in run.assignment.graph.operators}
    assert (old, new) == ({"source": 3, "sink": 3}, {"source": 2, "sink": 3})


def test_each_sink_reads_its_own_input_state_before_and_every_one_since() -> None:
    for name, rule in ((BEFORE, InputReassignment.OWN_PARALLELISM), (AFTER, None)):
        run = prepare_scenario(name, seed=0)
        assert run.assignment is not None
        assert run.assignment.input_reassignment is (rule or InputReassignment.FULL_MAPPER)
        sinks = [s for s in run.assignment.subtasks.values() if s.operator == "sink"]
        read = {s.index: {c.old_subtask for c in s.input_state} for s in sinks}
        if name == BEFORE:
            assert all(old <= {index} for index, old in read.items())
        else:
            held = set().union(*read.values())
            assert len(held) > 1
            assert all(old == held for old in read.values())
        # either way the source's output state is split (3 -> 2) and FULL copies each old
        # subpartition to every sink, whose gates demultiplex and filter
        assert all(
            g.descriptor.mapping_type is MappingType.RESCALING for s in sinks for g in s.gates
        )
        for chunk in (c for s in run.assignment.subtasks.values() for c in s.output_state):
            assert chunk.targets == (0, 1, 2)


@pytest.mark.parametrize("seed", range(6))
def test_before_the_fix_a_sink_meets_the_rest_of_a_record_it_never_began(seed: int) -> None:
    run = run_scenario(BEFORE, seed=seed)
    assert run.outcome is Outcome.VIOLATION, run.summary()
    assert run.result is not None
    first = run.result.violations[0]
    assert first.invariant == "channel-order"
    assert "on sink[" in first.message
    assert "does not continue the record" in first.message
    after = run_scenario(AFTER, seed=seed)
    assert after.outcome is Outcome.RECOVERED, after.summary()
    assert after.filtered_records > 0


@pytest.mark.parametrize("overrides", OUTPUT_DOWNSTREAM_EVERY_GENERATION)
def test_the_pair_holds_with_output_recovered_downstream_and_every_generation(
    overrides: dict[str, object],
) -> None:
    assert run_scenario(BEFORE, seed=1, overrides=overrides).outcome is Outcome.VIOLATION
    after = run_scenario(AFTER, seed=1, overrides=overrides)
    assert after.outcome is Outcome.RECOVERED, after.summary()


def test_a_rule_flink_does_not_have_is_named() -> None:
    with pytest.raises(InvalidParameterError, match=r"one of flink-1\.19\.0, flink-1\.19\.1"):
        run_scenario(AFTER, overrides={"input_reassignment": "1.20"})


@pytest.mark.parametrize("seed", range(3))
def test_since_the_fix_a_producer_rescaled_to_the_consumers_parallelism_still_breaks(
    seed: int,
) -> None:
    """Source 3 -> 2 into a sink kept at 2: master's rule compares the source's new
    parallelism (2) with the sink's old one (2), so each sink keeps its own input state while
    FULL copies every old subpartition to both: the same break as before the fix."""
    name = "custom-partitioner-input-still-kept"
    run = prepare_scenario(name, seed=seed)
    assert run.assignment is not None
    assert run.assignment.input_reassignment is InputReassignment.FULL_MAPPER
    sinks = [s for s in run.assignment.subtasks.values() if s.operator == "sink"]
    assert [s.index for s in sinks] == [0, 1]
    assert all({c.old_subtask for c in s.input_state} <= {s.index} for s in sinks)
    ran = run_scenario(name, seed=seed)
    assert ran.outcome is Outcome.VIOLATION, ran.summary()
    assert ran.result is not None
    assert ran.result.violations[0].invariant == "channel-order"
