"""An action: what one actor can do now, as a value the engine, its schedulers and traces
share (the schedulers choose among actions without knowing the engine)."""

from __future__ import annotations

from typing import NamedTuple


class Action(NamedTuple):
    """One atomic thing an actor can do now, e.g. ``Action("task map[0]", "process")``.

    A named tuple rather than a dataclass: a model checker hashes and compares actions for
    every transition (sleep sets, memos by action), and a tuple does both in C, three to four
    times faster than a dataclass's generated methods. Ordered by actor, kind, target.

    Examples
    --------
    Netty sending the head of a subpartition to the remote channel that reads it:

    >>> send = Action("netty keyed[0]<source[1]", "send")
    >>> str(send), send == ("netty keyed[0]<source[1]", "send", "")
    ('netty keyed[0]<source[1]: send', True)
    """

    actor: str
    kind: str
    target: str = ""

    def __str__(self) -> str:
        return f"{self.actor}: {self.kind}" + (f" {self.target}" if self.target else "")
