"""A sink with no state of its own behind a source whose subpartitions held buffers when the
checkpoint was taken: the sink restored with nothing (before FLINK-27031), with state but no
channel mapping of its own (before FLINK-31963), or repartitioned as master does."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario

#: a fast sink (it keeps up, so its input channels are empty when the barrier reaches it) and
#: an early checkpoint: the source's subpartitions hold buffers, the sink holds nothing, and
#: nothing else of the sink is state (Flink's ITCase slows its sources for this, FLINK-31963)
_FAST_SINK = {
    "source_parallelism": 3,
    "parallelism": 3,
    "records": 20,
    "checkpoint_interval": 20,
}

#: both operators downscaled 3 -> 2: the sink's key groups move, so the copies of an old
#: subpartition that two new sinks receive must be filtered
_DOWNSCALED = {**_FAST_SINK, "new_parallelism": 2, "new_source_parallelism": 2}

#: the source kept at 3, the sink upscaled 2 -> 3
_SINK_UPSCALED = {**_FAST_SINK, "parallelism": 2, "new_parallelism": 3}

_TEXT = (
    "A source keyed into a sink that keeps no state of its own, checkpointed while the sink "
    "keeps up: the source's subpartitions hold buffers (output state), the sink's channels "
    "nothing. Flink's JobManager builds a subtask's rescaling descriptor from the channel "
    "mappings it computed while repartitioning the vertex or its neighbour; "
)

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "stateless-sink-not-assigned",
        "A stateless sink gets no restore (before FLINK-27031)",
        _TEXT + "source and sink go from 3 to 2 subtasks. The source computes its output mapping "
        "and copies each old subpartition to every new sink whose key groups it overlaps. "
        "Before FLINK-27031 a vertex without state of its own got no restore at all: the "
        "sinks start without a descriptor, so they neither demultiplex nor filter, and both "
        "new sinks process the records of the old subpartition they share. Users saw records "
        "not filtered after a rescale; the model stops at the first record processed by a "
        "sink that does not own its key.",
        "keyed-sink",
        {**_DOWNSCALED, "stateless_assignment": "flink-1.15.0"},
        Outcome.VIOLATION,
        "FLINK-27031 (PR #19702); StateAssignmentOperationTest."
        "testOnlyUpstreamChannelStateAssignment",
        ("stateless_assignment", "new_parallelism", "new_source_parallelism"),
    ),
    Scenario(
        "stateless-sink-assigned",
        "FLINK-27031: a stateless sink restored to filter its upstream's output state",
        _TEXT
        + "source and sink go from 3 to 2 subtasks. Since FLINK-27031 a vertex whose upstream "
        "has output state gets a restore even with no state of its own; its descriptor takes "
        "the source's output mapping and its own, each sink filters the copies of the old "
        "subpartition it shares, and every record is processed once, by its key's owner "
        "(master's rule, FLINK-31963's, which also repartitions the sink).",
        "keyed-sink",
        _DOWNSCALED,
        Outcome.RECOVERED,
        "FLINK-27031 (commit 012a3602a91); StateAssignmentOperation.assignStates (master)",
        ("stateless_assignment", "new_parallelism", "new_source_parallelism"),
    ),
    Scenario(
        "stateless-sink-not-repartitioned",
        "A stateless sink rescaled, its source not (before FLINK-31963)",
        _TEXT + "the source stays at 3 and the sink goes from 2 to 3. Since FLINK-27031 the sink "
        "gets a restore, but before FLINK-31963 a vertex without state was not repartitioned, "
        "so its input mapping was never computed, and the source, whose parallelism did not "
        "change, computed no output mapping either: neither side has a descriptor. The "
        "source writes each old subpartition back into the subpartition of the same index, "
        "whose sink no longer owns all of its key groups (users saw failed or wrong recovery "
        "when rescaling stateless operators); the model stops at the first record a sink "
        "processes for a key it does not own.",
        "keyed-sink",
        {**_SINK_UPSCALED, "stateless_assignment": "flink-1.17.0"},
        Outcome.VIOLATION,
        "FLINK-31963 (PR #22584); StateAssignmentOperationTest."
        "testOnlyUpstreamChannelRescaleStateAssignment",
        ("stateless_assignment", "new_parallelism", "parallelism"),
    ),
    Scenario(
        "stateless-sink-repartitioned",
        "FLINK-31963: a stateless sink repartitioned for its upstream's output state",
        _TEXT + "the source stays at 3 and the sink goes from 2 to 3. Since FLINK-31963 a vertex "
        "is repartitioned when an upstream has output state (or a downstream input state): "
        "the sink computes its input mapping, the source's partition takes it as its channel "
        "mapping, each old subpartition is copied to the new sinks that read its key groups "
        "and filtered there, and every record is processed once, by its key's owner.",
        "keyed-sink",
        _SINK_UPSCALED,
        Outcome.RECOVERED,
        "FLINK-31963 (commit 354c0f455b9); StateAssignmentOperationTest."
        "testOnlyUpstreamChannelRescaleStateAssignment",
        ("stateless_assignment", "new_parallelism", "parallelism"),
    ),
)
