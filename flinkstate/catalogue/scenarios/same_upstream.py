"""A task reading one upstream over two edges, rescaled: each descriptor's channel mapping found
by the first edge (before FLINK-40269) or by the edge's intermediate data set
(UnalignedCheckpointRescaleSameUpstreamITCase)."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario

#: UnalignedCheckpointRescaleSameUpstreamITCase: the job at parallelism 2, restored at 4, with
#: back-pressure enough that both edges hold in-flight data and records cut by the checkpoint
_SAME_UPSTREAM = {
    "parallelism": 2,
    "new_job_parallelism": 4,
    "records": 50,
    "record_size": 2000,
    "cost": 4,
    "checkpoint_interval": 300,
}

_SAME_UPSTREAM_TEXT = (
    "UnalignedCheckpointRescaleSameUpstreamITCase's CONNECT job restarted from parallelism 2 "
    "at 4: one source rebalanced into the co-map's first input and keyed into its second, so "
    "two edges join the same two operators (source->co-map and source->co-map#2). Each gate's "
    "and partition's rescaling descriptor carries the other side's mapping of its edge: the "
    "keyBy partition's is RANGE, which copies each old subpartition to the two new co-maps "
    "whose key groups it held, the rebalance partition's ROUND_ROBIN. "
)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "same-upstream-first-edge",
        "Two edges from one upstream take the first edge's mapping (before FLINK-40269)",
        _SAME_UPSTREAM_TEXT
        + "Before FLINK-40269 the JobManager looked the other side up by the connected "
        "operator alone and took the first edge it found, for both partitions: the keyBy "
        "partition's output state goes where ROUND_ROBIN sends it, old subpartition 1 to "
        "new co-map 1 instead of 2 and 3. A co-map then meets bytes of an old subtask its "
        "descriptor does not name, or finishes its recovered input with the first half of "
        "a record whose second half went elsewhere; Flink's restored task fails with an "
        "IllegalStateException either way, and the model stops at the first of them.",
        "same-upstream",
        {**_SAME_UPSTREAM, "connected_mapping_lookup": "first-edge"},
        Outcome.VIOLATION,
        "FLINK-40269 (PR #28856); UnalignedCheckpointRescaleSameUpstreamITCase; "
        "docs/concepts/hazards.md#duplicate-edges",
        ("connected_mapping_lookup", "new_job_parallelism", "recover_output_on_downstream"),
    ),
    Scenario(
        "same-upstream-by-data-set",
        "FLINK-40269: each edge finds its own mapping by its intermediate data set",
        _SAME_UPSTREAM_TEXT
        + "Since FLINK-40269 each gate and partition finds the other side by its edge's "
        "intermediate data set: the keyBy partition's output state follows RANGE, the two "
        "co-maps reading an old subpartition filter its records by key group, and every "
        "record is processed exactly once, at its owner, on both inputs.",
        "same-upstream",
        _SAME_UPSTREAM,
        Outcome.RECOVERED,
        "FLINK-40269 (PR #28856); StateAssignmentOperationTest."
        "testChannelStateAssignmentUsesResultIdForDuplicateJobVertexConnections",
        ("connected_mapping_lookup", "new_job_parallelism", "recover_output_on_downstream"),
    ),
)
