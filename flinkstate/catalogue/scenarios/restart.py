"""Restarts from an unaligned checkpoint, at the same parallelism and rescaled: what each new
subtask reads back, what is filtered by key group, and how records cut by the checkpoint are
reassembled (FLIP-76, UnalignedCheckpointRescaleITCase's parallelism pairs)."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario
from flinkstate.catalogue.scenarios.workloads import BACKPRESSURED

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "baseline-recovery",
        "Restart at the same parallelism",
        "Every subtask reads back its own in-flight data: the sources' output state into "
        "their subpartitions, the counters' input state into recovered input channels. "
        "Channels convert to local and remote ones once their state is consumed; nothing "
        "is filtered.",
        "keyed",
        BACKPRESSURED,
        Outcome.RECOVERED,
        "FLIP-76; UnalignedCheckpointITCase",
        ("records", "record_size", "cost", "buffers_per_channel"),
    ),
    Scenario(
        "keyed-upscale",
        "keyBy exchange rescaled 4 -> 7",
        "Old input state is read by every new subtask whose key-group range overlaps the "
        "old one (RANGE mapping); old subtasks read by two new ones are ambiguous, so their "
        "records are filtered by key group.",
        "keyed",
        {**BACKPRESSURED, "new_parallelism": 7},
        Outcome.RECOVERED,
        "UnalignedCheckpointRescaleITCase (upscale); SubtaskStateMapper.RANGE",
        ("parallelism", "new_parallelism", "max_parallelism"),
    ),
    Scenario(
        "keyed-downscale",
        "keyBy exchange rescaled 7 -> 3",
        "A non-divisible downscale: new subtasks share old ones, records are filtered, and "
        "the sources' output state is copied into every subpartition that reads it.",
        "keyed",
        {**BACKPRESSURED, "parallelism": 7, "new_parallelism": 3},
        Outcome.RECOVERED,
        "UnalignedCheckpointRescaleITCase (downscale); StateAssignmentOperationTest",
        ("parallelism", "new_parallelism"),
    ),
    Scenario(
        "rebalance-rescale",
        "rebalance and keyBy exchanges rescaled 4 -> 3",
        "The back-pressured pipeline restarted with fewer map and keyed subtasks: the "
        "rebalance exchange's state is split round-robin (no filtering needed), the keyBy "
        "exchange's by key-group range.",
        "backpressure",
        {**BACKPRESSURED, "new_parallelism": 3},
        Outcome.RECOVERED,
        "UnalignedCheckpointRescaleITCase (pipeline); SubtaskStateMapper.ROUND_ROBIN",
        ("parallelism", "new_parallelism", "cost"),
    ),
    Scenario(
        "spanning-records-rescale",
        "Records 8x the segment size, rescaled with filtering",
        "Each 32 KiB record spans nine 4 KiB buffers; the checkpoint cuts records between "
        "input and output state. Recovery reassembles them per virtual channel (old "
        "subtask, old channel) before filtering by key group.",
        "keyed-chain",
        {**BACKPRESSURED, "records": 40, "record_size": 8 * 4096, "new_parallelism": 3},
        Outcome.RECOVERED,
        "RecoveredStateFilteringLargeRecordITCase; DemultiplexingRecordDeserializer",
        ("record_size", "segment_size", "new_parallelism"),
    ),
    Scenario(
        "recover-output-on-downstream",
        "Upstream output state read by the downstream",
        "With recover-output-on-downstream the sources' persisted output is handed to the "
        "counters as input state of the same virtual channels, so a record cut between "
        "both sides is reassembled by one deserializer; the sources still send the "
        "end-of-output event.",
        "keyed",
        {
            **BACKPRESSURED,
            "parallelism": 7,
            "new_parallelism": 3,
            "recover_output_on_downstream": True,
        },
        Outcome.RECOVERED,
        "FLINK-38542; TaskStateAssignment.distributeOutputBuffersToDownstream",
        ("recover_output_on_downstream", "new_parallelism"),
    ),
    Scenario(
        "keyed-12-to-7",
        "The keyed job, 12 -> 7 (a parallelism pair of UnalignedCheckpointRescaleITCase)",
        "The plain keyed job with the ITCase's KEYED_DIFFERENT_PARALLELISM pair: old "
        "key-group ranges straddle new ones, so every new subtask reads two or three old "
        "ones and filters. The ITCase's own topology for this pair is "
        "itcase-keyed-different-parallelism-12-to-7.",
        "keyed",
        {**BACKPRESSURED, "records": 60, "parallelism": 12, "new_parallelism": 7},
        Outcome.RECOVERED,
        "parallelism pair of UnalignedCheckpointRescaleITCase (KEYED_DIFFERENT_PARALLELISM)",
        ("parallelism", "new_parallelism"),
    ),
    Scenario(
        "keyed-7-to-12",
        "The keyed job, 7 -> 12 (a parallelism pair of UnalignedCheckpointRescaleITCase)",
        "The same pair upscaled: every old subtask's state is read by two or three new ones.",
        "keyed",
        {**BACKPRESSURED, "records": 60, "parallelism": 7, "new_parallelism": 12},
        Outcome.RECOVERED,
        "parallelism pair of UnalignedCheckpointRescaleITCase (KEYED_DIFFERENT_PARALLELISM)",
        ("parallelism", "new_parallelism"),
    ),
)
