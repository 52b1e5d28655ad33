"""An action: what one actor can do now, as a value the engine, its schedulers and traces
share (the schedulers choose among actions without knowing the engine)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class Action:
    """One atomic thing an actor can do now, e.g. ``Action("task map[0]", "process")``."""

    actor: str
    kind: str
    target: str = ""

    def __str__(self) -> str:
        return f"{self.actor}: {self.kind}" + (f" {self.target}" if self.target else "")
