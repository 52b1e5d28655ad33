"""Capture completeness and order: every in-flight buffer lands in exactly one snapshot, the
producer's output state or the consumer's input state, in the order it was sent. Flink's bugs
of this family, each as the code was and as Flink fixed it: FLINK-17315, a local input channel
that persisted nothing between the checkpoint's start and its barrier; FLINK-18139, a task of
two gates that asked gate 0's channels about gate 1's."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario

#: UnalignedCheckpointITCase's local-channels-only case as it ran in April 2020: parallelism 2
#: and three slots per TaskManager, so every channel is local; each record flushed on its own
#: (a buffer timeout of 0) into subpartitions that hold one buffer each, so the sources are
#: back-pressured and a map finds a buffer to read whenever it polls: the few steps between
#: the first and the last source's snapshot then hold a read
_LOCAL_ONLY = {
    "parallelism": 2,
    "slots_per_tm": 3,
    "flush_every_record": True,
    "max_buffers_per_channel": 1,
    "records": 20,
    "checkpoint_interval": 20,
}

_LOCAL_ONLY_TEXT = (
    "UnalignedCheckpointITCase at parallelism 2 with three slots per TaskManager: "
    "source -shuffle-> map -shuffle-> sink, every channel local. The coordinator triggers both "
    "sources, which snapshot one after the other; the first barrier a map reads starts its "
    "unaligned snapshot, and until the other source's barrier arrives the map goes on reading "
    "that source's subpartition, whose buffers were sent before that source's snapshot; a "
    "sink reads the two maps the same way. "
)

#: the two-gate job at parallelism 2 with two slots per TaskManager, so every channel is local
#: (the lookup is the same for remote ones); records flushed one by one into subpartitions of
#: one buffer, as above
_TWO_GATES = {
    "slots_per_tm": 2,
    "flush_every_record": True,
    "max_buffers_per_channel": 1,
    "records": 20,
    "checkpoint_interval": 25,
}

_TWO_GATES_TEXT = (
    "Two sources, left and right, connected into a co-map of two input gates: gate 0 reads "
    "left, gate 1 reads right, each through channels 0 and 1. A co-map's unaligned snapshot "
    "starts at the first barrier it reads and, for every other channel, asks the barrier "
    "handler whether that channel's barrier is still to come: if so, the channel's in-flight "
    "data and what it receives until its barrier belong to the snapshot. "
)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "local-channel-forgets-in-flight",
        "A local channel persists nothing before its barrier (before FLINK-17315)",
        _LOCAL_ONLY_TEXT
        + "In Flink's master of April 2020 a RemoteInputChannel persisted what it received "
        "between the checkpoint's start and its barrier, but a LocalInputChannel did nothing "
        "(spillInflightBuffers kept InputChannel's empty body). A buffer the map reads in that "
        "window has left the source's subpartition before the source's snapshot and is read "
        "after the map's: it is in neither snapshot, and a restore would lose its records. "
        "UnalignedCheckpointITCase was unstable then (the ticket's commits raised its timeouts, "
        "disabled it and re-enabled it once this and the other fixes were in); the model's "
        "checkpoint-consistency check stops at the first such record when the checkpoint "
        "completes.",
        "itcase-unaligned",
        {**_LOCAL_ONLY, "local_channel_persistence": "flink-1.11-snapshot"},
        Outcome.VIOLATION,
        "FLINK-17315 (before commit 1eda8340228); UnalignedCheckpointITCase"
        ".shouldPerformUnalignedCheckpointOnLocalChannelsOnly",
        ("local_channel_persistence", "slots_per_tm", "max_buffers_per_channel"),
    ),
    Scenario(
        "local-channel-persists-in-flight",
        "FLINK-17315: a local channel persists what it reads before its barrier",
        _LOCAL_ONLY_TEXT
        + "Since FLINK-17315 a LocalInputChannel notes the checkpoint's start and hands every "
        "buffer it reads until its barrier to the channel-state writer, as a RemoteInputChannel "
        "does (master: ChannelStatePersister.startPersisting in checkpointStarted, maybePersist "
        "in getNextBuffer): each record sent before the source's snapshot is processed before "
        "the map's or persisted as its input state, and the restored job processes every "
        "record once.",
        "itcase-unaligned",
        _LOCAL_ONLY,
        Outcome.RECOVERED,
        "FLINK-17315 (commit 1eda8340228); LocalInputChannelTest.testCheckpointingInflightData",
        ("local_channel_persistence", "slots_per_tm", "max_buffers_per_channel"),
    ),
    Scenario(
        "second-gate-forgets-in-flight",
        "Gate 1's channels asked about as gate 0's (before FLINK-18139)",
        _TWO_GATES_TEXT
        + "In Flink's master of June 2020 CheckpointBarrierUnaligner kept one flag per channel "
        "of the task, the gates' channels one after the other, but the snapshot asked it with "
        "each channel's index within its gate: gate 1's channel 0 was answered for gate 0's "
        "channel 0. When the first barrier comes on left's channel, right's channel of the same "
        "index seems to have its barrier already and is skipped: what it holds and what it "
        "reads until its barrier are in no snapshot, and a restore would lose them. Users saw "
        "records lost now and then in jobs with several inputs; the model's "
        "checkpoint-consistency check stops at the first such record when the checkpoint "
        "completes.",
        "co-map-two-gates",
        {**_TWO_GATES, "inflight_data_lookup": "flink-1.11-snapshot"},
        Outcome.VIOLATION,
        "FLINK-18139 (before commit d25609d07f5, PR #12493)",
        ("inflight_data_lookup", "slots_per_tm", "max_buffers_per_channel"),
    ),
    Scenario(
        "second-gate-persists-in-flight",
        "FLINK-18139: each channel asked about by its gate and index",
        _TWO_GATES_TEXT
        + "Since FLINK-18139 the snapshot asks with the channel's InputChannelInfo, which the "
        "handler turns into the flattened index (master asks each channel itself in "
        "checkpointStarted): right's channels persist what they hold and read before their "
        "barriers, and the restored job processes every record once.",
        "co-map-two-gates",
        _TWO_GATES,
        Outcome.RECOVERED,
        "FLINK-18139 (commit d25609d07f5, PR #12493, #12506 for 1.11); "
        "StreamTaskNetworkInputTest.testSnapshotWithTwoInputGates",
        ("inflight_data_lookup", "slots_per_tm", "max_buffers_per_channel"),
    ),
)
