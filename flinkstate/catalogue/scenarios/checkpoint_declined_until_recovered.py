"""Checkpoints that reach a task while one of its gates still replays its recovered state, as
Flink 1.12 let them (FLINK-20654): taken without that gate's recovered buffers (1.12.0 and
1.12.1), or declined until every channel is converted (1.12.2, and every release since).

Flink 1.12 had no INITIALIZING state: a restored task was RUNNING while its channel-state
reader still filled its ``RecoveredInputChannel``s, so the coordinator triggered checkpoints
as usual and their barriers reached a task whose gates recovered at different speeds. Since
Flink 1.13 (FLINK-17012) a task restoring its channel state is INITIALIZING and the
coordinator waits for RUNNING; since FLIP-547 (master's V2) a checkpoint during recovery cuts
the recovered state instead, at recovery barriers. Both scenarios therefore set
``coordinator_waits_for_running`` off: the 1.12 coordinator.
"""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario

#: the two-gate job with every channel local and one-buffer subpartitions (as FLINK-18139's
#: pair), restarted from its first checkpoint with checkpoints every 5 steps from the restart
#: and the coordinator of Flink 1.12, which did not wait for the restore to end
_REPLAYING_GATE = {
    "slots_per_tm": 2,
    "flush_every_record": True,
    "max_buffers_per_channel": 1,
    "records": 20,
    "checkpoint_interval": 25,
    "coordinator_waits_for_running": False,
    "restart_checkpoint_interval": 5,
    "checkpoints": 3,
}

_REPLAYING_GATE_TEXT = (
    "Two sources, left and right, into a co-map of two input gates (UnalignedCheckpointITCase's "
    "parallel cogroup, at its smallest): the job checkpoints unaligned with records in flight "
    "and is restarted from that checkpoint. The co-map's gates recover independently: each is "
    "converted to local channels, and requests its partitions, once its own recovered state is "
    "consumed. The restarted job checkpoints every 5 steps, and in Flink 1.12 a task replaying "
    "its channel state was already RUNNING, so a source's barrier can reach the co-map through "
    "its converted gate while the other gate's RecoveredInputChannels still queue recovered "
    "buffers. "
)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "checkpoint-excludes-replaying-gate",
        "A checkpoint skips a gate still replaying its recovered state (before FLINK-20654)",
        _REPLAYING_GATE_TEXT
        + "In Flink 1.12.0 and 1.12.1 a RecoveredInputChannel kept InputChannel's empty "
        "checkpointStarted: the co-map's unaligned snapshot went on without it. Its queued "
        "recovered buffers, processed after the co-map's state snapshot, are in neither the "
        "state nor the channel state; and once the channel is converted it persists nothing "
        "before the checkpoint's barrier, so the live records upstream sent before its own "
        "snapshot are lost too. The checkpoint completes; users saw restores from such "
        "checkpoints fail with deserialization errors or lose data (a known issue of Flink "
        "1.12.0). The model's checkpoint-consistency check stops at the "
        "first record the completed checkpoint holds nowhere.",
        "co-map-replaying-gate",
        {**_REPLAYING_GATE, "recovered_channel_checkpoint_start": "flink-1.12.0"},
        Outcome.VIOLATION,
        "FLINK-20654 (before commits f9a6352a0bc, c6786ab9cf7; PRs #14509, #14581); "
        "UnalignedCheckpointITCase (parallel cogroup)",
        (
            "recovered_channel_checkpoint_start",
            "coordinator_waits_for_running",
            "restart_checkpoint_interval",
        ),
    ),
    Scenario(
        "checkpoint-declined-until-recovered",
        "FLINK-20654: a recovered channel declines the checkpoint until it is converted",
        _REPLAYING_GATE_TEXT
        + "Since Flink 1.12.2 RecoveredInputChannel.checkpointStarted (and UnknownInputChannel's) "
        "throws a CheckpointException: the co-map declines every checkpoint that reaches it "
        "while a channel is still recovered, as CHECKPOINT_DECLINED_TASK_NOT_READY, which is "
        "not counted. The coordinator tries again; once both gates are converted a checkpoint "
        "completes, and it holds every record once. Master keeps the rule, but its tasks stay "
        "INITIALIZING until their channel state is consumed, so its coordinator does not "
        "trigger then (and with checkpointing during recovery, V2's channels in recovery are "
        "converted ones, cut at recovery barriers).",
        "co-map-replaying-gate",
        _REPLAYING_GATE,
        Outcome.RECOVERED,
        "FLINK-20654 (commits f9a6352a0bc, c6786ab9cf7, PRs #14525, #14582 for 1.12.2); "
        "RecoveredInputChannelTest.testCheckpointStartImpossible, "
        "SingleInputGateTest.testCheckpointsDeclinedUnlessStateConsumed",
        (
            "recovered_channel_checkpoint_start",
            "coordinator_waits_for_running",
            "restart_checkpoint_interval",
        ),
    ),
)
