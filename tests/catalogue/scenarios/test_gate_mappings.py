"""FLINK-22686: an operator whose gates' mappers differ, restored with one subtask mapping
for the operator (before) or one per gate (since)."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.rescale import MappingType
from flinkstate.rescale.reassignment import MappingScope
from tests.catalogue.scenarios.pairs import OUTPUT_DOWNSTREAM_EVERY_GENERATION, differ_only_in

BEFORE = "two-gates-one-mapping"
AFTER = "two-gates-mapping-per-gate"


def test_the_pair_differs_in_the_rule_only() -> None:
    differ_only_in(BEFORE, AFTER, "mapping_scope")


@pytest.mark.parametrize("seed", range(4))
def test_before_the_restore_fails_with_flinks_message_and_since_it_recovers(seed: int) -> None:
    run = run_scenario(BEFORE, seed=seed)
    assert run.outcome is Outcome.REJECTED, run.summary()
    assert run.message == (
        "java.lang.IllegalStateException: Incompatible subtask mappings: are multiple operators "
        "ingesting/producing intermediate results with varying degrees of parallelism?Found "
        "[[0, 1], [1, 2]] and [[0, 2], [1]]."
    )
    fixed = run_scenario(AFTER, seed=seed)
    assert fixed.outcome is Outcome.RECOVERED, fixed.summary()
    assert fixed.filtered_records > 0


def test_since_the_fix_each_gate_names_its_own_old_subtasks() -> None:
    """New process subtask 0's descriptors, as Flink's test has them: the keyBy gate old
    subtasks (0, 1), 1 ambiguous; the rebalance gate (0, 2), none."""
    run = prepare_scenario(AFTER, seed=0)
    assert run.assignment is not None
    assert run.assignment.mapping_scope is MappingScope.GATE
    keyed, rebalanced = (g.descriptor for g in run.assignment.subtasks["process[0]"].gates)
    assert (keyed.old_subtask_indexes, keyed.ambiguous_subtask_indexes) == ((0, 1), {1})
    assert (rebalanced.old_subtask_indexes, rebalanced.ambiguous_subtask_indexes) == (
        (0, 2),
        frozenset(),
    )
    assert {keyed.mapping_type, rebalanced.mapping_type} == {MappingType.RESCALING}
    assert str(keyed.rescaled_channels_mapping) == str(rebalanced.rescaled_channels_mapping)
    assert str(keyed.rescaled_channels_mapping) == "[[0, 2], [1]]"


@pytest.mark.parametrize("overrides", OUTPUT_DOWNSTREAM_EVERY_GENERATION)
def test_the_pair_holds_with_output_recovered_downstream_and_every_generation(
    overrides: dict[str, object],
) -> None:
    assert run_scenario(BEFORE, seed=1, overrides=overrides).outcome is Outcome.REJECTED
    fixed = run_scenario(AFTER, seed=1, overrides=overrides)
    assert fixed.outcome is Outcome.RECOVERED, fixed.summary()
