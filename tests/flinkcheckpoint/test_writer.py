"""Checkpoints written in Flink's format at any size read back as written: the metadata
re-serializes to its own bytes, every payload byte and record is in the dataset, every key in
the key groups of the subtask its channel leads to (the export refuses any other)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.export import ExchangeSpec, to_dataset
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.metadata import read_metadata
from flinkstate.flinkcheckpoint.metadata_writer import write_metadata
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.flinkcheckpoint.writer import KEY, PROPERTIES, RECORD_TYPE, write_checkpoint


def test_a_written_checkpoint_reads_back_whole(tmp_path: Path) -> None:
    written = write_checkpoint(tmp_path, 300_000, parallelism=6, segment_size=512)
    raw = (written.directory / "_metadata").read_bytes()
    metadata = read_metadata(written.directory)
    assert write_metadata(metadata, 6, PROPERTIES) == raw
    assert metadata.operator("downstream").max_parallelism == 128
    spec = ExchangeSpec("hash", key_function(KEY, RECORD_TYPE))
    dataset = to_dataset(
        written.directory, {"upstream->downstream": spec}, value=value_decoder(RECORD_TYPE)
    )
    buffers = dataset.tables["buffers"].to_pylist()
    assert sum(b["size"] for b in buffers) == written.payload_bytes
    assert max(b["size"] for b in buffers) == 512
    records = {f["record"] for f in dataset.tables["fragments"].to_pylist()}
    assert len(records) == written.records
    # records cut by the barrier: some start in the input state and end in the output state
    assert any(f["continues_into_next"] for f in dataset.tables["fragments"].to_pylist())


def test_refusals(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="parallelism of at least 1"):
        write_checkpoint(tmp_path, 10, parallelism=0)
    write_checkpoint(tmp_path, 10, parallelism=1)
    with pytest.raises(InvalidParameterError, match="exists"):
        write_checkpoint(tmp_path, 10, parallelism=1)
