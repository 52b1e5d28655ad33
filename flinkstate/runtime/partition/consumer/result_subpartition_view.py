"""A subpartition as its consumer reads it (Flink's ``ResultSubpartitionView``): a local channel
reads the head straight, a remote channel's netty reader asks whether data is available.

While the subpartition is blocked (after it handed out a recovery-completion event, until the
consumer resumes it) only a priority event may pass, and how it passes depends on the release:
held back, or handed to any reader, or (FLINK-40519) not to a credited remote reader, which asks
"is data available?" and is told no.
"""

from __future__ import annotations

from typing import Protocol

from flinkstate.runtime.buffer.buffer import Buffer
from flinkstate.runtime.options import BlockedPriority, RunOptions
from flinkstate.runtime.partition.consumer.input_gate import Channel
from flinkstate.runtime.partition.result_partition import Subpartition


class SubpartitionViewWorld(Protocol):
    """What a subpartition's view reaches of the world: the subpartitions, and the options
    (what passes a blocked one). The world (``NetworkState``) is one; mypy checks it at every
    call."""

    @property
    def subpartitions(self) -> dict[str, Subpartition]: ...
    @property
    def options(self) -> RunOptions: ...


def sub_head(world: SubpartitionViewWorld, channel: Channel) -> Buffer | None:
    """The head of a channel's subpartition as the consumer (or its transport) sees it."""
    sub = world.subpartitions[channel.subpartition]
    if not sub.queue:
        return None
    head = sub.queue[0]
    if not sub.blocked:
        return head
    if not head.priority or world.options.blocked_priority is BlockedPriority.HELD:
        return None
    if (
        world.options.blocked_priority is BlockedPriority.MASTER
        and channel.remote
        and channel.buffers.available
    ):
        return None  # FLINK-40519: a credited reader asks "is data available?" -> no
    return head
