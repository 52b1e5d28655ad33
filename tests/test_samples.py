"""The sample checkpoints in data/ are exactly what the model writes, and show what they say."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest

from flinkstate import samples
from flinkstate.cli import main
from flinkstate.dataset import read_dataset
from flinkstate.errors import InvalidParameterError
from flinkstate.samples import SAMPLES, build_sample, get_sample

DATA = Path(__file__).parents[1] / "data"


#: checkpoints written by Flink itself (read by flinkstate.flinkcheckpoint), not datasets: the
#: committed ones and those `make real-checkpoints` makes (not in git)
REAL_CHECKPOINTS = {"real-checkpoints", "generated-checkpoints"}


def test_every_folder_in_data_is_a_sample_and_every_sample_is_there() -> None:
    folders = {p.name for p in DATA.iterdir() if p.is_dir()} - REAL_CHECKPOINTS
    assert folders == set(SAMPLES)
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for sample in SAMPLES.values():
        assert f"| `{sample.name}/` | `{sample.scenario}` | {sample.shows} |" in readme


@pytest.mark.parametrize("name", list(SAMPLES))
def test_committed_sample_equals_what_the_model_writes(name: str) -> None:
    committed = read_dataset(DATA / name)
    rebuilt = build_sample(SAMPLES[name])
    assert committed.manifest == rebuilt.manifest
    for table, expected in rebuilt.tables.items():
        assert committed.tables[table].equals(expected), f"{name}/{table}.parquet is stale"


def test_samples_show_what_they_say() -> None:
    keyed = read_dataset(DATA / "keyed").tables
    assert set(keyed["buffers"].column("exchange").to_pylist()) == {"source->counter"}
    assert set(keyed["buffers"].column("side").to_pylist()) == {"input", "output"}

    broadcast = read_dataset(DATA / "broadcast").tables
    exchanges = broadcast["exchanges"].to_pylist()
    aligned = {e["exchange"] for e in exchanges if not e["unaligned_supported"]}
    assert {"source->process", "keyby0->rescale0", "map->process"} <= aligned
    assert not aligned & set(broadcast["buffers"].column("exchange").to_pylist())

    fragments = read_dataset(DATA / "spanning-records").tables["fragments"]
    spanning = pc.or_(fragments["continues_from_previous"], fragments["continues_into_next"])
    assert pc.sum(spanning).as_py() > fragments.num_rows / 2
    assert pc.min(fragments["record_bytes"]).as_py() > 4096


def test_cli_lists_and_writes_samples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["samples"]) == 0
    listing = capsys.readouterr().out
    for name in SAMPLES:
        assert name in listing
    assert main(["samples", "keyed", "--write", str(tmp_path)]) == 0
    assert read_dataset(tmp_path / "keyed").tables["buffers"].num_rows > 0
    assert main(["samples", "nonsense"]) == 2
    assert "unknown sample 'nonsense'; known: keyed, rebalance" in capsys.readouterr().err


def test_every_target_is_checked_before_any_sample_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rebalance").mkdir()
    (tmp_path / "rebalance" / "notes.txt").write_text("mine")

    def never(sample: object) -> None:
        raise AssertionError("a sample was built")

    monkeypatch.setattr(samples, "build_sample", never)
    assert main(["samples", "keyed", "rebalance", "--write", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"cannot write a dataset to {tmp_path / 'rebalance'}: the folder holds other" in err
    assert [p.name for p in tmp_path.iterdir()] == ["rebalance"]


def test_unknown_sample_is_named() -> None:
    with pytest.raises(InvalidParameterError, match="unknown sample 'x'"):
        get_sample("x")


def test_sample_path_is_the_committed_folder_or_a_written_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert samples.sample_path("keyed") == samples.COMMITTED / "keyed"
    monkeypatch.setattr(samples, "COMMITTED", tmp_path / "no-repository")
    written = samples.sample_path("keyed", cache=tmp_path / "cache")
    assert written == tmp_path / "cache" / "keyed"
    assert (
        read_dataset(written)
        .tables["buffers"]
        .equals(read_dataset(DATA / "keyed").tables["buffers"])
    )
