"""Channel state, the in-flight data of an unaligned checkpoint (Flink's
``runtime.checkpoint.channel``): its writer, its readers, and the three generations of its
recovery.

- ``channel_state_writer`` and ``channel_state_reader``: writing at a checkpoint, reading on
  restore;
- ``classic_recovery``: the classic sequence (output state, the reader's step, descriptors,
  demultiplexing, conversion), where V1 and V2 branch off;
- ``channel_state_filtering``: V1 (Flink 2.3), filtering records on the reader's thread;
- ``fetched_channel_state``, ``spilling_handler`` and ``fetched_channel_state_drainer``: V2
  (master), fetching the state into spill files, then draining them into the channels.
"""
