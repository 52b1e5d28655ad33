"""Flink 2.3's filtering on the reader thread (InputChannelRecoveredStateHandler
.recoverWithFiltering): where its pre- and post-filter buffers come from, the deadlock when they
come from the channel's own budget (FLINK-39519), and what a failed hand-over of filtered
buffers recycles (FLINK-40345)."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario
from flinkstate.catalogue.scenarios.workloads import FILTER_ON_READ

#: V1 filtering on the reader, the first filtered buffer of the first source buffer that yields
#: any failing to reach its recovered channel (as InputChannelRecoveredStateHandlerTest's
#: FailingRecoveredInputChannel fails the first of three)
_FAILED_DELIVERY = {**FILTER_ON_READ, "fail_filtered_delivery": 1}

_FAILED_DELIVERY_TEXT = (
    "Flink 2.3 filtering on the reader: the first 37 KB record kept is rewritten into three "
    "filtered buffers (the channel's exclusive buffer, then two 32 KiB heap segments of the "
    "fallback), and handing the first of them to the recovered channel fails (a test hook, "
    "as in Flink's test, which fails the first of three); the exception fails the task. "
)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "prefilter-deadlock",
        "Pre- and post-filter buffers from one channel: the reader waits on itself",
        "Filtering on the reader (checkpointing during recovery, before FLINK-38930's heap "
        "fallback), each source buffer is read into a pre-filter buffer of the recovered "
        "channel and the records completing in it are rewritten into post-filter buffers of "
        "the same channel, all held until the source buffer is done. A 37 KB record needs "
        "ten 4 KiB post-filter buffers; with the pre-filter one that is eleven, one more "
        "than the channel's 2 exclusive plus the gate's 8 floating buffers, and the only "
        "thread that could return one is the one waiting.",
        "keyed",
        {**FILTER_ON_READ, "prefilter_source": "network"},
        Outcome.DEADLOCK,
        "PR #28001, FLINK-39519 (the hazard); FLINK-38930 part 1 (commit 23ebbb5d2bb)",
        (
            "prefilter_source",
            "record_size",
            "segment_size",
            "buffers_per_channel",
            "floating_buffers",
        ),
    ),
    Scenario(
        "prefilter-below-threshold",
        "The same reader with one post-filter buffer less: no deadlock",
        "36 KB records need nine post-filter buffers: with the pre-filter buffer that is "
        "ten, exactly the channel's budget, so the reader never waits on itself (it hangs "
        "iff 1 + k > exclusive + floating).",
        "keyed",
        {**FILTER_ON_READ, "prefilter_source": "network", "record_size": 36_000},
        Outcome.RECOVERED,
        "FLINK-39519; RecoveredStateFilteringLargeRecordITCase sits at this boundary",
        ("record_size", "segment_size"),
    ),
    Scenario(
        "prefilter-heap-fallback",
        "Flink 2.3: recovery buffers fall back to the heap",
        "Flink 2.3's RecoveredInputChannel hands out a channel's exclusive buffer or else a "
        "fresh 32 KiB heap segment, for pre- and post-filter buffers alike: no deadlock, "
        "but heap use grows with the recovered data (the gate's floating buffers are never "
        "used).",
        "keyed",
        {**FILTER_ON_READ, "prefilter_source": "heap-fallback"},
        Outcome.RECOVERED,
        "FLINK-38930 part 2 (release-2.3 RecoveredInputChannel.requestBufferBlocking)",
        ("prefilter_source", "record_size"),
    ),
    Scenario(
        "prefilter-heap-segment",
        "FLINK-39519: one reusable heap segment for pre-filter buffers",
        "The pre-filter buffer is one heap segment per task, reused for every source buffer "
        "and checked to be recycled before the next is taken; post-filter buffers still come "
        "from the channel with the heap fallback. The network pools are not touched by "
        "pre-filter reads.",
        "keyed",
        {**FILTER_ON_READ, "prefilter_source": "heap-segment"},
        Outcome.RECOVERED,
        "PR #28001, FLINK-39519; InputChannelRecoveredStateHandlerTest",
        ("prefilter_source",),
    ),
    Scenario(
        "failed-delivery-recycled-twice",
        "A failed hand-over recycles a buffer the channel holds (before FLINK-40345)",
        _FAILED_DELIVERY_TEXT
        + "Flink 2.3's compensating loop starts at the buffer that failed, which the "
        "channel already queues: it goes back to the channel's exclusive buffers while "
        "the queue still holds it, and when the failed task releases the channel it is "
        "recycled a second time. The ledger names the double recycle.",
        "keyed",
        {**_FAILED_DELIVERY, "failed_delivery_recycle": "from-failed"},
        Outcome.VIOLATION,
        "FLINK-40345 (PR #28936); release-2.3 InputChannelRecoveredStateHandler."
        "recoverWithFiltering",
        ("failed_delivery_recycle", "fail_filtered_delivery", "prefilter_source"),
    ),
    Scenario(
        "failed-delivery-recycled-once",
        "FLINK-40345: a failed hand-over recycles only the buffers not handed over",
        _FAILED_DELIVERY_TEXT
        + "Since FLINK-40345 the loop starts after the buffer that failed: the two never "
        "handed over are freed once, the first stays with the channel until the failed "
        "task releases it, and the job fails over cleanly to its last checkpoint.",
        "keyed",
        _FAILED_DELIVERY,
        Outcome.JOB_FAILED,
        "FLINK-40345 (PR #28936); InputChannelRecoveredStateHandlerTest."
        "testFilteredBuffersRecycledOnceWhenDeliveryFails",
        ("failed_delivery_recycle", "fail_filtered_delivery", "prefilter_source"),
    ),
)
