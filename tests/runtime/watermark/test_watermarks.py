"""Watermarks in the network model: sources emit them between records, tasks pass on their
valves' minimum, a keyed operator counts late records, and merged channels after a rescale
pass on their old channels' minimum (FLINK-40517)."""

from __future__ import annotations

import dataclasses

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.runtime.buffer.records import MAX_WATERMARK, MIN_WATERMARK, StreamElementKind
from flinkstate.runtime.jobgraph import OperatorKind
from flinkstate.runtime.watermark.watermarks import source_watermark
from tests.runtime.runs import simulate, world


def test_a_job_with_watermarks_processes_the_same_records_and_ends_at_max() -> None:
    plain = simulate(records=30, full_check_every=8)
    timed = simulate(records=30, watermark_interval=4, full_check_every=8)
    plain.run()
    timed.run()
    before, after = world(plain), world(timed)
    assert after.violations == []
    keys = sorted((r.source, r.seq, r.key) for r in before.records.values())
    assert sorted((r.source, r.seq, r.key) for r in after.records.values() if r.is_record) == keys
    processed = {t.name: t.processed for t in before.tasks.values()}
    assert {t.name: t.processed for t in after.tasks.values()} == processed
    watermarks = [r for r in after.records.values() if not r.is_record]
    assert watermarks, "the sources emitted watermarks"
    for task in after.tasks.values():
        # every task, the sinks included, saw the end of event time
        assert after.event_time.watermark[task.name] == MAX_WATERMARK, task.name
    assert after.event_time.late == {}


def test_a_source_watermark_trails_each_split_by_the_bound() -> None:
    """``forBoundedOutOfOrderness(B)``: the largest timestamp - B - 1, the minimum over the
    splits still read; a split not read yet holds it at none."""
    w = topology("keyed").build({"watermark_interval": 1, "out_of_orderness": 2})
    task = next(t for t in w.tasks.values() if t.kind is OperatorKind.SOURCE)
    (split,) = task.splits
    assert source_watermark(w, task) == MIN_WATERMARK
    task.splits[split] = 10  # ten records emitted: timestamps 0..9
    assert source_watermark(w, task) == 9 - 2 - 1
    task.splits["another"] = 4
    assert source_watermark(w, task) == 3 - 2 - 1
    task.splits["another"] = w.graph.operator(task.operator).records_per_subtask
    assert source_watermark(w, task) == 9 - 2 - 1  # a finished split lets go


def test_watermarks_are_not_records_in_a_checkpoint() -> None:
    run = run_scenario("merged-watermarks-aggregated")
    checkpoint = run.checkpoint
    assert checkpoint is not None
    assert checkpoint.persisted_watermarks
    assert not checkpoint.persisted_records & checkpoint.persisted_watermarks
    summary = run.summary()
    assert summary["watermarks_in_checkpoint"] == len(checkpoint.persisted_watermarks)
    assert summary["late_records"] == 0


def test_passed_through_watermarks_make_a_recovered_record_late() -> None:
    """Before FLINK-40517: the late record came from the checkpoint, and the watermark
    that overtook it is higher than its own timestamp."""
    run = run_scenario("merged-watermarks-passed-through")
    assert run.outcome is Outcome.VIOLATION
    w = run.world
    assert w is not None
    assert [v.invariant for v in run.result.violations] == ["late-record"]
    ((record, task), (_, watermark)) = next(iter(w.event_time.late.items()))
    assert record in w.recovered_records
    assert w.records[record].timestamp <= watermark
    assert task.startswith("task counter")


@pytest.mark.parametrize("generation", ["classic", "v1", "v2"])
def test_aggregated_merged_channels_lose_nothing_in_any_generation(generation: str) -> None:
    overrides: dict[str, object] = {"generation": generation}
    if generation == "classic":
        overrides.update(checkpointing_during_recovery=False, recover_output_on_downstream=False)
    run = run_scenario("merged-watermarks-aggregated", overrides=overrides)
    assert run.outcome is Outcome.RECOVERED, run.message
    w = run.world
    assert w is not None
    assert w.event_time.late == {}
    assert w.effective_generation.value == generation
    counters = [t for t in w.tasks.values() if t.kind is OperatorKind.KEYED]
    assert all(w.event_time.watermark[t.name] == MAX_WATERMARK for t in counters)


def test_classic_recovery_always_aggregates() -> None:
    """The demultiplexer sums up virtual channels whatever ``recovered_watermarks`` says:
    the option is the filtering handler's."""
    run = run_scenario(
        "merged-watermarks-passed-through",
        overrides={"checkpointing_during_recovery": False, "recover_output_on_downstream": False},
    )
    assert run.outcome is Outcome.RECOVERED


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"watermark_interval": -1}, "watermark_interval"),
        ({"out_of_orderness": -3}, "out_of_orderness"),
        ({"recovered_watermarks": "verbatim"}, "passed-through"),
    ],
)
def test_bad_watermark_settings_are_refused(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        topology("keyed").build(overrides)


@pytest.mark.slow
@pytest.mark.parametrize("idleness", [False, True])
def test_a_source_without_a_split_holds_watermarks_back_unless_it_declares_idleness(
    idleness: bool,
) -> None:
    """Sources upscaled past their splits: the one without a split emits no watermark, so the
    counters' valves wait for its channel until it ends; with ``withIdleness`` it marks itself
    IDLE, the counters' watermarks advance on the other sources, and at its end it turns
    ACTIVE again before ``MAX``."""
    run = prepare_scenario(
        "baseline-recovery",
        overrides={
            "new_source_parallelism": 5,
            "watermark_interval": 2,
            "source_idleness": idleness,
        },
    )
    sim = run.simulation
    assert sim is not None
    w = world(sim)
    w.options = dataclasses.replace(w.options, check_actions=True, full_check_every=16)
    (splitless,) = [t for t in w.tasks.values() if t.kind is OperatorKind.SOURCE and not t.splits]
    counters = [t.name for t in w.tasks.values() if t.kind is OperatorKind.KEYED]
    statuses = []
    advanced_while_waiting = False
    while sim.step() is not None:
        w = world(sim)
        statuses.append(w.event_time.idle.get(splitless.name))
        waiting = not w.tasks[splitless.key].finished
        if waiting and all(
            w.event_time.watermark.get(c, MIN_WATERMARK) > MIN_WATERMARK for c in counters
        ):
            advanced_while_waiting = True
    assert w.violations == []
    assert all(w.event_time.watermark[c] == MAX_WATERMARK for c in counters)
    assert advanced_while_waiting is idleness
    if idleness:
        assert True in statuses  # it went idle
        assert statuses[-1] is False  # and active again before its MAX
    else:
        assert set(statuses) == {None}


@pytest.mark.parametrize("seed", range(6))
def test_an_idle_old_channel_idles_its_merged_channel_only_before_flink_40517(seed: int) -> None:
    """The IDLE half of FLINK-40517. Old source 2 had no split and marked its output IDLE;
    that status is in flight in the checkpoint the second restart reads, and each counter's
    channel from new source 0 merges old source 0's channel (records in flight) with old
    source 2's. Passed through, the IDLE idles the merged channel for good (new source 0 never
    went idle, so no ACTIVE follows) and a record of split 0 coming through it falls behind
    the watermark of the counter's other channel; aggregated, the merged channel stays active
    while old source 0's is, and nothing is late."""
    before = run_scenario("merged-idle-status-passed-through", seed=seed)
    after = run_scenario("merged-idle-status-aggregated", seed=seed)
    second = before.second_checkpoint
    assert second is not None
    statuses = [r for r in second.records if r.kind is StreamElementKind.WATERMARK_STATUS]
    assert [(r.source, r.idle) for r in statuses] == [("task source[2]", True)]
    assert before.outcome is Outcome.VIOLATION
    w = before.world
    assert w is not None
    assert [v.invariant for v in before.result.violations] == ["late-record"]
    ((record, _), (_, watermark)) = next(iter(w.event_time.late.items()))
    assert w.records[record].source == "task source[0]"  # through the merged channel
    assert w.records[record].timestamp <= watermark
    gate = next(g for g in w.gates.values() if g.plan is not None and g.plan.demultiplexes)
    merged = [[vc.old_channel for vc in vcs] for vcs in gate.plan.virtual_channels]
    assert merged == [[0, 2], [1]]  # new source 0 <- old sources 0 and 2; new 1 <- old 1
    assert after.outcome is Outcome.RECOVERED, after.message
    assert after.world is not None
    assert after.world.event_time.late == {}


def test_without_idleness_the_same_rescales_lose_nothing_even_passed_through() -> None:
    """The IDLE status is the cause: without ``source_idleness`` old source 2 sends no status
    and the merged channel's watermark is old source 0's own, in order with its records."""
    run = run_scenario("merged-idle-status-passed-through", overrides={"source_idleness": False})
    assert run.outcome is Outcome.RECOVERED
    assert run.world is not None
    assert run.world.event_time.late == {}
