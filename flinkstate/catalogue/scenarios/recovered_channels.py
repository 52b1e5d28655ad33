"""A restored task's recovered input channels as Flink's code of 2020 ran them, and as Flink
fixed it: FLINK-18989, a recovered channel converted while it still queued recovered buffers,
which its release then recycled unread."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario
from flinkstate.runtime.options import Fault

#: UnalignedCheckpointITCase at parallelism 2 with one slot per TaskManager (every channel
#: remote), records flushed one by one into subpartitions of one buffer, so that the maps and
#: the sinks hold in-flight input when the checkpoint is taken; the restarted job takes no
#: checkpoint of its own, so that the end of the run counts every recovered record
_CONVERTED_EARLY = {
    "parallelism": 2,
    "flush_every_record": True,
    "max_buffers_per_channel": 1,
    "records": 20,
    "checkpoint_interval": 30,
    "restart_checkpoint_interval": 100_000,
}

_CONVERTED_EARLY_TEXT = (
    "UnalignedCheckpointITCase (source -shuffle-> map -shuffle-> sink, parallelism 2, one "
    "slot per TaskManager) restored from an unaligned checkpoint whose maps and sinks hold input "
    "state. Each restored channel is a RecoveredInputChannel: the channel-state reader queues "
    "the recovered buffers in it, then its EndOfChannelStateEvent, and the task reads them "
    "before its gate is converted to real channels. Here a caller asks for the conversion "
    "as soon as the reader is done, before the task has read what the channels queue (the "
    "fault convert-before-consumed: the ordering PR #28554's rewrite had, and any caller of "
    "requestPartitions that does not wait for the gate's state-consumed future). "
)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "converted-early-state-lost",
        "A recovered channel converted before its state is consumed (before FLINK-18989)",
        _CONVERTED_EARLY_TEXT
        + "Before FLINK-18989, RecoveredInputChannel.toInputChannel checked nothing: the gate "
        "replaced the channel by a remote one and released the recovered channel, which "
        "recycled every buffer it still queued. Nothing failed; the recovered records in "
        "those buffers were never processed (Flink 1.11's own StreamTask waited for the "
        "state-consumed future, so only an early caller lost state, silently). The model's "
        "end-of-run count finds them missing (exactly-once).",
        "itcase-unaligned-restore",
        {**_CONVERTED_EARLY, "conversion_check": "flink-1.11"},
        Outcome.VIOLATION,
        "FLINK-18989 (commit de2ab7af3fa: the check; d8fd649dd87: the sequential reader)",
        ("conversion_check", "checkpoint_interval", "records"),
        faults=frozenset({Fault.CONVERT_BEFORE_CONSUMED}),
    ),
    Scenario(
        "converted-early-refused",
        "FLINK-18989: a recovered channel is converted only once its state is consumed",
        _CONVERTED_EARLY_TEXT
        + "Since FLINK-18989 toInputChannel checks that the channel's recovered state is "
        "consumed (master: that the channel queues nothing any more) and throws an "
        "IllegalStateException otherwise; the gate stores it as the channel's error and the "
        "task fails when it next reads the channel, so its region fails over and restores "
        "the checkpoint again: no recovered record is lost. The invariant "
        "conversion-with-buffers names the refused channel (the early caller is the bug the "
        "check exposes).",
        "itcase-unaligned-restore",
        _CONVERTED_EARLY,
        Outcome.VIOLATION,
        "FLINK-18989 (commit de2ab7af3fa); RecoveredInputChannelTest."
        "testConversionOnlyPossibleAfterConsumed",
        ("conversion_check", "checkpoint_interval", "records"),
        faults=frozenset({Fault.CONVERT_BEFORE_CONSUMED}),
    ),
)
