"""An error while the classic channel-state reader hands recovered input to its channel, with
the buffer's ownership as Flink 1.13 left it (the reader and the handler both recycle it) and
as FLINK-22376 settled it (the handler alone)."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario
from flinkstate.catalogue.scenarios.workloads import BACKPRESSURED

#: the back-pressured keyed job restored at the same parallelism (the classic reader: no
#: checkpointing during recovery), its counters with input state, the hand-over of each
#: restored task's last recovered input buffer failing
_RECOVERY_ERROR = {**BACKPRESSURED, "fail_recovered_hand_over": True}

_RECOVERY_ERROR_TEXT = (
    "The back-pressured keyed job is restored from an unaligned checkpoint whose counters "
    "hold input state. The channel-state reader (ChannelStateChunkReader) fills a buffer of "
    "the recovered channel and calls the handler's recover, which hands the channel a "
    "retained reference and lets go of its own in a finally. Here recover throws after the "
    "channel took the last buffer (a test hook), which fails the task. "
)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "recovery-error-recycled-twice",
        "An error in recover recycles a buffer the channel holds (before FLINK-22376)",
        _RECOVERY_ERROR_TEXT
        + "Before FLINK-22376 (Flink 1.13) the reader's catch wrapped recover too and "
        "recycled the buffer again: it returns to the pool while the channel still queues "
        "it, and when the failed task releases the channel it is recycled a second time "
        "(in Flink, a reference count below zero, or a segment in use twice). The ledger "
        "names the double recycle.",
        "keyed-recovery-error",
        {**_RECOVERY_ERROR, "recovered_buffer_ownership": "flink-1.13"},
        Outcome.VIOLATION,
        "FLINK-22376 (commit 2293362f0a1); ChannelStateChunkReader.readChunk, "
        "InputChannelRecoveredStateHandler.recover",
        ("recovered_buffer_ownership", "fail_recovered_hand_over"),
    ),
    Scenario(
        "recovery-error-recycled-once",
        "FLINK-22376: the handler owns a recovered buffer and recycles it once",
        _RECOVERY_ERROR_TEXT
        + "Since FLINK-22376 recover takes the buffer over and is alone in charge of it, on "
        "success and on failure; the reader recycles only what fails before recover. The "
        "channel keeps its reference until the failed task releases it, and the job fails "
        "over cleanly to its last checkpoint.",
        "keyed-recovery-error",
        _RECOVERY_ERROR,
        Outcome.JOB_FAILED,
        "FLINK-22376 (commit 2293362f0a1); InputChannelRecoveredStateHandlerTest."
        "testRecycleBufferAfterRecoverWasCalled",
        ("recovered_buffer_ownership", "fail_recovered_hand_over"),
    ),
)
