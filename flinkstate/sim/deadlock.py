"""Deadlock reports: who waits for what, who holds it, and the waits-for cycle.

When no action is enabled but work remains, every blocked actor says what it waits for and
which actors hold that resource. The report follows those edges to find a cycle; a stuck run
without a cycle (an actor waiting for something nobody holds) is reported too, because it is
just as stuck.

Actors are whatever values the model uses to name them (hashable, their ``str`` their name):
the report orders and prints them by that text, so a model's typed actors and a toy model's
strings give the same report.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

#: an actor or holder of a waits-for report: any hashable value whose text names it
Node = Hashable
_N = TypeVar("_N", bound=Hashable, covariant=True)


@dataclass(frozen=True, slots=True)
class Wait(Generic[_N]):
    """``actor`` cannot proceed until ``resource`` is released by one of ``holders``."""

    actor: _N
    resource: str
    holders: tuple[_N, ...] = ()

    def __str__(self) -> str:
        held = (
            f" held by {', '.join(map(str, self.holders))}" if self.holders else " (held by nobody)"
        )
        return f"{self.actor} waits for {self.resource}{held}"


@dataclass(frozen=True)
class DeadlockReport:
    step: int
    waits: tuple[Wait[Node], ...]
    cycle: tuple[Node, ...]

    @property
    def has_cycle(self) -> bool:
        return bool(self.cycle)

    @property
    def cycle_path(self) -> str:
        """The cycle as ``a -> b -> a``, its first actor again at the end ("" without one)."""
        if not self.cycle:
            return ""
        return " -> ".join(map(str, (*self.cycle, self.cycle[0])))

    def describe(self) -> str:
        lines = [f"deadlock at step {self.step}: no action is enabled but work remains"]
        lines += [f"  {wait}" for wait in self.waits]
        if self.cycle:
            lines.append(f"  waits-for cycle: {self.cycle_path}")
        else:
            lines.append("  no waits-for cycle: an actor waits for something nobody will release")
        return "\n".join(lines)


def find_deadlock(waits: Sequence[Wait[Node]], step: int) -> DeadlockReport:
    """Build the waits-for graph and return the first cycle found (in the order of the actors'
    names)."""
    edges: dict[Node, tuple[Node, ...]] = {}
    for wait in waits:
        edges[wait.actor] = tuple(dict.fromkeys(edges.get(wait.actor, ()) + wait.holders))
    return DeadlockReport(step, tuple(waits), _first_cycle(edges))


def _first_cycle(edges: dict[Node, tuple[Node, ...]]) -> tuple[Node, ...]:
    done: set[Node] = set()
    for start in sorted(edges, key=str):
        if start in done:
            continue
        path: list[Node] = []
        on_path: dict[Node, int] = {}
        stack: list[tuple[Node, int]] = [(start, 0)]
        while stack:
            node, index = stack.pop()
            if index == 0:
                if node in on_path:
                    return tuple(path[on_path[node] :])
                if node in done:
                    continue
                on_path[node] = len(path)
                path.append(node)
            successors = edges.get(node, ())
            if index < len(successors):
                stack.append((node, index + 1))
                stack.append((successors[index], 0))
            else:
                done.add(node)
                path.pop()
                del on_path[node]
    return ()
