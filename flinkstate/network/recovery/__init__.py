"""Recovery of in-flight data after an unaligned checkpoint: the behaviour of the three
generations of Flink's code, as actions on the state.

- ``recovered_channel``: what every generation does with a recovered input channel (taking
  its buffers, recycling them, converting its gate), written once;
- ``classic``: the classic sequence (output state, the reader's step, descriptors,
  demultiplexing, conversion), where V1 and V2 branch off;
- ``channel_state_filtering``: V1 (Flink 2.3), filtering records on the reader's thread;
- ``spilling_handler`` and ``fetched_channel_state_drainer``: V2 (master), fetching the state
  into spill files, then draining them into the channels.

What these act on sits below them with the other components the state holds: the reader
(``network.channel_state_reader``, beside the channel-state writer, as Flink keeps both in
``runtime/checkpoint/channel``) and the spill files (``network.fetched_channel_state``).
"""
