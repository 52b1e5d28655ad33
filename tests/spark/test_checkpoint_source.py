"""A real checkpoint read by Spark's executors gives the tables and the rescale answer of the
single-process export followed by Spark on its Parquet files."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pyarrow as pa
import pytest

from flinkstate.dataset import SCHEMAS, write_dataset
from flinkstate.errors import CheckpointFormatError, InvalidParameterError
from flinkstate.flinkcheckpoint import real_checkpoint
from flinkstate.flinkcheckpoint.export import ExchangeSpec, to_dataset
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.flinkcheckpoint.summary import summarize
from flinkstate.flinkcheckpoint.writer import KEY, RECORD_TYPE, write_checkpoint
from flinkstate.spark import checkpoint_source
from flinkstate.spark.checkpoint_source import (
    load_checkpoint,
    plan_read,
    read_buffers,
    read_fragments,
)
from flinkstate.spark.rescaling import RescalingPipeline
from flinkstate.spark.tables import load
from tests.flinkcheckpoint.fuzz import copy_checkpoint, rewrite_metadata
from tests.flinkcheckpoint.fuzz.repoint import channel_places, replaced
from tests.flinkcheckpoint.test_metadata import CHECKPOINTS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TYPE = "Tuple2<Long,String>"


def _exchanges(checkpoint: Path) -> dict[str, ExchangeSpec]:
    if "rebalance" in checkpoint.parents[1].name:
        return {"to-record->relay": ExchangeSpec("rebalance")}
    return {"to-record->slow-counter": ExchangeSpec("hash", key_function("f0%1000", TYPE))}


def _sorted(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return frame.sort_values(keys, ignore_index=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    "checkpoint",
    [
        p
        for p in CHECKPOINTS
        if p.parents[1].name in ("keyed-hash-p2-p4", "rebalance-forward-p2-p3")
    ],
    ids=lambda p: p.parents[1].name,
)
def test_the_executors_read_what_the_export_writes(
    spark: SparkSession, checkpoint: Path, tmp_path: Path
) -> None:
    exchanges = _exchanges(checkpoint)
    exported = to_dataset(checkpoint, exchanges, value=value_decoder(TYPE))
    write_dataset(exported, tmp_path / "ds")
    direct = load_checkpoint(spark, checkpoint, exchanges, TYPE)
    buffers = _sorted(direct.buffers.toPandas(), ["buffer_id"])
    pd.testing.assert_frame_equal(
        buffers, exported.tables["buffers"].to_pandas(), check_dtype=False
    )
    ours = _sorted(direct.fragments.toPandas(), ["buffer_id", "position"])
    theirs = _sorted(exported.tables["fragments"].to_pandas(), ["buffer_id", "position"])
    # the ids number records differently (by channel here, across channels there): the same
    # records, the same pieces
    assert ours["record"].factorize()[0].tolist() == theirs["record"].factorize()[0].tolist()
    columns = [c for c in theirs.columns if c != "record"]
    pd.testing.assert_frame_equal(ours[columns], theirs[columns], check_dtype=False)
    answers = []
    for dataset in (direct, load(spark, tmp_path / "ds")):
        pipeline = RescalingPipeline(dataset)
        try:
            answers.append(pipeline.analyse([1, 3, 5], progress=False))
        finally:
            pipeline.close()
    for table in ("persisted", "movement", "subtasks", "sweep"):
        pd.testing.assert_frame_equal(getattr(answers[0], table), getattr(answers[1], table))


def test_channels_are_grouped_into_tasks_with_their_first_buffers() -> None:
    checkpoint = CHECKPOINTS[0]
    plan, _, groups = plan_read(checkpoint, _exchanges(checkpoint), TYPE)
    numbers = [n for channels, _ in groups for n in channels]
    assert numbers == list(range(len(plan.channels)))
    firsts = [f for _, found in groups for f in found]
    chunks = [
        sum(len(h.offsets) for h in (c.input, c.output) if h is not None) for c in plan.channels
    ]
    assert firsts == [sum(chunks[:i]) for i in range(len(chunks))]


def test_a_keyed_exchange_needs_the_record_type() -> None:
    checkpoint = next(p for p in CHECKPOINTS if "rebalance" not in str(p))
    with pytest.raises(InvalidParameterError, match="give their type"):
        plan_read(checkpoint, _exchanges(checkpoint), None)


@pytest.mark.parametrize("batch_bytes", [1, 3000, 1 << 30], ids=["channel", "some", "task"])
def test_an_executors_batches_are_the_exports_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_bytes: int
) -> None:
    """Channels of many small chunks, records cut by chunks and by the barrier, read by an
    executor's functions (no Spark needed) in batches of a channel, of a few, of a task."""
    written = write_checkpoint(tmp_path, 150_000, parallelism=6, segment_size=256)
    exchanges = {"upstream->downstream": ExchangeSpec("hash", key_function(KEY, RECORD_TYPE))}
    monkeypatch.setattr(checkpoint_source, "BATCH_BYTES", batch_bytes)
    _, spec, groups = plan_read(written.directory, exchanges, RECORD_TYPE)
    tasks = pa.RecordBatch.from_pylist([{"channels": c, "first_buffers": f} for c, f in groups])
    buffers = pa.Table.from_batches(list(read_buffers(spec, iter([tasks]))), SCHEMAS["buffers"])
    fragments = pa.Table.from_batches(
        list(read_fragments(spec, iter([tasks]))), SCHEMAS["fragments"]
    )
    exported = to_dataset(written.directory, exchanges, value=value_decoder(RECORD_TYPE))
    assert buffers.equals(exported.tables["buffers"])
    ours, theirs = fragments.to_pandas(), exported.tables["fragments"].to_pandas()
    assert ours["record"].factorize()[0].tolist() == theirs["record"].factorize()[0].tolist()
    columns = [c for c in theirs.columns if c != "record"]
    pd.testing.assert_frame_equal(ours[columns], theirs[columns])
    assert theirs["continues_into_next"].sum() > 0


def _shared_across_tasks(metadata: CheckpointMetadata) -> CheckpointMetadata:
    """slow-counter[1]'s input channel 0/0 naming the first chunk of to-record[0]'s output for
    slow-counter[0] (4 KiB at byte 4 of the same file), its state size kept consistent: two
    logical channels, which Spark reads in different tasks."""
    places = {name: (place, handle) for place, name, handle in channel_places(metadata)}
    place, handle = places["slow-counter[1] input 0/0"]
    shared = dataclasses.replace(handle, offsets=(4,), state_size=4 + 4096)
    assert places["to-record[0] output 0/0"][1].offsets[0] == 4
    return replaced(metadata, place, shared)


def test_a_chunk_two_tasks_would_read_is_refused_by_the_plan(tmp_path: Path) -> None:
    """Flink writes each buffer once: the driver refuses a chunk two handles name as the
    local reader does, in the same words, before any executor reads a channel."""
    source = real_checkpoint("keyed-hash-p2-p4")
    exchanges = _exchanges(source)
    plan, _, groups = plan_read(source, exchanges, TYPE)
    task = {n: i for i, (numbers, _) in enumerate(groups) for n in numbers}
    ends = [(c.upstream_subtask, c.downstream_subtask) for c in plan.channels]
    assert task[ends.index((0, 0))] != task[ends.index((0, 1))]  # two tasks read them
    chk = copy_checkpoint(source, tmp_path)
    rewrite_metadata(chk, _shared_across_tasks)
    with pytest.raises(CheckpointFormatError) as local:
        summarize(chk)
    assert "sharing bytes" in str(local.value)
    with pytest.raises(CheckpointFormatError) as planned:
        plan_read(chk, exchanges, TYPE)
    assert str(planned.value) == str(local.value)


def test_an_executor_reads_only_the_metadata_the_driver_checked(tmp_path: Path) -> None:
    """A _metadata changed after the plan (or another copy where an executor looks) is
    refused by the executor, not read unchecked."""
    chk = copy_checkpoint(real_checkpoint("keyed-hash-p2-p4"), tmp_path)
    _, spec, groups = plan_read(chk, _exchanges(chk), TYPE)
    tasks = pa.RecordBatch.from_pylist([{"channels": c, "first_buffers": f} for c, f in groups])
    assert list(read_buffers(spec, iter([tasks])))  # the file planned from: read
    rewrite_metadata(chk, _shared_across_tasks)
    # another executor's Python worker: nothing parsed yet
    checkpoint_source._logical_channels.cache_clear()
    checkpoint_source._metadata.cache_clear()
    with pytest.raises(CheckpointFormatError, match="the _metadata the driver planned the read"):
        list(read_buffers(spec, iter([tasks])))


@pytest.mark.slow
def test_spark_refuses_a_chunk_two_handles_name(spark: SparkSession, tmp_path: Path) -> None:
    chk = copy_checkpoint(real_checkpoint("keyed-hash-p2-p4"), tmp_path)
    rewrite_metadata(chk, _shared_across_tasks)
    with pytest.raises(CheckpointFormatError) as local:
        to_dataset(chk, _exchanges(chk), value=value_decoder(TYPE))
    with pytest.raises(CheckpointFormatError) as refused:
        load_checkpoint(spark, chk, _exchanges(chk), TYPE)
    assert str(refused.value) == str(local.value)
    assert "slow-counter's input handle of subtask 1, 0/0" in str(refused.value)
