"""Deadlock reports: who waits for what, who holds it, and the waits-for cycle.

When no action is enabled but work remains, every blocked actor says what it waits for and
which actors hold that resource. The report follows those edges to find a cycle; a stuck run
without a cycle (an actor waiting for something nobody holds) is reported too, because it is
just as stuck.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Wait:
    """``actor`` cannot proceed until ``resource`` is released by one of ``holders``."""

    actor: str
    resource: str
    holders: tuple[str, ...] = ()

    def __str__(self) -> str:
        held = f" held by {', '.join(self.holders)}" if self.holders else " (held by nobody)"
        return f"{self.actor} waits for {self.resource}{held}"


@dataclass(frozen=True)
class DeadlockReport:
    step: int
    waits: tuple[Wait, ...]
    cycle: tuple[str, ...]

    @property
    def has_cycle(self) -> bool:
        return bool(self.cycle)

    def describe(self) -> str:
        lines = [f"deadlock at step {self.step}: no action is enabled but work remains"]
        lines += [f"  {wait}" for wait in self.waits]
        if self.cycle:
            lines.append("  waits-for cycle: " + " -> ".join((*self.cycle, self.cycle[0])))
        else:
            lines.append("  no waits-for cycle: an actor waits for something nobody will release")
        return "\n".join(lines)


def find_deadlock(waits: list[Wait], step: int) -> DeadlockReport:
    """Build the waits-for graph and return the first cycle found (in actor order)."""
    edges: dict[str, tuple[str, ...]] = {}
    for wait in waits:
        edges[wait.actor] = tuple(dict.fromkeys(edges.get(wait.actor, ()) + wait.holders))
    return DeadlockReport(step, tuple(waits), _first_cycle(edges))


def _first_cycle(edges: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    done: set[str] = set()
    for start in sorted(edges):
        if start in done:
            continue
        path: list[str] = []
        on_path: dict[str, int] = {}
        stack: list[tuple[str, int]] = [(start, 0)]
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
