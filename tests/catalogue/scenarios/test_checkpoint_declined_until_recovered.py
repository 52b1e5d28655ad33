"""FLINK-20654: a checkpoint reaching the restored two-gate co-map while one gate still replays
its recovered state, taken without that gate (Flink 1.12.0) or declined until every channel is
converted (1.12.2)."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.scenarios import get_scenario, scenarios_of_bug
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.counterexample import exploration_subject
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.options import CheckpointFailureReason
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.explore import Bounds, explore
from tests.catalogue.scenarios.pairs import differ_only_in

BEFORE = "checkpoint-excludes-replaying-gate"
AFTER = "checkpoint-declined-until-recovered"
LOST = "neither processed before the snapshot nor persisted"
#: the smallest restart that shows it: one subtask of each operator, two records per source,
#: the job's checkpoint two steps in and the restart's checkpoints due at every step
SMALLEST = {
    "parallelism": 1,
    "source_parallelism": 1,
    "records": 2,
    "checkpoint_interval": 2,
    "restart_checkpoint_interval": 1,
    "network_buffers": 16,
}


def test_the_pair_differs_in_the_recovered_channels_rule_only() -> None:
    differ_only_in(BEFORE, AFTER, "recovered_channel_checkpoint_start")


def test_the_pair_is_the_catalogues_flink_20654() -> None:
    assert [s.name for s in scenarios_of_bug("20654")] == [BEFORE, AFTER]
    assert get_scenario(AFTER).parameters["coordinator_waits_for_running"] is False


@pytest.mark.parametrize("seed", range(4))
def test_before_the_fix_the_completed_checkpoint_holds_a_record_nowhere(seed: int) -> None:
    """Seeds 0 to 3 of the scenario: the first violation is a record (recovered, or sent live
    into the channel converted after the snapshot) that the completed checkpoint holds in
    neither the co-map's state nor its channel state, at the gate that was replaying."""
    run = run_scenario(BEFORE, seed=seed)
    assert run.outcome is Outcome.VIOLATION, run.summary()
    assert run.result is not None
    first = run.result.violations[0]
    assert first.invariant == "checkpoint-consistency"
    assert first.message.endswith(f"<right: {LOST}")


def _declines(world: NetworkWorld) -> list[tuple[CheckpointFailureReason, str]]:
    """The co-map's declines (the sources' while they restore their output are not at issue)."""
    failures = world.checkpoints.failures
    return [(f.reason, f.detail) for f in failures if f.task.startswith("task co-map")]


@pytest.mark.parametrize("seed", range(4))
def test_since_the_fix_the_co_map_declines_until_converted_and_nothing_is_lost(
    seed: int,
) -> None:
    run = run_scenario(AFTER, seed=seed)
    assert run.outcome is Outcome.RECOVERED, run.summary()
    assert run.simulation is not None
    world = run.simulation.model
    assert isinstance(world, NetworkWorld)
    declines = _declines(world)
    assert declines, "no checkpoint reached the co-map during its recovery"
    for reason, why in declines:
        assert reason is CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY
        assert why.endswith("is still a RecoveredInputChannel")
    assert world.checkpoints.completed  # later ones complete, holding every record once


def test_a_version_flink_did_not_have_is_named() -> None:
    with pytest.raises(InvalidParameterError, match=r"one of flink-1\.12\.0, flink-1\.12\.2"):
        run_scenario(AFTER, overrides={"recovered_channel_checkpoint_start": "1.12.1"})


def test_random_walks_find_the_lost_record_in_the_smallest_restart() -> None:
    """Breadth first, the restart's space is too wide to reach the loss (a trigger is due at
    every step); 200 random walks (seed 0) find it."""
    subject = exploration_subject(BEFORE, overrides=SMALLEST)
    result = explore(subject.initial, strategy="random-walk", bounds=Bounds(walks=200))
    assert result.violations, result.summary()
    finding = result.violations[0]
    assert finding.name == "checkpoint-consistency"
    assert finding.violation is not None
    assert finding.violation.message.endswith(f"at co-map[0]<right: {LOST}")


def test_since_the_fix_the_same_walks_find_nothing() -> None:
    subject = exploration_subject(AFTER, overrides=SMALLEST)
    result = explore(subject.initial, strategy="random-walk", bounds=Bounds(walks=200))
    assert not result.findings, result.summary()


#: the same restart under master's checkpointing during recovery (FLIP-547's V2)
MASTER_V2 = {
    "recover_output_on_downstream": True,
    "checkpointing_during_recovery": True,
    "generation": "v2",
}


@pytest.mark.parametrize("name", [BEFORE, AFTER])
def test_master_v2_checkpoints_the_replaying_gate_whichever_rule(name: str) -> None:
    """Under V2 the co-map's channels are converted before the recovered data arrives and a
    checkpoint cuts their recovered queues at recovery barriers: a checkpoint triggered while
    channels are still in recovery completes and holds every record once, and no
    RecoveredInputChannel is left for 1.12.0's rule to skip (seed 0: checkpoint 6)."""
    run = prepare_scenario(name, overrides=MASTER_V2, keep_snapshots=False)
    assert run.simulation is not None
    world = run.simulation.model
    assert isinstance(world, NetworkWorld)
    during = []
    while (event := run.simulation.step()) is not None:
        if event.action.kind is ActionKind.TRIGGER and any(
            c.recoverable.in_recovery for c in world.channels.values()
        ):
            assert world.checkpoints.pending is not None
            during.append(world.checkpoints.pending.id)
    assert world.violations == []
    assert not any("RecoveredInputChannel" in f.detail for f in world.checkpoints.failures)
    assert during == [6]
    assert 6 in {c.id for c in world.checkpoints.completed}
