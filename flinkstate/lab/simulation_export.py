"""A checkpoint the simulator completed, as a dataset: the same tables a real Flink checkpoint
gives (:mod:`flinkstate.flinkcheckpoint.export`), so the Spark pipeline and the notebooks read
both alike. The format itself (:mod:`flinkstate.dataset`) knows nothing of the simulator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from flinkstate.dataset import FORMAT, SCHEMAS, VERSION, Dataset
from flinkstate.javahash import JavaType
from flinkstate.keygroups import assign_to_key_group
from flinkstate.rescale.channel_selection import ChannelSelection
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.runtime.buffer.records import Record
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint, InputChannelInfo
from flinkstate.runtime.jobgraph import JobGraph, OperatorKind
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world.world import NetworkWorld


def from_simulation(world: NetworkWorld, checkpoint: Checkpoint, description: str) -> Dataset:
    """The tables of one checkpoint the simulator completed.

    Examples
    --------
    The checkpoint the restart of ``baseline-recovery`` restores from, as tables:

    >>> from flinkstate.lab.scenario_run import run_scenario
    >>> run = run_scenario("baseline-recovery", seed=0)
    >>> dataset = from_simulation(run.job, run.checkpoint, "the baseline's checkpoint")
    >>> dataset.manifest["checkpoint_type"], dataset.manifest["segment_size"]
    ('unaligned', 4096)
    >>> {name: table.num_rows for name, table in dataset.tables.items()}
    {'operators': 3, 'exchanges': 2, 'buffers': 31, 'fragments': 42, 'keyed_state': 8}
    """
    graph = world.graph
    buffers, fragments = _channel_state_rows(checkpoint, graph, world.tasks, world.records)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "source": "flinkstate simulator",
        "description": description,
        "checkpoint_id": checkpoint.id,
        "checkpoint_type": "unaligned" if checkpoint.unaligned else "aligned",
        "segment_size": world.config.segment_size,
    }
    rows = {
        "operators": _operator_rows(graph),
        "exchanges": _exchange_rows(graph),
        "buffers": buffers,
        "fragments": fragments,
        "keyed_state": _keyed_state_rows(checkpoint, graph),
    }
    return Dataset(
        manifest, {name: pa.Table.from_pylist(rows[name], schema=SCHEMAS[name]) for name in SCHEMAS}
    )


def _operator_rows(graph: JobGraph) -> list[dict[str, Any]]:
    """Each operator with its parallelism and max parallelism."""
    return [
        {
            "operator": op.name,
            "kind": op.kind.value,
            "parallelism": op.parallelism,
            "max_parallelism": op.effective_max_parallelism,
        }
        for op in graph.operators
    ]


def _exchange_rows(graph: JobGraph) -> list[dict[str, Any]]:
    """Each exchange with its partitioner, mappers and key type: what the dataset's readers
    need to route its state, which a real ``_metadata`` does not record."""
    return [
        {
            "exchange": e.name,
            "upstream": e.upstream,
            "downstream": e.downstream,
            "partitioner": e.partitioner.flink_class,
            "downstream_mapper": e.partitioner.downstream_mapper.name,
            "upstream_mapper": e.partitioner.upstream_mapper.name,
            "unaligned_supported": graph.checkpoints_unaligned(e),
            "key_type": None
            if ChannelSelection.of(e.partitioner) is ChannelSelection.NONE
            else JavaType.LONG.java_name,
        }
        for e in graph.exchanges
    ]


def _channel_state_rows(
    checkpoint: Checkpoint,
    graph: JobGraph,
    tasks: Mapping[str, Task],
    records: Mapping[int, Record],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A buffer row per persisted buffer, input state first, and a fragment row per piece of
    a record in it (with its key group on a keyBy exchange)."""
    buffers: list[dict[str, Any]] = []
    fragments: list[dict[str, Any]] = []
    states = [("input", s) for s in checkpoint.input_channel_state] + [
        ("output", s) for s in checkpoint.result_subpartition_state
    ]
    for side, state in states:
        task = tasks[state.owner]
        operator, subtask = task.operator, task.index
        if isinstance(state.info, InputChannelInfo):
            exchange = task.gates[state.info.gate].exchange
            position = (state.info.gate, state.info.channel)
        else:
            exchange = task.partitions[state.info.partition].exchange
            position = (state.info.partition, state.info.subpartition)
        keyed = exchange.partitioner is Partitioner.HASH
        max_p = graph.operator(exchange.downstream).effective_max_parallelism
        for order, buffer in enumerate(state.buffers):
            buffer_id = len(buffers)
            buffers.append(
                {
                    "buffer_id": buffer_id,
                    "operator": operator,
                    "subtask": subtask,
                    "side": side,
                    "exchange": exchange.name,
                    "gate_or_partition": position[0],
                    "channel_or_subpartition": position[1],
                    "order": order,
                    "size": buffer.size,
                }
            )
            for at, fragment in enumerate(buffer.fragments):
                record = records[fragment.record]
                if not record.is_record:
                    continue  # a watermark's bytes count in the buffer's size, not as a record
                fragments.append(
                    {
                        "buffer_id": buffer_id,
                        "position": at,
                        "record": record.id,
                        "key": record.key,
                        "key_string": None,
                        "key_group": assign_to_key_group(record.key, max_p, "long")
                        if keyed
                        else None,
                        "record_bytes": fragment.total,
                        "fragment_start": fragment.start,
                        "fragment_bytes": fragment.length,
                        "continues_from_previous": not fragment.is_first,
                        "continues_into_next": not fragment.is_last,
                    }
                )
    return buffers, fragments


def _keyed_state_rows(checkpoint: Checkpoint, graph: JobGraph) -> list[dict[str, Any]]:
    """A row per key group of each keyed subtask's state, with its entries."""
    keyed_state: list[dict[str, Any]] = []
    for sub in checkpoint.subtasks:
        op = graph.operator(sub.operator)
        if op.kind is not OperatorKind.KEYED or sub.key_groups is None:
            continue
        per_group = Counter(
            assign_to_key_group(key, op.effective_max_parallelism, "long")
            for key, _ in sub.keyed_state
        )
        for group in sorted(per_group):
            keyed_state.append(
                {
                    "operator": sub.operator,
                    "subtask": sub.index,
                    "key_group_start": sub.key_groups.start,
                    "key_group_end": sub.key_groups.end,
                    "key_group": group,
                    "entries": per_group[group],
                }
            )
    return keyed_state
