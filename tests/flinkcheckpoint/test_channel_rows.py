"""A logical channel's dataset rows computed with numpy (``channel_rows``) are the rows the
single-process export writes, on every committed real checkpoint."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.channel_rows import (
    ChannelKeying,
    ChannelName,
    ChannelRead,
    ChannelSide,
    buffer_batch,
    buffer_rows,
    fragment_batch,
    fragment_rows,
)
from flinkstate.flinkcheckpoint.channel_state_file import ChannelData, Chunk, read_channel
from flinkstate.flinkcheckpoint.export import ExchangeSpec, to_dataset
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import ChannelStateHandle
from flinkstate.flinkcheckpoint.inflight import LogicalChannel, exchange_name, logical_channels
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, read_metadata
from flinkstate.flinkcheckpoint.record_columns import batch_columns
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.javahash import JavaType
from flinkstate.keygroups import (
    KeyGroupRange,
    assign_to_key_group,
    compute_key_group_range_for_operator_index,
)
from tests.flinkcheckpoint.test_metadata import CHECKPOINTS

TYPE = "Tuple2<Long,String>"


def _key(checkpoint: Path) -> str | None:
    return None if "rebalance" in checkpoint.parents[1].name else "f0%1000"


def _channel(
    metadata: CheckpointMetadata, files: StateFiles, channel: LogicalChannel, key: str | None
) -> tuple[list[ChannelSide], ChannelName, ChannelKeying | None]:
    """A logical channel's sides (input first), its name, and how its records are keyed."""
    edge = channel.edge
    sides = [
        ChannelSide(side, operator, read_channel(handle, files))
        for side, operator, handle in (
            ("input", edge.downstream, channel.input),
            ("output", edge.upstream, channel.output),
        )
        if handle is not None
    ]
    down = metadata.operator(edge.downstream)
    keying = (
        None
        if key is None
        else ChannelKeying(
            TYPE,
            key_function(key, TYPE),
            down.max_parallelism,
            compute_key_group_range_for_operator_index(
                down.max_parallelism, down.parallelism, channel.downstream_subtask
            ),
        )
    )
    name = ChannelName(
        str(edge), edge.downstream, channel.upstream_subtask, channel.downstream_subtask
    )
    return sides, name, keying


def rows_by_channel(checkpoint: Path, key: str | None) -> tuple[pa.Table, pa.Table]:
    """Every logical channel's rows by ``channel_rows``, ids numbered as the export does."""
    metadata = read_metadata(checkpoint)
    buffers, fragments = [], []
    next_buffer = next_record = 0
    with StateFiles(checkpoint) as files:
        for channel in logical_channels(metadata):
            edge = channel.edge
            sides, name, keying = _channel(metadata, files, channel, key)
            buffers.append(buffer_rows(sides, exchange_name(edge), next_buffer))
            table = fragment_rows(sides, name, next_buffer, next_record, keying)
            fragments.append(table)
            next_buffer += buffers[-1].num_rows
            if table.num_rows:
                next_record = max(table.column("record").to_pylist()) + 1
    return pa.concat_tables(buffers), pa.concat_tables(fragments)


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_rows_are_the_exports(checkpoint: Path) -> None:
    key = _key(checkpoint)
    exchange = "to-record->relay" if key is None else "to-record->slow-counter"
    spec = (
        ExchangeSpec("rebalance") if key is None else ExchangeSpec("hash", key_function(key, TYPE))
    )
    exported = to_dataset(checkpoint, {exchange: spec}, value=value_decoder(TYPE))
    buffers, fragments = rows_by_channel(checkpoint, key)
    assert buffers.equals(exported.tables["buffers"])
    assert fragments.equals(exported.tables["fragments"])
    assert fragments.num_rows > 0


def test_a_key_the_job_did_not_key_by_is_refused_as_the_export_refuses_it() -> None:
    checkpoint = next(p for p in CHECKPOINTS if _key(p) is not None)
    spec = ExchangeSpec("hash", key_function("f0", TYPE))
    with pytest.raises(InvalidParameterError) as exported:
        to_dataset(checkpoint, {"to-record->slow-counter": spec}, value=value_decoder(TYPE))
    with pytest.raises(InvalidParameterError) as ours:
        rows_by_channel(checkpoint, "f0")
    assert str(ours.value) == str(exported.value)


def reads_of(checkpoint: Path, key: str | None) -> list[ChannelRead]:
    """Every logical channel of a real checkpoint as a batch's input, ids as the export's."""
    metadata = read_metadata(checkpoint)
    found = []
    next_buffer = 0
    with StateFiles(checkpoint) as files:
        for number, channel in enumerate(logical_channels(metadata)):
            edge = channel.edge
            sides, name, keying = _channel(metadata, files, channel, key)
            found.append(
                ChannelRead(sides, name, exchange_name(edge), next_buffer, number << 32, keying)
            )
            next_buffer += sum(len(part.data.chunks) for part in sides)
    return found


def apart(channels: list[ChannelRead]) -> tuple[pa.Table, pa.Table]:
    """The channels' rows read one by one (the reference a batch must equal)."""
    buffers = [buffer_rows(c.sides, c.exchange, c.first_buffer) for c in channels]
    fragments = [
        fragment_rows(c.sides, c.name, c.first_buffer, c.first_record, c.keying) for c in channels
    ]
    return pa.concat_tables(buffers), pa.concat_tables(fragments)


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_a_batch_of_channels_is_their_rows_read_one_by_one(checkpoint: Path) -> None:
    channels = reads_of(checkpoint, _key(checkpoint))
    buffers, fragments = apart(channels)
    assert fragments.num_rows > 0
    for cut in sorted({0, 1, len(channels) // 2, len(channels)}):
        batches = [channels[:cut], channels[cut:]]
        assert pa.concat_tables(buffer_batch(b) for b in batches).equals(buffers)
        assert pa.concat_tables(fragment_batch(b) for b in batches).equals(fragments)


def _record(key: int, text: str) -> bytes:
    """A ``Tuple2<Long,String>`` element with a timestamp, framed."""
    body = b"\x00" + struct.pack(">qq", -(2**63), key) + bytes([len(text) + 1]) + text.encode()
    return struct.pack(">i", len(body)) + body


def _made(
    number: int, stream: bytes, cut: int, chunk: int, keying: ChannelKeying | None
) -> ChannelRead:
    """A channel of ``stream`` (input side up to ``cut``, output side after), each side in
    chunks of ``chunk`` bytes, numbered as the ``number``-th channel of ten chunks each."""
    sides = []
    for side, part in (("input", stream[:cut]), ("output", stream[cut:])):
        if not part:
            continue
        lengths = [len(part[i : i + chunk]) for i in range(0, len(part), chunk)]
        offsets = tuple(4 + sum(4 + n for n in lengths[:i]) for i in range(len(lengths)))
        handle = ChannelStateHandle(
            side == "input", number, 0, 0, offsets, 4 * len(lengths) + len(part), None
        )
        chunks = tuple(Chunk(o, n) for o, n in zip(offsets, lengths, strict=True))
        sides.append(ChannelSide(side, f"op-{side}", ChannelData(handle, chunks, part)))
    name = ChannelName("up:1>down:1", "down", number, 0)
    return ChannelRead(sides, name, "up->down", 10 * number, number << 32, keying)


KEYING = ChannelKeying(TYPE, key_function("f0", TYPE), 128, KeyGroupRange(0, 127))


def test_records_across_chunks_and_sides_and_empty_channels_in_one_batch() -> None:
    stream = b"".join(_record(k, "x" * (k % 5)) for k in range(7))
    channels = [
        _made(0, stream, 40, 7, KEYING),  # records over many 7-byte chunks, cut between sides
        _made(1, b"", 0, 7, KEYING),  # no state at all
        _made(2, _record(5, "abc"), 64, 64, KEYING),  # one record, input side only
        _made(3, stream, 0, 1000, KEYING),  # output side only, one chunk
        _made(4, stream, len(stream) - 1, 5, KEYING),  # the last byte alone on the output side
    ]
    buffers, fragments = apart(channels)
    assert buffer_batch(channels).equals(buffers)
    assert fragment_batch(channels).equals(fragments)
    assert fragments.column("continues_into_next").to_pylist().count(True) > 7
    # one numpy pass for the whole batch (no channel read apart)
    data = b"".join(p.data.data for c in channels for p in c.sides)
    bounds = np.cumsum([0] + [sum(p.data.size for p in c.sides) for c in channels])
    assert batch_columns(data, bounds, TYPE, KEYING.key, 128) is not None


def test_a_channel_with_one_cut_record_is_refused_as_read_alone() -> None:
    whole = _record(3, "abc")
    channels = [
        _made(0, whole * 2, 20, 16, KEYING),
        _made(1, whole[:9], 4, 16, KEYING),  # one record cut: the next channel would complete it
        _made(2, whole[9:] + whole, 30, 16, KEYING),
    ]
    with pytest.raises(InvalidParameterError) as alone:
        apart(channels)
    with pytest.raises(InvalidParameterError) as batched:
        fragment_batch(channels)
    assert "1->0 ends inside a record (9 bytes)" in str(batched.value)
    assert str(batched.value) == str(alone.value)


def test_a_key_outside_a_channels_key_groups_is_refused_for_that_channel() -> None:
    group = assign_to_key_group(7, 128, JavaType.LONG)
    owned = ChannelKeying(TYPE, KEYING.key, 128, KeyGroupRange(group, group))
    other = ChannelKeying(
        TYPE, KEYING.key, 128, KeyGroupRange((group + 1) % 128, (group + 1) % 128)
    )
    channels = [
        _made(0, _record(7, "a") * 3, 10, 16, owned),
        _made(1, _record(7, "b"), 10, 16, other),
        _made(2, _record(7, "c"), 10, 16, owned),
    ]
    assert fragment_batch(channels[::2]).equals(apart(channels[::2])[1])
    with pytest.raises(InvalidParameterError) as alone:
        apart(channels)
    with pytest.raises(InvalidParameterError) as batched:
        fragment_batch(channels)
    assert "down[0], which owns key groups" in str(batched.value)
    assert str(batched.value) == str(alone.value)


def test_channels_of_edges_keyed_and_not_in_one_batch() -> None:
    stream = b"".join(_record(k, "yz") for k in range(4))
    plain = _made(1, stream, 50, 16, None)
    plain = ChannelRead(
        plain.sides, ChannelName("up:1>other:1", "other", 1, 0), "up->other", 10, 1 << 32, None
    )
    channels = [_made(0, stream, 9, 16, KEYING), plain, _made(2, stream, 70, 16, KEYING)]
    buffers, fragments = apart(channels)
    assert buffer_batch(channels).equals(buffers)
    assert fragment_batch(channels).equals(fragments)
    assert fragment_batch([]).num_rows == buffer_batch([]).num_rows == 0
