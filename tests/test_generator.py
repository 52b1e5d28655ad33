"""Generated checkpoints follow Flink's rules, whatever the batch size they were written in."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flinkstate import generator
from flinkstate.dataset import read_dataset
from flinkstate.errors import InvalidParameterError
from flinkstate.generator import DEFAULT_BATCH, GeneratorSpec, generate
from flinkstate.keygroups import assign_to_key_group, compute_operator_index_for_key_group


def _tables(spec: GeneratorSpec, directory: Path, batch: int) -> dict[str, pd.DataFrame]:
    generate(spec, directory, batch=batch)
    return {name: t.to_pandas() for name, t in read_dataset(directory).tables.items()}


def _check_framing(spec: GeneratorSpec, tables: dict[str, pd.DataFrame]) -> None:
    buffers, fragments = tables["buffers"], tables["fragments"]
    assert buffers["buffer_id"].is_unique
    assert set(fragments["buffer_id"]) <= set(buffers["buffer_id"])
    # every buffer is exactly filled by its fragments, none larger than a segment
    filled = fragments.groupby("buffer_id")["fragment_bytes"].sum()
    sizes = buffers.set_index("buffer_id")["size"]
    assert (filled.reindex(sizes.index) == sizes).all()
    assert sizes.max() <= spec.segment_size
    # every record is there once and whole: the input state starts at a record boundary
    # (Flink persists a half-read record from its length prefix on)
    assert sorted(fragments["record"].unique()) == list(range(spec.records))
    per_record = fragments.groupby("record").agg(
        got=("fragment_bytes", "sum"), total=("record_bytes", "first")
    )
    assert (per_record["got"] == per_record["total"]).all()
    # fragments of a record are contiguous and flagged as spanning exactly when they do
    f = fragments.sort_values(["record", "fragment_start"])
    assert (f["continues_from_previous"] == (f["fragment_start"] > 0)).all()
    ends = f["fragment_start"] + f["fragment_bytes"]
    assert (f["continues_into_next"] == (ends < f["record_bytes"])).all()
    # positions count 0, 1, ... within each buffer
    positions = fragments.groupby("buffer_id")["position"].agg(["min", "max", "count"])
    assert (positions["min"] == 0).all()
    assert (positions["max"] == positions["count"] - 1).all()
    # the first buffers of a channel are the consumer's input state, the rest the producer's
    # output state, each numbered from 0 in stream order
    for side, group in buffers.groupby("side"):
        key = ["subtask", "channel_or_subpartition"]
        orders = group.sort_values("buffer_id").groupby(key)["order"].apply(list)
        for order in orders:
            assert order == list(range(len(order))), side
    inputs = buffers[buffers["side"] == "input"]
    per_channel = inputs.groupby(["subtask", "channel_or_subpartition"]).size()
    assert per_channel.empty or per_channel.max() <= spec.input_buffers


def test_keyed_records_go_to_the_subtask_owning_their_key_group(tmp_path: Path) -> None:
    spec = GeneratorSpec(
        records=2000,
        record_size=700,
        record_size_max=9000,
        segment_size=4096,
        source_parallelism=3,
        parallelism=5,
        max_parallelism=128,
        keys=500,
        seed=7,
    )
    tables = _tables(spec, tmp_path, batch=13)
    _check_framing(spec, tables)
    fragments, buffers = tables["fragments"], tables["buffers"]
    joined = fragments.merge(buffers, on="buffer_id")
    target = joined["subtask"].where(joined["side"] == "input", joined["channel_or_subpartition"])
    for key, group, subtask in zip(
        joined["key"][:300], joined["key_group"][:300], target[:300], strict=True
    ):
        assert group == assign_to_key_group(int(key), 128, "long")
        assert subtask == compute_operator_index_for_key_group(128, 5, int(group))
    keyed = tables["keyed_state"]
    assert keyed["entries"].sum() == 500  # every key of the key space, once
    assert set(keyed["operator"]) == {"counter"}


def test_rebalance_deals_records_round_robin(tmp_path: Path) -> None:
    spec = GeneratorSpec(
        records=400,
        partitioner="rebalance",
        record_size=5000,
        segment_size=4096,
        source_parallelism=2,
        parallelism=3,
    )
    tables = _tables(spec, tmp_path, batch=50)
    _check_framing(spec, tables)
    fragments = tables["fragments"]
    assert fragments["key_group"].isna().all()
    channels = fragments.drop_duplicates("record").assign(channel=lambda f: f["buffer_id"] // 2**32)
    counts = channels.groupby("channel").size()
    assert len(counts) == 6
    assert counts.max() - counts.min() <= 1  # 200 per source, dealt evenly over 3 targets
    assert tables["keyed_state"].empty


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(
    records=st.integers(1, 120),
    batch=st.integers(2, 64),
    size=st.integers(1, 20_000),
    spread=st.integers(0, 20_000),
    partitioner=st.sampled_from(["keyBy", "rebalance"]),
    input_buffers=st.integers(0, 4),
)
def test_any_shape_frames_correctly(
    tmp_path_factory: pytest.TempPathFactory,
    records: int,
    batch: int,
    size: int,
    spread: int,
    partitioner: str,
    input_buffers: int,
) -> None:
    spec = GeneratorSpec(
        records=records,
        partitioner=partitioner,
        record_size=size,
        record_size_max=size + spread if spread else 0,
        segment_size=4096,
        source_parallelism=2,
        parallelism=3,
        input_buffers=input_buffers,
    )
    _check_framing(spec, _tables(spec, tmp_path_factory.mktemp("gen"), batch))


def test_progress_and_manifest(tmp_path: Path) -> None:
    seen: list[int] = []
    generate(GeneratorSpec(records=1000), tmp_path / "d", batch=300, progress=seen.append)
    assert sum(seen) == 1000
    assert max(seen) <= 300
    manifest = read_dataset(tmp_path / "d").manifest
    assert manifest["source"] == "flinkstate generator"
    assert "1,000 records" in manifest["description"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (GeneratorSpec(records=0), "records must be at least 1"),
        (GeneratorSpec(records=5, parallelism=0), "parallelism"),
        (GeneratorSpec(records=5, parallelism=300), "max parallelism"),
        (GeneratorSpec(records=5, segment_size=1000), "Minimum memory segment size is 4096"),
        (GeneratorSpec(records=5, partitioner="forward"), "partitioner must be one of"),
        (GeneratorSpec(records=5, record_size=10, record_size_max=5), "record_size_max 5"),
        # what cannot fit, refused before numpy allocates (it was an _ArrayMemoryError)
        (GeneratorSpec(records=5, record_size=10**13), "record_size must be at most 2,147,483"),
        (GeneratorSpec(records=5, record_size_max=2**31), "record_size_max must be at most"),
        (GeneratorSpec(records=5, keys=10**12), "keys must be 1 to 1,000,000,000"),
        (GeneratorSpec(records=5, keys=0), "keys must be 1 to"),
    ],
)
def test_bad_specs_are_refused_before_anything_is_written(
    tmp_path: Path, spec: GeneratorSpec, message: str
) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        generate(spec, tmp_path / "d")
    assert not (tmp_path / "d").exists()


def test_an_interrupted_run_leaves_the_earlier_dataset_and_a_whole_one_replaces_it(
    tmp_path: Path,
) -> None:
    """Batches are appended as they are generated, into a temporary folder: Ctrl-C half way
    leaves the earlier dataset as it was, and a finished run replaces it whole."""
    target = tmp_path / "d"
    generate(GeneratorSpec(records=10), target)
    before = {p.name: p.read_bytes() for p in target.iterdir()}

    def interrupted(done: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        generate(GeneratorSpec(records=20), target, batch=5, progress=interrupted)
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert list(tmp_path.iterdir()) == [target]
    generate(GeneratorSpec(records=20), target)
    assert read_dataset(target).tables["fragments"].column("record").to_pylist() != []
    assert "20 records" in read_dataset(target).manifest["description"]


def test_a_folder_of_other_files_is_refused_before_any_record(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")

    def never(done: int) -> None:
        raise AssertionError("records were generated")

    with pytest.raises(InvalidParameterError, match=r"holds other files \(notes.txt\)"):
        generate(GeneratorSpec(records=10), tmp_path, progress=never)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_records_of_a_java_int_each_are_generated_in_bounded_batches(tmp_path: Path) -> None:
    """Two records of 2 GiB - 1 each, made a few records per batch (a batch of 2**20 such
    records would be 2**36 buffer rows)."""
    spec = GeneratorSpec(records=2, source_parallelism=1, parallelism=1, record_size=2**31 - 1)
    assert spec.batch_records(DEFAULT_BATCH) == 63
    generate(spec, tmp_path / "d")
    fragments = pq.read_table(tmp_path / "d" / "fragments.parquet")
    # each 2**31 + 3 bytes with its length: 65,536 full buffers and 3 bytes in one more
    assert fragments.num_rows == 2 * 65_537


def test_records_framed_in_parts_are_the_records_framed_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch framed a few records at a time (as large records are) writes the very buffers
    and fragments of the batch framed at once, in another row order only."""
    spec = GeneratorSpec(records=3000, record_size=100, record_size_max=70_000, seed=3)
    generate(spec, tmp_path / "whole")
    monkeypatch.setattr(generator, "MAX_BATCH_BUFFERS", 50)
    assert spec.batch_records(DEFAULT_BATCH) == 12  # 4 buffers a record at most
    generate(spec, tmp_path / "parts")
    for table in ("buffers", "fragments"):
        whole, parts = (
            pq.read_table(tmp_path / name / f"{table}.parquet").to_pandas()
            for name in ("whole", "parts")
        )
        columns = list(whole.columns)
        assert len(whole) > 3000
        pd.testing.assert_frame_equal(
            whole.sort_values(columns, ignore_index=True),
            parts.sort_values(columns, ignore_index=True),
        )
