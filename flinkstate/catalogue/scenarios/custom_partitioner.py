"""A custom partitioner's producer rescaled while its consumer keeps its parallelism: the
consumer's input state kept in place (before FLINK-35351) or split anew
(UnalignedCheckpointRescaleITCase CUSTOM_PARTITIONER, downscaled 3 -> 2); and the shape the
fix's rule still keeps in place, a producer rescaled to the consumer's parallelism."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario

#: the ITCase's row: the job at parallelism 3 restored at 2, the sink kept at 3; the sink
#: slow enough that its input channels and the source's subpartitions both hold in-flight
#: data when the checkpoint is taken, with records cut across buffers
_CUSTOM = {
    "parallelism": 3,
    "new_job_parallelism": 2,
    "records": 60,
    "record_size": 2000,
    "cost": 8,
    "checkpoint_interval": 300,
}

_CUSTOM_TEXT = (
    "UnalignedCheckpointRescaleITCase's CUSTOM_PARTITIONER job restored from parallelism 3 "
    "at 2: the source goes from 3 subtasks to 2, the sink stays at 3. A custom partitioner's "
    "downstream mapper is FULL (any old sink may hold records for any new one), so once the "
    "source is rescaled its output state is split and a copy of every old subpartition goes "
    "to every sink, which demultiplexes and filters it. A record cut by the checkpoint has "
    "its first part in an old sink's input state and the rest in the old source's "
    "subpartition for that sink. (Flink checkpoints such a job unaligned only with "
    "execution.checkpointing.unaligned.forced, which the ITCase sets.) "
)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "custom-partitioner-input-kept",
        "A custom partitioner's consumer keeps its input state (before FLINK-35351)",
        _CUSTOM_TEXT
        + "Before FLINK-35351 the JobManager split a consumer's input state only when the "
        "consumer's own parallelism changed, so each sink kept its own old input state. "
        "Every sink still gets every old subpartition's copy: a sink meets the rest of a "
        "record whose first part another sink kept. Users saw the restore from the unaligned "
        "checkpoint fail with an exception (PR #24784: 'Fix fail during restore from "
        "unaligned checkpoint with custom partitioner'); the model stops at the first such "
        "record.",
        "itcase-custom-partitioner",
        {**_CUSTOM, "input_reassignment": "flink-1.19.0"},
        Outcome.VIOLATION,
        "FLINK-35351 (PR #24784, #24857); UnalignedCheckpointRescaleITCase "
        "(downscale, CUSTOM_PARTITIONER, 3, 2)",
        ("input_reassignment", "new_job_parallelism", "sink_parallelism"),
    ),
    Scenario(
        "custom-partitioner-input-split",
        "FLINK-35351: a custom partitioner's consumer re-reads every old input state",
        _CUSTOM_TEXT
        + "Since FLINK-35351 the consumer's input state is split anew when one of its inputs "
        "uses the FULL mapper and a producer's new parallelism differs from the consumer's "
        "old one: every sink reads every old sink's input state as well as every old "
        "subpartition, filters both by the partitioner, and each record is processed once, "
        "at the sink the partitioner picks.",
        "itcase-custom-partitioner",
        _CUSTOM,
        Outcome.RECOVERED,
        "FLINK-35351 (commit 691ce18e484); StateAssignmentOperationTest."
        "testChannelStateAssignmentTwoGatesPartiallyDownscaling",
        ("input_reassignment", "new_job_parallelism", "sink_parallelism"),
    ),
    Scenario(
        "custom-partitioner-input-still-kept",
        "Since FLINK-35351: a producer rescaled to its consumer's parallelism",
        "The CUSTOM_PARTITIONER job with the sink at 2, restored from parallelism 3 at 2: "
        "the source goes from 3 to 2, the sink stays at 2. Flink's rule since FLINK-35351 "
        "(master too) compares each producer's new parallelism with the consumer's old one, "
        "not the producer's old and new: both are 2, so each sink keeps its own input state "
        "as before the fix, while the source's output state is split and FULL sends every "
        "old subpartition to both sinks. What the model reads from master's code, not a "
        "known Flink issue: a sink meets the rest of a record the other sink began, as "
        "before FLINK-35351 (the model stops at the first such record).",
        "itcase-custom-partitioner",
        {**_CUSTOM, "sink_parallelism": 2},
        Outcome.VIOLATION,
        "FLINK-35351's condition in StateAssignmentOperation.reDistributeInputChannelStates "
        "(master)",
        ("input_reassignment", "new_job_parallelism", "sink_parallelism"),
    ),
)
