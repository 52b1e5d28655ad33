"""A model of Flink's runtime during recovery, laid out as Flink's own packages are.

Each folder is a Flink package (``org.apache.flink.runtime.*`` or ``streaming.runtime.*``) and
each module one concept named with Flink's word, so that a reader who knows Flink finds the room
of a mechanism by its class name:

- here: the job graph, execution states, options (faults among them), events, the kinds of
  action the actors take, and the copying protocol every component follows;
- ``shuffle``: the network configuration's arithmetic (``NettyShuffleUtils``, gate buffers);
- ``buffer``: memory segments, their ledger, the network and local buffer pools, recycling;
- ``partition`` and ``partition.consumer``: result subpartitions and record writers; input
  gates, input channels, deserialisers and the transport between them;
- ``checkpoint`` and ``checkpoint.channel``: checkpoints, the coordinator, state assignment,
  the barrier handler; channel state written, read, filtered, spilled and drained;
- ``tasks``: the task, its mailbox, its setup and its cleanup;
- ``watermark``: the status watermark valve, virtual channels' watermarks, event time;
- ``failover``: failover strategies, failure handling, pipelined regions;
- ``world``: the state that holds every component, the world facade the simulator drives, its
  invariants, waits and metrics; ``world.exploration`` the footprints and partial copies the
  explorer needs.

Folders are layered in that order (``tests/test_imports.py`` states the rule and the imports
that still reach upward).
"""
