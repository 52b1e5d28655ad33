"""The events that travel through channels beside records, by the name Flink gives their class.

An event is a small heap buffer (``Buffer.event`` holds one of these names), never a network
segment. Barriers carry their checkpoint; a ``SubtaskConnectionDescriptor`` carries the virtual
channel (old subtask, old channel) whose bytes follow it.

Examples
--------
Each event is named by its Flink class:

>>> BARRIER, END_OF_PARTITION
('CheckpointBarrier', 'EndOfPartitionEvent')
"""

from __future__ import annotations

#: the producer's input is over: the channel is finished once the consumer reads it
END_OF_PARTITION = "EndOfPartitionEvent"
#: a checkpoint barrier; unaligned ones are priority events that overtake data
BARRIER = "CheckpointBarrier"
#: classic recovery: the bytes that follow came from this (old subtask, old channel)
SUBTASK_CONNECTION = "SubtaskConnectionDescriptor"
#: classic recovery: a recovered input channel's state is all read
END_OF_INPUT_STATE = "EndOfInputChannelStateEvent"
#: classic recovery: the upstream's recovered output is all sent; the subpartition blocks
END_OF_OUTPUT_STATE = "EndOfOutputChannelStateEvent"
#: V2 recovery: the drainer delivered everything fetched for this channel
END_OF_FETCHED_STATE = "EndOfFetchedChannelStateEvent"
#: V2 recovery: where a checkpoint cut a channel's recovered buffers
RECOVERY_BARRIER = "RecoveryCheckpointBarrier"
