"""Aligned checkpoints with an alignment timeout (``execution.checkpointing.aligned-checkpoint-
timeout``): barriers start aligned, and a task still aligning when the timeout elapses takes an
unaligned snapshot of the same checkpoint, while the aligned barriers still queued upstream
overtake as priority events (``SingleCheckpointBarrierHandler``'s alternating states,
``PipelinedSubpartition.alignedBarrierTimeout``)."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario

#: UnalignedCheckpointITCase's job at parallelism 2 with one slot per TaskManager (every
#: channel remote); the sinks slow enough that barriers queue behind data
_TIMEOUT = {
    "parallelism": 2,
    "source_parallelism": 2,
    "records": 40,
    "checkpoint_interval": 30,
}

_TIMEOUT_TEXT = (
    "UnalignedCheckpointITCase's job, source -shuffle-> map -shuffle-> sink at parallelism 2, "
    "with unaligned checkpoints and an aligned checkpoint timeout, as its runs with "
    "alignmentTimeout 1 and 5 ms. Each checkpoint starts aligned: its barriers queue behind "
    "the data and a task blocks each channel whose barrier it has until all are in. "
)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "alignment-timeout-unaligned",
        "An aligned checkpoint times out into an unaligned one",
        _TIMEOUT_TEXT
        + "Here the timeout (5 steps from the trigger) elapses before the barriers are through: "
        "each source's barriers still queued in its subpartitions become priority events that "
        "overtake the data before them, which becomes output state; a map or sink still "
        "aligning snapshots unaligned, persisting the channels whose barrier has not come, "
        "its blocked channels staying blocked until every barrier is in. The checkpoint "
        "completes unaligned, and the restarted job processes every record once.",
        "itcase-alignment-timeout",
        {**_TIMEOUT, "aligned_checkpoint_timeout": 5},
        Outcome.RECOVERED,
        "UnalignedCheckpointITCase (alignmentTimeout 1, 5); AlternatingCheckpointsTest",
        ("aligned_checkpoint_timeout", "parallelism", "checkpoint_interval"),
    ),
)
