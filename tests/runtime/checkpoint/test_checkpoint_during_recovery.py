"""Checkpoints taken while V2 still drains recovered data: recovery barriers, the queued
recovered buffers before them, the undrained slice of the spill files; declines."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint
from flinkstate.runtime.checkpoint.state_assignment import assign_state
from flinkstate.runtime.options import CheckpointFailureReason
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import RunStatus, Simulation, make_scheduler
from tests.runtime.checkpoint.channel.test_classic_recovery import PARAMS, finished, restored, world
from tests.runtime.checkpoint.channel.test_spilling_handler import v2

DURING = {"checkpoint_interval": 40, "checkpoints": 3}


def _during_recovery(sim: Simulation) -> list[int]:
    """Ids of the checkpoints triggered while some channel was still in recovery."""
    model = world(sim)
    ids = []
    while (event := sim.step()) is not None:
        if event.action.kind == "trigger" and any(
            c.recoverable.in_recovery for c in model.channels.values()
        ):
            assert model.checkpoints.pending is not None
            ids.append(model.checkpoints.pending.id)
    return ids


@pytest.mark.slow
@pytest.mark.parametrize("name", ["keyed", "keyed-chain", "backpressure"])
@pytest.mark.parametrize("new", [None, 3])
def test_a_checkpoint_during_the_drain_holds_every_recovered_record_once(
    name: str, new: int | None
) -> None:
    for seed in range(3):
        sim = v2(name, seed, new, **DURING)
        during = _during_recovery(sim)
        finished(sim.run())
        model = world(sim)
        assert during, "no checkpoint was triggered during the drain"
        completed = {c.id: c for c in model.checkpoints.completed}
        assert set(during) <= set(completed)
        recovered = [
            f
            for i in during
            for state in completed[i].input_channel_state
            for f in state.fragments
            if f.record in model.recovered_records
        ]
        assert recovered


def test_the_checkpoint_keeps_the_spill_files_until_the_writer_has_read_them() -> None:
    sim = v2("keyed-chain", 1, 3, **DURING)
    model = world(sim)
    held = False
    while sim.step() is not None:
        for drainer in model.drainers.values():
            state = drainer.state
            if state is not None and drainer.finished and not state.deleted:
                held = True  # drained, but a checkpoint's slice is still to be written
                assert any(
                    r.release_spill == drainer.task
                    for w in model.writers.values()
                    for r in w.requests
                )
    finished(sim.run())
    assert held
    for drainer in model.drainers.values():
        if drainer.state is not None:
            assert drainer.state.deleted
            assert drainer.state.deletions == 1


def test_forgetting_the_undrained_slice_loses_records_and_the_check_says_which() -> None:
    sim = v2("keyed", 0, 2, faults=frozenset({"forget-spill-slice"}), **DURING)
    result = sim.run()
    assert result.status is RunStatus.VIOLATION
    messages = [v.message for v in result.violations if v.invariant == "checkpoint-consistency"]
    assert messages
    assert "recovered record" in messages[0]
    assert "neither processed before the snapshot nor persisted" in messages[0]


def test_master_fails_the_job_on_a_missing_recovery_barrier() -> None:
    sim = v2("keyed", 0, 2, faults=frozenset({"missing-recovery-barrier"}), **DURING)
    finished(sim.run())
    model = world(sim)
    assert model.checkpoints.job_failed
    assert [f.reason for f in model.checkpoints.failures] == [
        CheckpointFailureReason.CHECKPOINT_DECLINED
    ]
    assert "tolerable-failed-checkpoints" in model.checkpoints.job_failed


@pytest.mark.slow
def test_the_seed_proposal_retries_and_loses_nothing() -> None:
    sim = v2(
        "keyed",
        0,
        2,
        faults=frozenset({"missing-recovery-barrier"}),
        recovery_barrier_decline="seed",
        **DURING,
    )
    finished(sim.run())
    model = world(sim)
    assert not model.checkpoints.job_failed
    reasons = {f.reason for f in model.checkpoints.failures}
    assert reasons == {CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY}
    assert model.checkpoints.completed  # once the drain is over, no barrier is missing
    assert all(not c.recoverable.in_recovery for c in model.channels.values())


@pytest.mark.slow
def test_a_tolerance_lets_the_job_survive_counted_declines() -> None:
    sim = v2(
        "keyed",
        0,
        2,
        faults=frozenset({"missing-recovery-barrier"}),
        tolerable_failed_checkpoints=1000,
        **DURING,
    )
    finished(sim.run())
    model = world(sim)
    assert not model.checkpoints.job_failed
    assert (
        len(model.checkpoints.failures) > 1
    )  # every attempt during the drain declined, all counted
    assert all(f.reason.counted for f in model.checkpoints.failures)


def _restore(checkpoint: Checkpoint, parallelism: int, seed: int) -> Simulation:
    assert checkpoint.graph is not None
    new = {op.name: parallelism for op in checkpoint.graph.operators if op.kind.value != "source"}
    assignment = assign_state(checkpoint, new, recover_output_on_downstream=True)
    values = {
        **PARAMS,
        "generation": "v2",
        "checkpointing_during_recovery": True,
        **DURING,
    }
    return Simulation(
        lambda: topology("keyed-chain").build(
            values, seed=seed, full_check_every=5, check_actions=True, restore=assignment
        ),
        make_scheduler("random", seed),
    )


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_restoring_from_a_checkpoint_taken_during_recovery_processes_every_record_once(
    seed: int,
) -> None:
    """RecoveredStateFilteringLargeRecordITCase's third phase: the checkpoint taken while
    recovering is already filtered for the new parallelism; restored at yet another one,
    every record still arrives exactly once."""
    phase2 = v2("keyed-chain", seed, 3, **DURING)
    during = _during_recovery(phase2)
    finished(phase2.run())
    model: NetworkWorld = world(phase2)
    taken = next(c for c in model.checkpoints.completed if c.id in during)
    assert any(
        f.record in model.recovered_records
        for state in taken.input_channel_state
        for f in state.fragments
    )
    finished(_restore(taken, 2, seed).run())


V1 = {"generation": "v1", "checkpointing_during_recovery": True}


@pytest.mark.slow
def test_v1_migrates_recovered_buffers_and_a_checkpoint_persists_them() -> None:
    """Flink 2.3: gates convert once the reader has filtered everything; the buffers still
    queued move into the physical channels, which persist them all on a checkpoint."""
    held = 0
    for seed in range(3):
        sim = restored_v1("keyed-chain", seed, 3)
        model = world(sim)
        during = []
        migrated = False
        while (event := sim.step()) is not None:
            if event.action.kind == "convert" and "migrated" in event.note:
                migrated = True
            if event.action.kind == "trigger" and any(
                c.recoverable.in_recovery for c in model.channels.values()
            ):
                assert model.checkpoints.pending is not None
                during.append(model.checkpoints.pending.id)
        finished(sim.run())
        assert migrated
        held += sum(
            1
            for c in model.checkpoints.completed
            if c.id in during
            for state in c.input_channel_state
            for f in state.fragments
            if f.record in model.recovered_records
        )
    assert held


@pytest.mark.slow
def test_flink_40016_persisting_a_migrated_buffer_twice_is_caught() -> None:
    caught = []
    for seed in range(6):
        sim = restored_v1("keyed-chain", seed, 3, faults=frozenset({"persist-migrated"}))
        result = sim.run()
        caught += [v.message for v in result.violations if v.invariant == "checkpoint-consistency"]
    assert caught
    assert any("persisted: some more than once" in m for m in caught)


def restored_v1(name: str, seed: int, new: int, **overrides: object) -> Simulation:
    return restored(name, seed, new, downstream=True, **{**V1, **DURING, **overrides})
