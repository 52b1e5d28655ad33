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
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from flinkstate.dataset import Dataset
from flinkstate.errors import InvalidParameterError
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

#: Flink's configuration keys the forecast reads, with the model's parameter each sets and
#: Flink's default where the file does not give it
NETWORK_KEYS: Mapping[str, tuple[str, int]] = {
    "taskmanager.memory.segment-size": ("segment_size", DEFAULT_SEGMENT_SIZE),
    "taskmanager.network.memory.buffers-per-channel": ("buffers_per_channel", 2),
    "taskmanager.network.memory.floating-buffers-per-gate": ("floating_buffers", 8),
    "taskmanager.network.memory.max-buffers-per-channel": ("max_buffers_per_channel", 10),
    "taskmanager.numberOfTaskSlots": ("slots_per_tm", 1),
    "execution.checkpointing.max-subtasks-per-channel-state-file": (
        "subtasks_per_state_file",
        5,
    ),
}


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
    or a key given twice, is refused naming the file and line."""
    values: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
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


def find_job_config(checkpoint: Path) -> Path | None:
    """The ``job-config.txt`` beside a checkpoint: in its ``chk-N`` folder, its job's folder
    or the folder above (where the committed real checkpoints keep it)."""
    directory = checkpoint_dir(checkpoint).resolve()
    for folder in (directory, directory.parent, directory.parent.parent):
        candidate = folder / JOB_CONFIG
        if candidate.is_file():
            # named as the user would name it: below the working directory, relative to it
            with contextlib.suppress(ValueError):
                return candidate.relative_to(Path.cwd())
            return candidate
    return None


def network_settings(
    config: Mapping[str, str], source: str = JOB_CONFIG
) -> tuple[dict[str, object], tuple[Setting, ...]]:
    """The model's network parameters from a job's configuration, Flink's defaults where it
    says nothing, each with where it came from; sizes as Flink writes them (``4kb``)."""
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
            value = check_segment_size(parse_bytes(raw))
        else:
            try:
                value = int(raw)
            except ValueError:
                raise InvalidParameterError(f"{source}: {key}={raw!r} is not a number") from None
        values[name] = value
        settings.append(Setting(name, value, f"{source}: {key}={raw}"))
    return values, tuple(settings)


def real_job(dataset: Dataset, checkpoint_id: int) -> RealJob:
    """A real checkpoint's dataset (:func:`~flinkstate.flinkcheckpoint.export.to_dataset`) in
    the model's terms: the graph of the exchanges that carried in-flight data, and every
    persisted chunk as a buffer of record fragments."""
    tables = dataset.tables
    operators = tables["operators"].to_pandas()
    exchanges = tables["exchanges"].to_pandas()
    buffers = tables["buffers"].to_pandas()
    fragments = tables["fragments"].to_pandas()
    if exchanges.empty or buffers["size"].sum() == 0:
        raise InvalidParameterError(
            f"checkpoint {checkpoint_id} holds no in-flight data: nothing to recover, nothing "
            "to forecast"
        )
    if exchanges["exchange"].duplicated().any():
        raise InvalidParameterError(
            "two exchanges join the same two operators; the forecast cannot tell their "
            "in-flight data apart"
        )
    _check_only_records(buffers, fragments)
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
        str(row["exchange"]): key_type_of(str(row["exchange"]), row.get("key_type"))
        for _, row in exchanges.iterrows()
    }
    records, record_exchange = _records(buffers, fragments, by_name, key_types)
    inputs, outputs = _channel_states(buffers, fragments, graph, by_name)
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
    left_out = tuple(str(o) for o in operators["operator"] if o not in modelled)
    return RealJob(checkpoint, left_out, record_exchange)


def _check_only_records(buffers: pd.DataFrame, fragments: pd.DataFrame) -> None:
    """Every byte in flight is a record's: the dataset has fragments of records only, so a
    chunk with watermarks or other elements between them holds bytes no fragment covers."""
    covered = fragments.groupby("buffer_id")["fragment_bytes"].sum()
    sizes = buffers.set_index("buffer_id")["size"]
    gap = sizes - covered.reindex(sizes.index, fill_value=0)
    other = buffers.set_index("buffer_id").loc[gap[gap != 0].index]
    if len(other):
        row = other.iloc[0]
        raise InvalidParameterError(
            f"the {row['side']} state of {row['operator']}[{row['subtask']}] on "
            f"{row['exchange']} holds {int(gap[gap != 0].iloc[0])} bytes of stream elements "
            "other than records (watermarks, latency markers, statuses): the forecast models "
            "records only"
        )


def _graph(operators: pd.DataFrame, exchanges: pd.DataFrame, buffers: pd.DataFrame) -> JobGraph:
    """The operators at the ends of the exchanges with in-flight data, each exchange's edge
    ordered as Flink numbers its gates and partitions."""
    rows = {str(r["operator"]): r for r in operators.to_dict("records")}
    upstreams = set(exchanges["upstream"])
    downstreams = set(exchanges["downstream"])
    first_gate = _first_index(buffers, "input")
    first_partition = _first_index(buffers, "output")
    made: list[Exchange] = []
    for row in exchanges.to_dict("records"):
        partitioner = Partitioner.parse(str(row["partitioner"]))
        made.append(Exchange(str(row["upstream"]), str(row["downstream"]), partitioner))
    made.sort(
        key=lambda e: (
            first_gate.get(e.name, math.inf),
            first_partition.get(e.name, math.inf),
            e.name,
        )
    )
    vertices = []
    for name in sorted(upstreams | downstreams, key=list(rows).index):
        row = rows[name]
        inputs = [e for e in made if e.downstream == name]
        if not inputs:
            kind = OperatorKind.SOURCE
        elif all(e.partitioner is Partitioner.HASH for e in inputs):
            kind = OperatorKind.KEYED
        else:
            kind = OperatorKind.MAP
        vertices.append(
            Operator(
                name,
                int(row["parallelism"]),
                kind,
                max_parallelism=int(row["max_parallelism"]),
            )
        )
    return JobGraph(tuple(vertices), tuple(made))


def _first_index(buffers: pd.DataFrame, side: str) -> dict[str, int]:
    """Per exchange, the gate (input side) or partition (output side) index Flink gave it."""
    chosen = buffers[buffers["side"] == side]
    return {
        str(k): int(v) for k, v in chosen.groupby("exchange")["gate_or_partition"].min().items()
    }


def model_keys(keys: pd.Series, strings: pd.Series, key_type: JavaType) -> npt.NDArray[np.int64]:
    """The model's key of each record: the model keys records by a Java ``Long``, so a key of
    another type becomes the ``Long`` with its ``hashCode()`` (its hash as an unsigned 32-bit
    number: such a long's high half is zero, so ``Long.hashCode`` gives the low half back).
    Key groups and owners are then Flink's for the original key."""
    if key_type is JavaType.LONG:
        longs: npt.NDArray[np.int64] = keys.fillna(0).astype(np.int64).to_numpy()
        return longs
    if key_type is JavaType.STRING:
        codes = string_hash_codes(strings.fillna("").to_numpy(dtype=object))
    else:  # an Integer: its own hash code
        codes = keys.fillna(0).astype(np.int64).to_numpy().astype(np.int32)
    unsigned: npt.NDArray[np.int64] = codes.astype(np.int64) & 0xFFFFFFFF
    return unsigned


def _records(
    buffers: pd.DataFrame,
    fragments: pd.DataFrame,
    exchanges: Mapping[str, Exchange],
    key_types: Mapping[str, JavaType],
) -> tuple[list[Record], dict[int, str]]:
    """Every record in flight: its key (0 on an exchange that is not keyed; of another type
    than Long, :func:`model_keys`), its payload size (the framed length without its 4-byte
    length), the old upstream subtask that wrote it and its position in that subtask's stream
    (a channel's input state before its output state)."""
    starts = fragments[~fragments["continues_from_previous"]].merge(
        buffers[["buffer_id", "exchange", "side", "subtask", "channel_or_subpartition"]],
        on="buffer_id",
    )
    starts = starts.sort_values("record")
    starts["upstream"] = starts["subtask"].where(
        starts["side"] == "output", starts["channel_or_subpartition"]
    )
    starts["source"] = [
        exchanges[str(name)].upstream + f"[{int(up)}]"
        for name, up in zip(starts["exchange"], starts["upstream"], strict=True)
    ]
    starts["seq"] = starts.groupby("source").cumcount()
    starts["model_key"] = np.int64(0)
    for name, key_type in key_types.items():
        rows = starts["exchange"] == name
        if rows.any():
            strings = starts.loc[rows, "key_string"] if "key_string" in starts else None
            starts.loc[rows, "model_key"] = model_keys(
                starts.loc[rows, "key"],
                strings if strings is not None else pd.Series([""] * int(rows.sum())),
                key_type,
            )
    records = [
        Record(int(r), int(k), int(size) - 4, str(source), int(seq))
        for r, k, size, source, seq in zip(
            starts["record"],
            starts["model_key"],
            starts["record_bytes"],
            starts["source"],
            starts["seq"],
            strict=True,
        )
    ]
    return records, dict(
        zip(starts["record"].astype(int), starts["exchange"].astype(str), strict=True)
    )


def _channel_states(
    buffers: pd.DataFrame,
    fragments: pd.DataFrame,
    graph: JobGraph,
    exchanges: Mapping[str, Exchange],
) -> tuple[tuple[ChannelState, ...], tuple[ChannelState, ...]]:
    """Each persisted channel's chunks as buffers of fragments, in the order Flink wrote them
    (empty chunks carry nothing and are left out)."""
    by_buffer: dict[int, list[Fragment]] = defaultdict(list)
    ordered = fragments.sort_values(["buffer_id", "position"])
    for buffer_id, record, start, length, total in zip(
        ordered["buffer_id"],
        ordered["record"],
        ordered["fragment_start"],
        ordered["fragment_bytes"],
        ordered["record_bytes"],
        strict=True,
    ):
        by_buffer[int(buffer_id)].append(Fragment(int(record), int(start), int(length), int(total)))
    inputs: list[ChannelState] = []
    outputs: list[ChannelState] = []
    keys = ["exchange", "side", "subtask", "channel_or_subpartition"]
    for (name, side, subtask, channel), group in buffers[buffers["size"] > 0].groupby(keys):
        exchange = exchanges[str(name)]
        persisted = tuple(
            PersistedBuffer(tuple(by_buffer[int(b)]))
            for b in group.sort_values("order")["buffer_id"]
        )
        up, down = graph.operator(exchange.upstream), graph.operator(exchange.downstream)
        if side == "input":
            consumer, producer = down.subtask_name(int(subtask)), up.subtask_name(int(channel))
            info: InputChannelInfo | ResultSubpartitionInfo = InputChannelInfo(
                graph.gate_index(exchange.data_set), int(channel)
            )
            inputs.append(
                ChannelState(consumer, exchange.channel_name(consumer, producer), info, persisted)
            )
        else:
            producer, consumer = up.subtask_name(int(subtask)), down.subtask_name(int(channel))
            info = ResultSubpartitionInfo(graph.partition_index(exchange.data_set), int(channel))
            outputs.append(
                ChannelState(
                    producer, exchange.subpartition_name(producer, consumer), info, persisted
                )
            )
    return tuple(inputs), tuple(outputs)
