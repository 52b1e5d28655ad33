"""A model of Flink's runtime during recovery, laid out as Flink's own packages are.

Each folder is a Flink package (``org.apache.flink.runtime.*`` or ``streaming.runtime.*``) and
each module one concept named with Flink's word, so that a reader who knows Flink finds the room
of a mechanism by its class name:

- here: the job graph, execution states, task phases, options (faults among them, and the
  versions of Flink's capture code the 2020 bugs ran, ``capture_versions``, and of its
  recovered channels, ``restore_versions``), events,
  actors' identities, the kinds of action the actors take, the copying protocol every
  component follows, and ``Happening``,
  the base of what a step did as data (each room's kinds in its ``happenings`` module);
- ``shuffle``: the network configuration's arithmetic (``NettyShuffleUtils``, gate buffers);
- ``buffer``: memory segments, their ledger, the network and local buffer pools;
- ``partition`` and ``partition.consumer``: result subpartitions and record writers; input
  gates, input channels, recycling, deserialisers and the transport between them;
- ``checkpoint`` and ``checkpoint.channel``: checkpoints, the coordinator, state assignment;
  channel state written, read, filtered, spilled and drained;
- ``tasks``: the task, its mailbox, its barrier handler, its setup and its cleanup;
- ``watermark``: the status watermark valve, virtual channels' watermarks, event time;
- ``failover``: failover strategies, failure handling, pipelined regions;
- ``world``: the state that holds every component, the world facade the simulator drives, its
  invariants, waits and metrics, and the narration that puts a step's happenings into words;
  ``world.exploration`` the footprints and partial copies the explorer needs.

Folders are layered in that order, and no module imports a higher folder
(``tests/test_imports.py`` states the rule): a lower room names what it needs of a higher
component as a protocol of its own.
"""

from __future__ import annotations

from flinkstate.face import lazy_face

#: the package's face: each name other packages (and the lessons) use, by the module of the
#: package that defines it, loaded on first use (``flinkstate.face``; ``tests/test_faces.py``
#: holds every import from another package to it)
FACE: dict[str, str] = {
    "ActionKind": "action_kind",
    "Buffer": "buffer.buffer",
    "HEAP": "buffer.buffer",
    "LocalBufferPool": "buffer.buffer",
    "NetworkBufferPool": "buffer.buffer",
    "JAVA_INT_MAX": "buffer.network_buffer_pool",
    "kinds_at": "buffer.owners",
    "Owner": "buffer.owners",
    "OwnerKind": "buffer.owners",
    "OwnerPlace": "buffer.owners",
    "Fragment": "buffer.records",
    "MAX_WATERMARK": "buffer.records",
    "MIN_WATERMARK": "buffer.records",
    "Record": "buffer.records",
    "StreamElementKind": "buffer.records",
    "AlignedBarrierTracking": "capture_versions",
    "InflightDataLookup": "capture_versions",
    "LocalChannelPersistence": "capture_versions",
    "ConversionCheck": "restore_versions",
    "RecoveredChannelCheckpointStart": "capture_versions",
    "RestoreOrder": "restore_versions",
    "RecoveredBufferOwnership": "restore_versions",
    "TimedOutAlignment": "capture_versions",
    "ChannelStateReader": "checkpoint.channel.channel_state_reader",
    "split_chunk": "checkpoint.channel.channel_state_reader",
    "ChannelStateWriter": "checkpoint.channel.channel_state_writer",
    "sub_head": "partition.consumer.result_subpartition_view",
    "FetchedChannelStateDrainer": "checkpoint.channel.fetched_channel_state",
    "SEGMENT_HEADER_BYTES": "checkpoint.channel.fetched_channel_state",
    "ChannelState": "checkpoint.checkpoint",
    "Checkpoint": "checkpoint.checkpoint",
    "CheckpointInProgress": "checkpoint.checkpoint",
    "InputChannelInfo": "checkpoint.checkpoint",
    "PersistedBuffer": "checkpoint.checkpoint",
    "ResultSubpartitionInfo": "checkpoint.checkpoint",
    "SubtaskState": "checkpoint.checkpoint",
    "failed_region_down": "checkpoint.coordinator",
    "ManualCheckpointNotTaken": "checkpoint.happenings",
    "ManualCheckpointPlanned": "checkpoint.happenings",
    "GateConverted": "checkpoint.channel.happenings",
    "PrefilteredSpilled": "checkpoint.channel.happenings",
    "Fixed": "copying",
    "ExecutionState": "execution_state",
    "assign_state": "checkpoint.state_assignment",
    "StateAssignment": "checkpoint.state_assignment",
    "BARRIER": "events",
    "END_OF_INPUT_STATE": "events",
    "END_OF_OUTPUT_STATE": "events",
    "END_OF_PARTITION": "events",
    "RECOVERY_BARRIER": "events",
    "SUBTASK_CONNECTION": "events",
    "failover_summary": "failover.failover",
    "TaskFailed": "failover.happenings",
    "Exchange": "jobgraph",
    "JobGraph": "jobgraph",
    "Operator": "jobgraph",
    "OperatorKind": "jobgraph",
    "SubtaskId": "jobgraph",
    "ALIGNED_CHECKPOINT_TIMEOUT_KEY": "options",
    "CheckpointFailure": "options",
    "CheckpointFailureReason": "options",
    "CHECKPOINTING_DURING_RECOVERY_KEY": "options",
    "ConnectedMappingLookup": "options",
    "DEFAULT_MAX_SEGMENT_SIZE": "options",
    "DEFAULT_RESTART_DELAY": "options",
    "DEFAULT_SPILL_FILE_SIZE": "options",
    "DuringRecoveryGate": "options",
    "FailedDeliveryRecycle": "restore_versions",
    "Fault": "options",
    "FAULTS": "options",
    "GateConversion": "options",
    "MISNAMED_DURING_RECOVERY_KEY": "options",
    "NoOpTriggerAfter": "options",
    "RECOVER_OUTPUT_ON_DOWNSTREAM_KEY": "options",
    "RecoveredWatermarks": "options",
    "RecoveryAbort": "options",
    "RecoveryBarrierDecline": "options",
    "RecoveryCheckpointTrigger": "options",
    "RecoveryGeneration": "options",
    "RunOptions": "options",
    "SpillCleanup": "restore_versions",
    "TaskFailure": "options",
    "TerminalTaskRule": "options",
    "TOLERABLE_FAILED_CHECKPOINTS_KEY": "options",
    "UNALIGNED_KEY": "options",
    "Channel": "partition.consumer.input_gate",
    "Gate": "partition.consumer.input_gate",
    "IN_FLIGHT": "partition.record_writer",
    "ResultPartition": "partition.result_partition",
    "Subpartition": "partition.result_partition",
    "DEFAULT_MAX_BUFFERS_PER_CHANNEL": "shuffle.config",
    "NetworkConfig": "shuffle.config",
    "number_of_network_buffers": "shuffle.config",
    "create_gate_buffers_spec": "shuffle.gate_buffers_spec",
    "DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_STREAM": "shuffle.gate_buffers_spec",
    "effective_max_required_buffers_per_gate": "shuffle.gate_buffers_spec",
    "result_partition_pool_bounds": "shuffle.netty_shuffle_utils",
    "SortShuffle": "shuffle.netty_shuffle_utils",
    "UNBOUNDED_POOL_SIZE": "shuffle.netty_shuffle_utils",
    "ResultPartitionType": "shuffle.result_partition_type",
    "Task": "tasks.task",
    "TaskPhase": "task_phase",
    "GateSetup": "tasks.task_setup",
    "PartitionSetup": "tasks.task_setup",
    "PoolSize": "tasks.task_setup",
    "setup_partitions_and_gates": "tasks.task_setup",
    "SetupReport": "tasks.task_setup",
    "watermark_text": "watermark.watermarks",
    "ActorKind": "actor_ref",
    "ActorRef": "actor_ref",
    "Resource": "world.exploration.footprint",
    "ResourceKind": "world.exploration.footprint",
    "Holding": "world.holdings",
    "holdings": "world.holdings",
    "Lane": "world.holdings",
    "BufferCounts": "world.metrics",
    "OWNER_KINDS": "world.metrics",
    "POOL_KINDS": "world.metrics",
    "RECOVERY_KINDS": "world.metrics",
    "NetworkState": "world.state",
    "sentence": "world.narration",
    "NetworkWorld": "world.world",
}
__all__ = sorted(FACE)
__getattr__, __dir__ = lazy_face(__name__, FACE)
