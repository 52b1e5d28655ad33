"""Checkpoints: the checkpoint and its plan, the coordinator, and the assignment of state to
subtasks on restore (Flink's ``runtime.checkpoint``)."""
