"""Watermarks in the network model: sources emit them between records, tasks pass on their
valves' minimum, a keyed operator counts late records, and merged channels after a rescale
pass on their old channels' minimum (FLINK-40517)."""

from __future__ import annotations

import dataclasses

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.network.graph import OperatorKind
from flinkstate.network.records import MAX_WATERMARK, MIN_WATERMARK
from flinkstate.network.topologies import topology
from flinkstate.network.watermarks import source_watermark
from flinkstate.recovery.scenarios import Outcome, prepare_scenario, run_scenario
from tests.network.runs import simulate, world


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
