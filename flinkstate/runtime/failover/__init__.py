"""What happens when a task fails: the failover strategy, the handling of failures, and the
pipelined regions that restart together (Flink's ``runtime.executiongraph.failover``)."""
