"""The consumer's side of an exchange: input gates and their channels (with the buffer manager,
the channel-state persister and the recovered channel), recycling, the deserialiser, and the
transport that moves buffers and credit between producer and consumer
(``runtime.io.network.partition.consumer``)."""
