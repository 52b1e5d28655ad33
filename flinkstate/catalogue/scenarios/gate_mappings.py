"""An operator reading a keyed and a rebalanced stream, restored at a lower parallelism: one
subtask mapping for the whole operator (before FLINK-22686) or one per gate."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario

#: every operator 3 -> 2 (StateAssignmentOperationTest's downscale); records of half a
#: buffer and a slow process, so that its channels hold buffers when the checkpoint is taken
_DOWNSCALED = {
    "parallelism": 3,
    "source_parallelism": 3,
    "new_parallelism": 2,
    "new_source_parallelism": 2,
    "records": 40,
    "record_size": 2000,
    "checkpoint_interval": 100,
}

_TEXT = (
    "A process operator reads a keyed stream and a rebalanced one (a non-keyed co-process "
    "function), and its channels hold buffers when the unaligned checkpoint is taken; the "
    "job is restored with every operator going from 3 to 2 subtasks. Its input state is "
    "split per gate by that gate's mapper: the keyBy gate's RANGE mapper gives new subtasks "
    "old subtasks [[0, 1], [1, 2]], the rebalance gate's ROUND_ROBIN [[0, 2], [1]]. "
)

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "two-gates-one-mapping",
        "Gates with different mappers share one mapping (before FLINK-22686)",
        _TEXT
        + "Before FLINK-22686 the JobManager kept one subtask mapping for the whole operator, "
        "assuming every gate reads the same old subtasks; the second gate's mapping differs "
        "from the first's and the restore fails with Flink's 'Incompatible subtask mappings' "
        "before anything runs, whatever the interleaving.",
        "two-gates",
        {**_DOWNSCALED, "mapping_scope": "flink-1.13.0"},
        Outcome.REJECTED,
        "FLINK-22686 (PR #16019); StateAssignmentOperationTest."
        "testChannelStateAssignmentDownscalingTwoDifferentGates",
        ("mapping_scope", "new_parallelism", "new_source_parallelism"),
    ),
    Scenario(
        "two-gates-mapping-per-gate",
        "FLINK-22686: each gate keeps its own subtask mapping",
        _TEXT + "Since FLINK-22686 each gate and each partition keeps its own mapping and its "
        "descriptor its own old subtasks: the keyBy gate filters the records of the old "
        "subtask two new ones share, the rebalance gate reads its old subtasks as they are, "
        "and every record is processed once.",
        "two-gates",
        _DOWNSCALED,
        Outcome.RECOVERED,
        "FLINK-22686 (commit 4011bde30cf); StateAssignmentOperationTest."
        "testChannelStateAssignmentDownscalingTwoDifferentGates",
        ("mapping_scope", "new_parallelism", "new_source_parallelism"),
    ),
)
