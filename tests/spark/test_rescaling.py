"""The Spark pipeline's answers against the model's own: the state assignment a restarted job
follows (sample checkpoints), the record filter the simulated recovery applies, and Flink's
scalar key-group functions row by row (generated checkpoints)."""

from __future__ import annotations

import shutil
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest

from flinkstate.dataset import read_dataset, write_dataset
from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.export import ExchangeSpec, to_dataset
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.generator import GeneratorSpec, generate
from flinkstate.javahash import JavaType
from flinkstate.keygroups import assign_key_to_parallel_operator
from flinkstate.lab.scenario_run import ScenarioRun, run_scenario
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.rescale.routes import JobShape
from flinkstate.runtime.checkpoint.state_assignment import assign_state
from flinkstate.samples import SAMPLES
from flinkstate.spark import rescaling
from flinkstate.spark.channel_selection import keyed_selection
from flinkstate.spark.rescaling import MOVEMENT_COLUMNS, RescalingPipeline, sweep_plan
from flinkstate.spark.tables import job_shape, load
from tests.flinkcheckpoint.made import STRING_KEYED, made_checkpoint, record_type
from tests.movement_model import SUMS, model_movement, normalised, sweep
from tests.test_dataset import as_version_1

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def runs() -> dict[str, ScenarioRun]:
    """Each sample's scenario run to its end: the checkpoint, the restored job, its filter."""
    return {
        name: run_scenario(sample.scenario, seed=sample.seed, overrides=sample.overrides)
        for name, sample in SAMPLES.items()
    }


@pytest.fixture(scope="module")
def pipelines(spark: SparkSession) -> dict[str, RescalingPipeline]:
    made = {name: RescalingPipeline(load(spark, DATA / name)) for name in SAMPLES}
    yield made
    for pipeline in made.values():
        pipeline.close()


@pytest.mark.parametrize("name", list(SAMPLES))
def test_movement_equals_the_model_state_assignment(
    name: str, runs: dict[str, ScenarioRun], pipelines: dict[str, RescalingPipeline]
) -> None:
    run = runs[name]
    assert run.checkpoint is not None
    scenarios = dict(enumerate(sweep(run), start=1))
    result = pipelines[name].analyse_parallelisms(scenarios, progress=False)
    expected = pd.concat(
        [model_movement(assign_state(run.checkpoint, p), label) for label, p in scenarios.items()],
        ignore_index=True,
    )
    pd.testing.assert_frame_equal(normalised(result.movement), normalised(expected))
    # a rescale reads every persisted byte at least once: nothing is lost on the way
    delivered = result.movement.groupby(["to", "exchange"])["bytes"].sum()
    persisted = result.persisted.groupby("exchange")["bytes"].sum()
    for (_, exchange), value in delivered.items():
        assert value >= persisted[exchange]


@pytest.mark.parametrize("name", ["rebalance", "spanning-records"])
def test_filtered_records_equal_what_the_simulated_recovery_dropped(
    name: str, runs: dict[str, ScenarioRun], pipelines: dict[str, RescalingPipeline]
) -> None:
    run = runs[name]
    assert run.assignment is not None
    assert run.world is not None
    new = {op.name: op.parallelism for op in run.assignment.graph.operators}
    result = pipelines[name].analyse_parallelisms({1: new}, progress=False)
    dropped: dict[tuple[str, int], int] = defaultdict(int)
    fragments = read_dataset(DATA / name).tables
    exchange_of = (
        fragments["fragments"]
        .to_pandas()
        .merge(fragments["buffers"].to_pandas(), on="buffer_id")
        .drop_duplicates("record")
        .set_index("record")["exchange"]
    )
    for record, task_name in run.world.filtered:
        task = run.world.task_named(task_name)
        exchange = str(exchange_of[record])
        assert result.shape.exchange(exchange).downstream == task.operator
        dropped[(exchange, task.index)] += 1
    assert sum(dropped.values()) > 0, "the scenario filters records"
    found = {
        (row.exchange, row.subtask): row.filtered_records
        for row in result.subtasks.itertuples()
        if row.filtered_records
    }
    assert found == dict(dropped)


def test_spanning_records_and_empty_channels(pipelines: dict[str, RescalingPipeline]) -> None:
    result = pipelines["spanning-records"].analyse([2, 5], progress=False)
    assert result.persisted["spanning"].sum() > 0
    assert (result.sweep["spanning_records"] > 0).all()
    # every new subtask has a row, the ones that receive nothing with zeros
    for (to, _exchange), group in result.subtasks.groupby(["to", "exchange"]):
        assert sorted(group["subtask"]) == list(range(to))
    idle = result.subtasks[result.subtasks["bytes"] == 0]
    assert not idle.empty
    assert (idle[["records", "filtered_records", "virtual_channels_with_data"]] == 0).all().all()
    # subtask totals add up to the movement
    totals = result.subtasks.groupby(["to", "exchange"])[["bytes", "records"]].sum()
    moved = result.movement.groupby(["to", "exchange"])[["bytes", "records"]].sum()
    pd.testing.assert_frame_equal(totals.loc[moved.index], moved)


@pytest.mark.parametrize("name", ["keyed", "spanning-records"])
def test_record_starts_are_summed_per_channel_and_key_group(
    pipelines: dict[str, RescalingPipeline], name: str
) -> None:
    """What every question reads: a row per (channel, selection key), the channel's buffers
    summed, each record counted once where it starts, by its stored key group on a keyed
    exchange and by -1 on any other."""
    pipeline = pipelines[name]
    tables = read_dataset(DATA / name).tables
    buffers = tables["buffers"].to_pandas().rename(columns={"channel_or_subpartition": "channel"})
    channel = ["exchange", "side", "subtask", "channel"]
    expected_channels = buffers.groupby(channel).agg(
        buffers=("size", "size"), bytes=("size", "sum")
    )
    got_channels = pipeline.channels().set_index(channel).sort_index()
    pd.testing.assert_frame_equal(got_channels, expected_channels, check_dtype=False)

    starts = tables["fragments"].to_pandas().merge(buffers, on="buffer_id")
    starts = starts[~starts["continues_from_previous"]]
    keyed = {e.name for e in pipeline.shape.exchanges if e.partitioner is Partitioner.HASH}
    starts["selection_key"] = (
        starts["key_group"].astype("int64").where(starts["exchange"].isin(keyed), -1)
    )
    starts["spanning"] = starts["continues_into_next"].astype("int64")
    expected = starts.groupby([*channel, "selection_key"]).agg(
        records=("record", "size"), bytes=("record_bytes", "sum"), spanning=("spanning", "sum")
    )
    got = pipeline.records().toPandas().set_index([*channel, "selection_key"]).sort_index()
    assert got.index.is_unique
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)


def test_no_rescale_keeps_every_byte_where_it_was(
    pipelines: dict[str, RescalingPipeline],
) -> None:
    pipeline = pipelines["keyed"]
    same = {op.name: op.parallelism for op in pipeline.shape.operators}
    result = pipeline.analyse_parallelisms({0: same}, progress=False)
    assert (result.movement["old_subtask"] == result.movement["new_subtask"]).all()
    assert result.movement["filtered_records"].sum() == 0
    assert (result.sweep["moved_bytes"] == 0).all()
    assert (result.sweep["amplification"] == 1.0).all()


def reference_movement(directory: Path, parallelism: Mapping[str, int]) -> pd.DataFrame:
    """Row by row with the scalar functions: route each buffer by the plan, each record's
    selected subtask by Flink's key-group assignment."""
    tables = {name: t.to_pandas() for name, t in read_dataset(directory).tables.items()}
    shape = JobShape.of(
        tables["operators"].to_dict("records"), tables["exchanges"].to_dict("records")
    )
    plans = shape.plans(parallelism)
    fragments = tables["fragments"]
    starts = fragments[~fragments["continues_from_previous"]].groupby("buffer_id")
    sums: dict[tuple[object, ...], list[int]] = defaultdict(lambda: [0] * len(SUMS))
    for buffer in tables["buffers"].itertuples():
        plan = plans[buffer.exchange]
        exchange = shape.exchange(buffer.exchange)
        consumer_op = shape.operator(exchange.downstream)
        receivers = []
        if buffer.side == "input":
            for consumer in plan.downstream:
                if buffer.subtask in consumer.input_state_from:
                    channel = consumer.new_channel(buffer.channel_or_subpartition)
                    vc = (buffer.subtask, buffer.channel_or_subpartition)
                    receivers.append((consumer.subtask, channel, vc))
        else:
            for producer in plan.upstream:
                if buffer.subtask in producer.output_state_from:
                    for new in producer.new_subpartitions(buffer.channel_or_subpartition):
                        vc = (buffer.channel_or_subpartition, buffer.subtask)
                        receivers.append((new, producer.subtask, vc))
        old = buffer.subtask if buffer.side == "input" else buffer.channel_or_subpartition
        records = (
            starts.get_group(buffer.buffer_id)
            if buffer.buffer_id in starts.groups
            else fragments.iloc[:0]
        )
        for new, channel, vc in receivers:
            filters = plan.downstream[new].filters_virtual_channel(channel, *vc)
            row = sums[(0, buffer.exchange, buffer.side, old, new)]
            row[0] += 1
            row[1] += buffer.size
            for record in records.itertuples():
                strings = exchange.key_type is JavaType.STRING
                selected = assign_key_to_parallel_operator(
                    record.key_string if strings else int(record.key),
                    consumer_op.max_parallelism,
                    plan.downstream_parallelism[1],
                    exchange.key_type,
                )
                dropped = filters and selected != new
                row[2] += 1
                row[3] += not dropped
                row[4] += dropped
                row[5] += record.record_bytes if dropped else 0
                row[6] += bool(record.continues_into_next)
    frame = pd.DataFrame(
        [(*key, *values) for key, values in sums.items()], columns=MOVEMENT_COLUMNS
    )
    return normalised(frame)


@pytest.mark.parametrize(
    ("partitioner", "source", "old", "new"),
    [("keyBy", 3, 4, 3), ("keyBy", 2, 3, 7), ("rebalance", 3, 4, 2)],
)
def test_generated_checkpoint_equals_the_scalar_reference(
    spark: SparkSession, tmp_path: Path, partitioner: str, source: int, old: int, new: int
) -> None:
    spec = GeneratorSpec(
        records=1500,
        record_size=300,
        record_size_max=5000,
        segment_size=4096,
        source_parallelism=source,
        parallelism=old,
        max_parallelism=128,
        keys=300,
        partitioner=partitioner,
        input_buffers=2,
        seed=11,
    )
    directory = tmp_path / "generated"
    generate(spec, directory, progress=None)
    pipeline = RescalingPipeline(load(spark, directory))
    try:
        downstream = pipeline.shape.exchanges[0].downstream
        result = pipeline.analyse_parallelisms({0: {downstream: new}}, progress=False)
    finally:
        pipeline.close()
    expected = reference_movement(directory, {downstream: new})
    pd.testing.assert_frame_equal(normalised(result.movement), expected)
    if partitioner == "keyBy":
        assert result.movement["filtered_records"].sum() > 0


def test_bad_questions_get_clear_errors(pipelines: dict[str, RescalingPipeline]) -> None:
    pipeline = pipelines["keyed"]
    with pytest.raises(InvalidParameterError, match="new parallelism 0 is out of range"):
        pipeline.analyse(0, progress=False)
    with pytest.raises(InvalidParameterError, match="no operator 'nope'"):
        pipeline.analyse(3, ["nope"], progress=False)
    with pytest.raises(InvalidParameterError, match="maximum parallelism"):
        pipeline.analyse(200, progress=False)
    with pytest.raises(InvalidParameterError, match="forward partitioning"):
        pipeline.analyse(3, ["counter"], progress=False)
    with pytest.raises(InvalidParameterError, match="whole number"):
        pipeline.analyse([2, 2.5], progress=False)  # type: ignore[list-item]


def test_the_same_questions_are_refused_without_spark() -> None:
    """What ``flinkstate rescale`` checks before Spark starts is what the pipeline refuses."""
    shape = job_shape(DATA / "keyed")
    for to, operators, message in [
        (0, None, "new parallelism 0 is out of range"),
        (3, ["nope"], "no operator 'nope'"),
        (200, None, "maximum parallelism"),
        (3, ["counter"], "forward partitioning"),
    ]:
        with pytest.raises(InvalidParameterError, match=message):
            sweep_plan(shape, to, operators)
    assert sweep_plan(shape, [2, 3]).targets == (2, 3)


#: the executors' Python: it cannot start, so a job that needs it fails
_NO_PYTHON = """\
#!/bin/sh
echo "this job started a Python worker" >&2
exit 1
"""


@pytest.mark.filterwarnings("error")
def test_the_executors_run_no_python(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Key groups and selected subtasks are Spark expressions: executors whose Python cannot
    even start give the same answers (with ``mapInArrow`` this was a failed job, an executor
    without pandas named in one line)."""
    dataset = load(spark, DATA / "keyed")
    pipeline = RescalingPipeline(dataset)
    try:
        expected = pipeline.analyse([2, 3], progress=False)
    finally:
        pipeline.close()
    selection = keyed_selection(dataset, "source->counter", 3).toPandas()
    python = tmp_path / "python"
    python.write_text(_NO_PYTHON, encoding="utf-8")
    python.chmod(0o755)
    # the Python a job's tasks would run in is the context's when the job is made
    monkeypatch.setattr(spark.sparkContext, "pythonExec", str(python))
    pipeline = RescalingPipeline(load(spark, DATA / "keyed"))
    try:
        result = pipeline.analyse([2, 3], progress=False)
    finally:
        pipeline.close()
    pd.testing.assert_frame_equal(result.movement, expected.movement)
    pd.testing.assert_frame_equal(result.sweep, expected.sweep)
    again = keyed_selection(dataset, "source->counter", 3).toPandas()
    pd.testing.assert_frame_equal(again, selection)


@pytest.mark.parametrize("bound", [rescaling.BROADCAST_BUFFERS, 0])
def test_records_meet_their_buffers_by_broadcast_or_by_sorting_alike(
    spark: SparkSession,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    bound: int,
) -> None:
    """Up to a bound on the buffers, every task gets the buffers' channels (Spark's own
    threshold off here, so only the pipeline's choice can broadcast); beyond, Spark sorts the
    records by buffer. The same answers either way."""
    first = RescalingPipeline(load(spark, DATA / "spanning-records"))
    try:
        expected = first.analyse([1, 2, 5], progress=False)
    finally:
        first.close()  # else the next pipeline's records are found in its cache
    monkeypatch.setattr(rescaling, "BROADCAST_BUFFERS", bound)
    threshold = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    pipeline = RescalingPipeline(load(spark, DATA / "spanning-records"))
    try:
        result = pipeline.analyse([1, 2, 5], progress=False)
        capsys.readouterr()
        pipeline.records().explain()
        plan = capsys.readouterr().out
    finally:
        pipeline.close()
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", threshold)
    joins = "BroadcastHashJoin" if bound else "SortMergeJoin"
    assert joins in plan
    for table in ("persisted", "movement", "subtasks", "sweep"):
        pd.testing.assert_frame_equal(getattr(result, table), getattr(expected, table))


@pytest.fixture(scope="module")
def string_keyed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The export of a real job keyed by a String (``make real-checkpoints``)."""
    checkpoint = made_checkpoint(STRING_KEYED)
    kind = record_type(checkpoint)
    directory = tmp_path_factory.mktemp("string-keyed") / "dataset"
    spec = {"to-record->slow-counter": ExchangeSpec("hash", key_function("f0", kind))}
    write_dataset(to_dataset(checkpoint, spec, value=value_decoder(kind)), directory)
    return directory


def test_a_string_keyed_export_rescales_as_the_scalar_reference_and_pandas(
    spark: SparkSession, string_keyed: Path
) -> None:
    """Spark hashes the String keys itself (``String.hashCode()`` as expressions): its key
    groups are the export's (Flink's, checked against the job's routing), and what it says
    moves on a rescale is the scalar reference's and the pandas baseline's."""
    from benchmarks.pandas_rescaling import PandasRescaling

    exchange = "to-record->slow-counter"
    stored = read_dataset(string_keyed).tables["fragments"].to_pandas()
    starts = stored[~stored["continues_from_previous"]]
    dataset = load(spark, string_keyed)
    pipeline = RescalingPipeline(dataset)
    try:
        assert pipeline.shape.exchange(exchange).key_type is JavaType.STRING
        groups = pipeline.key_groups(exchange, 2)
        result = pipeline.analyse_parallelisms({0: {"slow-counter": 2}}, progress=False)
    finally:
        pipeline.close()
    expected = starts.groupby("key_group").size()
    found = groups.set_index("key_group")["records"]
    assert (found[found > 0] == expected.reindex(found[found > 0].index)).all()
    assert found.sum() == len(starts) > 1000
    selection = keyed_selection(dataset, exchange, 2).toPandas()
    merged = selection.merge(stored, on=["buffer_id", "position"], suffixes=("", "_stored"))
    assert len(merged) == len(stored)
    assert (merged["key_group"] == merged["key_group_stored"]).all()
    reference = reference_movement(string_keyed, {"slow-counter": 2})
    pd.testing.assert_frame_equal(normalised(result.movement), reference)
    assert result.movement["filtered_records"].sum() > 0
    baseline = PandasRescaling(string_keyed).movement({0: {"slow-counter": 2}})
    pd.testing.assert_frame_equal(normalised(baseline), reference)


def test_a_version_1_dataset_rescales_as_it_did(
    spark: SparkSession, tmp_path: Path, pipelines: dict[str, RescalingPipeline]
) -> None:
    """A dataset written before String keys (no ``key_type``, no ``key_string``) reads with
    its keys as Longs and gives the answer it gave."""
    old = as_version_1(Path(shutil.copytree(DATA / "keyed", tmp_path / "keyed")))
    pipeline = RescalingPipeline(load(spark, old))
    try:
        result = pipeline.analyse([2, 3], progress=False)
    finally:
        pipeline.close()
    expected = pipelines["keyed"].analyse([2, 3], progress=False)
    pd.testing.assert_frame_equal(result.movement, expected.movement)
