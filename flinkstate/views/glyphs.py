"""The canvas's visual grammar: every glyph it draws, by class, with the words the legend gives it.

A learner reads the canvas through its legend, so the legend must name every mark on screen
and nothing else. One table (:data:`GLYPHS`) maps each glyph class to its legend words; the
canvas tags every mark it draws with its class (``data-glyph``), and a scene carries, as its
``legend``, the entries of the classes its contents can be drawn with
(:func:`glyph_classes`). The canvas then lists those of them it actually drew: a glyph that
depends on pixels (``+N`` when a queue is longer than its box) is in the scene's legend
whenever it may be drawn and on screen only when it was.

The table lives here, in Python, so that tests can check it against the scenes of every
scenario without a browser, and the words are written once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from flinkstate.runtime.events import RECOVERY_BARRIER

#: the letter the canvas draws in an event's pill, by the event's label (others: a dot)
EVENT_LETTERS: Mapping[str, str] = {
    "end of partition": "E",
    "end of output state": "O",
    "end of input state": "I",
    "descriptor": "D",
}

#: glyph class -> its words in the legend, in legend order
GLYPHS: Mapping[str, str] = {
    "record": "a record's bytes in a buffer",
    "continues": "dark edge: the record continues from the buffer before",
    "watermark": "watermark or idle/active status between the records",
    "filtered": "struck through: read only to be dropped (another subtask owns it)",
    "recovered": "hatched, dashed: recovered from channel state",
    "persisted": "purple frame: persisted by the checkpoint numbered above it",
    "barrier": "checkpoint barrier, its checkpoint's number above it",
    "recovery-barrier": "recovery barrier (recovery is over for that channel)",
    "event-E": "E: end of partition",
    "event-O": "O: end of output state (recovered output is all sent)",
    "event-I": "I: end of input state (recovered input is all read)",
    "event-D": "D: descriptor, the old subtask and channel of the buffers behind it",
    "event-other": "\u2022: another event",
    "request-i": "i: a writer's request to persist input-channel state",
    "request-o": "o: a writer's request to persist subpartition (output) state",
    "overflow": "+N: N more items than the box shows",
    "free": "empty slots left of a channel: its free buffers (exclusive, floating)",
    "partial": "grey bar right of a channel: part of a record the deserializer holds",
    "gauge": "blue fill: share of a pool's buffers in use",
    "unconverted": "R in a gate: it still reads recovered channels",
    "acknowledged": "\u2713: the task acknowledged the pending checkpoint",
    "waits": "waits: the actor cannot go on (hover: what it waits for)",
    "cycle": "cycle: on the waits-for cycle of the deadlock, stuck for good",
    "blocked": "red frame: blocked, or no credit to send",
    "actor": "yellow ring: the actor that took the last step",
    "move": "orange arrow: segments the last step moved",
    "collapsed": "\u25b8 a folded subtask: buffers in its inputs and outputs (click to open)",
    "highlight": "magenta corners: what this stop of the tour points at",
}


def glyph_classes(scene: Mapping[str, Any]) -> list[str]:
    """The glyph classes the canvas may draw for ``scene``, in legend order; ``highlight``
    always (the tour's highlight is not part of a scene: the canvas shows it when it rings
    something)."""
    present = set(item_glyphs(scene.get("items", ())))
    present.update(place_glyphs(scene.get("places", ())))
    return in_legend_order(present, scene)


def in_legend_order(present: set[str], scene: Mapping[str, Any]) -> list[str]:
    """The classes ``present`` in a scene's items and places, with those of its actor and
    moves and ``highlight``, in legend order (a caller that keeps the classes of the items
    and places step by step gives them: the items' are found place by place, as ``overflow``
    is a place's)."""
    present = set(present)
    if scene.get("actor") is not None:
        present.add("actor")
    if scene.get("moves"):
        present.add("move")
    present.add("highlight")
    return [glyph for glyph in GLYPHS if glyph in present]


def scene_legend(scene: Mapping[str, Any], classes: list[str] | None = None) -> list[list[str]]:
    """The scene's ``legend``: ``[glyph class, words]`` for each class it may be drawn with
    (``classes``, where the caller found them: :func:`in_legend_order`)."""
    found = glyph_classes(scene) if classes is None else classes
    return [[glyph, GLYPHS[glyph]] for glyph in found]


def item_glyphs(items: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    queued: set[str] = set()
    for item in items:
        shape = item["kind"]  # a scene item's kind, not an action's
        if item.get("lane") not in ("deserializer", "pre-filter", "post-filter"):
            if item["place"] in queued:
                yield "overflow"  # two or more in one box: a narrow canvas may not show all
            queued.add(item["place"])
        if shape == "barrier":
            recovery = item.get("event") == RECOVERY_BARRIER
            yield "recovery-barrier" if recovery else "barrier"
        elif shape == "event":
            yield f"event-{EVENT_LETTERS.get(item.get('label', ''), 'other')}"
        elif shape == "request":
            yield "request-o" if item.get("side") == "output" else "request-i"
        elif shape == "buffer":
            yield from _buffer_glyphs(item)


def _buffer_glyphs(item: Mapping[str, Any]) -> Iterator[str]:
    if item.get("recovered"):
        yield "recovered"
    if item.get("persisted") is not None:
        yield "persisted"
    for piece in item.get("pieces", ()):
        if len(piece) > 7:
            yield "watermark"
            continue
        yield "record"
        if piece[1] > 0:
            yield "continues"
        if piece[6] == "dropped":
            yield "filtered"


#: places whose pool is drawn as a gauge
_GAUGED = frozenset({"result-partition", "input-gate", "network-pool"})


def place_glyphs(places: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    for place in places:
        if place.get("blocked") or place.get("no_credit"):
            yield "blocked"
        if place.get("cycle"):
            yield "cycle"  # drawn instead of its waits tag
        elif place.get("waits"):
            yield "waits"
        if place.get("collapsed"):
            yield "collapsed"
            continue
        if place.get("acknowledged"):
            yield "acknowledged"
        gauge = place.get("gauge")
        if gauge and gauge[0] > 0 and gauge[1] > 0 and place["kind"] in _GAUGED:
            yield "gauge"
        if place["kind"] == "input-gate" and place.get("converted") is False:
            yield "unconverted"
        free = sum(place.get(k, 0) for k in ("exclusive_free", "floating", "recovery_free"))
        if free and place["kind"].endswith("-channel"):
            yield "free"
        if place.get("partial") is not None:
            yield "partial"
