"""Where a run's event time stands: the state watermarks leave behind.

Each input gate's valve (its channels' last watermarks and statuses), each task's watermark
(the combination of its gates' valves; for a source, the last watermark it emitted) and
whether it is idle, each merged channel's virtual-channel watermarks while recovered data is
read, and the records a keyed (window) operator found behind its watermark. Empty in a job
without watermarks, so it costs nothing there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.runtime.copying import NotState, StateKey
from flinkstate.runtime.watermark.status_watermark_valve import StatusWatermarkValve
from flinkstate.runtime.watermark.virtual_channel_watermarks import VirtualChannelWatermarks


@dataclass(slots=True)
class EventTimeState:
    """The event time of a run: each gate's valve, each task's watermark and idleness, the
    merged channels' virtual-channel watermarks, and the late records.

    Examples
    --------
    A job without watermarks keeps it empty; a source that emitted a watermark notes it:

    >>> empty = EventTimeState()
    >>> with_watermark = EventTimeState(watermark={"source[0]": 1000})
    >>> empty.state_key() == EventTimeState().state_key() != with_watermark.state_key()
    True
    >>> with_watermark.copy().watermark
    {'source[0]': 1000}
    """

    #: by gate name
    valves: dict[str, StatusWatermarkValve] = field(default_factory=dict)
    #: by task name: the watermark it has passed on (sources: emitted)
    watermark: dict[str, int] = field(default_factory=dict)
    #: by task name: whether its output is idle
    idle: dict[str, bool] = field(default_factory=dict)
    #: by channel name: a new channel's old channels while their recovered data is read
    merged: dict[str, VirtualChannelWatermarks] = field(default_factory=dict)
    #: (record, task name) -> the step a keyed operator found it late, and its watermark then
    late: dict[tuple[int, str], tuple[int, int]] = field(default_factory=dict)

    NOT_STATE: ClassVar[NotState] = {}

    def state_key(self) -> StateKey:
        if not (self.valves or self.watermark or self.idle or self.merged or self.late):
            return _NO_EVENT_TIME  # a job without watermarks: the same value every step
        # every map is looked up by its gate, task or channel (valves are made as watermarks
        # first arrive): the order entries were added in is no state
        return (
            frozenset([(n, v.state_key()) for n, v in self.valves.items()]),
            frozenset(self.watermark.items()),
            frozenset(self.idle.items()),
            frozenset([(n, m.state_key()) for n, m in self.merged.items()]),
            # which records were late; the step and watermark noted with each are for the
            # timelines only
            frozenset(self.late),
        )

    def copy(self) -> EventTimeState:
        return EventTimeState(
            {n: v.copy() for n, v in self.valves.items()},
            dict(self.watermark),
            dict(self.idle),
            {n: m.copy() for n, m in self.merged.items()},
            dict(self.late),
        )


#: the key of an event time with nothing in it (a job without watermarks), one object for
#: every state so that a model checker numbers it by identity
_NO_EVENT_TIME: StateKey = (frozenset(), frozenset(), frozenset(), frozenset(), frozenset())
