"""The movement table as the model's state assignment gives it: the reference both the Spark
pipeline and the pandas benchmark baseline are checked against."""

from __future__ import annotations

from collections import defaultdict

import pandas as pd

from flinkstate.lab.scenario_run import ScenarioRun
from flinkstate.runtime.checkpoint.state_assignment import RecoveredChunk, StateAssignment
from flinkstate.spark.rescaling import MOVEMENT_COLUMNS, MOVEMENT_KEYS

SUMS = MOVEMENT_COLUMNS[len(MOVEMENT_KEYS) :]


def model_movement(assignment: StateAssignment, label: int) -> pd.DataFrame:
    """The movement table from the model's state assignment: every recovered chunk, where it
    goes, and whether its records pass the consumer's filter."""
    graph = assignment.graph
    sums: dict[tuple[object, ...], list[int]] = defaultdict(lambda: [0] * len(SUMS))

    def add(name: str, side: str, old: int, new: int, chunk: RecoveredChunk, filters: bool) -> None:
        row = sums[(label, name, side, old, new)]
        row[0] += 1
        row[1] += chunk.size
        for fragment in chunk.fragments:
            if not fragment.is_first:
                continue
            dropped = filters and assignment.expected_subtask[(fragment.record, name)] != new
            row[2] += 1
            row[3] += not dropped
            row[4] += dropped
            row[5] += fragment.total if dropped else 0
            row[6] += not fragment.is_last

    for exchange in graph.exchanges:
        plan = assignment.exchanges[exchange.name]
        down, up = graph.operator(exchange.downstream), graph.operator(exchange.upstream)
        gate = graph.inputs_of(down.name).index(exchange)
        partition = graph.outputs_of(up.name).index(exchange)
        for new in range(down.parallelism):
            consumer = plan.downstream[new]
            for chunk in assignment.subtasks[down.subtask_name(new)].input_state:
                if chunk.index == gate:
                    channel = consumer.new_channel(chunk.old_channel)
                    side = "output" if chunk.upstream_output else "input"
                    filters = consumer.filters_virtual_channel(
                        channel, chunk.old_subtask, chunk.old_channel
                    )
                    add(exchange.name, side, chunk.old_subtask, new, chunk, filters)
        for producer in range(up.parallelism):
            for chunk in assignment.subtasks[up.subtask_name(producer)].output_state:
                if chunk.index == partition:
                    for new in chunk.targets:
                        filters = plan.downstream[new].filters_virtual_channel(
                            producer, chunk.old_subtask, chunk.old_channel
                        )
                        add(exchange.name, "output", chunk.old_subtask, new, chunk, filters)
    frame = pd.DataFrame(
        [(*key, *values) for key, values in sums.items()], columns=MOVEMENT_COLUMNS
    )
    return normalised(frame)


def normalised(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame[MOVEMENT_COLUMNS].copy()
    for column in MOVEMENT_COLUMNS:
        if column not in ("exchange", "side"):
            frame[column] = frame[column].astype("int64")
    return frame.sort_values(MOVEMENT_KEYS, ignore_index=True)


def sweep(run: ScenarioRun) -> list[dict[str, int]]:
    """New parallelisms to try on a sample: its scenario's own, and every operator at 1, 2, 3
    and 7 (above most old parallelisms)."""
    assert run.checkpoint is not None
    assert run.checkpoint.graph is not None
    graph = run.checkpoint.graph
    assert run.assignment is not None
    scenario = {op.name: op.parallelism for op in run.assignment.graph.operators}
    uniform = [{op.name: p for op in graph.operators} for p in (1, 2, 3, 7)]
    return [scenario, *uniform]
