"""The canvas's visual grammar: every glyph class a scene can be drawn with has legend words,
the legend lists only classes the scene holds, and the tour's highlight looks like no state."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flinkstate.catalogue.scenarios import SCENARIOS
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import Simulation
from flinkstate.views import palette
from flinkstate.views.glyphs import EVENT_LETTERS, GLYPHS, glyph_classes
from flinkstate.views.scene import CANVAS_MODULE, build_scene
from flinkstate.views.scene_layout import SceneLayout

CANVAS = CANVAS_MODULE.read_text(encoding="utf-8")
#: the steps each scenario's restart is drawn at (those past its end: its last)
STEPS = (0, 60, 400)
#: the least CIE76 distance between the highlight and any colour the canvas or palette uses:
#: about 2.3 is a just noticeable difference; 40 is another colour altogether
FAR = 40.0


def _lab(colour: str) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of an sRGB ``#rrggbb``."""
    rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)
    xyz = (
        (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
        0.2126 * r + 0.7152 * g + 0.0722 * b,
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
    )
    fx, fy, fz = (t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def _colours_in_use() -> set[str]:
    """Every hex colour the canvas draws with and every colour the palette gives a state,
    an owner kind, a node kind or a series."""
    found = set(re.findall(r"#[0-9a-fA-F]{6}\b", CANVAS))
    found.update(re.findall(r"#[0-9a-fA-F]{6}\b", Path(palette.__file__).read_text("utf-8")))
    return {c.lower() for c in found} - {palette.HIGHLIGHT.lower()}


def test_the_highlight_looks_like_no_state() -> None:
    """A tour's highlight must not read as "blocked" (the review found it pulsing red
    against the blocked frame's red): far from every colour in use, in CIE Lab."""
    assert re.search(rf'const HIGHLIGHT = "{palette.HIGHLIGHT}";', CANVAS)
    colours = _colours_in_use()
    assert palette.ALERT.lower() in colours
    assert len(colours) > 40
    near = {
        c: round(math.dist(_lab(palette.HIGHLIGHT), _lab(c)), 1)
        for c in colours
        if math.dist(_lab(palette.HIGHLIGHT), _lab(c)) < FAR
    }
    assert near == {}


def test_every_glyph_class_has_words_a_swatch_and_a_mark() -> None:
    """The table and the canvas agree: each class has a legend swatch, and the drawing code
    (after the swatches) tags some mark with it; the browser test checks the converse, that
    every mark drawn is in the legend."""
    drawing = CANVAS[CANVAS.index("function drawnGlyphs") :]
    swatches = CANVAS[CANVAS.index("function swatch") : CANVAS.index("function drawnGlyphs")]
    assert set(GLYPHS) <= set(re.findall(r'case "([a-zA-Z-]+)":', swatches))
    named = set(re.findall(r'"([a-z]+(?:-[a-z]+)*)"', drawing))
    events = {glyph for glyph in GLYPHS if glyph.startswith("event-")}
    assert '`event-${letter || "other"}`' in drawing
    assert set(GLYPHS) - events <= named
    assert all(words.strip() for words in GLYPHS.values())


def _restart_scenes(name: str) -> Iterator[dict[str, Any]]:
    run = prepare_scenario(name, seed=0, phase="restart")
    simulation = run.simulation
    if simulation is None:
        return
    assert isinstance(simulation, Simulation)
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    layout = SceneLayout.of(world)
    for step in STEPS:
        while simulation.step_count < step and simulation.step() is not None:
            pass
        yield build_scene(world, simulation.events[-1] if simulation.events else None, layout)


def _expected(scene: dict[str, Any]) -> set[str]:
    """Some classes read straight off the scene, independently of the glyph module."""
    expected = set()
    for item in scene["items"]:
        if item["kind"] == "barrier":
            expected.add("barrier" if item["event"] == "CheckpointBarrier" else "recovery-barrier")
        if item["kind"] == "event":
            expected.add(f"event-{EVENT_LETTERS.get(item['label'], 'other')}")
        if item["kind"] == "request":
            expected.add(f"request-{item['side'][0]}")
        if any(piece[6:7] == ["dropped"] for piece in item.get("pieces", ())):
            expected.add("filtered")
    for place in scene["places"]:
        if place.get("waits"):
            expected.add("waits")
        if place.get("blocked"):
            expected.add("blocked")
    return expected


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_glyph_class_in_a_scene_has_a_legend_entry(name: str) -> None:
    for scene in _restart_scenes(name):
        legend = dict(scene["legend"])
        assert list(legend) == glyph_classes(scene)
        assert set(legend) <= set(GLYPHS)
        assert all(legend[glyph] == GLYPHS[glyph] for glyph in legend)
        assert _expected(scene) <= set(legend), f"step {scene['step']}"
