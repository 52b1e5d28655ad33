"""The network configuration's arithmetic: what Flink's ``NettyShuffleEnvironmentConfiguration``,
``NettyShuffleUtils`` and ``GateBuffersSpec`` compute from the options before a task starts."""
