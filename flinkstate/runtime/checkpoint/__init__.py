"""Checkpoints: the checkpoint and its plan, the coordinator, the assignment of state to
subtasks on restore, and the tasks' barrier handler (Flink's ``runtime.checkpoint`` and
``streaming.runtime.io.checkpointing``)."""
