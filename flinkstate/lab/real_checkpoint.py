"""A checkpoint Flink wrote, in the model's terms: the job its in-flight data crossed (a
:class:`~flinkstate.runtime.jobgraph.JobGraph` of the exchanges that carried it and the operators
at their ends), every persisted chunk as a
:class:`~flinkstate.runtime.checkpoint.checkpoint.PersistedBuffer` of record
:class:`~flinkstate.runtime.buffer.records.Fragment`\\ s cut where Flink's framing cut them, and
the network settings of the ``job-config.txt`` beside it: what the forecast
(:mod:`flinkstate.lab.forecast`) restores and runs.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from flinkstate.dataset import Dataset
from flinkstate.errors import CheckpointFormatError, InvalidParameterError
from flinkstate.flinkcheckpoint.files import open_regular
from flinkstate.flinkcheckpoint.summary import checkpoint_dir
from flinkstate.javahash import JavaType, string_hash_codes
from flinkstate.keygroups import compute_key_group_range_for_operator_index
from flinkstate.memory_segment import DEFAULT_SEGMENT_SIZE, check_segment_size
from flinkstate.memory_size import parse_bytes
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.rescale.routes import key_type_of
from flinkstate.runtime.buffer.records import Fragment, Record
from flinkstate.runtime.checkpoint.checkpoint import (
    ChannelState,
    Checkpoint,
    InputChannelInfo,
    PersistedBuffer,
    ResultSubpartitionInfo,
    SubtaskState,
)
from flinkstate.runtime.jobgraph import Exchange, JobGraph, Operator, OperatorKind

#: the file beside a real checkpoint that holds its job's configuration (``key=value`` lines)
JOB_CONFIG = "job-config.txt"
#: the largest job configuration read: a job's Flink configuration is kilobytes, so a larger
#: file is not one (and reading it whole would cost its size in memory)
MAX_JOB_CONFIG_BYTES = 1024 * 1024

#: Flink's configuration keys the forecast reads, with the model's parameter each sets and
#: Flink's default where the file does not give it
NETWORK_KEYS: Mapping[str, tuple[str, int]] = {
    "taskmanager.memory.segment-size": ("segment_size", DEFAULT_SEGMENT_SIZE),
    "taskmanager.network.memory.buffers-per-channel": ("buffers_per_channel", 2),
    "taskmanager.network.memory.floating-buffers-per-gate": ("floating_buffers", 8),
    "taskmanager.network.memory.max-buffers-per-channel": ("max_buffers_per_channel", 10),
    "taskmanager.numberOfTaskSlots": ("slots_per_tm", 1),
    # Flink's CheckpointingOptions.UNALIGNED_MAX_SUBTASKS_PER_CHANNEL_STATE_FILE (1.20 to
    # master), with no deprecated or fallback key
    "execution.checkpointing.unaligned.max-subtasks-per-channel-state-file": (
        "subtasks_per_state_file",
        5,
    ),
}

#: the least value of each count the forecast reads (``NetworkConfig``'s bounds): a gate may
#: have no exclusive or floating buffers, but a subpartition, a TaskManager and a channel
#: state file hold at least one
MINIMUM: Mapping[str, int] = {
    "buffers_per_channel": 0,
    "floating_buffers": 0,
    "max_buffers_per_channel": 1,
    "slots_per_tm": 1,
    "subtasks_per_state_file": 1,
}
#: what Java's ``Integer.parseInt`` takes: a sign, then decimal digits (``\\d`` matches the
#: Unicode digits ``Character.digit`` reads too)
_JAVA_INT = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class Setting:
    """One network setting of the forecast and where it came from."""

    name: str
    value: object
    source: str


@dataclass(frozen=True)
class RealJob:
    """A real checkpoint in the model's terms: its job graph and the checkpoint to restore."""

    checkpoint: Checkpoint
    #: Flink's operators that no exchange with in-flight data touches (chained with one that
    #: does, or beside the job's stateful exchanges): not in the model's graph
    left_out: tuple[str, ...]
    #: each record's exchange
    record_exchange: Mapping[int, str]

    @property
    def graph(self) -> JobGraph:
        assert self.checkpoint.graph is not None
        return self.checkpoint.graph


def read_job_config(path: Path) -> dict[str, str]:
    """``key=value`` lines (blank lines and ``#`` comments skipped); a line that is neither,
    or a key given twice, is refused naming the file and line. The file must be a regular
    file of at most :data:`MAX_JOB_CONFIG_BYTES` in UTF-8: a FIFO would block, a device or a
    huge file would fill the memory, and bytes that are not text cannot be a configuration."""
    values: dict[str, str] = {}
    for number, line in enumerate(_job_config_text(path).splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise InvalidParameterError(f"{path}:{number}: not a key=value line: {text[:60]!r}")
        if key.strip() in values:
            raise InvalidParameterError(f"{path}:{number}: {key.strip()} is given twice")
        values[key.strip()] = value.strip()
    return values


def _job_config_text(path: Path) -> str:
    """The text of a job's configuration file, read only if it is a regular file, at most
    :data:`MAX_JOB_CONFIG_BYTES` of it, decoded strictly as UTF-8; anything else refused in
    one line naming the file (and the byte where the text stops being UTF-8)."""
    what = "a job configuration (key=value lines)"
    try:
        file = open_regular(path, what)
    except FileNotFoundError:
        missing = "a link to a missing file" if path.is_symlink() else "no such file"
        raise InvalidParameterError(f"{path}: {what}: {missing}") from None
    with file:
        size = os.fstat(file.fileno()).st_size
        data = b"" if size > MAX_JOB_CONFIG_BYTES else file.read(MAX_JOB_CONFIG_BYTES + 1)
    if size > MAX_JOB_CONFIG_BYTES or len(data) > MAX_JOB_CONFIG_BYTES:
        raise CheckpointFormatError(
            str(path),
            MAX_JOB_CONFIG_BYTES,
            f"{what} of at most {MAX_JOB_CONFIG_BYTES} bytes, found {max(size, len(data))}",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CheckpointFormatError(
            str(path), error.start, f"{what} in UTF-8, found byte 0x{data[error.start]:02x}"
        ) from None
    if "\0" in text:
        raise CheckpointFormatError(
            str(path), data.index(0), f"{what} in UTF-8, found a NUL byte (UTF-16?)"
        )
    return text


def find_job_config(checkpoint: Path) -> Path | None:
    """The ``job-config.txt`` beside a checkpoint: in its ``chk-N`` folder, its job's folder
    or the folder above (where the committed real checkpoints keep it). Whatever has the name
    counts, a FIFO, a folder or a broken link included: :func:`read_job_config` refuses what is
    not a regular file, rather than the forecast taking Flink's defaults in silence."""
    directory = checkpoint_dir(checkpoint).resolve()
    for folder in (directory, directory.parent, directory.parent.parent):
        candidate = folder / JOB_CONFIG
        if os.path.lexists(candidate):
            # named as the user would name it: below the working directory, relative to it
            with contextlib.suppress(ValueError):
                return candidate.relative_to(Path.cwd())
            return candidate
    return None


def job_segment_size(checkpoint: str | Path, job_config: Path | None = None) -> Setting:
    """The job's ``taskmanager.memory.segment-size`` as its ``job-config.txt`` gives it (the
    one beside the checkpoint unless ``job_config`` names one), Flink's default where it does
    not, with where it came from: the size a dataset exported from the checkpoint cuts its
    buffers at, the forecast's too, since the checkpoint does not record it.

    Examples
    --------
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> setting = job_segment_size(real_checkpoint("keyed-hash-p2-p4"))
    >>> setting.value, setting.source
    (4096, 'job-config.txt: taskmanager.memory.segment-size=4kb')
    """
    config_file = job_config if job_config is not None else find_job_config(Path(checkpoint))
    config = {} if config_file is None else read_job_config(config_file)
    _, settings = network_settings(config, config_file.name if config_file else JOB_CONFIG)
    return next(s for s in settings if s.name == "segment_size")


def network_settings(
    config: Mapping[str, str], source: str = JOB_CONFIG
) -> tuple[dict[str, object], tuple[Setting, ...]]:
    """The model's network parameters from a job's configuration, Flink's defaults where it
    says nothing, each with where it came from; sizes as Flink writes them (``4kb``), counts
    as Flink's ``Integer.parseInt`` reads them, each at least its bound."""
    values: dict[str, object] = {}
    settings = []
    for key, (name, default) in NETWORK_KEYS.items():
        raw = config.get(key)
        if raw is None:
            values[name] = default
            settings.append(Setting(name, default, f"Flink's default ({key} not given)"))
            continue
        value: int
        if name == "segment_size":
            try:
                value = check_segment_size(parse_bytes(raw))
            except InvalidParameterError as error:
                raise InvalidParameterError(f"{source}: {key}={raw!r}: {error}") from None
        else:
            value = config_int(config, key, default, source)
            if value < MINIMUM[name]:
                raise InvalidParameterError(
                    f"{source}: {key}={raw!r}: must be at least {MINIMUM[name]}"
                )
        values[name] = value
        settings.append(Setting(name, value, f"{source}: {key}={raw}"))
    return values, tuple(settings)


def _unparsable(
    source: str, key: str, raw: str, why: str, cause: str = ""
) -> InvalidParameterError:
    """Flink's refusal of a value its option cannot parse (``Configuration.getOptional``),
    with the converter's own message where it has one."""
    caused = f", caused by '{cause}'" if cause else ""
    return InvalidParameterError(
        f"{source}: {key}={raw!r} {why} (Flink: \"Could not parse value '{raw}' for key "
        f"'{key}'.\"{caused})"
    )


def config_boolean(config: Mapping[str, str], key: str, default: bool, source: str) -> bool:
    """A boolean option as Flink reads it (``ConfigurationUtils.convertToBoolean``): ``true``
    or ``false`` in any case; anything else, an empty value included, Flink refuses rather
    than taking it as false, and so does the forecast."""
    raw = config.get(key)
    if raw is None:
        return default
    upper = raw.upper()
    if upper not in ("TRUE", "FALSE"):
        raise _unparsable(
            source,
            key,
            raw,
            "is neither true nor false",
            f"Unrecognized option for boolean: {raw}. Expected either true or false(case "
            "insensitive)",
        )
    return upper == "TRUE"


def config_int(config: Mapping[str, str], key: str, default: int, source: str) -> int:
    """An int option as Flink reads it (``Integer.parseInt``): an optional sign and decimal
    digits, nothing else (no spaces, ``_`` or ``.``), within a Java int."""
    raw = config.get(key)
    if raw is None:
        return default
    if not _JAVA_INT.fullmatch(raw):
        raise _unparsable(
            source, key, raw, "is not a number Flink reads as an int", f'For input string: "{raw}"'
        )
    value = int(raw)
    if not -(2**31) <= value < 2**31:
        raise _unparsable(source, key, raw, "does not fit a Java int", f'For input string: "{raw}"')
    return value


class _Buffer(NamedTuple):
    """One row of the dataset's ``buffers`` table: a persisted chunk of one channel."""

    buffer_id: int
    operator: str
    subtask: int
    side: str
    exchange: str
    gate_or_partition: int
    channel_or_subpartition: int
    order: int
    size: int


class _Piece(NamedTuple):
    """One row of the dataset's ``fragments`` table: a record's bytes in one chunk."""

    buffer_id: int
    position: int
    record: int
    key: int | None
    key_string: str | None
    record_bytes: int
    fragment_start: int
    fragment_bytes: int
    continues_from_previous: bool


_Row = TypeVar("_Row", _Buffer, _Piece)


def _rows(table: pa.Table, row: type[_Row]) -> list[_Row]:
    """The table's rows as ``row`` tuples: each column read into Python values once, rather
    than a value at a time."""
    columns = [table.column(name).to_pylist() for name in row._fields]
    return [row(*values) for values in zip(*columns, strict=True)]


def real_job(dataset: Dataset, checkpoint_id: int) -> RealJob:
    """A real checkpoint's dataset (:func:`~flinkstate.flinkcheckpoint.export.to_dataset`) in
    the model's terms: the graph of the exchanges that carried in-flight data, and every
    persisted chunk as a buffer of record fragments."""
    tables = dataset.tables
    operators = tables["operators"].to_pylist()
    exchanges = tables["exchanges"].to_pylist()
    buffers = _rows(tables["buffers"], _Buffer)
    pieces = _rows(tables["fragments"], _Piece)
    if not exchanges or sum(b.size for b in buffers) == 0:
        raise InvalidParameterError(
            f"checkpoint {checkpoint_id} holds no in-flight data: nothing to recover, nothing "
            "to forecast"
        )
    if len({row["exchange"] for row in exchanges}) < len(exchanges):
        raise InvalidParameterError(
            "two exchanges join the same two operators; the forecast cannot tell their "
            "in-flight data apart"
        )
    _check_only_records(buffers, pieces)
    graph = _graph(operators, exchanges, buffers)
    for exchange in graph.exchanges:
        if not graph.checkpoints_unaligned(exchange):
            raise InvalidParameterError(
                f"{exchange.name} carried in-flight data, but Flink checkpoints a "
                f"{exchange.partitioner.datastream_call} exchange (and every input of its "
                "consumer) aligned, without any: the partitioner given is not the job's"
            )
    by_name = {e.name: e for e in graph.exchanges}
    key_types = {
        row["exchange"]: key_type_of(row["exchange"], row["key_type"]) for row in exchanges
    }
    records, record_exchange = _records(buffers, pieces, graph, by_name, key_types)
    inputs, outputs = _channel_states(buffers, pieces, graph, by_name)
    subtasks = tuple(
        SubtaskState(
            op.subtask_name(index),
            op.name,
            index,
            0,
            compute_key_group_range_for_operator_index(
                op.effective_max_parallelism, op.parallelism, index
            )
            if op.kind is OperatorKind.KEYED
            else None,
            (),
        )
        for op in graph.operators
        for index in range(op.parallelism)
    )
    checkpoint = Checkpoint(
        checkpoint_id, True, 0, 0, subtasks, inputs, outputs, graph, tuple(records)
    )
    modelled = {op.name for op in graph.operators}
    left_out = tuple(row["operator"] for row in operators if row["operator"] not in modelled)
    return RealJob(checkpoint, left_out, record_exchange)


def _check_only_records(buffers: Sequence[_Buffer], pieces: Sequence[_Piece]) -> None:
    """Every byte in flight is a record's: the dataset has fragments of records only, so a
    chunk with watermarks or other elements between them holds bytes no fragment covers."""
    covered: dict[int, int] = defaultdict(int)
    for piece in pieces:
        covered[piece.buffer_id] += piece.fragment_bytes
    for buffer in buffers:
        gap = buffer.size - covered.get(buffer.buffer_id, 0)
        if gap != 0:
            raise InvalidParameterError(
                f"the {buffer.side} state of {buffer.operator}[{buffer.subtask}] on "
                f"{buffer.exchange} holds {gap} bytes of stream elements "
                "other than records (watermarks, latency markers, statuses): the forecast "
                "models records only"
            )


def _graph(
    operators: Sequence[Mapping[str, Any]],
    exchanges: Sequence[Mapping[str, Any]],
    buffers: Sequence[_Buffer],
) -> JobGraph:
    """The operators at the ends of the exchanges with in-flight data, each exchange's edge
    ordered as Flink numbers its gates and partitions."""
    first_gate = _first_index(buffers, "input")
    first_partition = _first_index(buffers, "output")
    made = sorted(
        (
            Exchange(row["upstream"], row["downstream"], Partitioner.parse(row["partitioner"]))
            for row in exchanges
        ),
        key=lambda e: (
            first_gate.get(e.name, math.inf),
            first_partition.get(e.name, math.inf),
            e.name,
        ),
    )
    ends = {name for e in made for name in (e.upstream, e.downstream)}
    rows = {row["operator"]: row for row in operators}
    vertices = []
    for name, row in rows.items():  # in the order of the operators table
        if name not in ends:
            continue
        inputs = [e for e in made if e.downstream == name]
        if not inputs:
            kind = OperatorKind.SOURCE
        elif all(e.partitioner is Partitioner.HASH for e in inputs):
            kind = OperatorKind.KEYED
        else:
            kind = OperatorKind.MAP
        vertices.append(
            Operator(name, row["parallelism"], kind, max_parallelism=row["max_parallelism"])
        )
    return JobGraph(tuple(vertices), tuple(made))


def _first_index(buffers: Iterable[_Buffer], side: str) -> dict[str, int]:
    """Per exchange, the gate (input side) or partition (output side) index Flink gave it."""
    first: dict[str, int] = {}
    for buffer in buffers:
        if buffer.side == side:
            index = first.get(buffer.exchange, buffer.gate_or_partition)
            first[buffer.exchange] = min(index, buffer.gate_or_partition)
    return first


def model_keys(
    keys: Sequence[int | None] | npt.NDArray[np.int64],
    strings: Sequence[str | None] | npt.NDArray[np.object_],
    key_type: JavaType,
) -> npt.NDArray[np.int64]:
    """The model's key of each record: the model keys records by a Java ``Long``, so a key of
    another type becomes the ``Long`` with its ``hashCode()`` (its hash as an unsigned 32-bit
    number: such a long's high half is zero, so ``Long.hashCode`` gives the low half back).
    Key groups and owners are then Flink's for the original key. A missing key (None) is 0,
    a missing string ``""``."""
    if key_type is JavaType.STRING:
        texts = np.array(["" if s is None else s for s in strings], dtype=object)
        codes = string_hash_codes(texts)
    else:
        longs = np.array([0 if k is None else k for k in keys], dtype=np.int64)
        if key_type is JavaType.LONG:
            return longs
        codes = longs.astype(np.int32)  # an Integer: its own hash code
    unsigned: npt.NDArray[np.int64] = codes.astype(np.int64) & 0xFFFFFFFF
    return unsigned


def _records(
    buffers: Sequence[_Buffer],
    pieces: Sequence[_Piece],
    graph: JobGraph,
    exchanges: Mapping[str, Exchange],
    key_types: Mapping[str, JavaType],
) -> tuple[list[Record], dict[int, str]]:
    """Every record in flight: its key (0 on an exchange that is not keyed; of another type
    than Long, :func:`model_keys`), its payload size (the framed length without its 4-byte
    length), the old upstream subtask that wrote it and its position in that subtask's stream
    (a channel's input state before its output state)."""
    by_id = {b.buffer_id: b for b in buffers}
    starts = sorted(
        (p for p in pieces if not p.continues_from_previous and p.buffer_id in by_id),
        key=lambda p: p.record,
    )
    by_exchange: dict[str, list[int]] = defaultdict(list)  # rows of starts
    for row, piece in enumerate(starts):
        by_exchange[by_id[piece.buffer_id].exchange].append(row)
    keys = [0] * len(starts)
    for name, rows in by_exchange.items():
        found = model_keys(
            [starts[r].key for r in rows], [starts[r].key_string for r in rows], key_types[name]
        )
        for r, key in zip(rows, found.tolist(), strict=True):
            keys[r] = key
    records: list[Record] = []
    record_exchange: dict[int, str] = {}
    sources: dict[tuple[str, int], str] = {}  # the old upstream subtask, by exchange and index
    seqs: dict[str, int] = defaultdict(int)  # records so far of each old upstream subtask
    for piece, key in zip(starts, keys, strict=True):
        buffer = by_id[piece.buffer_id]
        writer = buffer.subtask if buffer.side == "output" else buffer.channel_or_subpartition
        source = sources.get((buffer.exchange, writer))
        if source is None:
            upstream = graph.operator(exchanges[buffer.exchange].upstream)
            source = sources[buffer.exchange, writer] = upstream.subtask_name(writer)
        records.append(Record(piece.record, key, piece.record_bytes - 4, source, seqs[source]))
        seqs[source] += 1
        record_exchange[piece.record] = buffer.exchange
    return records, record_exchange


def _channel_states(
    buffers: Sequence[_Buffer],
    pieces: Sequence[_Piece],
    graph: JobGraph,
    exchanges: Mapping[str, Exchange],
) -> tuple[tuple[ChannelState, ...], tuple[ChannelState, ...]]:
    """Each persisted channel's chunks as buffers of fragments, in the order Flink wrote them
    (empty chunks carry nothing and are left out)."""
    by_buffer: dict[int, list[Fragment]] = defaultdict(list)
    for p in sorted(pieces, key=lambda p: (p.buffer_id, p.position)):
        fragment = Fragment(p.record, p.fragment_start, p.fragment_bytes, p.record_bytes)
        by_buffer[p.buffer_id].append(fragment)
    channels: dict[tuple[str, str, int, int], list[_Buffer]] = defaultdict(list)
    for b in buffers:
        if b.size > 0:
            channels[b.exchange, b.side, b.subtask, b.channel_or_subpartition].append(b)
    inputs: list[ChannelState] = []
    outputs: list[ChannelState] = []
    for (name, side, subtask, channel), chunks in sorted(channels.items()):
        exchange = exchanges[name]
        persisted = tuple(
            PersistedBuffer(tuple(by_buffer[b.buffer_id]))
            for b in sorted(chunks, key=lambda b: b.order)
        )
        up, down = graph.operator(exchange.upstream), graph.operator(exchange.downstream)
        if side == "input":
            consumer, producer = down.subtask_name(subtask), up.subtask_name(channel)
            info: InputChannelInfo | ResultSubpartitionInfo = InputChannelInfo(
                graph.gate_index(exchange.data_set), channel
            )
            inputs.append(
                ChannelState(consumer, exchange.channel_name(consumer, producer), info, persisted)
            )
        else:
            producer, consumer = up.subtask_name(subtask), down.subtask_name(channel)
            info = ResultSubpartitionInfo(graph.partition_index(exchange.data_set), channel)
            outputs.append(
                ChannelState(
                    producer, exchange.subpartition_name(producer, consumer), info, persisted
                )
            )
    return tuple(inputs), tuple(outputs)
