"""The forecast of a real checkpoint's recovery, held to Flink's own report of each committed
checkpoint, to the rescale computation's answer on the same data, and to the simulator's
deadlock for the pre-filter rule."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from benchmarks.pandas_rescaling import PandasRescaling
from flinkstate.dataset import write_dataset
from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.export import ExchangeSpec, key_function, to_dataset
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import KeyGroupsStateHandle
from flinkstate.flinkcheckpoint.inflight import logical_channels, read_records
from flinkstate.flinkcheckpoint.keyed_state import read_keyed_state
from flinkstate.flinkcheckpoint.metadata import read_metadata
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.flinkcheckpoint.summary import summarize
from flinkstate.keygroups import assign_to_key_group
from flinkstate.lab.forecast import Forecast, prepare_forecast, run_forecast
from flinkstate.runtime.options import RecoveryGeneration
from tests.flinkcheckpoint.made import STRING_KEYED, RestoredPair, made_checkpoint, restored_pair
from tests.flinkcheckpoint.made import record_type as made_record_type
from tests.flinkcheckpoint.test_metadata import CHECKPOINTS, COMMITTED, ground_truth

TUPLE = value_decoder("Tuple2<Long,String>")
KEYED = ExchangeSpec("hash", key_function("f0%1000"))


def exchanges(checkpoint: Path) -> dict[str, ExchangeSpec]:
    """What each committed job's exchanges with in-flight data are (its job-config.txt)."""
    variant = checkpoint.parents[1].name
    if variant.startswith("rebalance"):
        return {"to-record->relay": ExchangeSpec("rebalance")}
    if variant.startswith("union"):
        return {"to-record->slow-counter": KEYED, "to-record-b->slow-counter": KEYED}
    return {"to-record->slow-counter": KEYED}


def forecast(
    checkpoint: Path, to: int | Mapping[str, int], generation: str = "classic", **kwargs: Any
) -> Forecast:
    return run_forecast(
        prepare_forecast(
            checkpoint,
            to,
            exchanges=exchanges(checkpoint),
            generation=generation,
            value=TUPLE,
            **kwargs,
        ),
        compare=(),
    )


def by_name(variant: str) -> Path:
    return next(p for p in COMMITTED if p.parents[1].name == variant)


def test_every_committed_checkpoint_is_forecast() -> None:
    assert len(COMMITTED) == 7  # the six with Flink's report, and the union


def test_one_operator_rescaled_alone() -> None:
    """``--to slow-counter=3``, as Flink restores the job when only the keyed operator is given
    a new parallelism: to-record keeps its 2 subtasks. The keyed exchange's records go where
    they go with every operator at 3 (the key groups are slow-counter's), but only
    slow-counter's side is split: each to-record subtask keeps its own output state."""
    checkpoint = by_name("keyed-hash-p2-p4")
    alone = forecast(checkpoint, {"slow-counter": 3})
    every = forecast(checkpoint, 3)
    assert alone.outcome == every.outcome == "recovered"
    assert alone.summary()["operators"] == {"to-record": 2, "slow-counter": 3}
    assert alone.summary()["to"] == "slow-counter=3"
    assert every.summary()["to"] == 3
    assert alone.assignment.expected_subtask == every.assignment.expected_subtask
    sources = [s for s in alone.assignment.subtasks.values() if s.operator == "to-record"]
    assert [s.index for s in sources] == [0, 1]
    assert all(c.old_channel == s.index for s in sources for c in s.output_state)
    with pytest.raises(InvalidParameterError, match="--to source: not in the model"):
        prepare_forecast(checkpoint, {"source": 3}, exchanges=exchanges(checkpoint), value=TUPLE)


@pytest.mark.slow
@pytest.mark.parametrize("generation", [g.value for g in RecoveryGeneration])
@pytest.mark.parametrize("to", [1, 3, 8])
@pytest.mark.parametrize("checkpoint", COMMITTED, ids=lambda p: p.parents[1].name)
def test_every_recovered_record_is_processed_once_by_its_selected_subtask(
    checkpoint: Path, to: int, generation: str
) -> None:
    result = forecast(checkpoint, to, generation)
    assert result.outcome == "recovered", result.summary()
    assert result.world.effective_generation.value == generation
    assert all(op.parallelism == to for op in result.assignment.graph.operators)
    for row in result.subtasks:
        # what the simulator did is what the state assignment and the partitioner say
        assert (row.processed, row.dropped) == (row.kept_records, row.filtered_records)
        assert row.records == row.kept_records + row.filtered_records
    kept = Counter[str]()
    for row in result.subtasks:
        kept[row.exchange] += row.kept_records
    per_exchange = Counter(result.job.record_exchange.values())
    assert kept == per_exchange  # each record kept exactly once
    assert result.running_step is not None
    assert result.consumed_step is not None
    assert 0 < result.running_step <= result.result.steps
    assert result.consumed_step <= result.result.steps


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_the_restored_state_is_what_flink_persisted(checkpoint: Path) -> None:
    truth = ground_truth(checkpoint)
    result = forecast(checkpoint, 2)
    restored = result.job.checkpoint
    summary = truth["summary"]
    assert restored.in_flight_bytes == summary["inflight_payload_bytes_total"]
    assert (
        sum(s.size for s in restored.input_channel_state)
        == (summary["inflight_payload_bytes_input"])
    )
    stitched = truth["stitched_channels"]
    assert len(restored.records) == sum(c["decode"]["num_complete_elements"] for c in stitched)
    # a record cut between a channel's input and output state stays cut
    inputs = {f.record for s in restored.input_channel_state for f in s.fragments}
    outputs = {f.record for s in restored.result_subpartition_state for f in s.fragments}
    split = sum(bool(c.get("record_split_across_input_and_output_state")) for c in stitched)
    assert len(inputs & outputs) == split


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_at_the_old_parallelism_each_subtask_reads_its_channels_as_flink_reported_them(
    checkpoint: Path,
) -> None:
    """Restored as it ran, each downstream subtask reads its own logical channels (its input
    state and its upstreams' output state for it), Flink's bytes and records, and filters
    nothing (Flink found every keyed record in the key groups of its subtask)."""
    truth = ground_truth(checkpoint)
    stitched = truth["stitched_channels"]
    downstream = stitched[0]["downstream_uid"]
    old = next(o["parallelism"] for o in truth["operators"] if o["uid"] == downstream)
    result = forecast(checkpoint, old)
    expected_bytes: Counter[int] = Counter()
    expected_records: Counter[int] = Counter()
    for channel in stitched:
        subtask = channel["downstream_subtask"]
        expected_bytes[subtask] += channel["input_state_bytes"] + channel["output_state_bytes"]
        expected_records[subtask] += channel["decode"]["num_complete_elements"]
        assert channel["decode"].get("key_group_check", {}).get("violations", 0) == 0
    rows = [r for r in result.subtasks if r.operator == downstream]
    assert {r.subtask: r.bytes for r in rows} == {s: expected_bytes[s] for s in range(old)}
    assert {r.subtask: r.kept_records for r in rows} == {s: expected_records[s] for s in range(old)}
    assert all(r.filtered_records == 0 for r in rows)


def _rescale_answer(
    checkpoint: Path,
    to: int,
    recover_output: bool,
    tmp_path: Path,
    specs: dict[str, ExchangeSpec] | None = None,
    value: Any = TUPLE,
) -> pd.DataFrame:
    """The rescale computation's per-subtask sums (the pandas baseline of the Spark pipeline:
    the same plan, buffer routes and channel selections) on the checkpoint's dataset."""
    folder = tmp_path / "dataset"
    specs = exchanges(checkpoint) if specs is None else specs
    write_dataset(to_dataset(checkpoint, specs, value=value, segment_size=4096), folder)
    baseline = PandasRescaling(folder)
    every = {op.name: to for op in baseline.shape.operators}
    movement = baseline.movement({to: every}, recover_output_on_downstream=recover_output)
    sums = ["bytes", "records", "kept_records", "filtered_records", "filtered_bytes"]
    return movement.groupby(["exchange", "new_subtask"])[sums].sum()


def _assert_equal_to_the_rescale_computation(result: Forecast, answer: pd.DataFrame) -> None:
    ours = pd.DataFrame(
        [
            {
                "exchange": r.exchange,
                "new_subtask": r.subtask,
                "bytes": r.bytes,
                "records": r.records,
                "kept_records": r.processed,  # what the simulator processed
                "filtered_records": r.dropped,  # and dropped
                "filtered_bytes": r.filtered_bytes,
            }
            for r in result.subtasks
            if r.records or r.bytes
        ]
    ).set_index(["exchange", "new_subtask"])
    answer = answer[(answer["bytes"] > 0) | (answer["records"] > 0)]
    pd.testing.assert_frame_equal(
        ours.sort_index(), answer.sort_index().astype("int64"), check_dtype=False
    )


@pytest.mark.slow
@pytest.mark.parametrize("generation", ["classic", "v2"])
@pytest.mark.parametrize("to", [1, 3, 5])
@pytest.mark.parametrize("checkpoint", COMMITTED, ids=lambda p: p.parents[1].name)
def test_per_subtask_figures_equal_the_rescale_computation(
    checkpoint: Path, to: int, generation: str, tmp_path: Path
) -> None:
    result = forecast(checkpoint, to, generation)
    answer = _rescale_answer(checkpoint, to, generation != "classic", tmp_path)
    _assert_equal_to_the_rescale_computation(result, answer)


@pytest.mark.parametrize(("to", "generation"), [(2, "classic"), (5, "v2")])
def test_a_job_keyed_by_a_string_is_forecast_with_flinks_key_groups(
    to: int, generation: str, tmp_path: Path
) -> None:
    """The model keys records by a Long: a String key enters it as the Long with the String's
    hashCode, so each record is kept by the subtask Flink would give its String key (the
    rescale computation hashes the Strings themselves)."""
    checkpoint = made_checkpoint(STRING_KEYED)
    kind = made_record_type(checkpoint)
    specs = {"to-record->slow-counter": ExchangeSpec("hash", key_function("f0", kind))}
    value = value_decoder(kind)
    result = run_forecast(
        prepare_forecast(checkpoint, to, exchanges=specs, generation=generation, value=value),
        compare=(),
    )
    assert result.outcome == "recovered"
    assert sum(r.dropped for r in result.subtasks) > 0  # a rescale of String keys filters
    answer = _rescale_answer(checkpoint, to, generation != "classic", tmp_path, specs, value)
    _assert_equal_to_the_rescale_computation(result, answer)


@pytest.mark.parametrize(
    ("variant", "exclusive", "floating"),
    [
        ("bigrecord-10k-keyed-p2-p3", 1, 1),
        ("bigrecord-10k-keyed-p2-p3", 2, 1),
        ("bigrecord-10k-keyed-p2-p3", 2, 8),
        ("keyed-hash-p2-p4", 1, 1),
        ("keyed-hash-p2-p4", 1, 2),
        ("keyed-hash-p2-p4", 0, 1),
    ],
)
@pytest.mark.parametrize("to", [1, 2, 5])
def test_the_prefilter_rule_says_when_flink_2_3_without_its_heap_fallback_hangs(
    variant: str, exclusive: int, floating: int, to: int
) -> None:
    """The rule the forecast reports (1 + k > exclusive + floating on some gate) against the
    simulator running that reader: it deadlocks exactly where the rule says it can."""
    settings = {"buffers_per_channel": exclusive, "floating_buffers": floating}
    told = forecast(by_name(variant), to, "classic", overrides=settings)
    run = forecast(
        by_name(variant), to, "v1", overrides={**settings, "prefilter_source": "network"}
    )
    hazard = any(g.prefilter_deadlock for g in told.gates)
    assert hazard == (run.outcome == "deadlock")
    if hazard:
        assert run.result.deadlock is not None


def test_the_big_records_need_four_buffers_of_the_reader() -> None:
    """10,263-byte records on 4 KiB segments: one pre-filter buffer and three post-filter ones
    for the source buffer that completes a record."""
    result = forecast(by_name("bigrecord-10k-keyed-p2-p3"), 2)
    assert {g.prefilter_need for g in result.gates} == {4}
    assert all(g.configured == 2 + 8 and not g.prefilter_deadlock for g in result.gates)


def test_memory_of_each_generation() -> None:
    checkpoint = by_name("keyed-hash-p2-p4")

    def make(generation: RecoveryGeneration) -> Forecast:
        return prepare_forecast(
            checkpoint, 3, exchanges=exchanges(checkpoint), generation=generation, value=TUPLE
        )

    result = run_forecast(make(RecoveryGeneration.CLASSIC), rerun=make)
    assert set(result.compared) == {"v1", "v2"}
    v1, v2 = result.compared["v1"], result.compared["v2"]
    # Flink 2.3 takes heap segments of 32 KiB; master writes the recovered bytes to files
    assert v1["heap_peak_bytes"] > 0
    assert v1["heap_peak_bytes"] % (32 * 1024) == 0
    assert v1["spilled_bytes"] == 0
    assert v2["spill_files"] > 0
    assert v2["spilled_bytes"] > 0
    assert result.memory()["heap_peak_bytes"] == 0  # classic: network buffers only


@pytest.mark.slow
def test_a_forecast_is_deterministic() -> None:
    checkpoint = by_name("union-keyed-p2-p3-p4")
    first = forecast(checkpoint, 3, "v2", seed=7).summary()
    assert forecast(checkpoint, 3, "v2", seed=7).summary() == first


@pytest.mark.slow
def test_settings_come_from_the_job_config(tmp_path: Path) -> None:
    result = forecast(by_name("keyed-hash-p2-p4"), 3)
    settings = {s.name: s for s in result.settings}
    assert settings["segment_size"].value == 4096
    assert "taskmanager.memory.segment-size=4kb" in settings["segment_size"].source
    assert settings["slots_per_tm"].value == 2
    assert settings["buffers_per_channel"].value == 2
    assert "Flink's default" in settings["buffers_per_channel"].source
    assert result.world.config.segment_size == 4096
    overridden = forecast(by_name("keyed-hash-p2-p4"), 3, overrides={"floating_buffers": 3})
    floating = next(s for s in overridden.settings if s.name == "floating_buffers")
    assert (floating.value, floating.source) == (3, "--set")


def test_without_a_job_config_flinks_defaults(tmp_path: Path) -> None:
    source = by_name("keyed-hash-p2-p4")
    copy = tmp_path / source.parent.name
    shutil.copytree(source.parent, copy)
    result = forecast(copy / source.name, 2)
    assert result.world.config.segment_size == 32 * 1024
    assert any("no job-config.txt" in note for note in result.notes)
    assert result.outcome == "recovered"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"to": 0}, "--to"),
        ({"to": 129}, "maximum parallelism"),
        ({"overrides": {"records": 5}}, "emit nothing new"),
        ({"overrides": {"generation": "v1"}}, "--generation"),
        ({"overrides": {"no_such": 1}}, "no_such"),
        ({"generation": "v3"}, "v3"),
        ({"exchanges": {}}, "--exchange .to-record->slow-counter=PARTITIONER"),
        ({"exchanges": {"to-record->slow-counter": ExchangeSpec("rescale")}}, r"rescale\(\)"),
    ],
)
def test_what_cannot_be_modelled_is_refused_in_one_line(
    kwargs: dict[str, Any], message: str
) -> None:
    checkpoint = by_name("keyed-hash-p2-p4")
    arguments: dict[str, Any] = {
        "to": 3,
        "exchanges": exchanges(checkpoint),
        "value": TUPLE,
        **kwargs,
    }
    to = arguments.pop("to")
    with pytest.raises(InvalidParameterError, match=message) as refused:
        prepare_forecast(checkpoint, to, **arguments)
    assert "\n" not in str(refused.value)


def test_a_checkpoint_without_in_flight_data_is_refused(tmp_path: Path) -> None:
    """The same job's checkpoint with every channel-state handle taken out, as an aligned
    checkpoint is written: there is nothing to recover."""
    import dataclasses

    from flinkstate.flinkcheckpoint.metadata import parse_metadata
    from flinkstate.flinkcheckpoint.metadata_writer import write_metadata

    source = by_name("rebalance-forward-p2-p3")
    data = (source / "_metadata").read_bytes()
    metadata = parse_metadata(data, "test/_metadata")
    aligned = dataclasses.replace(
        metadata,
        operators=tuple(
            dataclasses.replace(
                op,
                subtasks=tuple(
                    dataclasses.replace(s, input_channel_state=(), result_subpartition_state=())
                    for s in op.subtasks
                ),
            )
            for op in metadata.operators
        ),
    )
    target = tmp_path / "chk-7"
    target.mkdir()
    (target / "_metadata").write_bytes(write_metadata(aligned, 6, data[metadata.trailer_offset :]))
    with pytest.raises(InvalidParameterError, match="holds no in-flight data") as refused:
        prepare_forecast(target, 2, exchanges=exchanges(source))
    assert "\n" not in str(refused.value)


# A real checkpoint taken after a restore (make real-checkpoints VARIANTS=keyed-restored-p2-p4-to-3)

KEYED_EXCHANGE = "to-record->slow-counter"


def _placed(checkpoint: Path) -> list[tuple[object, int, str]]:
    """Every in-flight record of a checkpoint's keyed exchange: its value (f0, the sequence
    number, names the record and its source split; f1 is made from it), the downstream subtask
    it sits in (input state) or is routed to (output state), and the side; in the order the
    dataset, and so the forecast, numbers records."""
    metadata = read_metadata(checkpoint)
    placed = []
    with StateFiles(checkpoint) as files:
        for channel in logical_channels(metadata):
            read = read_records(channel, files, TUPLE)
            for record in read.records:
                side = "input" if record.offset < read.input_bytes else "output"
                placed.append((record.value, channel.downstream_subtask, side))
    return placed


def _forecast_of_the_first(pair: RestoredPair) -> tuple[Forecast, dict[object, int]]:
    """The forecast of the first checkpoint at the restored job's parallelism (slow-counter's
    alone, as Flink restored it: to-record keeps 2), and the new subtask it says keeps each
    recovered record, by the record's value."""
    result = forecast(pair.first, {"slow-counter": pair.after})
    assert result.outcome == "recovered"
    restored = summarize(pair.restored[0], value=TUPLE)
    assert result.summary()["operators"] == {
        o["name"]: o["parallelism"]
        for o in restored["operators"]
        if o["name"] in result.summary()["operators"]
    }
    records = result.assignment.records
    keepers: dict[object, int] = {}
    placed = _placed(pair.first)
    assert len(placed) == len(records)
    for number, (value, _, _) in enumerate(placed):
        assert isinstance(value, tuple)
        assert records[number].key == value[0] % 1000  # the forecast's record is this one
        keepers[value] = result.assignment.expected_subtask[(number, KEYED_EXCHANGE)]
    return result, keepers


def test_flink_put_each_recovered_record_in_the_subtask_the_forecast_says_keeps_it() -> None:
    """The restored job (slow-counter 4 -> 3, checkpointing during recovery on) took
    checkpoints while records of the first checkpoint were still in flight: each of them sits
    in the input state of the new subtask the forecast of the first checkpoint at 3 says keeps
    it (Flink 2.3 filtered them before they could be checkpointed), or in the output state
    routed to it. Each is compared once: Flink 2.3.0 with checkpointing during recovery may
    persist a local channel's recovered buffers twice (FLINK-40016, fixed after 2.3.0; seen
    here as 376 records twice in one input channel's state), which no forecast of one restore
    stands for, so how often a record appears is not checked. Which records are still in
    flight when the restored job checkpoints is timing: without one there (recovery finished
    before the first checkpoint, as in a run with checkpointing during recovery off, where no
    checkpoint starts before every recovered input is consumed) this skips, saying so."""
    pair = restored_pair()
    assert (pair.before, pair.after) == (4, 3)
    result, keepers = _forecast_of_the_first(pair)
    assert set(Counter(keepers.values())) <= set(range(pair.after))
    kept = {r.subtask: r.kept_records for r in result.subtasks if r.operator == "slow-counter"}
    for checkpoint in pair.restored:
        recovered = [p for p in _placed(checkpoint) if p[0] in keepers]
        if recovered:
            break
    else:
        pytest.skip(
            "no record of the first checkpoint is in flight in any checkpoint of the restored "
            "job: recovery finished before its first checkpoint"
        )
    assert pair.during_recovery
    misplaced = [
        (value, at, side, keepers[value]) for value, at, side in recovered if at != keepers[value]
    ]
    assert misplaced == []
    # no subtask holds more of them than the forecast says it keeps (each counted once:
    # Flink 2.3.0 may persist a local channel's recovered buffers twice, FLINK-40016)
    held = Counter(at for _, at, _ in set(recovered))
    assert all(held[subtask] <= kept[subtask] for subtask in held), (held, kept)


def test_the_restored_checkpoints_in_flight_records_are_in_their_subtasks_key_groups() -> None:
    """Every in-flight record of the keyed exchange in each checkpoint of the restored job is
    in the key groups of its subtask at the new parallelism (the check of ``inspect``)."""
    pair = restored_pair()
    key = key_function("f0%1000", "Tuple2<Long,String>")
    for checkpoint in pair.restored:
        summary = summarize(checkpoint, value=TUPLE, keys={KEYED_EXCHANGE: key})
        parallelism = {o["name"]: o["parallelism"] for o in summary["operators"]}
        assert parallelism["slow-counter"] == pair.after
        assert parallelism["to-record"] == 2
        (check,) = summary["key_groups"]["checked"]
        assert check["outside"] == 0, check["example"]
        assert summary["totals"]["unclean_channels"] == 0


def test_keyed_state_after_the_restore_is_in_the_key_groups_the_forecast_assigns() -> None:
    """Each new subtask's keyed state in the restored job's checkpoints covers the key groups
    the forecast gives that subtask, and counts exactly the job's keys (f0 % 1000: 1,000,
    each seen long before the first checkpoint) that fall in them; so does the first
    checkpoint's at the old parallelism."""
    pair = restored_pair()
    result, _ = _forecast_of_the_first(pair)
    ranges = {
        t.index: t.key_groups
        for t in result.assignment.subtasks.values()
        if t.operator == "slow-counter"
    }
    assert len(ranges) == pair.after
    groups = Counter(assign_to_key_group(key, 128) for key in range(1000))
    for checkpoint in (pair.first, *pair.restored):
        metadata = read_metadata(checkpoint)
        counter = metadata.operator("slow-counter")
        assert len(counter.subtasks) == (pair.before if checkpoint == pair.first else pair.after)
        with StateFiles(checkpoint) as files:
            for subtask in counter.subtasks:
                handle = subtask.managed_keyed_state
                assert isinstance(handle, KeyGroupsStateHandle)
                span = range(handle.first_key_group, handle.last_key_group + 1)
                if checkpoint != pair.first:
                    owned = ranges[subtask.index]
                    assert owned is not None
                    assert (handle.first_key_group, handle.last_key_group) == (
                        owned.start,
                        owned.end,
                    )
                entries = read_keyed_state(handle, files).entries
                assert entries == sum(groups[g] for g in span)


def test_a_restored_checkpoint_forecast_at_its_own_parallelism_filters_nothing() -> None:
    """Flink placed every in-flight record of the restored job's checkpoints in the key groups
    of its subtask at 3, so restoring one at 3 filters no record and keeps each once."""
    pair = restored_pair()
    checkpoint = next(c for c in pair.restored if _placed(c))
    result = forecast(checkpoint, {"slow-counter": pair.after})
    assert result.outcome == "recovered"
    rows = [r for r in result.subtasks if r.operator == "slow-counter"]
    assert [r.subtask for r in rows] == list(range(pair.after))
    assert all(r.filtered_records == 0 for r in rows)
    assert sum(r.kept_records for r in rows) == len(_placed(checkpoint))
