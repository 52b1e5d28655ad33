"""What the reader does with files that are not what a checkpoint's metadata says: special
files refused before they are opened, sizes held to the metadata, the real error reported."""

from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest

from flinkstate.errors import CheckpointFormatError
from flinkstate.flinkcheckpoint import real_checkpoint
from flinkstate.flinkcheckpoint.channel_state_file import read_channel
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import RelativeFileStateHandle
from flinkstate.flinkcheckpoint.metadata import read_metadata
from flinkstate.flinkcheckpoint.summary import summarize
from tests.flinkcheckpoint.fuzz import copy_checkpoint, make_special


@pytest.fixture
def keyed(tmp_path: Path) -> Path:
    """A copy of keyed-hash-p2-p4 (state files of its own, besides _metadata)."""
    return copy_checkpoint(real_checkpoint("keyed-hash-p2-p4"), tmp_path)


def state_file(chk: Path) -> Path:
    """The first channel-state file the metadata names."""
    for _, handle in read_metadata(chk).channel_handles():
        if isinstance(handle.delegate, RelativeFileStateHandle):
            return chk / handle.delegate.relative_path
    raise AssertionError("no channel-state file")


@pytest.mark.parametrize(
    ("kind", "found"),
    [
        ("fifo", "found a FIFO"),
        ("dev-zero", "found a character device"),
        ("symlink-loop", "Too many levels of symbolic links"),
        ("directory", "found a directory"),
    ],
)
@pytest.mark.parametrize("which", ["_metadata", "state file"])
def test_special_files_are_refused_before_they_are_read(
    keyed: Path, which: str, kind: str, found: str
) -> None:
    target = keyed / "_metadata" if which == "_metadata" else state_file(keyed)
    make_special(target, kind)
    started = time.monotonic()
    with pytest.raises(CheckpointFormatError, match=found) as raised:
        summarize(keyed)
    assert time.monotonic() - started < 10  # a FIFO opened for reading would block forever
    assert target.name in str(raised.value)


def test_a_huge_sparse_metadata_file_costs_only_what_is_read(keyed: Path) -> None:
    """3 GiB of zeros: mapped, not read whole; the magic number is wrong at byte 0."""
    with (keyed / "_metadata").open("r+b") as out:
        out.truncate(3 << 30)
        out.seek(0)
        out.write(b"\0" * 8)
    with pytest.raises(CheckpointFormatError, match="at byte 0: expected the checkpoint metadata"):
        read_metadata(keyed)


def test_a_truncated_state_file_reports_its_own_error_not_a_buffer_error(keyed: Path) -> None:
    """Closing the mapped files while the error's traceback still holds a view of one used to
    raise ``BufferError: cannot close exported pointers exist`` instead of the real error."""
    path = state_file(keyed)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])
    with pytest.raises(CheckpointFormatError) as raised:
        summarize(keyed)
    assert path.name in str(raised.value)
    assert "bytes the checkpoint's metadata gives this file" in str(raised.value)


def test_a_state_file_of_another_size_than_its_handle_says_is_refused(keyed: Path) -> None:
    path = state_file(keyed)
    path.write_bytes(path.read_bytes() + b"\0" * 10)
    size = path.stat().st_size
    with pytest.raises(CheckpointFormatError, match=f"found {size}"):
        summarize(keyed)


def test_a_chunk_length_changed_in_a_state_file_is_caught_twice(keyed: Path) -> None:
    """A chunk length shrunk by one used to pass with only "1 channel(s) end inside a
    record". The whole checkpoint's read finds the byte no chunk covers (Flink writes a
    stream's chunks back to back); one channel read alone finds its chunks no longer add up
    to the handle's declared state size."""
    metadata = read_metadata(keyed)
    handle = next(
        h
        for _, h in metadata.channel_handles()
        if isinstance(h.delegate, RelativeFileStateHandle) and h.offsets
    )
    assert isinstance(handle.delegate, RelativeFileStateHandle)
    path = keyed / handle.delegate.relative_path
    data = bytearray(path.read_bytes())
    (length,) = struct.unpack_from(">i", data, handle.offsets[0])
    struct.pack_into(">i", data, handle.offsets[0], length - 1)
    path.write_bytes(bytes(data))
    end = handle.offsets[0] + 4 + length - 1
    with pytest.raises(CheckpointFormatError, match=f"found bytes {end} to {end + 1} in no"):
        summarize(keyed)
    with (
        StateFiles(keyed) as files,
        pytest.raises(CheckpointFormatError, match="to be its declared state size"),
    ):
        read_channel(handle, files)


def test_closing_with_a_view_still_alive_keeps_the_error_being_raised(keyed: Path) -> None:
    handle = next(
        h.delegate
        for _, h in read_metadata(keyed).channel_handles()
        if isinstance(h.delegate, RelativeFileStateHandle)
    )
    assert handle is not None

    def fail_while_a_view_is_alive() -> None:
        with StateFiles(keyed) as files:
            alive = files.stream(handle)[4:8]  # a slice of the map, as decoders hold them
            raise CheckpointFormatError(str(keyed), 4, f"the real problem ({len(alive)} bytes)")

    with pytest.raises(CheckpointFormatError, match="the real problem"):
        fail_while_a_view_is_alive()
