"""How a task's input turns the watermarks and statuses of its channels into one watermark.

Flink's ``StatusWatermarkValve``: each input channel keeps the last watermark and status it
received; the input's watermark is the minimum over the *aligned* active channels (an active
channel whose watermark has caught up with what the input already output), it only ever grows,
and an idle channel is left out. When the last active channel goes idle the input flushes the
largest watermark of all channels and goes idle itself; a channel that turns active again
rejoins the minimum once its watermark has caught up. A watermark on an idle channel (or while
the whole input is idle) is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.buffer.records import MIN_WATERMARK
from flinkstate.runtime.copying import FIXED, NotState, StateKey


@dataclass(frozen=True, slots=True)
class ValveOutput:
    """What the valve passes on: a new watermark, or a change of the input's status.

    Examples
    --------
    >>> ValveOutput(watermark=50), ValveOutput(idle=True)
    (ValveOutput(watermark=50, idle=None), ValveOutput(watermark=None, idle=True))
    """

    watermark: int | None = None
    idle: bool | None = None


@dataclass(slots=True)
class StatusWatermarkValve:
    """The valve of one input over ``channels`` input channels (all start active, with no
    watermark).

    Examples
    --------
    Two channels: the input's watermark is their minimum, so the first watermark passes only
    once the other channel has one; when the slower channel goes idle, the other's passes:

    >>> valve = StatusWatermarkValve(channels=2)
    >>> valve.input_watermark(0, 100), valve.input_watermark(1, 50)
    ([], [ValveOutput(watermark=50, idle=None)])
    >>> valve.input_status(1, idle=True)
    [ValveOutput(watermark=100, idle=None)]
    >>> valve.input_status(0, idle=True), valve.idle
    ([ValveOutput(watermark=None, idle=True)], True)
    """

    channels: int
    watermarks: list[int] = field(default_factory=list)
    active: list[bool] = field(default_factory=list)
    aligned: list[bool] = field(default_factory=list)
    last_output: int = MIN_WATERMARK
    idle: bool = False

    def __post_init__(self) -> None:
        if self.channels < 1:
            raise InvalidParameterError(f"a valve needs at least one channel, got {self.channels}")
        if not self.watermarks:
            self.watermarks = [MIN_WATERMARK] * self.channels
            self.active = [True] * self.channels
            self.aligned = [True] * self.channels

    NOT_STATE: ClassVar[NotState] = {"channels": FIXED}

    def state_key(self) -> StateKey:
        return (
            tuple(self.watermarks),
            tuple(self.active),
            tuple(self.aligned),
            self.last_output,
            self.idle,
        )

    def copy(self) -> StatusWatermarkValve:
        return StatusWatermarkValve(
            self.channels,
            list(self.watermarks),
            list(self.active),
            list(self.aligned),
            self.last_output,
            self.idle,
        )

    def input_watermark(self, channel: int, timestamp: int) -> list[ValveOutput]:
        """Channel ``channel`` received a watermark; what the input outputs because of it."""
        self._check(channel)
        if self.idle or not self.active[channel] or timestamp <= self.watermarks[channel]:
            return []
        self.watermarks[channel] = timestamp
        if not self.aligned[channel] and timestamp >= self.last_output:
            self.aligned[channel] = True
        return self._new_minimum()

    def input_status(self, channel: int, idle: bool) -> list[ValveOutput]:
        """Channel ``channel`` received a watermark status."""
        self._check(channel)
        out: list[ValveOutput] = []
        if idle and self.active[channel]:
            self.active[channel] = False
            self.aligned[channel] = False
            if not any(self.active):
                if self.watermarks[channel] == self.last_output:
                    top = max(self.watermarks)
                    if top > self.last_output:
                        self.last_output = top
                        out.append(ValveOutput(watermark=top))
                self.idle = True
                out.append(ValveOutput(idle=True))
            elif self.watermarks[channel] == self.last_output:
                out.extend(self._new_minimum())
        elif not idle and not self.active[channel]:
            self.active[channel] = True
            if self.watermarks[channel] >= self.last_output:
                self.aligned[channel] = True
            if self.idle:
                self.idle = False
                out.append(ValveOutput(idle=False))
        return out

    def _new_minimum(self) -> list[ValveOutput]:
        aligned = [w for w, a in zip(self.watermarks, self.aligned, strict=True) if a]
        if aligned and min(aligned) > self.last_output:
            self.last_output = min(aligned)
            return [ValveOutput(watermark=self.last_output)]
        return []

    def _check(self, channel: int) -> None:
        if not 0 <= channel < self.channels:
            raise InvalidParameterError(
                f"channel {channel} is not one of the valve's {self.channels} channels"
            )
