"""Spill files, their reference count and the drainer's cut, against the values of Flink's own
tests (AbstractSpillingHandlerTest, FetchedChannelStateTest, FetchedChannelStateDrainerTest,
FetchedChannelStateReaderTest) and properties over arbitrary appends."""

from __future__ import annotations

from collections import defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flinkstate.errors import InvalidParameterError
from flinkstate.memory_segment import LENGTH_PREFIX_BYTES
from flinkstate.runtime.buffer.records import Fragment
from flinkstate.runtime.checkpoint.channel.fetched_channel_state import (
    DEFAULT_MAX_SEGMENT_SIZE,
    DEFAULT_SPILL_FILE_SIZE,
    EMPTY_SNAPSHOT,
    SEGMENT_HEADER_BYTES,
    DrainCursor,
    FetchedChannelState,
    FetchedChannelStateSnapshot,
    SpillWriter,
    cut,
    drain_sizes,
)
from flinkstate.runtime.checkpoint.checkpoint import InputChannelInfo

_ids = iter(range(1_000_000))


def record(payload: int) -> Fragment:
    """A whole record as the filtering handler writes it: length prefix and payload."""
    total = LENGTH_PREFIX_BYTES + payload
    return Fragment(next(_ids), 0, total, total)


def test_flink_defaults() -> None:
    assert SEGMENT_HEADER_BYTES == 3 * 4
    assert DEFAULT_SPILL_FILE_SIZE == 64 * 1024 * 1024
    assert DEFAULT_MAX_SEGMENT_SIZE == 1024 * 1024


def test_channel_switch_produces_two_segments_in_one_file() -> None:
    writer = SpillWriter()
    writer.append(InputChannelInfo(0, 0), [record(2)])
    writer.append(InputChannelInfo(0, 1), [record(3)])
    state = writer.close()
    assert state is not None
    assert len(state.files) == 1
    assert state.files[0].size == (SEGMENT_HEADER_BYTES + 4 + 2) + (SEGMENT_HEADER_BYTES + 4 + 3)
    assert [s.channel for s in state.segments] == [InputChannelInfo(0, 0), InputChannelInfo(0, 1)]


def test_same_channel_records_merge_into_one_segment() -> None:
    writer = SpillWriter()
    channel = InputChannelInfo(0, 0)
    for payload in (1, 2, 3):
        writer.append(channel, [record(payload)])
    state = writer.close()
    assert state is not None
    assert len(state.segments) == 1
    assert state.files[0].size == SEGMENT_HEADER_BYTES + 3 * 4 + (1 + 2 + 3)


def test_same_channel_is_split_when_the_segment_bound_is_exceeded() -> None:
    writer = SpillWriter(max_segment_size=8)
    channel = InputChannelInfo(0, 0)
    for _ in range(3):
        writer.append(channel, [record(8)])
    state = writer.close()
    assert state is not None
    assert len(state.files) == 1
    assert state.files[0].size == 3 * (SEGMENT_HEADER_BYTES + 4 + 8)
    assert len(state.segments) == 3


def test_pass_through_bytes_keep_their_fragments() -> None:
    """The non-filtering handler appends a buffer's bytes verbatim, partial records too."""
    writer = SpillWriter()
    partial = Fragment(7, 3, 5, 20)
    writer.append(InputChannelInfo(1, 2), [partial])
    state = writer.close()
    assert state is not None
    assert state.files[0].size == SEGMENT_HEADER_BYTES + 5
    assert state.segments[0].fragments == (partial,)


def test_an_open_segment_without_body_produces_no_file() -> None:
    writer = SpillWriter()
    writer.append(InputChannelInfo(0, 0), [])
    assert writer.close() is None
    assert writer.dropped_segments == 1


def test_empty_segments_around_a_non_empty_one_produce_exactly_it() -> None:
    writer = SpillWriter()
    writer.append(InputChannelInfo(0, 0), [])
    writer.append(InputChannelInfo(0, 1), [record(3)])
    writer.append(InputChannelInfo(0, 2), [])
    state = writer.close()
    assert state is not None
    assert len(state.files) == 1
    assert state.files[0].size == SEGMENT_HEADER_BYTES + 4 + 3


def test_an_empty_append_between_two_of_one_channel_splits_its_segment() -> None:
    """Flink opens the next channel's segment before it filters, so a buffer whose records are
    all dropped still seals the previous segment."""
    writer = SpillWriter()
    writer.append(InputChannelInfo(0, 0), [record(1)])
    writer.append(InputChannelInfo(0, 1), [])
    writer.append(InputChannelInfo(0, 0), [record(1)])
    state = writer.close()
    assert state is not None
    assert [s.channel for s in state.segments] == [InputChannelInfo(0, 0)] * 2


def test_rotation_gives_one_file_per_segment_when_the_bound_is_tiny() -> None:
    writer = SpillWriter(max_file_size=1)
    for channel, payload in ((0, 1), (1, 2), (2, 1)):
        writer.append(InputChannelInfo(0, channel), [record(payload)])
    state = writer.close()
    assert state is not None
    assert len(state.files) == 3
    assert all(f.size > 0 for f in state.files)
    assert [f.name for f in state.files] == [f"spill-segment-{i}.bin" for i in range(3)]


def test_files_rotate_only_between_segments() -> None:
    writer = SpillWriter(max_file_size=40, max_segment_size=100)
    for i in range(6):
        writer.append(InputChannelInfo(0, i % 2), [record(30)])
    state = writer.close()
    assert state is not None
    for spill in state.files:
        # a file is closed once it reached the bound, never in the middle of a segment
        assert all(s.file == spill.index for s in spill.segments)
        assert sum(s.size for s in spill.segments[:-1]) < 40
    assert sum(f.size for f in state.files) == 6 * (SEGMENT_HEADER_BYTES + 34)


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="max_file_size"):
        SpillWriter(max_file_size=0)
    with pytest.raises(InvalidParameterError, match="max_segment_size"):
        SpillWriter(max_segment_size=-1)


def test_the_open_segment_is_what_the_heap_holds() -> None:
    writer = SpillWriter(max_segment_size=99)
    channel = InputChannelInfo(0, 0)
    writer.append(channel, [record(40)])
    assert writer.heap_bytes == SEGMENT_HEADER_BYTES + 44
    writer.append(channel, [record(40)])  # 56 bytes <= 99: appended to the open segment
    writer.append(channel, [record(40)])  # 100 bytes > 99: sealed, a new one opened
    assert writer.heap_bytes == SEGMENT_HEADER_BYTES + 44
    assert writer.heap_peak == SEGMENT_HEADER_BYTES + 88
    writer.close()
    assert writer.heap_bytes == 0


# -- FetchedChannelStateTest: the reference count


def _state() -> FetchedChannelState:
    writer = SpillWriter()
    writer.append(InputChannelInfo(0, 0), [record(10)])
    state = writer.close()
    assert state is not None
    return state


def test_the_fetch_holds_one_reference_and_files_survive_until_the_last_release() -> None:
    state = _state()
    assert state.references == 1
    state.acquire()
    assert not state.release()
    assert not state.deleted
    assert state.release()
    assert state.deleted
    assert state.deletions == 1


def test_close_deletes_once_and_is_idempotent() -> None:
    state = _state()
    state.acquire()
    assert state.close()
    assert not state.close()
    assert state.deletions == 1
    # a late release after a forced close deletes nothing more
    assert not state.release()
    assert not state.release()
    assert state.deletions == 1


def test_a_release_after_zero_is_a_no_op() -> None:
    state = _state()
    assert state.release()
    assert not state.release()
    assert state.deletions == 1


def test_a_failed_fetch_deletes_its_directory_once_whatever_was_sealed() -> None:
    """FLINK-40520: a fetch that fails deletes its handler's spill directory, with the files
    written so far (the open file too), whether their state was built or not."""
    writer = SpillWriter(max_file_size=1)
    assert writer.file_count == 0
    writer.append(InputChannelInfo(0, 0), [record(2)])
    assert writer.file_count == 0  # the open segment is on the heap: no file yet
    writer.append(InputChannelInfo(0, 1), [record(3)])
    assert writer.file_count == 1  # sealing the first segment opened the first file
    writer.append(InputChannelInfo(0, 0), [record(4)])
    assert writer.file_count == 2  # the bound of one byte rotates after every segment
    copy = writer.copy()
    assert writer.delete_directory() == 2
    assert writer.deleted
    assert writer.delete_directory() == 0
    assert not copy.deleted  # a copy keeps its own
    state = copy.close()
    assert state is not None
    assert copy.file_count == len(state.files) == 3
    assert copy.delete_directory() == 3


# -- FetchedChannelStateDrainerTest: buffers filled from a segment


def test_drain_sizes_follow_flinks_drainer_test() -> None:
    assert drain_sizes(50, 16) == [16, 16, 16, 2]
    assert drain_sizes(48, 16) == [16, 16, 16]
    assert drain_sizes(0, 16) == []
    with pytest.raises(InvalidParameterError):
        drain_sizes(10, 0)


def test_cursor_delivers_a_segment_in_buffers_and_never_mixes_segments() -> None:
    writer = SpillWriter()
    writer.append(InputChannelInfo(0, 0), [record(46)])  # a 50-byte body
    writer.append(InputChannelInfo(0, 1), [record(8)])
    state = writer.close()
    assert state is not None
    cursor = DrainCursor()
    delivered = []
    while (step := cursor.next_buffer(state, 16)) is not None:
        channel, fragments = step
        length = sum(f.length for f in fragments)
        delivered.append((channel.channel, length))
        cursor.commit(state, length)
    assert delivered == [(0, 16), (0, 16), (0, 16), (0, 2), (1, 12)]
    assert cursor.finished(state)


def test_snapshots_at_a_header_and_inside_a_body() -> None:
    writer = SpillWriter()
    writer.append(InputChannelInfo(0, 0), [record(46)])
    writer.append(InputChannelInfo(0, 1), [record(8)])
    state = writer.close()
    assert state is not None
    cursor = DrainCursor()
    assert cursor.snapshot(state) == FetchedChannelStateSnapshot(0, 0, None, 0)
    cursor.commit(state, 16)
    inside = cursor.snapshot(state)
    assert inside == FetchedChannelStateSnapshot(
        0, SEGMENT_HEADER_BYTES + 16, InputChannelInfo(0, 0), 34
    )
    chunks = inside.remaining_slice(state)
    assert [(c.channel, sum(f.length for f in fs)) for c, fs in chunks] == [(0, 34), (1, 12)]
    for _ in range(2):
        cursor.commit(state, 16)
    cursor.commit(state, 2)
    at_header = cursor.snapshot(state)
    assert at_header == FetchedChannelStateSnapshot(0, SEGMENT_HEADER_BYTES + 50, None, 0)
    assert [c.channel for c, _ in at_header.remaining_slice(state)] == [1]
    cursor.commit(state, 12)
    assert cursor.snapshot(state).remaining_slice(state) == ()
    assert EMPTY_SNAPSHOT.remaining_slice(state) == ()


def test_a_snapshot_needs_channel_and_remaining_together() -> None:
    with pytest.raises(InvalidParameterError, match="set together"):
        FetchedChannelStateSnapshot(0, 12, InputChannelInfo(0, 0), 0)
    with pytest.raises(InvalidParameterError, match="set together"):
        FetchedChannelStateSnapshot(0, 12, None, 5)


def test_cut_splits_records_at_any_byte() -> None:
    run = (Fragment(1, 0, 10, 10), Fragment(2, 0, 6, 6))
    assert cut(run, 0, 16) == run
    assert cut(run, 8, 4) == (Fragment(1, 8, 2, 10), Fragment(2, 0, 2, 6))
    assert cut(run, 10, 6) == (Fragment(2, 0, 6, 6),)
    assert cut(run, 3, 0) == ()


# -- properties over arbitrary appends

appends = st.lists(
    st.tuples(st.integers(0, 3), st.lists(st.integers(0, 120), max_size=4)), max_size=30
)


@given(
    appends,
    st.integers(1, 400),
    st.integers(1, 300),
    st.integers(1, 64),
    st.data(),
)
def test_drained_and_sliced_bytes_are_the_appended_bytes_per_channel(
    plan: list[tuple[int, list[int]]],
    max_file: int,
    max_segment: int,
    capacity: int,
    data: st.DataObject,
) -> None:
    writer = SpillWriter(max_file_size=max_file, max_segment_size=max_segment)
    written: dict[int, list[Fragment]] = defaultdict(list)
    for channel, payloads in plan:
        fragments = [record(p) for p in payloads]
        writer.append(InputChannelInfo(0, channel), fragments)
        written[channel].extend(fragments)
    state = writer.close()
    expected = {c: sum(f.length for f in fs) for c, fs in written.items() if fs}
    if state is None:
        assert not expected
        return
    assert all(s.body_length > 0 for s in state.segments)
    assert state.size == writer.bytes_written
    # drain part of it, cut a checkpoint there, and drain the rest
    cursor = DrainCursor()
    delivered: dict[int, list[Fragment]] = defaultdict(list)
    stop = data.draw(st.integers(0, 200))
    snapshot_slice = None
    steps = 0
    while True:
        if steps == stop:
            snapshot = cursor.snapshot(state)
            snapshot_slice = snapshot.remaining_slice(state)
            before = {c: list(fs) for c, fs in delivered.items()}
        step = cursor.next_buffer(state, capacity)
        if step is None:
            break
        channel, fragments = step
        length = sum(f.length for f in fragments)
        assert 0 < length <= capacity
        delivered[channel.channel].extend(fragments)
        cursor.commit(state, length)
        steps += 1
    for channel, fragments in written.items():
        assert _bytes(delivered[channel]) == _bytes(fragments)
    if snapshot_slice is not None:
        # what was delivered before the cut plus the slice is everything, nothing twice
        combined = {c: list(fs) for c, fs in before.items()}
        for info, fragments in snapshot_slice:
            combined.setdefault(info.channel, []).extend(fragments)
        for channel, fragments in written.items():
            assert _bytes(combined.get(channel, [])) == _bytes(fragments)


def _bytes(fragments: list[Fragment]) -> list[tuple[int, int]]:
    """Every byte as (record, offset): comparable however the run was cut into fragments."""
    return [(f.record, f.start + i) for f in fragments for i in range(f.length)]
