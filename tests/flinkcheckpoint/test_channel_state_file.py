"""Channel-state chunks and the records in them agree with Flink's own reading of the same
checkpoints (every chunk's offset and length; every stitched channel's decoded records)."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from flinkstate.errors import CheckpointFormatError, StoredPathError
from flinkstate.flinkcheckpoint import real_checkpoint
from flinkstate.flinkcheckpoint.channel_state_file import (
    check_chunks,
    read_channel,
    read_channels,
)
from flinkstate.flinkcheckpoint.export import ExchangeSpec, to_dataset
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import (
    ByteStreamStateHandle,
    ChannelStateHandle,
    MergedChannelStateHandle,
)
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, read_metadata
from flinkstate.flinkcheckpoint.stream_element import ElementTag, decode, value_decoder
from flinkstate.flinkcheckpoint.summary import summarize
from tests.flinkcheckpoint.fuzz import copy_checkpoint, rewrite_metadata
from tests.flinkcheckpoint.fuzz.repoint import channel_places, replaced
from tests.flinkcheckpoint.test_metadata import CHECKPOINTS, ground_truth

TUPLE = value_decoder("Tuple2<Long,String>")


def _handles(metadata: CheckpointMetadata) -> dict[tuple[object, ...], ChannelStateHandle]:
    return {
        (op.uid, h.subtask, h.kind, h.gate_or_partition, h.channel_or_subpartition): h
        for op, h in metadata.channel_handles()
    }


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_every_chunk_where_flink_read_it(checkpoint: Path) -> None:
    metadata, truth = read_metadata(checkpoint), ground_truth(checkpoint)
    handles = _handles(metadata)
    with StateFiles(checkpoint) as files:
        for entry in truth["channel_state_handles"]:
            first = entry.get("gate_idx", entry.get("partition_idx"))
            second = entry.get("input_channel_idx", entry.get("subpartition_idx"))
            key = (entry["operator_uid"], entry["subtask_index"], entry["kind"], first, second)
            data = read_channel(handles[key], files)
            assert [(c.offset, c.length) for c in data.chunks] == [
                (c["offset"], c["length"]) for c in entry["chunks"]
            ]
            assert data.size == entry["data_bytes"]


def _stats(records: list[Any], consumed: int, trailing: int) -> dict[str, Any]:
    seqs = [r.value[0] for r in records]
    return {
        "num_complete_elements": len(records),
        "records_with_timestamp_tag0": sum(r.tag == ElementTag.RECORD for r in records),
        "first_seq": seqs[0] if seqs else None,
        "last_seq": seqs[-1] if seqs else None,
        "seq_sum": (sum(seqs) + 2**63) % 2**64 - 2**63,  # a Java long: the report's sum wraps
        "payload_chars_total": sum(len(r.value[1]) for r in records),
        "min_record_length": min((r.length for r in records), default=None),
        "max_record_length": max((r.length for r in records), default=None),
        "bytes_consumed": consumed,
        "trailing_partial_bytes": trailing,
    }


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_stitched_channels_decode_to_flinks_records(checkpoint: Path) -> None:
    """A logical channel's input state (downstream) followed by its output state (upstream)
    is a clean run of whole records, one of them split between the two in places."""
    metadata, truth = read_metadata(checkpoint), ground_truth(checkpoint)
    handles = _handles(metadata)
    assert truth["stitched_channels"]
    with StateFiles(checkpoint) as files:
        for channel in truth["stitched_channels"]:
            parts = []
            for key in (
                (
                    channel["downstream_uid"],
                    channel["downstream_subtask"],
                    "input",
                    channel["gate_idx"],
                    channel["input_channel_idx"],
                ),
                (
                    channel["upstream_uid"],
                    channel["upstream_subtask"],
                    "output",
                    channel["partition_idx"],
                    channel["subpartition_idx"],
                ),
            ):
                handle = handles.get(key)
                parts.append(b"" if handle is None else read_channel(handle, files).data)
            assert [len(p) for p in parts] == [
                channel["input_state_bytes"],
                channel["output_state_bytes"],
            ]
            data = b"".join(parts)
            decoded = decode(data, TUPLE)
            expected = channel["decode"]
            consumed = len(data) - decoded.trailing
            ours = _stats(list(decoded.elements), consumed, decoded.trailing)
            assert ours == {k: expected[k] for k in ours}
            for record, first in zip(decoded.elements, expected["first_records"], strict=False):
                assert record.offset == first["element_offset"]
                assert record.timestamp == first["timestamp"]
                assert record.value[1].startswith(first["payload_prefix"])


def test_a_chunk_offset_past_the_end_is_named(tmp_path: Path) -> None:
    checkpoint = next(p for p in CHECKPOINTS if "nothreshold" in str(p))
    metadata = read_metadata(checkpoint)
    handle = next(h for _, h in metadata.channel_handles() if h.offsets)
    broken = ChannelStateHandle(
        handle.input,
        handle.subtask,
        handle.gate_or_partition,
        handle.channel_or_subpartition,
        (10**9,),
        handle.state_size,
        handle.delegate,
    )
    with (
        StateFiles(checkpoint) as files,
        pytest.raises(
            CheckpointFormatError, match="at byte 1000000000: expected a chunk length inside"
        ),
    ):
        read_channel(broken, files)


def test_a_missing_state_file_is_named(tmp_path: Path) -> None:
    checkpoint = next(p for p in CHECKPOINTS if "nothreshold" in str(p))
    copy = tmp_path / checkpoint.parent.name / checkpoint.name
    copy.mkdir(parents=True)
    (copy / "_metadata").write_bytes((checkpoint / "_metadata").read_bytes())
    metadata = read_metadata(copy)
    handle = next(h for _, h in metadata.channel_handles() if h.offsets)
    with (
        StateFiles(copy) as files,
        pytest.raises(CheckpointFormatError, match="a state file the checkpoint's metadata names"),
    ):
        read_channel(handle, files)


def test_absolute_paths_follow_a_moved_checkpoint(tmp_path: Path) -> None:
    """File-merging segments are stored by absolute path: a copy under another name opens
    with a prefix mapping, and without one names the file it cannot find."""
    checkpoint = next(p for p in CHECKPOINTS if "filemerging" in str(p))
    job = checkpoint.parent
    moved = tmp_path / "elsewhere"
    shutil.copytree(job, moved)
    metadata = read_metadata(moved / checkpoint.name)
    handle = next(h for _, h in metadata.channel_handles() if h.offsets)
    stored = f"/flink-checkpoints/{job.parent.name}/{job.name}"
    # the message gives the mapping to pass: the job's folder as written, and where it is now
    hint = re.escape(f"on the command line --reroot {stored}={moved}, in Python reroot=")
    with (
        StateFiles(moved / checkpoint.name) as files,
        pytest.raises(CheckpointFormatError, match=hint),
    ):
        read_channel(handle, files)
    with (
        StateFiles(moved / checkpoint.name, reroot={stored: str(moved)}) as files,
        StateFiles(checkpoint) as original,
    ):
        assert read_channel(handle, files).data == read_channel(handle, original).data


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_handles_read_together_are_read_as_one_by_one(checkpoint: Path) -> None:
    handles = [h for _, h in read_metadata(checkpoint).channel_handles()]
    with StateFiles(checkpoint) as files:
        assert read_channels(handles, files) == [read_channel(h, files) for h in handles]
        assert read_channels([], files) == []


def _changed(handle: ChannelStateHandle, **changes: Any) -> ChannelStateHandle:
    fields = {
        name: getattr(handle, name)
        for name in (
            "input",
            "subtask",
            "gate_or_partition",
            "channel_or_subpartition",
            "offsets",
            "state_size",
            "delegate",
        )
    }
    return ChannelStateHandle(**{**fields, **changes})


@pytest.mark.parametrize(
    "change",
    [
        {"offsets": (10**9,)},  # a chunk past the stream's end
        {"offsets": (2,)},  # a chunk inside the version header
        {"state_size": 1},  # not the size its chunks cover
        {"delegate": None},  # offsets without a stream
    ],
    ids=["past-end", "in-header", "size", "no-stream"],
)
def test_a_bad_handle_among_many_gets_its_own_error(change: dict[str, Any]) -> None:
    checkpoint = next(p for p in CHECKPOINTS if "nothreshold" in str(p))
    handles = [h for _, h in read_metadata(checkpoint).channel_handles() if h.offsets]
    bad = _changed(handles[1], **change)
    with StateFiles(checkpoint) as files:
        with pytest.raises(CheckpointFormatError) as alone:
            read_channel(bad, files)
        with pytest.raises(CheckpointFormatError) as together:
            read_channels([handles[0], bad, *handles[2:]], files)
    assert str(together.value) == str(alone.value)


# -- stored paths: nothing outside the checkpoint's folders is opened (issue 46) -------------


def _relative_handle(name: str) -> tuple[Path, ChannelStateHandle]:
    """A channel handle of a committed checkpoint whose file is stored by relative path."""
    import dataclasses

    from flinkstate.flinkcheckpoint.handles import RelativeFileStateHandle

    for checkpoint in CHECKPOINTS:
        for _, handle in read_metadata(checkpoint).channel_handles():
            delegate = getattr(handle, "delegate", None)
            if isinstance(delegate, RelativeFileStateHandle) and handle.offsets:
                moved = dataclasses.replace(delegate, relative_path=name)
                return checkpoint, _changed(handle, delegate=moved)
    raise AssertionError("no committed checkpoint stores a channel file by relative path")


@pytest.mark.parametrize(
    "name", ["../../../../etc/hostname", "/etc/hostname", "shared/x", "..", ""]
)
def test_a_relative_path_stays_inside_the_checkpoints_folder(name: str) -> None:
    checkpoint, handle = _relative_handle(name)
    with StateFiles(checkpoint) as files, pytest.raises(StoredPathError) as refused:
        read_channel(handle, files)
    assert "is not a file name inside the checkpoint's folder" in str(refused.value)
    assert str(refused.value).startswith(f"{checkpoint / '_metadata'}: the state file path ")


def test_an_absolute_path_outside_the_job_folder_is_never_opened(tmp_path: Path) -> None:
    """``/etc/hostname`` exists on every machine: it is refused by where it is, not found or
    opened (its size used to be shown in the error)."""
    checkpoint = next(p for p in CHECKPOINTS if "filemerging" in str(p))
    with StateFiles(checkpoint) as files:
        for stored, reason in [
            ("file:/etc/hostname", "is outside the checkpoint's job folder"),
            (f"file:/flink-checkpoints/{checkpoint.parent.name}/../../etc/hostname", "'..'"),
        ]:
            with pytest.raises(StoredPathError, match=re.escape(reason)) as refused:
                files.local_path(stored)
            assert "bytes" not in str(refused.value)
    # a folder the user maps with --reroot is theirs to name, wherever it is
    (tmp_path / "state").write_bytes(b"x")
    with StateFiles(checkpoint, reroot={"/elsewhere": str(tmp_path)}) as files:
        assert files.local_path("file:/elsewhere/state") == tmp_path / "state"


def shared_chunk(metadata: CheckpointMetadata, within: bool) -> CheckpointMetadata:
    """``to-record`` subtask 0's merged output handle with subpartition 1 naming subpartition
    0's chunks (``within``: subpartition 0 naming its own first chunk twice), every state size
    kept consistent so that only the shared bytes are wrong."""
    to_record = metadata.operator("to-record")
    subtask = to_record.subtasks[0]
    (merged,) = subtask.result_subpartition_state
    assert isinstance(merged, MergedChannelStateHandle)
    first, second, *rest = merged.channels
    if within:
        chunk = 4 + 4096  # its first chunk: a 4 KiB buffer and its length prefix
        first = dataclasses.replace(
            first, offsets=(first.offsets[0], *first.offsets), state_size=first.state_size + chunk
        )
    else:
        second = dataclasses.replace(second, offsets=first.offsets, state_size=first.state_size)
    channels = (first, second, *rest)
    merged = dataclasses.replace(
        merged, channels=channels, state_size=sum(c.state_size for c in channels)
    )
    subtasks = (dataclasses.replace(subtask, result_subpartition_state=(merged,)),)
    changed = dataclasses.replace(to_record, subtasks=subtasks + to_record.subtasks[1:])
    return dataclasses.replace(
        metadata,
        operators=tuple(changed if o is to_record else o for o in metadata.operators),
    )


@pytest.mark.parametrize("within", [False, True])
def test_a_chunk_named_twice_is_a_format_error(tmp_path: Path, within: bool) -> None:
    chk = copy_checkpoint(real_checkpoint("keyed-hash-p2-p4"), tmp_path)
    rewrite_metadata(chk, lambda m: shared_chunk(m, within))
    twice = "0/0" if within else "0/1"
    message = (
        r"at byte 4: expected chunks each named by one handle once, found the chunk at 4 of "
        rf"to-record's output handle of subtask 0, 0/0 and the chunk at 4 of to-record's "
        rf"output handle of subtask 0, {twice} sharing bytes"
    )
    with pytest.raises(CheckpointFormatError, match=message):
        summarize(chk)
    key = key_function("f0%1000", "Tuple2<Long,String>")
    with pytest.raises(CheckpointFormatError, match=message):
        to_dataset(
            chk,
            {"to-record->slow-counter": ExchangeSpec("keyBy", key)},
            value=value_decoder("Tuple2<Long,String>"),
        )


def test_overlapping_chunks_are_a_format_error() -> None:
    # a stream whose chunk at 4 holds 8 bytes, the first four of them 0: read at 8, they
    # are a chunk of its own, inside the first; found only from the chunks' lengths
    stream = ByteStreamStateHandle(
        "crafted", bytes(4) + (8).to_bytes(4, "big") + bytes(4) + b"abcd"
    )
    whole = ChannelStateHandle(True, 0, 0, 0, (4,), 16, stream)
    inside = dataclasses.replace(whole, channel_or_subpartition=1, offsets=(8,), state_size=8)
    chk = real_checkpoint("keyed-hash-p2-p4")
    with StateFiles(chk) as files:
        assert read_channel(whole, files).data == bytes(4) + b"abcd"
        assert read_channel(inside, files).data == b""
        check_chunks([("map", whole)], files)
        with pytest.raises(CheckpointFormatError) as refused:
            check_chunks([("map", whole), ("map", inside)], files)
    assert str(refused.value) == (
        "inline bytes 'crafted' in _metadata: at byte 8: expected chunks each named by one "
        "handle once, found the chunk at 4 of map's input handle of subtask 0, 0/0 and the "
        "chunk at 8 of map's input handle of subtask 0, 0/1 sharing bytes"
    )


def inside_own_chunk(
    metadata: CheckpointMetadata, files: StateFiles, name: str
) -> tuple[CheckpointMetadata, int]:
    """The single-chunk channel handle ``name`` pointed inside its own chunk, at the first
    byte past its length prefix where a length that ends inside the chunk can be read (its
    state size following it): no other handle names those bytes, but the bytes before are in
    no handle's chunk. The new metadata and the new offset."""
    places = {n: (place, handle) for place, n, handle in channel_places(metadata)}
    place, handle = places[name]
    assert handle.delegate is not None
    (start,) = handle.offsets
    stream = files.stream(handle.delegate)
    end = start + 4 + int.from_bytes(stream[start : start + 4], "big")
    for offset in range(start + 5, end - 4):
        length = int.from_bytes(stream[offset : offset + 4], "big", signed=True)
        if 0 <= length <= end - offset - 4:
            moved = dataclasses.replace(handle, offsets=(offset,), state_size=4 + length)
            return replaced(metadata, place, moved), offset
    raise AssertionError(f"no length to point at in {name}'s chunk")


@pytest.mark.parametrize(
    ("variant", "name", "described"),
    [
        ("keyed-hash-p2-p4-allinline", "slow-counter[1] input 0/1", "subtask 1, 0/1"),
        ("keyed-hash-p2-p4-nothreshold", "slow-counter[2] input 0/0", "subtask 2, 0/0"),
    ],
    ids=["inlined", "file"],
)
def test_bytes_in_no_handles_chunk_are_a_format_error(
    tmp_path: Path, variant: str, name: str, described: str
) -> None:
    """A handle pointed inside its own chunk (found by the fuzzer: the reader took the
    bytes from there on as the channel's, fewer records, without a word) leaves the bytes
    before in no chunk; Flink writes a stream's chunks back to back."""
    chk = copy_checkpoint(real_checkpoint(variant), tmp_path)
    with StateFiles(chk) as files:
        changed, offset = inside_own_chunk(read_metadata(chk), files, name)
    rewrite_metadata(chk, lambda _: changed)
    message = (
        rf"at byte 4: expected chunks back to back from the stream's 4-byte header to its end, "
        rf"as Flink writes them, found bytes 4 to {offset} in no handle's chunk, before the "
        rf"chunk at {offset} of slow-counter's input handle of {described}$"
    )
    with pytest.raises(CheckpointFormatError, match=message):
        summarize(chk)
    key = key_function("f0%1000", "Tuple2<Long,String>")
    with pytest.raises(CheckpointFormatError, match=message):
        to_dataset(chk, {"to-record->slow-counter": ExchangeSpec("keyBy", key)}, value=TUPLE)


def test_a_stream_an_earlier_checkpoint_wrote_may_hold_chunks_no_handle_names() -> None:
    """A subtask that reuses an earlier checkpoint's state (metadata version 7) names chunks
    of that checkpoint's stream, whose other chunks this checkpoint need not name."""
    checkpoint = real_checkpoint("keyed-hash-p2-p4")
    handles = [(op.label, h) for op, h in read_metadata(checkpoint).channel_handles()]
    delegate = handles[0][1].delegate
    assert delegate is not None
    with StateFiles(checkpoint) as files:
        with pytest.raises(CheckpointFormatError, match="in no handle's chunk"):
            check_chunks(handles[:1], files)
        check_chunks(handles[:1], files, reused={delegate})
