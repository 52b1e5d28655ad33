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

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from flinkstate.dataset import SCHEMAS
from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.channel_state_file import ChannelData
from flinkstate.flinkcheckpoint.key_selector import KeySelector
from flinkstate.flinkcheckpoint.record_columns import ChannelColumns, batch_columns, channel_columns
from flinkstate.javahash import JavaType
from flinkstate.keygroups import KeyGroupRange


@dataclass(frozen=True, slots=True)
class ChannelSide:
    """One side of a logical channel: ``input`` (the downstream's) or ``output`` (the
    upstream's), the operator holding it, and its chunks read.

    Examples
    --------
    The two sides of the channel from ``to-record`` subtask 0 to counter subtask 1: the counter's
    input state, then ``to-record``'s output state:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.inflight import logical_channels
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> channel = logical_channels(read_metadata(checkpoint))[1]
    >>> with StateFiles(checkpoint) as files:
    ...     sides = [
    ...         ChannelSide("input", "slow-counter", read_channel(channel.input, files)),
    ...         ChannelSide("output", "to-record", read_channel(channel.output, files)),
    ...     ]
    >>> [(side.side, side.operator, side.data.size) for side in sides]
    [('input', 'slow-counter', 980), ('output', 'to-record', 3124)]
    """

    side: str
    operator: str
    data: ChannelData


@dataclass(frozen=True, slots=True)
class ChannelName:
    """How errors name a logical channel: its edge (``UP:P>DOWN:G``), the downstream operator
    and the two subtasks.

    Examples
    --------
    >>> name = ChannelName("to-record:0>slow-counter:0", "slow-counter", 0, 1)
    >>> name.edge, name.downstream_subtask
    ('to-record:0>slow-counter:0', 1)
    """

    edge: str
    downstream: str
    upstream_subtask: int
    downstream_subtask: int


@dataclass(frozen=True, slots=True)
class ChannelKeying:
    """How a keyBy channel's records are keyed: the record type, the key, the max parallelism
    of the downstream operator and the key groups of the subtask the channel leads to.

    Examples
    --------
    The keyBy into the counter: records ``Tuple2<Long,String>`` keyed by ``f0 % 1000``, 128 key
    groups, of which counter subtask 1 of 4 owns 32 to 63:

    >>> from flinkstate.flinkcheckpoint.key_selector import key_function
    >>> from flinkstate.keygroups import compute_key_group_range_for_operator_index
    >>> keying = ChannelKeying(
    ...     "Tuple2<Long,String>",
    ...     key_function("f0%1000", "Tuple2<Long,String>"),
    ...     128,
    ...     compute_key_group_range_for_operator_index(128, 4, 1),
    ... )
    >>> str(keying.owned), keying.key.spec
    ('[32, 63]', 'f0%1000')
    """

    type_name: str
    key: KeySelector
    max_parallelism: int
    owned: KeyGroupRange


@dataclass(frozen=True, slots=True)
class ChannelRead:
    """A logical channel read for a batch: its sides, its name, its first buffer and record
    ids, and how it is keyed (None: not keyed).

    Examples
    --------
    The channel from ``to-record`` subtask 0 to counter subtask 1, ready for a batch: its buffers
    numbered from 10, its records from 100:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.inflight import logical_channels
    >>> from flinkstate.flinkcheckpoint.key_selector import key_function
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> from flinkstate.keygroups import KeyGroupRange
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> channel = logical_channels(read_metadata(checkpoint))[1]
    >>> with StateFiles(checkpoint) as files:
    ...     sides = [
    ...         ChannelSide("input", "slow-counter", read_channel(channel.input, files)),
    ...         ChannelSide("output", "to-record", read_channel(channel.output, files)),
    ...     ]
    >>> key = key_function("f0%1000", "Tuple2<Long,String>")
    >>> read = ChannelRead(
    ...     sides,
    ...     ChannelName("to-record:0>slow-counter:0", "slow-counter", 0, 1),
    ...     "to-record->slow-counter",
    ...     10,
    ...     100,
    ...     ChannelKeying("Tuple2<Long,String>", key, 128, KeyGroupRange(32, 63)),
    ... )
    >>> fragment_batch([read]).num_rows, buffer_batch([read])["buffer_id"].to_pylist()
    (109, [10, 11])
    """

    sides: list[ChannelSide]
    name: ChannelName
    #: the exchange as the ``buffers`` table names it (``UP->DOWN``)
    exchange: str
    first_buffer: int
    first_record: int
    keying: ChannelKeying | None


def buffer_rows(sides: list[ChannelSide], exchange: str, first_buffer: int) -> pa.Table:
    """A row per chunk of the channel, ids from ``first_buffer``.

    Examples
    --------
    The channel from ``to-record`` subtask 0 to counter subtask 1 has two buffers: one of input
    state, one of output state:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.inflight import logical_channels
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> channel = logical_channels(read_metadata(checkpoint))[1]
    >>> with StateFiles(checkpoint) as files:
    ...     sides = [
    ...         ChannelSide("input", "slow-counter", read_channel(channel.input, files)),
    ...         ChannelSide("output", "to-record", read_channel(channel.output, files)),
    ...     ]
    >>> rows = buffer_rows(sides, "to-record->slow-counter", 0)
    >>> for row in rows.select(["buffer_id", "operator", "subtask", "side", "size"]).to_pylist():
    ...     print(row)
    {'buffer_id': 0, 'operator': 'slow-counter', 'subtask': 1, 'side': 'input', 'size': 980}
    {'buffer_id': 1, 'operator': 'to-record', 'subtask': 0, 'side': 'output', 'size': 3124}
    """
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


def buffer_batch(channels: Sequence[ChannelRead]) -> pa.Table:
    """:func:`buffer_rows` of many channels as one table, built a column at a time: a value
    per side repeated over its chunks, no Python per row.

    Examples
    --------
    The buffers of every logical channel of the keyBy in one table: 29 chunks, as Flink's loader
    counted them (``chk-48.groundtruth.json``):

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.inflight import logical_channels
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> reads, first = [], 0
    >>> with StateFiles(checkpoint) as files:
    ...     for c in logical_channels(read_metadata(checkpoint)):
    ...         sides = [
    ...             ChannelSide(side, operator, read_channel(handle, files))
    ...             for side, operator, handle in (
    ...                 ("input", "slow-counter", c.input), ("output", "to-record", c.output)
    ...             )
    ...             if handle is not None
    ...         ]
    ...         subtasks = (c.upstream_subtask, c.downstream_subtask)
    ...         name = ChannelName(str(c.edge), "slow-counter", *subtasks)
    ...         reads.append(ChannelRead(sides, name, "to-record->slow-counter", first, 0, None))
    ...         first += sum(len(side.data.chunks) for side in sides)
    >>> table = buffer_batch(reads)
    >>> table.num_rows, sum(table["size"].to_pylist())
    (29, 64778)
    """
    sides = [(c, part) for c in channels for part in c.sides]
    per_side = np.array([len(part.data.chunks) for _, part in sides], dtype=np.int64)
    of_side = np.repeat(np.arange(len(sides), dtype=np.int64), per_side)
    total = len(of_side)
    handles = [part.data.handle for _, part in sides]

    def column(values: list[object], kind: pa.DataType) -> pa.Array:
        return pa.array(values, type=kind).take(pa.array(of_side))

    table = {
        "buffer_id": _chunk_ids(channels),
        "operator": column([part.operator for _, part in sides], pa.string()),
        "subtask": column([h.subtask for h in handles], pa.int32()),
        "side": column([part.side for _, part in sides], pa.string()),
        "exchange": column([c.exchange for c, _ in sides], pa.string()),
        "gate_or_partition": column([h.gate_or_partition for h in handles], pa.int32()),
        "channel_or_subpartition": column([h.channel_or_subpartition for h in handles], pa.int32()),
        "order": (
            np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(per_side) - per_side, per_side)
        ).astype(np.int32),
        "size": _chunk_lengths(channels, total).astype(np.int32),
    }
    return pa.table(table, schema=SCHEMAS["buffers"])


def _chunk_ids(channels: Sequence[ChannelRead]) -> npt.NDArray[np.int64]:
    """The buffer id of every chunk of the channels in order: a channel's chunks (input
    side, then output side) numbered from its first buffer."""
    counts = np.array(
        [sum(len(part.data.chunks) for part in c.sides) for c in channels], dtype=np.int64
    )
    firsts = np.array([c.first_buffer for c in channels], dtype=np.int64)
    base = np.cumsum(counts) - counts
    return np.repeat(firsts - base, counts) + np.arange(int(counts.sum()), dtype=np.int64)


def _chunk_lengths(channels: Sequence[ChannelRead], total: int) -> npt.NDArray[np.int64]:
    return np.fromiter(
        (chunk.length for c in channels for part in c.sides for chunk in part.data.chunks),
        np.int64,
        total,
    )


def fragment_rows(
    sides: list[ChannelSide],
    channel: ChannelName,
    first_buffer: int,
    first_record: int,
    keying: ChannelKeying | None,
) -> pa.Table:
    """A row per piece of each record in each chunk, as ``to_dataset`` makes them; a channel
    that ends inside a record, or a key outside the subtask's key groups, is refused as it
    refuses them.

    Examples
    --------
    The channel from ``to-record`` subtask 0 to counter subtask 1: 108 records in 109 fragments,
    the one record cut by the barrier in two, its start in the input state and its rest in the
    output state:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.inflight import logical_channels
    >>> from flinkstate.flinkcheckpoint.key_selector import key_function
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> from flinkstate.keygroups import KeyGroupRange
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> channel = logical_channels(read_metadata(checkpoint))[1]
    >>> with StateFiles(checkpoint) as files:
    ...     sides = [
    ...         ChannelSide("input", "slow-counter", read_channel(channel.input, files)),
    ...         ChannelSide("output", "to-record", read_channel(channel.output, files)),
    ...     ]
    >>> key = key_function("f0%1000", "Tuple2<Long,String>")
    >>> keying = ChannelKeying("Tuple2<Long,String>", key, 128, KeyGroupRange(32, 63))
    >>> name = ChannelName("to-record:0>slow-counter:0", "slow-counter", 0, 1)
    >>> rows = fragment_rows(sides, name, 0, 0, keying)
    >>> rows.num_rows, len(set(rows["record"].to_pylist()))
    (109, 108)
    >>> split = rows.filter(rows["continues_into_next"]).to_pylist()[0]
    >>> split["buffer_id"], split["record_bytes"], split["fragment_bytes"], split["key"]
    (0, 38, 30, 989)
    """
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
            _refuse(columns, int(outside[0]), channel, keying)
    return _fragments(
        columns,
        lengths,
        first_buffer + np.arange(len(lengths), dtype=np.int64),
        first_record + np.arange(len(columns.offsets), dtype=np.int64),
        keying,
    )


def fragment_batch(channels: Sequence[ChannelRead]) -> pa.Table:
    """:func:`fragment_rows` of many channels as one table: the channels of each edge framed
    and keyed in one numpy pass (``batch_columns``) and cut into fragments at once, so a
    channel costs no fixed Python time. Where the batch is not vouched for (a channel cut
    inside a record, anything irregular), its channels are read one by one, which gives
    their rows or the first one's error, as reading them one by one does.

    Examples
    --------
    The same channel keyed with the wrong subtask's key groups is refused, as an export refuses it:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.channel_state_file import read_channel
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.inflight import logical_channels
    >>> from flinkstate.flinkcheckpoint.key_selector import key_function
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> from flinkstate.keygroups import KeyGroupRange
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> channel = logical_channels(read_metadata(checkpoint))[1]
    >>> with StateFiles(checkpoint) as files:
    ...     sides = [
    ...         ChannelSide("input", "slow-counter", read_channel(channel.input, files)),
    ...         ChannelSide("output", "to-record", read_channel(channel.output, files)),
    ...     ]
    >>> key = key_function("f0%1000", "Tuple2<Long,String>")
    >>> name = ChannelName("to-record:0>slow-counter:0", "slow-counter", 0, 1)
    >>> right = ChannelKeying("Tuple2<Long,String>", key, 128, KeyGroupRange(32, 63))
    >>> wrong = ChannelKeying("Tuple2<Long,String>", key, 128, KeyGroupRange(0, 31))
    >>> def batch(keying):
    ...     return fragment_batch([ChannelRead(sides, name, "up->down", 0, 0, keying)])
    >>> batch(right).num_rows
    109
    >>> from flinkstate.errors import InvalidParameterError
    >>> try:
    ...     batch(wrong)
    ... except InvalidParameterError as error:
    ...     print(error)  # doctest: +NORMALIZE_WHITESPACE
    a record of to-record:0>slow-counter:0 keyed 887 is in key group 48, but it was going to
    slow-counter[1], which owns key groups [0, 31]: the key given is not the one the job keyed by
    (Flink keeps every in-flight record of a keyBy exchange in the key groups of the subtask it
    goes to)
    """
    tables = [_fragment_run(list(run)) for _, run in itertools.groupby(channels, _decoding)]
    return pa.concat_tables(tables) if tables else SCHEMAS["fragments"].empty_table()


def _decoding(channel: ChannelRead) -> tuple[object, ...]:
    """What channels read in one pass share: the edge, and the record type, key and max
    parallelism (each keeps its own key groups)."""
    keying = channel.keying
    if keying is None:
        return (channel.name.edge,)
    return (channel.name.edge, keying.type_name, keying.key, keying.max_parallelism)


def _fragment_run(run: list[ChannelRead]) -> pa.Table:
    """:func:`fragment_batch` of channels that share their ``_decoding``."""
    keying = run[0].keying
    data = b"".join(part.data.data for c in run for part in c.sides)
    sizes = np.array([sum(part.data.size for part in c.sides) for c in run], dtype=np.int64)
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    columns = batch_columns(
        data,
        bounds,
        None if keying is None else keying.type_name,
        None if keying is None else keying.key,
        1 if keying is None else keying.max_parallelism,
    )
    if columns is None:
        return pa.concat_tables(
            fragment_rows(c.sides, c.name, c.first_buffer, c.first_record, c.keying) for c in run
        )
    channel = np.searchsorted(bounds, columns.offsets, side="right") - 1
    if keying is not None and columns.key_groups is not None and len(columns.key_groups):
        owned = [keying.owned if c.keying is None else c.keying.owned for c in run]
        low = np.array([r.start for r in owned], dtype=np.int32)[channel]
        high = np.array([r.end for r in owned], dtype=np.int32)[channel]
        outside = np.flatnonzero((columns.key_groups < low) | (columns.key_groups > high))
        if outside.size:
            bad = int(outside[0])
            found = run[int(channel[bad])]
            _refuse(columns, bad, found.name, found.keying or keying)
    counts = np.bincount(channel, minlength=len(run))
    firsts = np.array([c.first_record for c in run], dtype=np.int64)
    records = np.repeat(firsts, counts) + (
        np.arange(len(channel), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    )
    ids = _chunk_ids(run)
    return _fragments(columns, _chunk_lengths(run, len(ids)), ids, records, keying)


def _refuse(columns: ChannelColumns, bad: int, channel: ChannelName, keying: ChannelKeying) -> None:
    """The export's refusal of a record keyed outside the key groups of its channel's
    subtask."""
    assert columns.key_groups is not None
    keys = columns.keys
    key = keys[bad].as_py() if isinstance(keys, pa.Array) else int(keys[bad])  # type: ignore[index]
    raise InvalidParameterError(
        f"a record of {channel.edge} keyed {key!r} is in key group "
        f"{int(columns.key_groups[bad])}, but it was going to "
        f"{channel.downstream}[{channel.downstream_subtask}], which owns key groups "
        f"{keying.owned}: the key given is not the one the job keyed by (Flink keeps "
        "every in-flight record of a keyBy exchange in the key groups of the subtask "
        "it goes to)"
    )


def _fragments(
    columns: ChannelColumns,
    lengths: npt.NDArray[np.int64],
    chunk_ids: npt.NDArray[np.int64],
    record_ids: npt.NDArray[np.int64],
    keying: ChannelKeying | None,
) -> pa.Table:
    """The fragments of framed records over chunks of ``lengths`` laid end to end (buffer
    ids ``chunk_ids``, record ids ``record_ids``)."""
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
    # a fragment's position is its rank among the fragments of its buffer, in record order
    position = np.arange(len(chunk)) - np.searchsorted(chunk, chunk, side="left")
    total = 4 + columns.lengths[record]
    keys, key_strings, groups = _key_columns(columns.keys, columns.key_groups, record, keying)
    table = {
        "buffer_id": chunk_ids[chunk],
        "position": position.astype(np.int32),
        "record": record_ids[record],
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
