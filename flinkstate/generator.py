"""Large synthetic checkpoints in the dataset format, written as they are generated.

The simulator writes exact checkpoints of small jobs; design questions ("rescale this from 8
to 5") need in-flight data at the scale of production jobs, millions of records. This module
writes such a checkpoint directly, following Flink's rules rather than stepping a job: a source
feeds one exchange (``keyBy`` or ``rebalance``) into an operator; each source subtask emits its
records in order, the partitioner routes each one (a key's key group and owning subtask are
computed with Flink's functions, vectorised), and each channel's bytes are cut into
segment-sized buffers with records spanning buffers as their 4-byte length prefix and payload
fall. The barrier cuts every channel's stream between two buffers: the first buffers were
received by the consumer (its input channel state), the rest were still queued in the
producer's subpartition (output state). The input state begins at a record boundary, as in
Flink: a deserializer persists a record it had begun to read from its length prefix on, so no
record of a channel is ever cut off at the front.

Memory stays bounded by one batch of records: per channel only the stream offset carries over
from batch to batch, and every finished batch is appended to the Parquet files (in a
temporary folder that becomes the dataset once complete).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from flinkstate.dataset import FORMAT, SCHEMAS, VERSION, dataset_written_whole
from flinkstate.errors import InvalidParameterError
from flinkstate.javahash import JavaType
from flinkstate.keygroups import (
    assign_to_key_group_array,
    check_parallelism_against_max,
    compute_key_group_range_for_operator_index,
    compute_operator_index_for_key_group_array,
)
from flinkstate.memory_segment import LENGTH_PREFIX_BYTES, check_segment_size
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.run_rules import SEED

#: the partitioners a generated exchange can have: one keyed, one round robin
PARTITIONERS = {"keyBy": Partitioner.HASH, "rebalance": Partitioner.REBALANCE}
DEFAULT_BATCH = 1 << 20
#: the largest payload of one record: Flink writes a record's length as a Java int
MAX_RECORD_SIZE = 2**31 - 1
#: the most distinct keys: the keyed state is counted key by key (in chunks of
#: ``_KEY_CHUNK``), about half a minute at this bound
MAX_KEYS = 1_000_000_000
_KEY_CHUNK = 1 << 22
#: the most buffer rows one batch may make: a batch of large records (each spanning many
#: buffers) is cut to fewer records, so that memory stays bounded whatever the record size
MAX_BATCH_BUFFERS = 1 << 22
#: buffer ids are channel << 32 | buffer index in the channel's stream: unique, no coordination
_CHANNEL_SHIFT = 32


@dataclass(frozen=True)
class GeneratorSpec:
    """What to generate; every value is checked against Flink's bounds by :meth:`check`."""

    records: int
    partitioner: str = "keyBy"
    source_parallelism: int = 4
    parallelism: int = 4
    max_parallelism: int = 128
    record_size: int = 100
    record_size_max: int = 0
    keys: int = 100_000
    segment_size: int = 32_768
    input_buffers: int = 3
    seed: int = 0

    def check(self) -> None:
        if self.records < 1:
            raise InvalidParameterError(f"records must be at least 1, got {self.records}")
        if self.partitioner not in PARTITIONERS:
            raise InvalidParameterError(
                f"partitioner must be one of {', '.join(PARTITIONERS)}, got {self.partitioner!r}"
            )
        check_parallelism_against_max(self.parallelism, self.max_parallelism)
        check_parallelism_against_max(self.source_parallelism, self.max_parallelism)
        check_segment_size(self.segment_size)
        if self.record_size < 1:
            raise InvalidParameterError(f"record_size must be at least 1, got {self.record_size}")
        for name, size in (
            ("record_size", self.record_size),
            ("record_size_max", self.record_size_max),
        ):
            if size > MAX_RECORD_SIZE:
                raise InvalidParameterError(
                    f"{name} must be at most {MAX_RECORD_SIZE:,} bytes (Flink writes a record's "
                    f"length as a Java int), got {size:,}"
                )
        if self.record_size_max and self.record_size_max < self.record_size:
            raise InvalidParameterError(
                f"record_size_max {self.record_size_max} is below record_size {self.record_size}"
            )
        if not 1 <= self.keys <= MAX_KEYS:
            raise InvalidParameterError(
                f"keys must be 1 to {MAX_KEYS:,} (the keyed state of every key is counted "
                f"into its key group), got {self.keys:,}"
            )
        if self.input_buffers < 0:
            raise InvalidParameterError(
                f"input_buffers must not be negative, got {self.input_buffers}"
            )
        SEED.check(self.seed)  # as a run's seed: what numpy's generator takes, within a Java int

    def batch_records(self, batch: int) -> int:
        """How many records of a batch are framed into buffers at once: ``batch``, or fewer
        when records this large would make more than :data:`MAX_BATCH_BUFFERS` buffers (the
        batch's keys and sizes are still drawn at once, so that a seed gives the same records
        whatever their size).

        Examples
        --------
        >>> GeneratorSpec(records=10, record_size=100).batch_records(1 << 20)
        1048576
        >>> GeneratorSpec(records=10, record_size=2**31 - 1).batch_records(1 << 20)
        63
        """
        largest = max(self.record_size, self.record_size_max) + LENGTH_PREFIX_BYTES
        spans = -(-largest // self.segment_size) + 1  # its buffers, and one it may start in
        return max(1, min(batch, MAX_BATCH_BUFFERS // spans))

    @property
    def exchange(self) -> str:
        return f"source->{'counter' if self.partitioner == 'keyBy' else 'map'}"


@dataclass
class _Channel:
    """Where one channel's byte stream stands between batches."""

    offset: int = 0  # bytes of the stream written so far (the checkpoint's part of it)
    #: fragments already in the buffer being filled (it goes on in the next batch)
    open_fragments: int = 0


def check_batch(batch: int) -> int:
    """``batch`` if it can be the records of one batch (at least one)."""
    if batch < 1:
        raise InvalidParameterError(f"batch must be at least 1, got {batch}")
    return batch


def generate(
    spec: GeneratorSpec,
    directory: Path,
    *,
    batch: int = DEFAULT_BATCH,
    progress: Callable[[int], None] | None = None,
) -> Path:
    """Write the checkpoint dataset of ``spec`` to ``directory``, ``batch`` records at a time;
    ``progress(n)`` after every batch. The folder appears whole or not at all
    (:func:`~flinkstate.dataset.dataset_written_whole`): an earlier dataset there is replaced
    only once the new one is complete, and a folder holding anything else is refused before
    any record is generated."""
    spec.check()
    check_batch(batch)
    with dataset_written_whole(directory) as temporary:
        _generate(spec, temporary, batch, progress)
    return directory


def _generate(
    spec: GeneratorSpec, directory: Path, batch: int, progress: Callable[[int], None] | None
) -> None:
    partitioner = PARTITIONERS[spec.partitioner]
    downstream = spec.exchange.split("->")[1]
    keyed = partitioner is Partitioner.HASH
    rng = np.random.default_rng(spec.seed)
    _write_small_tables(spec, directory, downstream, partitioner)
    writers = {
        name: pq.ParquetWriter(directory / f"{name}.parquet", SCHEMAS[name])
        for name in ("buffers", "fragments")
    }
    channels = [_Channel() for _ in range(spec.source_parallelism * spec.parallelism)]
    framed = spec.batch_records(batch)
    per_source = np.full(spec.source_parallelism, spec.records // spec.source_parallelism)
    per_source[: spec.records % spec.source_parallelism] += 1
    next_record = 0
    try:
        for source in range(spec.source_parallelism):
            # rebalance starts at a random channel per producer, then goes round robin
            turn = int(rng.integers(spec.parallelism))
            done = 0
            while done < per_source[source]:
                count = int(min(batch, per_source[source] - done))
                keys = rng.integers(0, spec.keys, size=count, dtype=np.int64)
                if spec.record_size_max:
                    sizes = rng.integers(spec.record_size, spec.record_size_max + 1, size=count)
                else:
                    sizes = np.full(count, spec.record_size, dtype=np.int64)
                groups = (
                    assign_to_key_group_array(keys, spec.max_parallelism, "long") if keyed else None
                )
                if groups is not None:
                    targets = compute_operator_index_for_key_group_array(
                        spec.max_parallelism, spec.parallelism, groups
                    )
                else:
                    targets = ((turn + np.arange(count)) % spec.parallelism).astype(np.int32)
                    turn = (turn + count) % spec.parallelism
                ids = np.arange(next_record, next_record + count, dtype=np.int64)
                lengths = sizes.astype(np.int64) + LENGTH_PREFIX_BYTES
                for cut in range(0, count, framed):  # buffer rows bounded in memory
                    part = slice(cut, cut + framed)
                    fragments, buffers = _frame(
                        spec,
                        source,
                        channels,
                        ids[part],
                        keys[part],
                        groups[part] if groups is not None else None,
                        lengths[part],
                        targets[part],
                        downstream,
                    )
                    writers["buffers"].write_table(buffers)
                    writers["fragments"].write_table(fragments)
                next_record += count
                done += count
                if progress is not None:
                    progress(count)
        writers["buffers"].write_table(_open_buffers(spec, channels, downstream))
    finally:
        for writer in writers.values():
            writer.close()
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "source": "flinkstate generator",
        "description": (
            f"generated: {spec.records:,} records, source({spec.source_parallelism}) "
            f"-{spec.partitioner}-> {downstream}({spec.parallelism}), max parallelism "
            f"{spec.max_parallelism}, records of {spec.record_size}"
            + (f"-{spec.record_size_max}" if spec.record_size_max else "")
            + f" bytes, {spec.keys:,} keys, seed {spec.seed}"
        ),
        "checkpoint_id": 1,
        "checkpoint_type": "unaligned",
        "segment_size": spec.segment_size,
    }
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def _frame(
    spec: GeneratorSpec,
    source: int,
    channels: list[_Channel],
    ids: npt.NDArray[np.int64],
    keys: npt.NDArray[np.int64],
    groups: npt.NDArray[np.int32] | None,
    lengths: npt.NDArray[np.int64],
    targets: npt.NDArray[np.int32],
    downstream: str,
) -> tuple[pa.Table, pa.Table]:
    """Cut one batch of one source subtask's records into its channels' buffers: the
    fragments of every record, and the buffers this batch filled completely."""
    size = spec.segment_size
    order = np.argsort(targets, kind="stable")  # per channel, in emission order
    targets, ids, keys, lengths = targets[order], ids[order], keys[order], lengths[order]
    if groups is not None:
        groups = groups[order]
    channel_of = source * spec.parallelism + targets.astype(np.int64)
    bounds = np.flatnonzero(np.diff(channel_of)) + 1
    runs = _Runs(channel_of, np.concatenate(([0], bounds)), np.concatenate((bounds, [len(ids)])))
    start, carried = _stream_starts(channels, runs, lengths, size)
    cut = _cut(start, lengths, channel_of, size)
    position = _positions(cut.buffer_id, channels, runs, carried, size)
    total = lengths[cut.record_index]
    fragments = pa.table(
        {
            "buffer_id": cut.buffer_id,
            "position": position.astype(np.int32),
            "record": ids[cut.record_index],
            "key": keys[cut.record_index],
            "key_string": pa.nulls(len(cut.buffer_id), pa.string()),
            "key_group": pa.nulls(len(cut.buffer_id), pa.int32())
            if groups is None
            else pa.array(groups[cut.record_index], type=pa.int32()),
            "record_bytes": total.astype(np.int32),
            "fragment_start": cut.fragment_start.astype(np.int32),
            "fragment_bytes": cut.fragment_bytes.astype(np.int32),
            "continues_from_previous": cut.fragment_start > 0,
            "continues_into_next": cut.fragment_start + cut.fragment_bytes < total,
        },
        schema=SCHEMAS["fragments"],
    )
    # buffers this batch completed: every buffer below each touched channel's current one
    rows: dict[str, list[object]] = {name: [] for name in SCHEMAS["buffers"].names}
    for first in runs.firsts:
        index = int(channel_of[first])
        done_from = int(start[first] // size)
        done_to = channels[index].offset // size  # buffers [done_from, done_to) are full
        for b in range(done_from, done_to):
            _buffer_row(rows, spec, index, b, size, downstream)
    return fragments, pa.table(rows, schema=SCHEMAS["buffers"])


@dataclass(frozen=True)
class _Runs:
    """A batch's records sorted by channel: each record's channel, and where each channel's
    run of records begins and ends (exclusive) in the batch."""

    channel_of: npt.NDArray[np.int64]
    firsts: npt.NDArray[np.int64]
    ends: npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Cut:
    """Every fragment of a batch, sorted by (channel, buffer): its record (by index in the
    batch), its buffer, and which bytes of the record it holds."""

    record_index: npt.NDArray[np.int64]
    buffer_id: npt.NDArray[np.int64]
    fragment_start: npt.NDArray[np.int64]
    fragment_bytes: npt.NDArray[np.int64]


def _stream_starts(
    channels: list[_Channel], runs: _Runs, lengths: npt.NDArray[np.int64], size: int
) -> tuple[npt.NDArray[np.int64], list[tuple[int, int]]]:
    """Where each record starts in its channel's stream, each channel's offset moved past the
    batch; per run, the buffer open before it and the fragments already in it."""
    start = np.empty(len(lengths), dtype=np.int64)
    carried: list[tuple[int, int]] = []  # per channel group: (open buffer, fragments in it)
    for first, last in zip(runs.firsts, runs.ends, strict=True):
        state = channels[int(runs.channel_of[first])]
        carried.append((state.offset // size, state.open_fragments))
        local = np.cumsum(lengths[first:last]) - lengths[first:last]
        start[first:last] = state.offset + local
        state.offset = int(start[last - 1] + lengths[last - 1])
    return start, carried


def _cut(
    start: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
    channel_of: npt.NDArray[np.int64],
    size: int,
) -> _Cut:
    """Each record cut at the segment boundaries of its channel's stream, vectorised: a
    record spans as many buffers as its bytes fall into."""
    end = start + lengths  # exclusive, in stream bytes
    first_buffer = start // size
    last_buffer = (end - 1) // size
    pieces = (last_buffer - first_buffer + 1).astype(np.int64)
    record_index = np.repeat(np.arange(len(start)), pieces)
    step = np.arange(len(record_index)) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    buffer = first_buffer[record_index] + step
    lo = np.maximum(start[record_index], buffer * size)
    hi = np.minimum(end[record_index], (buffer + 1) * size)
    channel = channel_of[record_index]
    return _Cut(
        record_index, (channel << _CHANNEL_SHIFT) | buffer, lo - start[record_index], hi - lo
    )


def _positions(
    buffer_id: npt.NDArray[np.int64],
    channels: list[_Channel],
    runs: _Runs,
    carried: list[tuple[int, int]],
    size: int,
) -> npt.NDArray[np.int64]:
    """Each fragment's position in its buffer (fragments are sorted by (channel, buffer)); a
    buffer begun in an earlier batch goes on counting where it stopped, and each channel
    remembers how many fragments its open buffer holds for the next batch."""
    new_buffer = np.concatenate(([True], buffer_id[1:] != buffer_id[:-1]))
    group_start = np.maximum.accumulate(np.where(new_buffer, np.arange(len(buffer_id)), 0))
    position = np.arange(len(buffer_id)) - group_start
    for first, (open_buffer, count) in zip(runs.firsts, carried, strict=True):
        index = int(runs.channel_of[first])
        state = channels[index]
        if count:
            position[buffer_id == ((index << _CHANNEL_SHIFT) | open_buffer)] += count
        now_open = (index << _CHANNEL_SHIFT) | (state.offset // size)
        state.open_fragments = int(np.count_nonzero(buffer_id == now_open)) + (
            count if state.offset // size == open_buffer else 0
        )
    return position


def _buffer_row(
    rows: dict[str, list[object]],
    spec: GeneratorSpec,
    channel: int,
    index: int,
    size: int,
    downstream: str,
) -> None:
    source, target = divmod(channel, spec.parallelism)
    received = index < spec.input_buffers
    rows["buffer_id"].append((channel << _CHANNEL_SHIFT) | index)
    rows["operator"].append(downstream if received else "source")
    rows["subtask"].append(target if received else source)
    rows["side"].append("input" if received else "output")
    rows["exchange"].append(spec.exchange)
    rows["gate_or_partition"].append(0)
    rows["channel_or_subpartition"].append(source if received else target)
    rows["order"].append(index if received else index - spec.input_buffers)
    rows["size"].append(size)


def _open_buffers(spec: GeneratorSpec, channels: list[_Channel], downstream: str) -> pa.Table:
    """The last, partly filled buffer of every channel (finished by the barrier)."""
    rows: dict[str, list[object]] = {name: [] for name in SCHEMAS["buffers"].names}
    for index, state in enumerate(channels):
        used = state.offset % spec.segment_size
        if used:
            _buffer_row(rows, spec, index, state.offset // spec.segment_size, used, downstream)
    return pa.table(rows, schema=SCHEMAS["buffers"])


def _write_small_tables(
    spec: GeneratorSpec, directory: Path, downstream: str, partitioner: Partitioner
) -> None:
    kind = "keyed" if partitioner is Partitioner.HASH else "map"
    operators = pa.table(
        {
            "operator": ["source", downstream],
            "kind": ["source", kind],
            "parallelism": [spec.source_parallelism, spec.parallelism],
            "max_parallelism": [spec.max_parallelism, spec.max_parallelism],
        },
        schema=SCHEMAS["operators"],
    )
    exchanges = pa.table(
        {
            "exchange": [spec.exchange],
            "upstream": ["source"],
            "downstream": [downstream],
            "partitioner": [partitioner.flink_class],
            "downstream_mapper": [partitioner.downstream_mapper.name],
            "upstream_mapper": [partitioner.upstream_mapper.name],
            "unaligned_supported": [True],
            "key_type": [JavaType.LONG.java_name if partitioner is Partitioner.HASH else None],
        },
        schema=SCHEMAS["exchanges"],
    )
    rows: dict[str, list[object]] = {name: [] for name in SCHEMAS["keyed_state"].names}
    if partitioner is Partitioner.HASH:
        # state for every key of the key space, in the key group Flink puts it
        entries = np.zeros(spec.max_parallelism, dtype=np.int64)
        for start in range(0, spec.keys, _KEY_CHUNK):  # memory bounded whatever the key count
            groups = assign_to_key_group_array(
                np.arange(start, min(start + _KEY_CHUNK, spec.keys), dtype=np.int64),
                spec.max_parallelism,
                "long",
            )
            entries += np.bincount(groups, minlength=spec.max_parallelism)
        for subtask in range(spec.parallelism):
            r = compute_key_group_range_for_operator_index(
                spec.max_parallelism, spec.parallelism, subtask
            )
            for group in range(r.start, r.end + 1):
                if entries[group]:
                    rows["operator"].append(downstream)
                    rows["subtask"].append(subtask)
                    rows["key_group_start"].append(r.start)
                    rows["key_group_end"].append(r.end)
                    rows["key_group"].append(group)
                    rows["entries"].append(int(entries[group]))
    keyed_state = pa.table(rows, schema=SCHEMAS["keyed_state"])
    for name, table in (
        ("operators", operators),
        ("exchanges", exchanges),
        ("keyed_state", keyed_state),
    ):
        pq.write_table(table, directory / f"{name}.parquet")
