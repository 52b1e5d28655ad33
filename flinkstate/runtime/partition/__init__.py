"""The producer's side of an exchange: result partitions and their subpartitions, and the record
writer that serialises into them (Flink's ``runtime.io.network.partition``)."""
