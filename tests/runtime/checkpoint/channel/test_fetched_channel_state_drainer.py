"""V2 after the fetch: one request-partitions mail with recovery, the drainer installed as the
trigger (restore ends there), channels in recovery until their end event is consumed."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.runtime.buffer.buffer import HEAP
from flinkstate.runtime.events import END_OF_FETCHED_STATE, END_OF_OUTPUT_STATE
from flinkstate.runtime.options import RecoveryCheckpointTrigger
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.tasks.task import Task
from tests.runtime.checkpoint.channel.test_classic_recovery import finished, world
from tests.runtime.checkpoint.channel.test_spilling_handler import v2


@pytest.mark.slow
def test_trigger_not_ready_until_the_drainer_is_installed_then_no_op_once_consumed() -> None:
    sim = v2("keyed", 0, 2)
    model = world(sim)
    restored = [t for t in model.tasks.values() if t.name in model.drainers]
    assert restored
    assert all(t.recovery_trigger is RecoveryCheckpointTrigger.NOT_READY for t in restored)
    seen: dict[str, list[str]] = {t.name: [] for t in restored}
    while (event := sim.step()) is not None:
        for task in restored:
            trigger = task.recovery_trigger.value
            if not seen[task.name] or seen[task.name][-1] != trigger:
                seen[task.name].append(trigger)
            if task.recovery_trigger is RecoveryCheckpointTrigger.NOT_READY:
                assert task.phase != TaskPhase.RUNNING
        if event.action.kind == "install-drainer":
            task = model.task_named(event.action.actor)
            assert task.phase == TaskPhase.RUNNING
            # restore is over while every channel is still in recovery
            assert all(c.recoverable.in_recovery for g in task.gates for c in g.channels)
    finished(sim.run())
    for name, trail in seen.items():
        if model.drainers[name].state is None:  # nothing to drain: straight to NO_OP
            assert trail == ["not-ready", "no-op"]
        else:
            assert trail == ["not-ready", "drainer", "no-op"]
    assert {model.drainers[n].state is None for n in seen} == {True, False}


def _in_recovery(task: Task) -> int:
    return sum(c.recoverable.in_recovery for g in task.gates for c in g.channels)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_master_resets_the_trigger_only_once_no_channel_is_in_recovery(seed: int) -> None:
    """The window PR #28554's review found is closed: while any channel of the task is in
    recovery, even after the drain has ended, the drainer stays the trigger."""
    sim = v2("keyed", seed, 2)
    model = world(sim)
    restored = [model.tasks[k] for k, t in model.tasks.items() if t.name in model.drainers]
    window = 0
    while sim.step() is not None:
        for task in restored:
            drainer = model.drainers[task.name]
            if task.recovery_trigger is RecoveryCheckpointTrigger.NO_OP:
                assert _in_recovery(task) == 0
            elif drainer.finished and _in_recovery(task):
                assert task.recovery_trigger is RecoveryCheckpointTrigger.DRAINER
                window += 1
    finished(sim.run())
    assert window  # the drain ends before the task has consumed what it queued


def test_before_the_review_the_trigger_is_reset_while_channels_are_in_recovery() -> None:
    """``no_op_trigger_after=drain-done``: NO_OP as soon as the drain has ended, with every
    channel of the task still in recovery (the scenario ``trigger-no-op-after-drain`` shows
    the checkpoint that meets it declined)."""
    sim = v2("keyed", 0, 2, no_op_trigger_after="drain-done")
    model = world(sim)
    by_drainer = {d.name: model.task_named(d.task) for d in model.drainers.values()}
    reset_early = 0
    while (event := sim.step()) is not None:
        if event.action.kind == "finish-drain":
            task = by_drainer[event.action.actor]
            assert task.recovery_trigger is RecoveryCheckpointTrigger.NO_OP
            assert _in_recovery(task) == sum(len(g.channels) for g in task.gates)
            reset_early += 1
    finished(sim.run())
    assert reset_early


@pytest.mark.slow
def test_channels_in_recovery_take_no_live_data_and_stash_ordinary_events() -> None:
    sim = v2("keyed-chain", 1, 3)
    model = world(sim)
    stashed = 0
    while sim.step() is not None:
        for channel in model.channels.values():
            if not channel.recoverable.in_recovery:
                assert not channel.recoverable.stash
                continue
            assert all(b.priority for b in channel.received)  # no credit: no data
            assert all(b.event == END_OF_OUTPUT_STATE for b in channel.recoverable.stash)
            stashed = max(stashed, len(channel.recoverable.stash))
            gate = model.gate_of(channel)
            assert len(channel.buffers.exclusive_segments) == gate.exclusive_per_channel
    finished(sim.run())
    assert stashed  # a remote producer handed out its end-of-output event meanwhile


@pytest.mark.slow
def test_local_channels_keep_the_exclusive_buffers_recovery_gave_them() -> None:
    sim = v2("keyed-chain", 1, None)
    finished(sim.run())
    model = world(sim)
    local = [c for c in model.channels.values() if not c.remote and c.gate in _restored_gates(sim)]
    assert local
    for channel in local:
        assert (
            len(channel.buffers.exclusive_segments) == model.gate_of(channel).exclusive_per_channel
        )
        for segment in channel.buffers.exclusive_segments:
            assert model.home[segment] == channel.owners.exclusive


def _restored_gates(sim: object) -> set[str]:
    model = world(sim)  # type: ignore[arg-type]
    return {
        g.name
        for t in model.tasks.values()
        if t.name in model.drainers and model.drainers[t.name].state is not None
        for g in t.gates
    }


@pytest.mark.slow
def test_every_channel_ends_its_recovery_with_one_end_event() -> None:
    sim = v2("two-input", 2, 3)
    model = world(sim)
    ends: dict[str, int] = {}
    while (event := sim.step()) is not None:
        if event.action.kind == "finish-drain":
            task = model.tasks[model.actor(event.action.actor).task]
            for gate in task.gates:
                for channel in gate.channels:
                    last = channel.recovery.queue[-1]
                    assert last.event == END_OF_FETCHED_STATE
                    assert last.segment == HEAP
                    ends[channel.name] = ends.get(channel.name, 0) + 1
    finished(sim.run())
    with_state = {
        c.name
        for d in model.drainers.values()
        if d.state is not None
        for g in model.task_named(d.task).gates
        for c in g.channels
    }
    assert ends == dict.fromkeys(with_state, 1)
    assert all(not c.recoverable.in_recovery for c in model.channels.values())


@pytest.mark.slow
def test_a_task_with_nothing_to_drain_converts_without_recovery() -> None:
    sim = v2("keyed", 0, 2)
    model = world(sim)
    finished(sim.run())
    stateless = [n for n, d in model.drainers.items() if d.state is None]
    assert stateless
    for name, drainer in model.drainers.items():
        if drainer.state is None:
            kinds = [e.action.kind for e in sim.events if e.action.actor == name]
            assert "install-drainer" not in kinds
            assert model.task_named(name).recovery_trigger.value == "no-op"


@pytest.mark.parametrize("mail", ["request-partitions", "install-drainer"])
@pytest.mark.parametrize("cleanup", ["on-abort", "drain-only"])
def test_a_mail_failing_between_fetch_and_drain(mail: str, cleanup: str) -> None:
    """FLINK-40520: the task's cleanup closes the fetched state it was handed; before, only
    the drain released it, and a drain never submitted leaves the files on disk."""
    sim = v2("keyed", 0, 2, abort_recovery=mail, spill_cleanup=cleanup)
    result = sim.run()
    model = world(sim)
    assert model.failover is not None
    failed = sim.events[model.failover.step - 1]
    assert failed.action.kind == mail
    task = model.task_named(failed.action.actor)
    assert task.phase is not TaskPhase.RUNNING
    state = model.drainers[task.name].state
    assert state is not None
    assert not model.drainers[task.name].installed
    assert state.deleted is (cleanup == "on-abort")
    leaks = [v.message for v in result.violations if v.invariant == "spill-file-leak"]
    if cleanup == "on-abort":
        assert not result.violations
        assert model.spill.files_alive == 0
    else:
        assert any(m.startswith(f"1 spill file(s) of {task.name} outlive") for m in leaks)


def test_a_drain_that_started_releases_its_files_without_flink_40520() -> None:
    """The failover of master's missing-recovery-barrier decline comes once every drainer is
    installed: each drain runs to its end and lets go, so nothing is left even before the fix."""
    for seed in range(3):
        run = run_scenario(
            "missing-recovery-barrier", seed=seed, overrides={"spill_cleanup": "drain-only"}
        )
        assert run.outcome is Outcome.JOB_FAILED, run.summary()
        assert run.world is not None
        assert all(d.installed for d in run.world.drainers.values() if d.state is not None)
        assert run.world.spill.files_alive == 0


@pytest.mark.slow
@pytest.mark.parametrize("generation", ["v1", "v2"])
def test_recovered_data_is_consumed_only_once_filtering_has_finished(generation: str) -> None:
    """PR #28659 (FLINK-39522): on master a restored task processes no recovered record before
    its fetch has filtered all of its input state (the drainer is installed only then); in
    Flink 2.3 (V1) the reader filters while the task already consumes what it handed over."""
    run = prepare_scenario("prefilter-heap-fallback", seed=0, overrides={"generation": generation})
    sim = run.simulation
    assert sim is not None
    model = world(sim)
    restored = [t for t in model.tasks.values() if t.name in model.readers]
    overlap = 0
    while sim.step() is not None:
        for task in restored:
            if not model.readers[task.name].finished and task.processed:
                overlap += 1
                if generation == "v2":
                    pytest.fail(f"{task.key} processed a record before its fetch finished")
    finished(sim.run())
    assert (overlap > 0) is (generation == "v1")


@pytest.mark.slow
@pytest.mark.parametrize("generation", ["v1", "v2"])
def test_master_has_no_heap_fallback_for_recovered_buffers(generation: str) -> None:
    """PR #28663 (FLINK-40081): master deleted ``requestBufferBlocking``'s unbounded heap
    fallback, so a recovered buffer is always a network buffer of its channel; Flink 2.3 (V1,
    ``prefilter_source=heap-fallback``) takes heap buffers when the pool is short."""
    run = prepare_scenario("prefilter-heap-fallback", seed=1, overrides={"generation": generation})
    sim = run.simulation
    assert sim is not None
    model = world(sim)
    heap_buffers = 0
    while sim.step() is not None:
        heap_buffers = max(
            heap_buffers,
            sum(
                1
                for channel in model.channels.values()
                for buffer in channel.recovery.queue
                if buffer.segment == HEAP and not buffer.is_event
            ),
        )
    finished(sim.run())
    assert (heap_buffers > 0) is (generation == "v1")
