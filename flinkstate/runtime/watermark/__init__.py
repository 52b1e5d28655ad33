"""Watermarks and watermark status: the status watermark valve, the combined status of several
outputs, virtual channels' watermarks during recovery, and event time at the tasks."""
