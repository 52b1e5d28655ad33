"""Memory segments and who holds them: the segment ledger, buffers, records spanning buffers, the
network and local buffer pools (Flink's ``runtime.io.network.buffer``)."""
