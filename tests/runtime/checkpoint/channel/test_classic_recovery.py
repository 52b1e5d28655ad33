"""Restoring a job from an unaligned checkpoint: Flink's classic recovery sequence."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.topologies import topology
from flinkstate.keygroups import assign_key_to_parallel_operator
from flinkstate.lab.scenario_run import ScenarioRun, run_scenario
from flinkstate.runtime.buffer.owners import OwnerKind
from flinkstate.runtime.buffer.records import Fragment
from flinkstate.runtime.checkpoint.channel import classic_recovery
from flinkstate.runtime.checkpoint.channel.channel_state_reader import split_chunk
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint
from flinkstate.runtime.checkpoint.state_assignment import RecoveredChunk, assign_state
from flinkstate.runtime.events import END_OF_INPUT_STATE, END_OF_OUTPUT_STATE
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import RunResult, RunStatus, Simulation, make_scheduler

PARAMS = {"records": 80, "record_size": 2000, "cost": 4, "checkpoint_interval": 200}


@functools.cache
def taken(name: str, seed: int, record_size: int = 2000) -> Checkpoint:
    sim = Simulation(
        lambda: topology(name).build({**PARAMS, "record_size": record_size}, seed=seed),
        make_scheduler("random", seed),
    )
    assert sim.run().status is RunStatus.FINISHED
    assert isinstance(sim.model, NetworkWorld)
    assert sim.model.checkpoints.completed, "no checkpoint was taken"
    return sim.model.checkpoints.completed[0]


def restored(
    name: str,
    seed: int,
    new: int | None = None,
    *,
    downstream: bool = False,
    record_size: int = 2000,
    faults: frozenset[str] = frozenset(),
    **overrides: object,
) -> Simulation:
    checkpoint = taken(name, seed, record_size)
    assert checkpoint.graph is not None
    parallelism = (
        {}
        if new is None
        else {op.name: new for op in checkpoint.graph.operators if op.kind.value != "source"}
    )
    assignment = assign_state(checkpoint, parallelism, recover_output_on_downstream=downstream)
    values = {**PARAMS, "record_size": record_size, "checkpoint_interval": 0, **overrides}
    return Simulation(
        lambda: topology(name).build(
            values,
            seed=seed,
            full_check_every=5,
            check_actions=True,
            restore=assignment,
            faults=faults,
        ),
        make_scheduler("random", seed),
    )


def world(sim: Simulation) -> NetworkWorld:
    assert isinstance(sim.model, NetworkWorld)
    return sim.model


def finished(result: RunResult) -> None:
    assert result.status is RunStatus.FINISHED, [str(v) for v in result.violations][:3]


def test_split_chunk_fills_buffers_to_capacity() -> None:
    chunk = RecoveredChunk(0, 1, 2, (0,), (Fragment(7, 0, 9000, 9004), Fragment(8, 0, 100, 100)))
    pieces = split_chunk(chunk, 4096)
    assert [p.size for p in pieces] == [4096, 4096, 908]
    assert [f.start for p in pieces for f in p.fragments] == [0, 4096, 8192, 0]
    assert all(p.old_subtask == 1 and p.old_channel == 2 for p in pieces)


@pytest.mark.slow
def test_restore_without_rescale_follows_flinks_sequence() -> None:
    sim = restored("keyed", 1)
    result = sim.run()
    finished(result)
    kinds = [e.action.kind for e in sim.events]
    # output state on the upstream first, then the end event; input state read by the reader
    assert kinds.index("recover-output") < kinds.index("finish-output")
    assert "recover-input" in kinds
    assert "finish-input" in kinds
    model = world(sim)
    assert kinds.count("convert") == len(model.gates)  # each gate converts once
    for task in model.tasks.values():  # a task's output state is restored before it runs
        own = [e.action.kind for e in sim.events if e.action.actor == task.name]
        assert own.index("finish-output") == own.count("recover-output")
    assert all(t.phase == TaskPhase.RUNNING for t in model.tasks.values())
    assert not model.filtered
    checkpoint = taken("keyed", 1)
    # every persisted record was processed exactly once (check_end held), by the subtask its key
    # selects
    for record in checkpoint.records:
        gates = [g for (r, g) in model.deliveries if r == record.id and g.endswith("<source")]
        selected = assign_key_to_parallel_operator(record.key, 128, 4, "long")
        assert gates == [f"counter[{selected}]<source"]


@pytest.mark.parametrize("sources", [4, 2, 3, 6])
def test_every_split_resumes_from_its_offset_whoever_reads_it(sources: int) -> None:
    """Sources rescaled: the old subtasks' splits are dealt out anew; every split's records
    after its checkpointed offset are emitted exactly once, in order, and no earlier ones."""
    checkpoint = taken("keyed", 1)
    assignment = assign_state(checkpoint, {"source": sources})
    sim = Simulation(
        lambda: topology("keyed").build(
            {**PARAMS, "checkpoint_interval": 0}, seed=1, full_check_every=5, restore=assignment
        ),
        make_scheduler("random", 1),
    )
    finished(sim.run())
    model = world(sim)
    readers = [t for t in model.tasks.values() if t.kind.value == "source"]
    assert len(readers) == sources
    offsets = dict(s for state in checkpoint.subtasks for s in state.source_splits)
    assert sorted(split for t in readers for split in t.splits) == sorted(offsets)
    recovered = {r.id for r in checkpoint.records}
    for split, offset in offsets.items():
        emitted = sorted(
            r.seq for r in model.records.values() if r.source == split and r.id not in recovered
        )
        assert emitted == list(range(offset, PARAMS["records"]))


@pytest.mark.slow
@settings(max_examples=16, deadline=None)
@given(
    st.sampled_from(["keyed", "keyed-chain", "two-input", "backpressure"]),
    st.integers(0, 3),
    st.integers(1, 6),
    st.sampled_from(
        [
            ("classic", "heap-fallback", False),
            ("classic", "heap-fallback", True),
            ("v1", "heap-fallback", True),
            ("v1", "heap-segment", True),
            ("v2", "heap-fallback", True),
        ]
    ),
)
def test_rescaled_recovery_loses_and_duplicates_nothing(
    name: str, seed: int, new: int, mode: tuple[str, str, bool]
) -> None:
    generation, source, downstream = mode
    sim = restored(
        name,
        seed,
        new,
        downstream=downstream,
        generation=generation,
        checkpointing_during_recovery=generation != "classic",
        prefilter_source=source,
    )
    finished(sim.run())


@pytest.mark.slow
def test_ambiguous_upscale_filters_records_of_other_subtasks() -> None:
    sim = restored("keyed", 1, 3)
    finished(sim.run())
    model = world(sim)
    assert model.filtered
    for record, task in model.filtered:
        delivered_to = [g for (r, g), state in model.deliveries.items() if r == record]
        assert delivered_to
        assert model.gates[delivered_to[0]].task != task


@pytest.mark.slow
def test_records_spanning_many_buffers_are_reassembled_per_virtual_channel() -> None:
    sim = restored("keyed-chain", 2, 3, record_size=8 * 4096)
    finished(sim.run())
    recovered = [e for e in sim.events if e.action.kind == "recover-input"]
    assert len(recovered) > len(taken("keyed-chain", 2, 8 * 4096).input_channel_state)


@pytest.mark.slow
def test_upstream_stays_blocked_until_every_channel_of_the_gate_is_through() -> None:
    sim = restored("keyed-chain", 1, 3)
    model = world(sim)
    blocked_seen = False
    while sim.step() is not None:
        for gate in model.gates.values():
            through = [c.recovery.end_of_output for c in gate.channels]
            if any(through) and not all(through):
                for channel in gate.channels:
                    if channel.recovery.end_of_output:
                        sub = model.subpartitions[channel.subpartition]
                        blocked_seen = True
                        assert sub.blocked
                        head = model.visible_head(channel)
                        assert head is None or head.is_event
    assert blocked_seen
    assert not model.violations


@pytest.mark.slow
def test_end_of_state_events_are_delivered_in_order() -> None:
    sim = restored("keyed", 3)
    model = world(sim)
    order: dict[str, list[str]] = {}
    while (event := sim.step()) is not None:
        if event.action.kind == "poll" and event.note.startswith(event.action.target):
            if "recovered input state consumed" in event.note:
                order.setdefault(event.action.target, []).append(END_OF_INPUT_STATE)
            elif "upstream recover" in event.note or "consumption resumed" in event.note:
                order.setdefault(event.action.target, []).append(END_OF_OUTPUT_STATE)
    assert not model.violations
    assert order
    for events in order.values():
        assert events[0] == END_OF_INPUT_STATE


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fault", "invariant"),
    [
        ("no-filter", "exactly-once"),
        ("drop-recovered", "exactly-once"),
        ("no-upstream-block", "exactly-once"),
    ],
)
def test_broken_recovery_is_caught(fault: str, invariant: str) -> None:
    caught = set()
    for seed in range(4):
        sim = restored("keyed-chain", seed, 3, faults=frozenset({fault}))
        caught |= {v.invariant for v in sim.run().violations}
    assert invariant in caught


@pytest.mark.slow
def test_a_restored_job_checkpoints_again_and_restores_again() -> None:
    first = restored("keyed", 1, 3, checkpoint_interval=60)
    finished(first.run())
    second_checkpoint = world(first).checkpoints.completed[0]
    assert second_checkpoint.graph is not None
    assert second_checkpoint.graph.operator("counter").parallelism == 3
    assignment = assign_state(second_checkpoint, {"counter": 5, "sink": 5})
    again = Simulation(
        lambda: topology("keyed").build(
            {**PARAMS, "checkpoint_interval": 0}, seed=4, full_check_every=5, restore=assignment
        ),
        make_scheduler("random", 4),
    )
    finished(again.run())


def test_a_gate_s_consumed_state_is_looked_at_from_the_first_channel_not_known_consumed() -> None:
    # the action cache keeps per gate how many leading channels have consumed their state: a
    # channel's never goes back within a restore, so the rest alone is looked at
    world = topology("keyed").build({"parallelism": 3, "source_parallelism": 5})
    gate = next(g for g in world.gates.values() if len(g.channels) == 5)
    consumed: dict[str, int] = {}
    for index in (1, 0, 3, 2, 4):  # in another order than the channels'
        assert not classic_recovery.state_consumed(gate, consumed)
        gate.channels[index].recovery.state_consumed = True
        assert classic_recovery.state_consumed(gate, consumed) == classic_recovery.state_consumed(
            gate
        )
        assert consumed[gate.name] == {1: 0, 0: 2, 3: 2, 2: 4, 4: 5}[index]
    assert classic_recovery.state_consumed(gate, consumed)
    gate.channels[0].recovery.state_consumed = False  # never so in a restore: not looked at
    assert classic_recovery.state_consumed(gate, consumed)
    assert not classic_recovery.state_consumed(gate)


# -- FLINK-22376: who recycles a recovered buffer whose recover threw


def failed_recover(ownership: str, seed: int = 0) -> tuple[list[OwnerKind], ScenarioRun]:
    """Where the buffer of the failed recover left from, move by move, in the failing step
    (the first move brings it into the channel), and the run."""
    run = run_scenario(
        "recovery-error-recycled-once",
        seed=seed,
        overrides={"recovered_buffer_ownership": ownership},
    )
    assert run.simulation is not None
    assert run.world is not None
    assert run.world.failover is not None
    failing = run.simulation.events[run.world.failover.step - 1]
    assert failing.action.kind == "recover-input"
    (taken,) = [m for m in failing.moves if m.target.kind is OwnerKind.RECOVERED]
    return [m.source.kind for m in failing.moves if m.segment == taken.segment][1:], run


@pytest.mark.parametrize("seed", range(3))
def test_since_flink_1_14_a_failed_recover_leaves_its_buffer_to_the_channel(seed: int) -> None:
    """InputChannelRecoveredStateHandlerTest#testRecycleBufferAfterRecoverWasCalled (3
    pre-allocated segments of 1024 bytes, one recovered channel (0, 0), identity mapping: once
    recover was called and the gate closed, all 3 are back): the handler owns the buffer it
    handed over; the channel's reference goes back once, when the failed task releases it."""
    left, run = failed_recover("flink-1.14", seed)
    assert left == [OwnerKind.RECOVERED]
    assert run.outcome is Outcome.JOB_FAILED
    assert "fail_recovered_hand_over" in run.message


@pytest.mark.parametrize("seed", range(3))
def test_in_flink_1_13_the_reader_recycles_it_too_and_the_release_again(seed: int) -> None:
    left, run = failed_recover("flink-1.13", seed)
    assert left == [OwnerKind.RECOVERED, OwnerKind.RECOVERED]  # the reader's catch, the release
    assert run.result is not None
    assert [v.invariant for v in run.result.violations] == ["double-recycle"]


def test_without_an_error_the_reader_hands_every_buffer_over_once() -> None:
    """ChannelStateChunkReaderTest#testBufferRecycledOnSuccess: on the happy path every
    buffer the reader requested is the handler's, and all come back."""
    run = run_scenario(
        "recovery-error-recycled-twice", seed=0, overrides={"fail_recovered_hand_over": False}
    )
    assert run.outcome is Outcome.RECOVERED, run.summary()
