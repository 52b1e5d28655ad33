"""Filtering on the reader thread (Flink 2.3 checkpointing during recovery) and the
FLINK-39519 pre-filter deadlock."""

from __future__ import annotations

import math

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import run_scenario
from flinkstate.runtime.actor_ref import ActorKind, ActorRef
from flinkstate.runtime.buffer.owners import OwnerKind
from flinkstate.runtime.checkpoint.channel.channel_state_filtering import ONE_BUFFER_AT_A_TIME
from flinkstate.runtime.checkpoint.state_assignment import assign_state
from flinkstate.runtime.options import RecoveryGeneration
from flinkstate.sim import RunStatus, Simulation, make_scheduler


def test_the_deadlock_report_names_the_reader_waiting_on_itself() -> None:
    run = run_scenario("prefilter-deadlock", seed=2)
    assert run.outcome is Outcome.DEADLOCK
    assert run.result is not None
    report = run.result.deadlock
    assert report is not None
    assert len(report.cycle) == 1
    reader = report.cycle[0]
    assert isinstance(reader, ActorRef)
    assert reader.kind is ActorKind.READER
    assert str(reader).startswith("channel-state-reader counter[")
    wait = next(w for w in report.waits if w.actor == reader)
    assert wait.resource.startswith("a buffer of recovered channel counter[")
    assert reader in wait.holders
    world = run.world
    assert world is not None
    stuck = world.readers[world.tasks[reader.task].name]
    assert stuck.pre is not None  # it holds its pre-filter buffer
    assert stuck.pending  # and still has records to rewrite
    # every task of the counter waits for input from its reader
    assert any(
        w.actor.kind is ActorKind.TASK
        and world.tasks[w.actor.task].operator == "counter"
        and reader in w.holders
        for w in report.waits
        if isinstance(w.actor, ActorRef)
    )


@pytest.mark.slow
@pytest.mark.parametrize(("record_size", "hangs"), [(36_000, False), (37_000, True)])
@pytest.mark.parametrize("seed", [0, 3])
def test_the_reader_hangs_exactly_when_one_plus_k_exceeds_its_budget(
    record_size: int, hangs: bool, seed: int
) -> None:
    segment, exclusive, floating = 4096, 2, 8
    k = math.ceil((record_size + 4) / segment)  # post-filter buffers for one completed record
    assert (1 + k > exclusive + floating) is hangs
    run = run_scenario("prefilter-deadlock", seed=seed, overrides={"record_size": record_size})
    assert run.outcome is (Outcome.DEADLOCK if hangs else Outcome.RECOVERED)


@pytest.mark.slow
def test_flink_2_3_heap_fallback_never_blocks_and_skips_the_floating_buffers() -> None:
    run = run_scenario("prefilter-heap-fallback", seed=1)
    assert run.outcome is Outcome.RECOVERED
    world = run.world
    assert world is not None
    assert world.heap_peak > 0
    assert world.heap_bytes == 0  # every heap buffer was freed once consumed
    assert run.simulation is not None
    for event in run.simulation.events:
        for move in event.moves:
            if move.target.kind in (OwnerKind.PRE_FILTER, OwnerKind.POST_FILTER):
                assert move.source.kind is OwnerKind.RECOVERED_EXCLUSIVE


def test_flink_39519_pre_filter_reads_never_touch_the_network_pools() -> None:
    run = run_scenario("prefilter-heap-segment", seed=1)
    assert run.outcome is Outcome.RECOVERED
    assert run.simulation is not None
    targets = {m.target.kind for e in run.simulation.events for m in e.moves}
    assert OwnerKind.PRE_FILTER not in targets
    assert OwnerKind.POST_FILTER in targets


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_heap_pre_filter_segment_is_freed_when_the_reader_closes(seed: int) -> None:
    """Flink's ``testPreFilterSegmentFreedOnClose``: the handler frees its reusable segment in
    ``close()``. Once every reader has read its input state, none holds its segment and no
    heap is left (a segment per reader used to stay, and peaks were too high by as much
    where one task's reader closed before another's began)."""
    run = run_scenario("prefilter-heap-segment", seed=seed)
    assert run.outcome is Outcome.RECOVERED
    world = run.world
    assert world is not None
    assert all(not r.heap_segment_allocated for r in world.readers.values() if r.finished)
    assert world.heap_bytes == 0
    assert world.heap_peak > 0


def test_a_pre_filter_buffer_taken_twice_breaks_the_invariant() -> None:
    scenario = get_scenario("prefilter-heap-segment")
    values = scenario.resolve()
    checkpoint = run_scenario(scenario, seed=0).checkpoint
    assert checkpoint is not None
    assignment = assign_state(
        checkpoint, {"counter": 3, "sink": 3}, recover_output_on_downstream=True
    )
    job = {k: v for k, v in values.items() if k in {p.name for p in topology("keyed").parameters}}
    sim = Simulation(
        lambda: topology("keyed").build(
            job, seed=0, restore=assignment, faults=frozenset({"keep-prefilter-buffer"})
        ),
        make_scheduler("random", 0),
    )
    result = sim.run()
    assert result.status is RunStatus.VIOLATION
    broken = [v for v in result.violations if v.invariant == "one-buffer-at-a-time"]
    assert broken
    assert broken[0].message == ONE_BUFFER_AT_A_TIME


def test_without_recover_output_on_downstream_recovery_runs_the_classic_way() -> None:
    """Flink ignores checkpointing during recovery unless both options are on
    (``CheckpointingOptions.isCheckpointingDuringRecoveryEnabled``): the task filters, not the
    reader, and the run says why."""
    run = run_scenario("prefilter-heap-fallback", overrides={"recover_output_on_downstream": False})
    assert run.outcome is Outcome.RECOVERED
    world = run.world
    assert world is not None
    assert world.effective_generation is RecoveryGeneration.CLASSIC
    assert world.recovery is not None
    assert "is ignored without" in world.recovery.note
    assert run.simulation is not None
    kinds = {e.action.kind for e in run.simulation.events}
    assert "recover-input" in kinds
    assert not kinds & {"filter", "rewrite"}


def test_unknown_prefilter_source_is_named() -> None:
    with pytest.raises(InvalidParameterError, match="prefilter_source must be one of"):
        run_scenario("prefilter-heap-fallback", overrides={"prefilter_source": "disk"})


#: three filtered buffers per kept record, every one a network buffer (10 KB records; pre- and
#: post-filter buffers from the channel's exclusive and the gate's floating buffers), as in
#: InputChannelRecoveredStateHandlerTest's test of FLINK-40345
_THREE_NETWORK_BUFFERS = {"record_size": 10_000, "prefilter_source": "network"}


@pytest.mark.parametrize("seed", range(3))
def test_a_failed_delivery_recycles_only_the_buffers_not_handed_over(seed: int) -> None:
    """FLINK-40345: handing the first of three filtered buffers over fails; the channel keeps
    the first (until the failed task releases it), the other two are recycled once, and the
    task fails with the job, every invariant holding."""
    run = run_scenario("failed-delivery-recycled-once", seed=seed, overrides=_THREE_NETWORK_BUFFERS)
    assert run.outcome is Outcome.JOB_FAILED, run.summary()
    assert "fail_filtered_delivery" in run.message
    assert run.simulation is not None
    assert run.world is not None
    assert run.world.failover is not None
    failing = run.simulation.events[run.world.failover.step - 1]
    assert failing.action.kind == "rewrite"
    into_channel = [m for m in failing.moves if m.target.kind is OwnerKind.RECOVERED]
    (delivered,) = into_channel  # only the first was handed over
    out_of_reader = [m for m in failing.moves if m.source.kind is OwnerKind.POST_FILTER]
    undelivered = [m for m in out_of_reader if m.target.kind is not OwnerKind.RECOVERED]
    assert len(undelivered) == 2
    assert delivered.segment not in {m.segment for m in undelivered}
    # the first leaves the channel once: when the failed task releases it
    released = [m for m in failing.moves if m.segment == delivered.segment and m is not delivered]
    assert len(released) == 1
    assert released[0].source.kind is OwnerKind.RECOVERED
    world = run.world
    assert world is not None
    channel = world.channels[delivered.target.holder]
    assert not channel.recovery.queue


@pytest.mark.parametrize("seed", range(3))
def test_flink_2_3_recycles_the_failed_buffer_too_and_the_release_recycles_it_again(
    seed: int,
) -> None:
    run = run_scenario(
        "failed-delivery-recycled-twice", seed=seed, overrides=_THREE_NETWORK_BUFFERS
    )
    assert run.outcome is Outcome.VIOLATION
    assert run.result is not None
    first = run.result.violations[0]
    assert first.invariant == "double-recycle"
    assert run.simulation is not None
    failing = run.simulation.events[-1]
    (delivered,) = [m for m in failing.moves if m.target.kind is OwnerKind.RECOVERED]
    assert first.message.startswith(f"segment {delivered.segment} expected at recovered ")
    # it left the channel's queue twice: the compensating loop, then the release
    assert [m.source.kind for m in failing.moves if m.segment == delivered.segment][1:] == [
        OwnerKind.RECOVERED,
        OwnerKind.RECOVERED,
    ]


@pytest.mark.slow
def test_without_the_hook_no_delivery_fails() -> None:
    run = run_scenario(
        "failed-delivery-recycled-once", seed=0, overrides={"fail_filtered_delivery": 0}
    )
    assert run.outcome is Outcome.RECOVERED
