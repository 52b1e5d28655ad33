"""A checkpoint Flink wrote, read by Spark's executors straight into the dataset's tables.

The driver reads ``_metadata`` (small: handles, offsets and sizes, never channel state) and
plans: the logical channels (``export.plan_export``, with its refusals), each one's first
buffer id (buffers are numbered from the handles' chunk counts, as the export numbers them)
and groups of channels of about :data:`TASK_BYTES` each. The groups are a small DataFrame;
``mapInArrow`` hands each to an executor's Python worker, which opens the state files itself
(the same paths: a cluster needs the checkpoint on a filesystem every executor sees), reads
its channels' chunks and yields their ``buffers`` or ``fragments`` rows, about
:data:`BATCH_BYTES` of channels per Arrow batch, framed and keyed in one numpy pass
(``channel_rows.fragment_batch``): a channel of a few KB costs no fixed Python time.

The driver's plan refuses what the export refuses, a chunk that two channels' handles name
(``check_chunks``) included, across every channel before any is read; each executor reads
only the ``_metadata`` the driver checked (its SHA-256 goes with the plan), so that channels
read in different tasks cannot come from another file than the one checked whole.

Nothing proportional to the in-flight data reaches the driver: it holds ``_metadata`` (as
Flink's JobManager does: handles, and an offset per persisted buffer) and the plan, two
numbers per channel (0.46 MB pickled for 65536 channels, the same at 50 MB and 200 MB). The
rescale pipeline then runs on these DataFrames as on a dataset's Parquet files, its key
groups and selected subtasks still Spark expressions.

A record's id is its channel's number times 2^32 plus its place in the channel (the export
numbers records across channels, which needs the counts of the channels before): the ids
identify records the same way, the numbers differ. The operators, exchanges and keyed state
(a row per key group) are made on the driver, as the export makes them.

Python runs on the executors to read files (``mapInArrow``), so a cluster's executors need
numpy and pyarrow (Spark's Arrow functions need pyarrow anyway); over Spark Connect the
server's Python workers import the flinkstate that started it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import math
import mmap
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from flinkstate.collector import collector_paused
from flinkstate.dataset import SCHEMAS
from flinkstate.errors import CheckpointFormatError
from flinkstate.flinkcheckpoint.channel_rows import (
    ChannelKeying,
    ChannelName,
    ChannelRead,
    ChannelSide,
    buffer_batch,
    fragment_batch,
)
from flinkstate.flinkcheckpoint.channel_state_file import read_channel, read_channels
from flinkstate.flinkcheckpoint.export import ExchangeSpec, ExportPlan, plan_export
from flinkstate.flinkcheckpoint.files import StateFiles, map_file, open_regular
from flinkstate.flinkcheckpoint.handles import ChannelStateHandle
from flinkstate.flinkcheckpoint.inflight import Edge, LogicalChannel, channels_of, exchange_name
from flinkstate.flinkcheckpoint.key_selector import KeySelector
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, parse_metadata
from flinkstate.keygroups import compute_key_group_range_for_operator_index
from flinkstate.memory_segment import DEFAULT_SEGMENT_SIZE
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.rescale.routes import JobShape
from flinkstate.spark.tables import SparkDataset, spark_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: about this many bytes of channel state per Spark task
TASK_BYTES = 32 << 20
#: an executor frames and keys this many bytes of channels at once (one Arrow batch)
BATCH_BYTES = 8 << 20
#: a record's id is its channel's number times this plus its place in the channel
RECORDS_PER_CHANNEL = 1 << 32
_TASK_SCHEMA = "channels array<int>, first_buffers array<bigint>"


@dataclass(frozen=True)
class ReadSpec:
    """What an executor needs besides a group of channel numbers (plain values, shipped with
    the function): where the checkpoint is, the edges resolved on the driver, and per edge
    whether it is keyed and by what."""

    directory: str
    reroot: tuple[tuple[str, str], ...]
    edges: tuple[str, ...]
    record_type: str | None
    #: per edge (``UP:P>DOWN:G``): the key's notation as a ``KeySelector`` gives it, or None
    keys: tuple[tuple[str, KeySelector | None], ...]
    #: the SHA-256 of the ``_metadata`` the driver planned from and checked
    metadata_sha256: str


def plan_read(
    path: str | Path,
    exchanges: Mapping[str, ExchangeSpec],
    record_type: str | None,
    *,
    edges: Iterable[Edge] | None = None,
    reroot: Mapping[str, str] | None = None,
    segment_size: int = DEFAULT_SEGMENT_SIZE,
) -> tuple[ExportPlan, ReadSpec, list[tuple[list[int], list[int]]]]:
    """The export's plan, what executors need, and the task groups: (channel numbers, their
    first buffer ids), each of about :data:`TASK_BYTES`."""
    plan = plan_export(path, exchanges, edges=edges, reroot=reroot, segment_size=segment_size)
    # once the plan accepted the file (a huge or special one is refused unread)
    digest = metadata_sha256(plan.directory / "_metadata")
    keys: list[tuple[str, KeySelector | None]] = []
    for edge, spec in sorted(plan.specs.items(), key=lambda item: str(item[0])):
        keyed = spec.partitioner is Partitioner.HASH
        if keyed and not isinstance(spec.key, KeySelector):
            from flinkstate.errors import InvalidParameterError

            raise InvalidParameterError(
                f"exchange {edge} is keyed: reading it in Spark needs its key as a notation "
                "(key_function), not a Python function"
            )
        keys.append((str(edge), spec.key if isinstance(spec.key, KeySelector) and keyed else None))
    if any(key is not None for _, key in keys) and record_type in (None, "raw"):
        from flinkstate.errors import InvalidParameterError

        raise InvalidParameterError(
            "a keyed exchange's records are keyed by their values: give their type (--record-type)"
        )
    read = ReadSpec(
        str(plan.directory),
        tuple(sorted(plan.reroot.items())),
        tuple(sorted({str(c.edge) for c in plan.channels})),
        record_type,
        tuple(keys),
        digest,
    )
    chunks = np.array(
        [sum(len(h.offsets) for h in (c.input, c.output) if h is not None) for c in plan.channels],
        dtype=np.int64,
    )
    sizes = np.array(
        [sum(h.state_size for h in (c.input, c.output) if h is not None) for c in plan.channels],
        dtype=np.int64,
    )
    first_buffers = np.concatenate(([0], np.cumsum(chunks)))[:-1]
    total = int(sizes.sum())
    # at least a few tasks, so that every core has one even for a small checkpoint
    count = max(-(-total // TASK_BYTES), min(len(sizes), 8))
    slots = (np.cumsum(sizes) - sizes) * count // max(total, 1)
    groups = [
        (members.tolist(), first_buffers[members].tolist())
        for members in (np.flatnonzero(slots == slot) for slot in np.unique(slots))
    ]
    return plan, read, groups


@contextlib.contextmanager
def _mapped(path: Path) -> Iterator[bytes | mmap.mmap]:
    """A ``_metadata`` file's bytes, mapped (a regular file, or refused)."""
    what = "a checkpoint _metadata file"
    try:
        file = open_regular(path, what)
    except FileNotFoundError:
        raise CheckpointFormatError(str(path), 0, what) from None
    with file:
        if os.fstat(file.fileno()).st_size == 0:
            yield b""
            return
        with map_file(file, path, what) as data:
            yield data


def metadata_sha256(path: Path) -> str:
    """The SHA-256 of a ``_metadata`` file."""
    with _mapped(path) as data:
        return hashlib.sha256(data).hexdigest()


@functools.lru_cache(maxsize=4)
def _metadata(directory: str, stamp: tuple[int, int], planned: str) -> CheckpointMetadata:
    """``_metadata`` parsed once per Python worker (``stamp``: its mtime and size), if it is
    the file the driver planned from (``planned``: its SHA-256), whose chunks it checked:
    the bytes hashed are the bytes parsed."""
    path = Path(directory) / "_metadata"
    with _mapped(path) as data:
        digest = hashlib.sha256(data).hexdigest()
        if digest != planned:
            raise CheckpointFormatError(
                str(path),
                0,
                f"the _metadata the driver planned the read from (SHA-256 {planned[:16]}...), "
                f"found another (SHA-256 {digest[:16]}...): the checkpoint changed since, or "
                "the executors see another copy of it",
            )
        return parse_metadata(data, str(path))


@functools.lru_cache(maxsize=4)
def _logical_channels(
    directory: str, stamp: tuple[int, int], planned: str, edges: tuple[str, ...]
) -> tuple[CheckpointMetadata, tuple[LogicalChannel, ...]]:
    metadata = _metadata(directory, stamp, planned)
    return metadata, tuple(channels_of(metadata, [Edge.parse(e) for e in edges]))


def _channels(spec: ReadSpec) -> tuple[CheckpointMetadata, tuple[LogicalChannel, ...]]:
    """The metadata and the logical channels, parsed once per Python worker (Spark reuses
    its workers across tasks) and again only if ``_metadata`` changed (mtime and size), when
    it must still be the file the driver planned from."""
    stat = (Path(spec.directory) / "_metadata").stat()
    stamp = (stat.st_mtime_ns, stat.st_size)
    return _logical_channels(spec.directory, stamp, spec.metadata_sha256, spec.edges)


def read_buffers(spec: ReadSpec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """An executor's part of the ``buffers`` table: a batch per :data:`BATCH_BYTES` of its
    channels."""
    for group in _batches(spec, batches):
        yield from buffer_batch(group).to_batches()


def read_fragments(spec: ReadSpec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """An executor's part of the ``fragments`` table: a batch per :data:`BATCH_BYTES` of its
    channels, framed and keyed together."""
    for group in _batches(spec, batches):
        yield from fragment_batch(group).to_batches()


def _batches(spec: ReadSpec, batches: Iterator[pa.RecordBatch]) -> Iterator[list[ChannelRead]]:
    """The channels of a task's groups read, about :data:`BATCH_BYTES` (by their handles'
    declared sizes) at a time."""
    metadata, channels = _channels(spec)
    keys = dict(spec.keys)
    #: by edge and downstream subtask: a task's channels lead to few of them
    keyings: dict[tuple[Edge, int], ChannelKeying | None] = {}

    def made(number: int, first: int, sides: list[ChannelSide]) -> ChannelRead:
        channel = channels[number]
        to = (channel.edge, channel.downstream_subtask)
        if to not in keyings:
            keyings[to] = _keying(channel, metadata, keys[str(channel.edge)], spec.record_type)
        return ChannelRead(
            sides,
            _name(channel),
            exchange_name(channel.edge),
            first,
            number * RECORDS_PER_CHANNEL,
            keyings[to],
        )

    def flushed(todo: list[tuple[int, int]], files: StateFiles) -> Iterator[list[ChannelRead]]:
        placed = [_placed(channels[number]) for number, _ in todo]
        try:
            with collector_paused(collect_after=math.inf):
                found = read_channels([h for sides in placed for _, _, h in sides], files)
            read = iter(found)
        except CheckpointFormatError:
            # the channels before the first that cannot be read come first, as in order
            good: list[ChannelRead] = []
            for number, first in todo:
                try:
                    sides = [
                        ChannelSide(s, o, read_channel(h, files)) for s, o, h in placed[len(good)]
                    ]
                except CheckpointFormatError:
                    if good:
                        yield good
                    raise
                good.append(made(number, first, sides))
            yield good
            return
        with collector_paused(collect_after=math.inf):
            ready = [
                made(number, first, [ChannelSide(s, o, next(read)) for s, o, _ in sides])
                for (number, first), sides in zip(todo, placed, strict=True)
            ]
        yield ready

    todo: list[tuple[int, int]] = []
    size = 0
    with StateFiles(spec.directory, dict(spec.reroot)) as files:
        for batch in batches:
            numbers = batch.column("channels").to_pylist()
            firsts = batch.column("first_buffers").to_pylist()
            for number, first in zip(
                itertools.chain.from_iterable(numbers),
                itertools.chain.from_iterable(firsts),
                strict=True,
            ):
                todo.append((number, first))
                channel = channels[number]
                size += sum(h.state_size for h in (channel.input, channel.output) if h is not None)
                if size >= BATCH_BYTES:
                    yield from flushed(todo, files)
                    todo, size = [], 0
        if todo:
            yield from flushed(todo, files)


def _name(channel: LogicalChannel) -> ChannelName:
    edge = channel.edge
    return ChannelName(
        str(edge), edge.downstream, channel.upstream_subtask, channel.downstream_subtask
    )


def _keying(
    channel: LogicalChannel,
    metadata: CheckpointMetadata,
    key: KeySelector | None,
    record_type: str | None,
) -> ChannelKeying | None:
    """How the channel's records are keyed: by the edge's key, into the key groups of the
    subtask it leads to (None where the edge is not keyed)."""
    if key is None or record_type is None:
        return None
    down = metadata.operator(channel.edge.downstream)
    return ChannelKeying(
        record_type,
        key,
        down.max_parallelism,
        compute_key_group_range_for_operator_index(
            down.max_parallelism, down.parallelism, channel.downstream_subtask
        ),
    )


def _placed(channel: LogicalChannel) -> list[tuple[str, str, ChannelStateHandle]]:
    """A channel's sides: (side, the operator holding it, its handle), input side first."""
    edge = channel.edge
    return [
        (side, operator, handle)
        for side, operator, handle in (
            ("input", edge.downstream, channel.input),
            ("output", edge.upstream, channel.output),
        )
        if handle is not None
    ]


def load_checkpoint(
    spark: SparkSession,
    path: str | Path,
    exchanges: Mapping[str, ExchangeSpec],
    record_type: str | None,
    *,
    edges: Iterable[Edge] | None = None,
    reroot: Mapping[str, str] | None = None,
    segment_size: int = DEFAULT_SEGMENT_SIZE,
) -> SparkDataset:
    """A checkpoint as the DataFrames of its dataset, its channel state read by the
    executors (the tables the rescale pipeline reads, as ``tables.load`` gives them)."""
    return load_planned(
        spark,
        plan_read(
            path, exchanges, record_type, edges=edges, reroot=reroot, segment_size=segment_size
        ),
    )


def load_planned(
    spark: SparkSession, planned: tuple[ExportPlan, ReadSpec, list[tuple[list[int], list[int]]]]
) -> SparkDataset:
    """:func:`load_checkpoint` of a plan :func:`plan_read` made (before Spark started)."""
    plan, read, groups = planned
    tasks = spark.createDataFrame(
        [(channels, firsts) for channels, firsts in groups] or [([], [])], _TASK_SCHEMA
    ).repartition(max(1, len(groups)))
    frames = {
        name: spark.createDataFrame(table.to_pandas(), spark_schema(SCHEMAS[name]))
        for name, table in plan.tables.items()
    }
    buffers: DataFrame = tasks.mapInArrow(
        functools.partial(read_buffers, read), spark_schema(SCHEMAS["buffers"])
    )
    fragments: DataFrame = tasks.mapInArrow(
        functools.partial(read_fragments, read), spark_schema(SCHEMAS["fragments"])
    )
    return SparkDataset(
        plan.manifest,
        frames["operators"],
        frames["exchanges"],
        buffers,
        fragments,
        frames["keyed_state"],
        JobShape.of_tables(plan.tables),
    )
