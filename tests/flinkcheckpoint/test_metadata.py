"""The ``_metadata`` reader agrees with Flink's own loader on every checkpoint Flink 2.3.0 wrote
(``data/real-checkpoints``, each with the report of ``Checkpoints.loadCheckpointMetadata``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flinkstate.flinkcheckpoint.handles import (
    ByteStreamStateHandle,
    ChannelStateHandle,
    EmptySegmentFileStateHandle,
    FileStateHandle,
    KeyGroupsStateHandle,
    MergedChannelStateHandle,
    OperatorStateHandle,
    RelativeFileStateHandle,
    SegmentFileStateHandle,
    StreamStateHandle,
)
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, read_metadata

REAL = Path(__file__).parents[2] / "data" / "real-checkpoints"
#: every committed checkpoint; those Flink's own dump describes (``chk-N.groundtruth.json``)
#: are CHECKPOINTS, the others are held to Flink's loader by test_flink_loader
COMMITTED = sorted(p for p in REAL.glob("*/*/chk-*") if p.is_dir())
CHECKPOINTS = [p for p in COMMITTED if p.with_name(p.name + ".groundtruth.json").exists()]


def ground_truth(checkpoint: Path) -> dict[str, Any]:
    report = checkpoint.with_name(checkpoint.name + ".groundtruth.json")
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return data


def delegate(handle: StreamStateHandle | None) -> dict[str, Any] | None:
    """A handle in the report's terms (only what the bytes of ``_metadata`` hold)."""
    if handle is None:
        return None
    if isinstance(handle, ByteStreamStateHandle):
        return {"metadata_tag": 1, "handle_name": handle.name, "inline_bytes": handle.size}
    if isinstance(handle, RelativeFileStateHandle):
        return {"metadata_tag": 6, "relative_path": handle.relative_path, "size": handle.size}
    if isinstance(handle, FileStateHandle):
        return {"metadata_tag": 2, "path_as_stored": handle.path, "size": handle.size}
    if isinstance(handle, SegmentFileStateHandle):
        return {
            "metadata_tag": 15,
            "path_as_stored": handle.physical_path,
            "start_pos": handle.start,
            "size": handle.size,
            "scope": handle.scope,
            "logical_file_id": handle.logical_file_id,
        }
    assert isinstance(handle, EmptySegmentFileStateHandle)
    return {"metadata_tag": 16, "size": 0}


def reported(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    keys = {
        1: ("metadata_tag", "handle_name", "inline_bytes"),
        2: ("metadata_tag", "path_as_stored", "size"),
        6: ("metadata_tag", "relative_path", "size"),
        15: ("metadata_tag", "path_as_stored", "start_pos", "size", "scope", "logical_file_id"),
        16: ("metadata_tag", "size"),
    }[entry["metadata_tag"]]
    return {k: entry[k] for k in keys}


def channel(handle: ChannelStateHandle, operator_id: str) -> dict[str, Any]:
    first, second = (
        ("gate_idx", "input_channel_idx") if handle.input else ("partition_idx", "subpartition_idx")
    )
    return {
        "operator_id": operator_id,
        "subtask_index": handle.subtask,
        "kind": handle.kind,
        first: handle.gate_or_partition,
        second: handle.channel_or_subpartition,
        "offsets": list(handle.offsets),
        "state_size": handle.state_size,
        "delegate": delegate(handle.delegate),
    }


def operator_state(handle: OperatorStateHandle) -> dict[str, Any]:
    return {
        "states": {s.name: {"mode": s.mode, "offsets": list(s.offsets)} for s in handle.states},
        "state_size": handle.state_size,
        "delegate": delegate(handle.delegate),
    }


@pytest.fixture(scope="module", params=CHECKPOINTS, ids=lambda p: p.parents[1].name)
def pair(request: pytest.FixtureRequest) -> tuple[CheckpointMetadata, dict[str, Any]]:
    return read_metadata(request.param), ground_truth(request.param)


def test_there_are_real_checkpoints() -> None:
    assert len(CHECKPOINTS) == 6


def test_header_body_and_trailer(pair: tuple[CheckpointMetadata, dict[str, Any]]) -> None:
    metadata, truth = pair
    file = truth["metadata_file"]
    assert metadata.version == file["version"] == 6
    assert metadata.size == file["size_bytes"]
    assert metadata.trailer_offset == file["checkpoint_properties_trailer_offset"]
    assert metadata.size - metadata.trailer_offset == file["checkpoint_properties_trailer_length"]
    assert metadata.checkpoint_id == truth["checkpoint_id"]
    assert list(metadata.master_states) == truth["master_states"] == []


def test_operators_in_file_order(pair: tuple[CheckpointMetadata, dict[str, Any]]) -> None:
    metadata, truth = pair
    assert len(metadata.operators) == len(truth["operators"])
    for ours, theirs in zip(metadata.operators, truth["operators"], strict=True):
        assert ours.operator_id == theirs["operator_id"]
        assert (ours.name, ours.uid) == (theirs["name"], theirs["uid"])
        assert ours.parallelism == theirs["parallelism"]
        assert ours.max_parallelism == theirs["max_parallelism"]
        assert ours.fully_finished == theirs["fully_finished"]
        assert delegate(ours.coordinator_state) == reported(theirs["coordinator_state"])
        assert [s.index for s in ours.subtasks] == theirs["subtask_order_in_metadata"]
        assert not ours.finished_subtasks
        for subtask, expected in zip(ours.subtasks, theirs["subtasks"], strict=True):
            assert subtask.index == expected["subtask_index"]
            for ours_op, theirs_op in (
                (subtask.managed_operator_state, expected["managed_operator_state"]),
                (subtask.raw_operator_state, expected["raw_operator_state"]),
            ):
                assert ([] if ours_op is None else [operator_state(ours_op)]) == [
                    {
                        "states": {
                            n: {"mode": v["mode"], "offsets": v["offsets"]}
                            for n, v in t["states"].items()
                        },
                        "state_size": t["state_size"],
                        "delegate": reported(t["delegate"]),
                    }
                    for t in theirs_op
                ]
            assert subtask.raw_keyed_state is None
            assert expected["raw_keyed_state"] == []
            assert len(subtask.input_channel_state) == len(expected["input_channel_state"])
            assert len(subtask.result_subpartition_state) == len(
                expected["result_subpartition_state"]
            )
            for merged, theirs_merged in zip(
                (*subtask.input_channel_state, *subtask.result_subpartition_state),
                (*expected["input_channel_state"], *expected["result_subpartition_state"]),
                strict=True,
            ):
                assert isinstance(merged, MergedChannelStateHandle)  # Flink 2.3 always merges
                assert theirs_merged["metadata_tag"] == (3 if merged.input else 4)
                assert merged.subtask == theirs_merged["subtask_index"]
                assert merged.state_size == theirs_merged["state_size"]
                assert delegate(merged.delegate) == reported(theirs_merged["delegate"])
                assert merged.state_size == sum(c.state_size for c in merged.channels)


def test_every_channel_state_handle(pair: tuple[CheckpointMetadata, dict[str, Any]]) -> None:
    metadata, truth = pair
    keys = (
        "operator_id",
        "subtask_index",
        "kind",
        "gate_idx",
        "input_channel_idx",
        "partition_idx",
        "subpartition_idx",
        "offsets",
        "state_size",
    )
    ours = [channel(handle, op.operator_id) for op, handle in metadata.channel_handles()]
    theirs = [
        {**{k: h[k] for k in keys if k in h}, "delegate": reported(h["delegate"])}
        for h in truth["channel_state_handles"]
    ]

    def order(entry: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(str(entry.get(k)) for k in keys)

    assert sorted(ours, key=order) == sorted(theirs, key=order)


def keyed_handles(metadata: CheckpointMetadata) -> list[dict[str, Any]]:
    """Every keyed-state handle in the reports' terms."""
    found = []
    for operator in metadata.operators:
        for subtask in operator.subtasks:
            handle = subtask.managed_keyed_state
            if handle is None:
                continue
            assert isinstance(handle, KeyGroupsStateHandle)
            found.append(
                {
                    "operator_id": operator.operator_id,
                    "subtask_index": subtask.index,
                    "class": "org.apache.flink.runtime.state.KeyGroupsStateHandle",
                    "metadata_tag": handle.tag,
                    "key_group_start": handle.first_key_group,
                    "key_group_end": handle.last_key_group,
                    "key_group_offsets": list(handle.offsets),
                    "state_size": handle.state_size,
                    "state_handle_id": handle.handle_id,
                    "delegate": delegate(handle.delegate),
                }
            )
    return found


def test_every_keyed_state_handle(pair: tuple[CheckpointMetadata, dict[str, Any]]) -> None:
    metadata, truth = pair
    ours = keyed_handles(metadata)
    theirs = [
        {
            **{k: h[k] for k in ours[0] if k != "delegate"},
            "delegate": reported(h["delegate"]),
        }
        for h in truth["keyed_state_handles"]
    ]
    assert ours == theirs
