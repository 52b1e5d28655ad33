"""What a caption reads of a step: the event, the world after it, the actor, and the items that
appeared, vanished or moved between the scenes before and after; and the words every caption
counts in (buffers, records, bytes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flinkstate.runtime.actor_ref import ActorRef
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Event

Scene = Mapping[str, Any]


@dataclass(frozen=True)
class Step:
    """What a caption reads: the event, the world after it, the actor, and the items that
    appeared, vanished or moved between the two scenes."""

    event: Event
    world: NetworkWorld
    actor: ActorRef
    before: Mapping[str, Mapping[str, Any]]
    after: Mapping[str, Mapping[str, Any]]

    @property
    def target(self) -> str:
        return self.event.action.target

    def added(self, kind: str | None = None) -> list[Mapping[str, Any]]:
        return [
            i
            for key, i in self.after.items()
            if key not in self.before and (kind is None or i["kind"] == kind)
        ]

    def removed(self, kind: str | None = None) -> list[Mapping[str, Any]]:
        return [
            i
            for key, i in self.before.items()
            if key not in self.after and (kind is None or i["kind"] == kind)
        ]

    def moved(self) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
        """(before, after) of every item that changed place."""
        return [
            (i, self.after[key])
            for key, i in self.before.items()
            if key in self.after and self.after[key]["place"] != i["place"]
        ]

    @property
    def task(self) -> str:
        return self.actor.task


def scene_items_by_id(scene: Scene | None) -> dict[str, Mapping[str, Any]]:
    return {} if scene is None else {item["id"]: item for item in scene["items"]}


def plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def record_count(items: list[Mapping[str, Any]]) -> int:
    return len({p[0] for i in items for p in i.get("pieces", ())})


def byte_count(items: list[Mapping[str, Any]]) -> int:
    return sum(int(i.get("used", i.get("bytes", 0))) for i in items)


def buffers_text(items: list[Mapping[str, Any]]) -> str:
    data = [i for i in items if i["kind"] == "buffer"]
    return f"{plural(len(data), 'buffer')} ({plural(record_count(data), 'record')})"


def sentence(text: str) -> str:
    """``text`` as a sentence of its own: capitalised, with a full stop."""
    return f"{text[:1].upper()}{text[1:]}" + ("" if text.endswith(".") else ".")
