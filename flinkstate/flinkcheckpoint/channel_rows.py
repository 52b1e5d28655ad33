"""One logical channel's rows of the checkpoint dataset (``buffers`` and ``fragments``) as
Arrow tables, computed with numpy from its chunks: what a Spark executor yields for the
channel it was given.

The rows are those ``export.to_dataset`` writes for the channel, column for column: a buffer
per chunk (input state first, then output state), a fragment per piece of a record in a
non-empty chunk, a record cut by the input/output boundary kept as one record. Buffer and
record ids start where the caller says (the driver numbers buffers from the handles' offsets,
records by channel), so channels read apart give one table together.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from flinkstate.dataset import SCHEMAS
from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.channel_state_file import ChannelData
from flinkstate.flinkcheckpoint.key_selector import KeySelector
from flinkstate.flinkcheckpoint.record_columns import channel_columns
from flinkstate.javahash import JavaType
from flinkstate.keygroups import KeyGroupRange


@dataclass(frozen=True, slots=True)
class ChannelSide:
    """One side of a logical channel: ``input`` (the downstream's) or ``output`` (the
    upstream's), the operator holding it, and its chunks read."""

    side: str
    operator: str
    data: ChannelData


@dataclass(frozen=True, slots=True)
class ChannelName:
    """How errors name a logical channel: its edge (``UP:P>DOWN:G``), the downstream operator
    and the two subtasks."""

    edge: str
    downstream: str
    upstream_subtask: int
    downstream_subtask: int


@dataclass(frozen=True, slots=True)
class ChannelKeying:
    """How a keyBy channel's records are keyed: the record type, the key, the max parallelism
    of the downstream operator and the key groups of the subtask the channel leads to."""

    type_name: str
    key: KeySelector
    max_parallelism: int
    owned: KeyGroupRange


def buffer_rows(sides: list[ChannelSide], exchange: str, first_buffer: int) -> pa.Table:
    """A row per chunk of the channel, ids from ``first_buffer``."""
    columns: dict[str, list[object]] = {name: [] for name in SCHEMAS["buffers"].names}
    buffer_id = first_buffer
    for part in sides:
        handle = part.data.handle
        for order, chunk in enumerate(part.data.chunks):
            row = (
                buffer_id,
                part.operator,
                handle.subtask,
                part.side,
                exchange,
                handle.gate_or_partition,
                handle.channel_or_subpartition,
                order,
                chunk.length,
            )
            for name, value in zip(SCHEMAS["buffers"].names, row, strict=True):
                columns[name].append(value)
            buffer_id += 1
    return pa.table(columns, schema=SCHEMAS["buffers"])


def fragment_rows(
    sides: list[ChannelSide],
    channel: ChannelName,
    first_buffer: int,
    first_record: int,
    keying: ChannelKeying | None,
) -> pa.Table:
    """A row per piece of each record in each chunk, as ``to_dataset`` makes them; a channel
    that ends inside a record, or a key outside the subtask's key groups, is refused as it
    refuses them."""
    edge = channel.edge
    stream = b"".join(part.data.data for part in sides)
    lengths = np.array([c.length for part in sides for c in part.data.chunks], dtype=np.int64)
    columns = channel_columns(
        stream,
        None if keying is None else keying.type_name,
        None if keying is None else keying.key,
        1 if keying is None else keying.max_parallelism,
        f"channel {edge}",
    )
    if columns.trailing:
        raise InvalidParameterError(
            f"channel {edge} {channel.upstream_subtask}->{channel.downstream_subtask} ends "
            f"inside a record ({columns.trailing} bytes): not a clean channel"
        )
    if keying is not None and columns.key_groups is not None and len(columns.key_groups):
        outside = np.flatnonzero(
            (columns.key_groups < keying.owned.start) | (columns.key_groups > keying.owned.end)
        )
        if outside.size:
            bad = int(outside[0])
            keys = columns.keys
            key = keys[bad].as_py() if isinstance(keys, pa.Array) else int(keys[bad])  # type: ignore[index]
            raise InvalidParameterError(
                f"a record of {edge} keyed {key!r} is in key group "
                f"{int(columns.key_groups[bad])}, but it was going to "
                f"{channel.downstream}[{channel.downstream_subtask}], which owns key groups "
                f"{keying.owned}: the key given is not the one the job keyed by (Flink keeps "
                "every in-flight record of a keyBy exchange in the key groups of the subtask "
                "it goes to)"
            )
    starts = np.concatenate(([0], np.cumsum(lengths)))
    begin = columns.offsets
    end = begin + 4 + columns.lengths
    # the chunks each record's bytes lie in: from the last chunk starting at or before its
    # first byte to the last chunk starting before its end (empty chunks drop out below)
    first = np.searchsorted(starts, begin, side="right") - 1
    last = np.searchsorted(starts, end, side="left") - 1
    count = last - first + 1
    record = np.repeat(np.arange(len(begin), dtype=np.int64), count)
    step = np.arange(len(record), dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
    chunk = first[record] + step
    low = np.maximum(begin[record], starts[chunk])
    high = np.minimum(end[record], starts[chunk + 1])
    kept = high > low
    record, chunk, low, high = record[kept], chunk[kept], low[kept], high[kept]
    buffer_id = first_buffer + chunk
    # a fragment's position is its rank among the fragments of its buffer, in record order
    position = np.arange(len(buffer_id)) - np.searchsorted(buffer_id, buffer_id, side="left")
    total = 4 + columns.lengths[record]
    keys, key_strings, groups = _key_columns(columns.keys, columns.key_groups, record, keying)
    table = {
        "buffer_id": buffer_id,
        "position": position.astype(np.int32),
        "record": first_record + record,
        "key": keys,
        "key_string": key_strings,
        "key_group": groups,
        "record_bytes": total.astype(np.int32),
        "fragment_start": (low - begin[record]).astype(np.int32),
        "fragment_bytes": (high - low).astype(np.int32),
        "continues_from_previous": low > begin[record],
        "continues_into_next": high < end[record],
    }
    return pa.table(table, schema=SCHEMAS["fragments"])


def _key_columns(
    keys: np.ndarray | pa.Array | None,
    groups: np.ndarray | None,
    record: np.ndarray,
    keying: ChannelKeying | None,
) -> tuple[pa.Array, pa.Array, pa.Array]:
    """The key, key_string and key_group columns of the fragments (null without a key)."""
    size = len(record)
    if keying is None or keys is None or groups is None:
        return pa.nulls(size, pa.int64()), pa.nulls(size, pa.string()), pa.nulls(size, pa.int32())
    group_column = pa.array(groups[record], type=pa.int32())
    if keying.key.java_type is JavaType.STRING:
        assert isinstance(keys, pa.Array)
        strings = keys.take(pa.array(record, type=pa.int64()))
        return pa.nulls(size, pa.int64()), strings.cast(pa.string()), group_column
    assert isinstance(keys, np.ndarray)
    return pa.array(keys[record], type=pa.int64()), pa.nulls(size, pa.string()), group_column
