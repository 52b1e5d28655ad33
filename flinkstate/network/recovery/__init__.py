"""Recovery of in-flight data after an unaligned checkpoint, in the three generations of
Flink's code.

- ``channel_state_reader``: a restored task's reader of its channel state, chunk by chunk;
- ``recovered_channel``: what every generation does with a recovered input channel (taking
  its buffers, recycling them, converting its gate);
- ``classic``: the classic sequence (output state, the reader's step, descriptors,
  demultiplexing, conversion), where V1 and V2 branch off;
- ``channel_state_filtering``: V1 (Flink 2.3), filtering records on the reader's thread;
- ``spilling_handler``, ``fetched_channel_state`` and ``fetched_channel_state_drainer``: V2
  (master), fetching the state into spill files, then draining them into the channels.

Flink keeps these in ``runtime/checkpoint/channel``, ``streaming/runtime/io/recovery`` and
``streaming/runtime/tasks``.
"""
