"""FLIP-547's claims, each shown by a run: why recovered data is filtered before it is
persisted, what spilling costs against Flink 2.3's heap fallback in a tiny pool, and chains of
restores (1 -> 10 -> 1, and RecoveredStateFilteringLargeRecordITCase's three phases)."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario
from flinkstate.catalogue.scenarios.workloads import BACKPRESSURED, FILTER_ON_READ
from flinkstate.runtime.options import Fault

#: FLIP-547's example: one counter restarted as ten, with V2 and a checkpoint every 40 steps
_FLIP_547 = {
    "parallelism": 1,
    "source_parallelism": 2,
    "records": 60,
    "record_size": 3000,
    "cost": 4,
    "checkpoint_interval": 150,
    "recover_output_on_downstream": True,
    "checkpointing_during_recovery": True,
    "generation": "v2",
    "new_parallelism": 10,
    "restart_checkpoint_interval": 40,
}


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "unfiltered-checkpoint-during-recovery",
        "FLIP-547 without filtering first: every new subtask persists all the state",
        "The first restart of flip-547-rescale-cycle with the record filter switched off: "
        "each of the ten counters keeps the old counter's whole input state, processes "
        "records it was never sent, and a checkpoint taken meanwhile would hold each "
        "recovered record ten times. The exactly-once invariant stops it at the first "
        "such record.",
        "keyed",
        _FLIP_547,
        Outcome.VIOLATION,
        "FLIP-547 (motivation)",
        ("new_parallelism",),
        faults=frozenset({Fault.NO_FILTER}),
    ),
    Scenario(
        "spill-pressure-v2",
        "A tiny network pool: V2 spills everything and drains through one buffer",
        "One exclusive buffer per channel and one floating buffer per gate (the fewest "
        "Flink's gate arithmetic accepts). V2's fetch never touches the pool, so it spills "
        "the recovered data at full speed; the drain is what the small pool slows. Compare "
        "heap, bytes spilled and steps with spill-pressure-v1 and with more buffers "
        "(buffers_per_channel, floating_buffers).",
        "keyed",
        {
            **FILTER_ON_READ,
            "record_size": 3000,
            "generation": "v2",
            "buffers_per_channel": 1,
            "floating_buffers": 1,
            "restart_checkpoint_interval": 40,
            "checkpoints": 3,
        },
        Outcome.RECOVERED,
        "FLINK-38544; FLINK-40080",
        ("generation", "buffers_per_channel", "floating_buffers", "spill_segment_size"),
    ),
    Scenario(
        "spill-pressure-v1",
        "The same tiny pool in Flink 2.3: the heap fallback takes over",
        "With one exclusive buffer per channel and one floating buffer per gate, Flink 2.3's "
        "reader gets a fresh 32 KiB heap segment whenever the channel has no buffer: it never "
        "blocks, and heap use grows with the recovered data (more than ten times V2's here).",
        "keyed",
        {
            **FILTER_ON_READ,
            "record_size": 3000,
            "generation": "v1",
            "buffers_per_channel": 1,
            "floating_buffers": 1,
            "restart_checkpoint_interval": 40,
            "checkpoints": 3,
        },
        Outcome.RECOVERED,
        "FLINK-38930 (release-2.3 RecoveredInputChannel.requestBufferBlocking)",
        ("generation", "buffers_per_channel", "floating_buffers", "prefilter_source"),
    ),
    Scenario(
        "flip-547-rescale-cycle",
        "FLIP-547's example: rescale 1 -> 10 -> 1 with checkpoints during recovery",
        "One counter is restarted as ten, and a checkpoint is taken while they still drain "
        "their recovered input; the job is then restarted from that checkpoint as one "
        "counter again. Each of the ten reads the old counter's whole input state, so a "
        "checkpoint that persisted what they received before filtering would hold it ten "
        "times and the final restore would process it ten times. V2 filters at the fetch: "
        "every recovered record is in the second checkpoint at most once, at its owner, "
        "and the last restart processes each exactly once.",
        "keyed",
        {**_FLIP_547, "then_parallelism": 1},
        Outcome.RECOVERED,
        "FLIP-547 (motivation); FLINK-38544",
        ("generation", "new_parallelism", "then_parallelism", "restart_checkpoint_interval"),
    ),
    Scenario(
        "large-records-three-phases",
        "RecoveredStateFilteringLargeRecordITCase: three phases, records 8x the segment",
        "32 KiB records span nine 4 KiB buffers. Phase 1 takes an unaligned checkpoint "
        "with records cut between buffers; phase 2 restores it at parallelism 3 and "
        "checkpoints while the drainer still delivers; phase 3 restores that checkpoint, "
        "already filtered for parallelism 3, at parallelism 5 and checkpoints again. "
        "Every record is processed exactly once across the phases.",
        "keyed-chain",
        {
            **BACKPRESSURED,
            "records": 40,
            "record_size": 8 * 4096,
            "recover_output_on_downstream": True,
            "checkpointing_during_recovery": True,
            "generation": "v2",
            "new_parallelism": 3,
            "then_parallelism": 5,
            "restart_checkpoint_interval": 40,
            "checkpoints": 3,
        },
        Outcome.RECOVERED,
        "RecoveredStateFilteringLargeRecordITCase (seed 000)",
        ("new_parallelism", "then_parallelism", "record_size", "spill_segment_size"),
    ),
)
