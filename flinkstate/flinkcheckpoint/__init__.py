"""Reading checkpoints that Flink itself wrote: the ``_metadata`` file, the channel-state files
and the records inside them. Nothing read is ever executed or unpickled; every length read from
a file is checked against what remains before anything is allocated."""
