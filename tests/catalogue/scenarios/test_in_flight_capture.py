"""FLINK-17315: UnalignedCheckpointITCase's local-channels-only job checkpointed with a
LocalInputChannel that persists nothing before its barrier (before) or what it reads (since);
FLINK-18139: a task of two gates whose snapshot asks gate 0's channels about gate 1's (before)
or each channel about itself (since)."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.counterexample import exploration_subject
from flinkstate.lab.scenario_run import run_scenario
from flinkstate.sim.explore import Bounds, explore
from tests.catalogue.scenarios.pairs import differ_only_in

BEFORE = "local-channel-forgets-in-flight"
AFTER = "local-channel-persists-in-flight"
LOST = "neither processed before the snapshot nor persisted"
#: the smallest job that shows it: two sources into one map (and its sink), one record each,
#: the checkpoint two steps in
SMALLEST = {
    "parallelism": 1,
    "records": 1,
    "checkpoint_interval": 2,
    "network_buffers": 16,
}


def test_the_pair_differs_in_the_local_channels_code_only() -> None:
    differ_only_in(BEFORE, AFTER, "local_channel_persistence")


def test_every_channel_of_the_itcase_job_is_local() -> None:
    """Parallelism 2 and three slots per TaskManager: one TaskManager runs every subtask
    (UnalignedCheckpointITCase.shouldPerformUnalignedCheckpointOnLocalChannelsOnly)."""
    scenario = get_scenario(AFTER)
    world = topology(scenario.topology).build(scenario.parameters)
    assert len(world.channels) == 8
    assert not any(c.remote for c in world.channels.values())


@pytest.mark.parametrize("seed", range(4))
def test_before_the_fix_a_record_read_before_its_barrier_is_in_no_snapshot(seed: int) -> None:
    run = run_scenario(BEFORE, seed=seed)
    assert run.outcome is Outcome.VIOLATION, run.summary()
    assert run.result is not None
    first = run.result.violations[0]
    assert first.invariant == "checkpoint-consistency"
    assert first.message.startswith("checkpoint 1: record ")
    assert first.message.endswith(LOST)
    after = run_scenario(AFTER, seed=seed)
    assert after.outcome is Outcome.RECOVERED, after.summary()


def test_a_version_flink_did_not_have_is_named() -> None:
    with pytest.raises(InvalidParameterError, match=r"one of flink-1\.11-snapshot, flink-1\.11\.0"):
        run_scenario(AFTER, overrides={"local_channel_persistence": "1.11"})


def test_the_explorer_finds_the_lost_record_in_the_smallest_job() -> None:
    """Breadth first from the job's start: the map's checkpoint starts at source[1]'s barrier
    and it reads source[0]'s record before source[0]'s snapshot, ten steps in."""
    subject = exploration_subject(BEFORE, overrides=SMALLEST, phase="job")
    result = explore(subject.initial, bounds=Bounds(max_states=5_000))
    assert result.violations, result.summary()
    finding = result.violations[0]
    assert finding.name == "checkpoint-consistency"
    assert finding.depth == 10
    assert finding.violation is not None
    assert finding.violation.message.endswith(LOST)


def test_since_the_fix_the_smallest_job_keeps_every_record_to_the_same_depth() -> None:
    subject = exploration_subject(AFTER, overrides=SMALLEST, phase="job")
    result = explore(subject.initial, bounds=Bounds(max_depth=10))
    assert not result.findings, result.summary()


TWO_GATES_BEFORE = "second-gate-forgets-in-flight"
TWO_GATES_AFTER = "second-gate-persists-in-flight"
#: one subtask of each operator: the co-map reads one channel in each of its two gates
TWO_GATES_SMALLEST = {**SMALLEST, "source_parallelism": 1}


def test_the_two_gate_pair_differs_in_the_lookup_only() -> None:
    differ_only_in(TWO_GATES_BEFORE, TWO_GATES_AFTER, "inflight_data_lookup")


def test_each_co_map_reads_two_gates_of_two_local_channels() -> None:
    scenario = get_scenario(TWO_GATES_AFTER)
    world = topology(scenario.topology).build(scenario.parameters)
    gates = [g for g in world.gates.values() if g.name.startswith("co-map")]
    assert sorted(g.name for g in gates) == [
        "co-map[0]<left",
        "co-map[0]<right",
        "co-map[1]<left",
        "co-map[1]<right",
    ]
    assert all([c.index for c in g.channels] == [0, 1] for g in gates)
    assert not any(c.remote for g in gates for c in g.channels)


@pytest.mark.parametrize("seed", range(4))
def test_before_the_fix_the_second_gates_in_flight_records_are_lost(seed: int) -> None:
    run = run_scenario(TWO_GATES_BEFORE, seed=seed)
    assert run.outcome is Outcome.VIOLATION, run.summary()
    assert run.result is not None
    first = run.result.violations[0]
    assert first.invariant == "checkpoint-consistency"
    assert f"<right: {LOST}" in first.message  # gate 1 reads right
    after = run_scenario(TWO_GATES_AFTER, seed=seed)
    assert after.outcome is Outcome.RECOVERED, after.summary()


def test_the_explorer_finds_the_second_gates_lost_record_in_the_smallest_job() -> None:
    subject = exploration_subject(TWO_GATES_BEFORE, overrides=TWO_GATES_SMALLEST, phase="job")
    result = explore(subject.initial, bounds=Bounds(max_states=8_000))
    assert result.violations, result.summary()
    finding = result.violations[0]
    assert finding.depth == 10
    assert finding.violation is not None
    assert finding.violation.message.endswith(f"towards co-map[0]<right: {LOST}")


def test_since_the_fix_the_smallest_two_gate_job_keeps_every_record_to_the_same_depth() -> None:
    subject = exploration_subject(TWO_GATES_AFTER, overrides=TWO_GATES_SMALLEST, phase="job")
    result = explore(subject.initial, bounds=Bounds(max_depth=10))
    assert not result.findings, result.summary()
