"""Versions 5 to 7, and what a corrupt, cut or foreign ``_metadata`` gets: the package's format
error naming the file, the byte offset and what was expected, never anything else."""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinkstate.errors import CheckpointFormatError
from flinkstate.flinkcheckpoint.handles import MergedChannelStateHandle
from flinkstate.flinkcheckpoint.metadata import (
    CheckpointMetadata,
    OperatorState,
    parse_metadata,
    read_metadata,
)
from flinkstate.flinkcheckpoint.metadata_writer import write_metadata
from tests.flinkcheckpoint.test_metadata import CHECKPOINTS

FILES = {p.parents[1].name: (p / "_metadata").read_bytes() for p in CHECKPOINTS}
SMALLEST = min(FILES, key=lambda name: len(FILES[name]))


def _parse(data: bytes) -> CheckpointMetadata:
    return parse_metadata(data, "test/_metadata")


def _trailer(data: bytes) -> bytes:
    return data[_parse(data).trailer_offset :]


@pytest.mark.parametrize("name", sorted(FILES))
def test_writing_version_6_gives_back_the_file_flink_wrote(name: str) -> None:
    data = FILES[name]
    assert write_metadata(_parse(data), 6, _trailer(data)) == data


def _unmerged(metadata: CheckpointMetadata) -> CheckpointMetadata:
    """The model as version 5 has it: channel handles one per channel."""

    def flatten(operator: OperatorState) -> OperatorState:
        subtasks = tuple(
            dataclasses.replace(
                s,
                input_channel_state=tuple(s.channel_handles())[: _count(s.input_channel_state)],
                result_subpartition_state=tuple(s.channel_handles())[
                    _count(s.input_channel_state) :
                ],
            )
            for s in operator.subtasks
        )
        return dataclasses.replace(operator, subtasks=subtasks)

    return dataclasses.replace(metadata, operators=tuple(map(flatten, metadata.operators)))


def _count(handles: tuple[object, ...]) -> int:
    return sum(len(h.channels) if isinstance(h, MergedChannelStateHandle) else 1 for h in handles)


@pytest.mark.parametrize("name", sorted(FILES))
def test_version_5_has_one_handle_per_channel_and_no_type_byte(name: str) -> None:
    data = FILES[name]
    v6 = _parse(data)
    v5 = _parse(write_metadata(v6, 5, _trailer(data)))
    assert v5.version == 5
    assert _pairs(v5) == _pairs(v6)
    assert v5 == dataclasses.replace(
        _unmerged(v6), version=5, trailer_offset=v5.trailer_offset, size=v5.size
    )


def _pairs(metadata: CheckpointMetadata) -> list[tuple[str, object]]:
    return [(op.operator_id, h) for op, h in metadata.channel_handles()]


def test_version_7_reads_the_reference_checkpoint_after_each_subtask() -> None:
    data = FILES[SMALLEST]
    v6 = _parse(data)
    referring = dataclasses.replace(
        v6,
        operators=tuple(
            dataclasses.replace(
                op,
                subtasks=tuple(
                    dataclasses.replace(s, ref_checkpoint_id=v6.checkpoint_id - 1 - s.index)
                    if s.index % 2
                    else s
                    for s in op.subtasks
                ),
            )
            for op in v6.operators
        ),
    )
    v7 = _parse(write_metadata(referring, 7, _trailer(data)))
    assert v7.version == 7
    for ours, theirs in zip(v7.operators, referring.operators, strict=True):
        assert ours.subtasks == theirs.subtasks
    assert any(s.ref_checkpoint_id for op in v7.operators for s in op.subtasks)


@pytest.mark.parametrize("version", [1, 2, 3, 4, 8, -1, 1 << 20])
def test_an_unknown_version_is_named(version: int) -> None:
    data = bytearray(FILES[SMALLEST])
    data[4:8] = struct.pack(">i", version)
    with pytest.raises(CheckpointFormatError, match=f"found {version} ") as caught:
        _parse(bytes(data))
    assert caught.value.offset == 4
    assert "at byte 4" in str(caught.value)
    assert "test/_metadata" in str(caught.value)


def test_a_wrong_magic_number_is_named() -> None:
    data = b"\x00\x01\x02\x03" + FILES[SMALLEST][4:]
    with pytest.raises(CheckpointFormatError, match="magic number 0x4960672D, found 0x00010203"):
        _parse(data)


def test_an_unknown_handle_type_is_named() -> None:
    data = bytearray(FILES[SMALLEST])
    metadata = _parse(bytes(data))
    source = metadata.operator("source")
    assert source.coordinator_state is not None
    # the coordinator state's tag byte sits right after the source operator's parallelisms
    marker = bytes.fromhex(source.operator_id) + struct.pack(
        ">ii", source.parallelism, source.max_parallelism
    )
    at = bytes(data).index(marker) + len(marker)
    assert data[at] == 1
    data[at] = 99
    with pytest.raises(CheckpointFormatError, match="found 99") as caught:
        _parse(bytes(data))
    assert caught.value.offset == at


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FILES, key=lambda n: len(FILES[n]))[:2])
def test_a_file_cut_at_any_byte_is_reported_as_cut(name: str) -> None:
    data = FILES[name]
    for length in range(len(data)):
        with pytest.raises(CheckpointFormatError):
            _parse(data[:length])


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(FILES)),
    st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), max_size=4),
    st.floats(0, 1),
)
def test_mutated_checkpoints_parse_or_fail_with_a_format_error(
    name: str, flips: list[tuple[float, int]], keep: float
) -> None:
    """Random byte changes and cuts of real files: either a model or our format error."""
    data = bytearray(FILES[name])
    for where, value in flips:
        data[int(where * len(data))] = value
    data = data[: max(8, int(keep * len(data)))] if keep < 1 else data
    offset = 0
    try:
        _parse(bytes(data))
    except CheckpointFormatError as error:
        offset = error.offset
    assert 0 <= offset <= len(data)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=4096))
def test_foreign_bytes_fail_with_a_format_error(data: bytes) -> None:
    with pytest.raises(CheckpointFormatError):
        _parse(data)


def test_a_missing_or_empty_checkpoint_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(CheckpointFormatError, match="_metadata"):
        read_metadata(tmp_path)
    with pytest.raises(CheckpointFormatError, match="expected a checkpoint _metadata file"):
        read_metadata(tmp_path / "nowhere" / "_metadata")
