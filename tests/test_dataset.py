from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.dataset import (
    ADDED_IN_VERSION_2,
    FORMAT,
    SCHEMAS,
    VERSION,
    Dataset,
    DatasetError,
    check_dataset,
    check_dataset_target,
    is_dataset,
    read_dataset,
    write_dataset,
)
from flinkstate.errors import InvalidParameterError
from flinkstate.javahash import JavaType
from flinkstate.lab.simulation_export import from_simulation
from flinkstate.rescale.routes import JobShape
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import RunStatus, Simulation, make_scheduler


@pytest.fixture(scope="module")
def finished() -> NetworkWorld:
    sim = Simulation(
        lambda: topology("keyed").build({"record_size": 6000, "checkpoint_interval": 150}, seed=2),
        make_scheduler("random", 2),
    )
    assert sim.run().status is RunStatus.FINISHED
    assert isinstance(sim.model, NetworkWorld)
    return sim.model


def test_round_trip_and_contents(finished: NetworkWorld, tmp_path: Path) -> None:
    checkpoint = finished.checkpoints.completed[0]
    write_dataset(from_simulation(finished, checkpoint, "test"), tmp_path)
    dataset = read_dataset(tmp_path)
    assert dataset.manifest["checkpoint_id"] == checkpoint.id
    buffers = dataset.tables["buffers"].to_pandas()
    fragments = dataset.tables["fragments"].to_pandas()
    assert buffers["size"].sum() == checkpoint.in_flight_bytes
    assert len(fragments) == sum(
        len(b.fragments)
        for s in (*checkpoint.input_channel_state, *checkpoint.result_subpartition_state)
        for b in s.buffers
    )
    assert set(buffers["exchange"]) == {"source->counter"}  # the forward edge carries nothing
    spans = fragments[fragments["continues_into_next"] | fragments["continues_from_previous"]]
    assert len(spans) > 0
    assert fragments["key_group"].notna().all()
    assert (fragments["key_group"] < 128).all()
    merged = fragments.merge(buffers, on="buffer_id")
    assert (
        merged.groupby("buffer_id")["fragment_bytes"].sum()
        == merged.groupby("buffer_id")["size"].first()
    ).all()
    keyed = dataset.tables["keyed_state"].to_pandas()
    assert (
        (keyed["key_group"] >= keyed["key_group_start"])
        & (keyed["key_group"] <= keyed["key_group_end"])
    ).all()


def test_a_folder_given_as_text_is_a_folder(finished: NetworkWorld, tmp_path: Path) -> None:
    checkpoint = finished.checkpoints.completed[0]
    folder = str(tmp_path / "as-text")
    assert write_dataset(from_simulation(finished, checkpoint, "test"), folder) == Path(folder)
    assert is_dataset(folder)
    assert check_dataset(folder)["checkpoint_id"] == checkpoint.id
    assert read_dataset(folder, ["buffers"]).tables["buffers"].num_rows > 0
    assert check_dataset_target(folder) == Path(folder)


def test_bad_datasets_are_named(finished: NetworkWorld, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"no manifest\.json"):
        read_dataset(tmp_path)
    write_dataset(from_simulation(finished, finished.checkpoints.completed[0], "x"), tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    (tmp_path / "manifest.json").write_text(json.dumps({**manifest, "version": 99}))
    with pytest.raises(DatasetError, match="version 99"):
        read_dataset(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "keyed_state.parquet").unlink()
    with pytest.raises(DatasetError, match="missing the keyed_state table"):
        read_dataset(tmp_path)
    pq.write_table(pa.table({"buffer_id": [1]}), tmp_path / "keyed_state.parquet")
    with pytest.raises(DatasetError, match="lacks column"):
        read_dataset(tmp_path)
    keyed = pa.table({name: ["x"] for name in SCHEMAS["keyed_state"].names})
    pq.write_table(keyed, tmp_path / "keyed_state.parquet")
    for read in (read_dataset, check_dataset):  # both refuse it before reading any row
        with pytest.raises(DatasetError, match="subtask is string, not int32"):
            read(tmp_path)
    (tmp_path / "keyed_state.parquet").write_bytes(b"not parquet")
    with pytest.raises(DatasetError, match="not a readable Parquet file"):
        read_dataset(tmp_path)
    (tmp_path / "manifest.json").write_text("{")
    with pytest.raises(DatasetError, match="cannot be read"):
        read_dataset(tmp_path)


def test_an_interrupted_write_leaves_the_earlier_dataset_whole(
    finished: NetworkWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written in place, the first tables of the new dataset sat beside the rest of the old
    one under the old manifest, and check_dataset accepted the mix."""
    target = tmp_path / "ds"
    earlier = from_simulation(finished, finished.checkpoints.completed[0], "the earlier one")
    write_dataset(earlier, target)
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    later = Dataset(
        {**earlier.manifest, "description": "the later one"},
        {name: table.slice(0, 3) for name, table in earlier.tables.items()},
    )
    written = pq.write_table
    calls = 0

    def interrupted_at_the_third_table(*args: object, **kwargs: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt
        written(*args, **kwargs)

    monkeypatch.setattr(pq, "write_table", interrupted_at_the_third_table)
    with pytest.raises(KeyboardInterrupt):
        write_dataset(later, target)
    assert calls == 3
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert list(tmp_path.iterdir()) == [target]
    monkeypatch.undo()
    assert write_dataset(later, target) == target
    assert read_dataset(target).manifest["description"] == "the later one"
    assert read_dataset(target).tables["buffers"].num_rows == 3


def test_a_dataset_replaces_a_dataset_or_an_empty_folder_and_nothing_else(
    finished: NetworkWorld, tmp_path: Path
) -> None:
    dataset = from_simulation(finished, finished.checkpoints.completed[0], "x")
    empty, earlier, notes = tmp_path / "empty", tmp_path / "earlier", tmp_path / "notes"
    empty.mkdir()
    write_dataset(dataset, earlier)
    (earlier / "stale.parquet").write_bytes(b"from an older format")
    notes.mkdir()
    (notes / "notes.txt").write_text("mine")
    for target in (empty, earlier):
        assert check_dataset_target(target) == target
        write_dataset(dataset, target)
        assert sorted(p.name for p in target.iterdir()) == sorted(
            ["manifest.json", *(f"{name}.parquet" for name in SCHEMAS)]
        )
    refusal = f"cannot write a dataset to {notes}: the folder holds other files (notes.txt)"
    for attempt in (check_dataset_target, lambda target: write_dataset(dataset, target)):
        with pytest.raises(InvalidParameterError) as error:
            attempt(notes)
        assert str(error.value).startswith(refusal)
    assert [p.name for p in notes.iterdir()] == ["notes.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["earlier", "empty", "notes"]


def test_is_dataset_wants_this_format_in_the_manifest(tmp_path: Path) -> None:
    assert not is_dataset(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "something else"}))
    assert not is_dataset(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": FORMAT, "version": 99}))
    assert is_dataset(tmp_path)  # another version is still ours to replace


def as_version_1(directory: Path) -> Path:
    """Rewrite a dataset as version 1 wrote it: no key types, no String keys."""
    for name, columns in ADDED_IN_VERSION_2.items():
        path = directory / f"{name}.parquet"
        pq.write_table(pq.read_table(path).drop_columns(list(columns)), path)
    manifest = json.loads((directory / "manifest.json").read_text())
    (directory / "manifest.json").write_text(json.dumps({**manifest, "version": 1}))
    return directory


def test_a_version_1_dataset_reads_with_every_key_a_long(
    finished: NetworkWorld, tmp_path: Path
) -> None:
    """Datasets written before String keys lack ``key_type`` and ``key_string``: they read as
    nulls (a null key type is a Long), so what was exported once stays usable."""
    write_dataset(from_simulation(finished, finished.checkpoints.completed[0], "x"), tmp_path)
    current = read_dataset(tmp_path)
    assert current.manifest["version"] == VERSION == 2
    assert set(current.tables["exchanges"].column("key_type").to_pylist()) == {"Long", None}
    assert current.tables["fragments"].column("key_string").null_count == len(
        current.tables["fragments"]
    )
    old = read_dataset(as_version_1(tmp_path))
    assert old.manifest["version"] == 1
    for name, table in old.tables.items():
        assert table.schema == SCHEMAS[name]
    assert old.tables["exchanges"].column("key_type").null_count == old.tables["exchanges"].num_rows
    assert old.tables["fragments"].drop_columns(["key_string"]) == current.tables[
        "fragments"
    ].drop_columns(["key_string"])
    shape = JobShape.of(old.tables["operators"].to_pylist(), old.tables["exchanges"].to_pylist())
    assert set(shape.key_types().values()) == {JavaType.LONG}
    # a version-2 dataset without a version-2 column is incomplete, not old
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    (tmp_path / "manifest.json").write_text(json.dumps({**manifest, "version": 2}))
    with pytest.raises(DatasetError, match="lacks column"):
        check_dataset(tmp_path)


def test_a_key_type_no_consumer_hashes_is_refused() -> None:
    rows = [{"operator": n, "parallelism": 2, "max_parallelism": 128} for n in ("a", "b")]
    exchange = {
        "exchange": "a->b",
        "upstream": "a",
        "downstream": "b",
        "partitioner": "HASH",
        "unaligned_supported": True,
    }
    assert JobShape.of(rows, [{**exchange, "key_type": "Integer"}]).key_types() == {
        "a->b": JavaType.INT
    }
    for bad in ("Double", "byte[]", "Object"):
        with pytest.raises(
            InvalidParameterError, match="a dataset's keys are Integer, Long, String"
        ):
            JobShape.of(rows, [{**exchange, "key_type": bad}])
