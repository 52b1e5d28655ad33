"""A subtask at work: the task, its mailbox (what it does at each step), its barrier handler
(``streaming.runtime.io.checkpointing``), the arithmetic of its network setup, and its cleanup
when it fails or is cancelled (``streaming.runtime.tasks``)."""
