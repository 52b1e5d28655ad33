"""The watermark of one new channel that merges several old channels after a rescale.

When a restored subtask reads a channel whose recovered data came from several old channels
(its virtual channels: old subtask x old channel), each old channel carried its own
watermarks. Flink's ``DemultiplexingRecordDeserializer`` keeps each virtual channel's last
watermark and status and passes on only what holds for all of them: the minimum watermark,
held back while any virtual channel has none yet, and ACTIVE while any of them is active.
FLINK-40517 (PR #29064) made the checkpointing-during-recovery path, which filters on the
reader thread, do the same; before it, that path passed each old channel's watermarks and
statuses through as they came.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.runtime.buffer.records import MIN_WATERMARK
from flinkstate.runtime.copying import NotState, StateKey


@dataclass(slots=True)
class VirtualChannelWatermarks:
    """Last watermark and status per virtual channel of one new channel (every virtual channel
    the rescale gives it, whether or not its old channel carried data).

    Examples
    --------
    A new channel merging old channel 0 of old subtasks 0 and 1: nothing passes until both
    have a watermark, then the minimum; idle only once both are:

    >>> merged = VirtualChannelWatermarks.of([(0, 0), (1, 0)])
    >>> merged.on_watermark((0, 0), 100), merged.on_watermark((1, 0), 70)
    (None, 70)
    >>> merged.on_status((0, 0), idle=True), merged.on_status((1, 0), idle=True)
    (False, True)
    """

    watermarks: dict[tuple[int, int], int] = field(default_factory=dict)
    idle: dict[tuple[int, int], bool] = field(default_factory=dict)

    @classmethod
    def of(cls, virtual_channels: list[tuple[int, int]]) -> VirtualChannelWatermarks:
        return cls(
            {vc: MIN_WATERMARK for vc in virtual_channels},
            {vc: False for vc in virtual_channels},
        )

    NOT_STATE: ClassVar[NotState] = {}

    def state_key(self) -> StateKey:
        # the virtual channels are fixed when made; min and all() read no order
        return (frozenset(self.watermarks.items()), frozenset(self.idle.items()))

    def copy(self) -> VirtualChannelWatermarks:
        return VirtualChannelWatermarks(dict(self.watermarks), dict(self.idle))

    def on_watermark(self, vc: tuple[int, int], timestamp: int) -> int | None:
        """A watermark read from ``vc``: the watermark to pass on, or None while some virtual
        channel has none yet."""
        self.watermarks[vc] = timestamp
        low = min(self.watermarks.values())
        return None if low == MIN_WATERMARK else low

    def on_status(self, vc: tuple[int, int], idle: bool) -> bool:
        """A status read from ``vc``: whether the channel is to be idle (only if every
        virtual channel is)."""
        self.idle[vc] = idle
        return idle and all(self.idle.values())
