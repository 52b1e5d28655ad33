"""A ``_metadata`` writer: the reader's model back to Flink's bytes (for the tests and for
``writer``, which makes checkpoints of any size).

Written from the same layout notes as the reader; writing version 6 must reproduce the files
Flink wrote byte for byte (so the two cannot share a mistake unnoticed), and versions 5 and 7,
which no committed checkpoint has, are then written from real models for the reader to read.
"""

from __future__ import annotations

import io
import struct

from flinkstate.flinkcheckpoint.handles import (
    OPERATOR_STATE_MODES,
    ByteStreamStateHandle,
    ChannelStateHandle,
    EmptySegmentFileStateHandle,
    FileStateHandle,
    IncrementalRemoteKeyedStateHandle,
    KeyedStateHandle,
    KeyGroupsStateHandle,
    MergedChannelStateHandle,
    OperatorStateHandle,
    RelativeFileStateHandle,
    SegmentFileStateHandle,
    StreamStateHandle,
)
from flinkstate.flinkcheckpoint.metadata import (
    MAGIC,
    MASTER_STATE_MAGIC,
    CheckpointMetadata,
    OperatorState,
    SubtaskState,
)


class _Out:
    def __init__(self) -> None:
        self.buf = io.BytesIO()

    def u8(self, v: int) -> None:
        self.buf.write(bytes([v]))

    def i32(self, v: int) -> None:
        self.buf.write(struct.pack(">i", v))

    def u32(self, v: int) -> None:
        self.buf.write(struct.pack(">I", v))

    def i64(self, v: int) -> None:
        self.buf.write(struct.pack(">q", v))

    def utf(self, s: str) -> None:
        data = s.encode("utf-8", "surrogatepass").replace(b"\x00", b"\xc0\x80")
        self.buf.write(struct.pack(">H", len(data)) + data)

    def raw(self, b: bytes) -> None:
        self.buf.write(b)


def write_metadata(metadata: CheckpointMetadata, version: int, trailer: bytes) -> bytes:
    """The bytes of a ``_metadata`` file of ``version`` (5, 6 or 7) for ``metadata``, ending with
    ``trailer`` (the Java-serialized ``CheckpointProperties``, which is never parsed).

    Examples
    --------
    What the reader read from a file Flink 2.3.0 wrote is written back byte for byte:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> data = (checkpoint / "_metadata").read_bytes()
    >>> metadata = read_metadata(checkpoint)
    >>> write_metadata(metadata, 6, data[metadata.trailer_offset :]) == data
    True

    Version 5 (Flink 1.15 to 2.2) writes each channel's handle on its own, naming its stream
    again, where version 6 merges the channels of a subtask that share one:

    >>> from flinkstate.flinkcheckpoint.metadata import parse_metadata
    >>> older = write_metadata(metadata, 5, data[metadata.trailer_offset :])
    >>> len(older) - len(data), parse_metadata(older).version
    (136, 5)
    """
    out = _Out()
    out.u32(MAGIC)
    out.i32(version)
    out.i64(metadata.checkpoint_id)
    out.i32(len(metadata.master_states))
    for master in metadata.master_states:
        body = _Out()
        body.i32(master.version)
        body.utf(master.name)
        body.i32(len(master.data))
        body.raw(master.data)
        out.u32(MASTER_STATE_MAGIC)
        out.i32(len(body.buf.getvalue()))
        out.raw(body.buf.getvalue())
    out.i32(len(metadata.operators))
    for operator in metadata.operators:
        _operator(out, operator, version)
    out.raw(trailer)
    return out.buf.getvalue()


def _operator(out: _Out, op: OperatorState, version: int) -> None:
    out.utf(op.name)
    out.utf(op.uid)
    out.raw(bytes.fromhex(op.operator_id))
    out.i32(op.parallelism)
    out.i32(op.max_parallelism)
    _stream(out, op.coordinator_state)
    if op.fully_finished:
        out.i32(-1)
        return
    out.i32(len(op.subtasks) + len(op.finished_subtasks))
    for subtask in op.subtasks:
        out.i32(subtask.index)
        _subtask(out, subtask, version)
    for index in op.finished_subtasks:
        out.i32(-index - 1)


def _subtask(out: _Out, s: SubtaskState, version: int) -> None:
    for operator_handle in (s.managed_operator_state, s.raw_operator_state):
        out.i32(0 if operator_handle is None else 1)
        if operator_handle is not None:
            _operator_handle(out, operator_handle)
    _keyed(out, s.managed_keyed_state)
    _keyed(out, s.raw_keyed_state)
    for handles in (s.input_channel_state, s.result_subpartition_state):
        flat: list[MergedChannelStateHandle | ChannelStateHandle] = list(handles)
        if version < 6:
            flat = [c for h in handles for c in _channels(h)]
        out.i32(len(flat))
        for handle in flat:
            _channel(out, handle, version)
    if version >= 7:
        out.u8(0 if s.ref_checkpoint_id is None else 1)
        if s.ref_checkpoint_id is not None:
            out.i64(s.ref_checkpoint_id)


def _channels(h: MergedChannelStateHandle | ChannelStateHandle) -> tuple[ChannelStateHandle, ...]:
    return h.channels if isinstance(h, MergedChannelStateHandle) else (h,)


def _channel(out: _Out, h: MergedChannelStateHandle | ChannelStateHandle, version: int) -> None:
    if isinstance(h, MergedChannelStateHandle):
        out.u8(3 if h.input else 4)
        out.i32(h.subtask)
        out.i64(h.state_size)
        _stream(out, h.delegate)
        blob = _Out()
        blob.i32(len(h.channels))
        for c in h.channels:
            blob.i32(c.gate_or_partition)
            blob.i32(c.channel_or_subpartition)
            blob.i64(c.state_size)
            blob.i32(len(c.offsets))
            for offset in c.offsets:
                blob.i64(offset)
        data = blob.buf.getvalue()
        out.i32(len(data))
        out.raw(data)
        return
    if version >= 6:
        out.u8(1 if h.input else 2)
    out.i32(h.subtask)
    out.i32(h.gate_or_partition)
    out.i32(h.channel_or_subpartition)
    out.i32(len(h.offsets))
    for offset in h.offsets:
        out.i64(offset)
    out.i64(h.state_size)
    _stream(out, h.delegate)


def _stream(out: _Out, h: StreamStateHandle | None) -> None:
    if h is None:
        out.u8(0)
    elif isinstance(h, ByteStreamStateHandle):
        out.u8(1)
        out.utf(h.name)
        out.i32(len(h.data))
        out.raw(h.data)
    elif isinstance(h, FileStateHandle):
        out.u8(2)
        out.i64(h.size)
        out.utf(h.path)
    elif isinstance(h, RelativeFileStateHandle):
        out.u8(6)
        out.utf(h.relative_path)
        out.i64(h.size)
    elif isinstance(h, SegmentFileStateHandle):
        out.u8(15)
        out.i64(h.start)
        out.i64(h.size)
        out.i32(("EXCLUSIVE", "SHARED").index(h.scope))
        out.utf(h.physical_path)
        out.utf(h.logical_file_id)
    else:
        assert isinstance(h, EmptySegmentFileStateHandle)
        out.u8(16)


def _keyed(out: _Out, h: KeyedStateHandle | None) -> None:
    if h is None:
        out.u8(0)
        return
    assert not isinstance(h, IncrementalRemoteKeyedStateHandle), "not in the test data"
    assert isinstance(h, KeyGroupsStateHandle)
    out.u8(h.tag)
    out.i32(h.first_key_group)
    out.i32(h.last_key_group - h.first_key_group + 1)
    for offset in h.offsets:
        out.i64(offset)
    _stream(out, h.delegate)
    if h.handle_id is not None:
        out.utf(h.handle_id)


def _operator_handle(out: _Out, h: OperatorStateHandle) -> None:
    out.u8(h.tag)
    out.i32(len(h.states))
    for state in h.states:
        out.utf(state.name)
        out.u8(OPERATOR_STATE_MODES.index(state.mode))
        out.i32(len(state.offsets))
        for offset in state.offsets:
            out.i64(offset)
    if h.tag == 17:
        assert h.task_owned_dir is not None
        assert h.shared_dir is not None
        out.utf(h.task_owned_dir)
        out.utf(h.shared_dir)
        out.u8(1 if h.empty else 0)
    _stream(out, h.delegate)
