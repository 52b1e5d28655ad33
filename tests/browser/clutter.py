"""What a reader sees of a canvas's texts, read from the DOM: each visible text that overlaps
another or an item it is not part of, texts squeezed to fit, and the glyph classes drawn
against those the legend lists. Run pages and the site's tour pages are held to it."""

from __future__ import annotations

from typing import Any

#: what the reader sees of the canvas's texts: each visible <text> that overlaps another or an
#: item it is not part of (a label under a buffer is cut for the reader), and the glyph classes
#: drawn against those the legend lists; of the first canvas in ``root`` (the page where none)
CLUTTER = """(root) => {
  const canvas = (root || document).querySelector('.flinkstate-canvas');
  const svg = canvas.querySelector('svg.flinkstate-canvas-svg');
  const hidden = (n) => {
    const item = n.closest('.fs-item');
    return item !== null && (item.dataset.hidden === '1' || item.dataset.gone === '1');
  };
  const box = (n) => {
    const r = n.getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  };
  const texts = [...svg.querySelectorAll('text')]
    .filter((t) => !hidden(t) && t.textContent.trim())
    .map((t) => ({ node: t, name: t.textContent, ...box(t) }));
  const items = [...svg.querySelectorAll('.fs-item')].filter((g) => !hidden(g))
    .map((g) => ({ node: g, name: `item ${g.dataset.id}`, ...box(g) }));
  const hit = (a, b) => Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x) > 0.5
    && Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y) > 0.5;
  const overlaps = [];
  texts.forEach((a, i) => {
    for (const b of texts.slice(i + 1)) if (hit(a, b)) overlaps.push(`${a.name} | ${b.name}`);
    for (const b of items) {
      if (!b.node.contains(a.node) && hit(a, b)) overlaps.push(`${a.name} | ${b.name}`);
    }
  });
  const squeezed = texts.filter((t) => t.node.hasAttribute('textLength')).map((t) => t.name);
  const drawn = new Set();
  for (const node of svg.querySelectorAll('[data-glyph]')) {
    if (!hidden(node)) for (const cls of node.dataset.glyph.split(' ')) drawn.add(cls);
  }
  const listed = [...canvas.querySelectorAll('.flinkstate-legend-entry')]
    .map((e) => e.dataset.glyph);
  return { texts: texts.length, overlaps, squeezed, drawn: [...drawn].sort(), listed: listed.sort(),
           height: svg.getBoundingClientRect().height };
}"""


def clutter_of(seen: dict[str, Any], where: str) -> list[str]:
    """What a reader would find wrong in ``seen`` (what :data:`CLUTTER` returned): texts over
    one another or under an item, texts squeezed, a legend that lists other classes than the
    canvas draws; each said with ``where``."""
    found = []
    if seen["overlaps"]:
        found.append(f"{where}: texts overlap: {seen['overlaps']}")
    if seen["squeezed"]:
        found.append(f"{where}: texts squeezed: {seen['squeezed']}")
    listed, drawn = seen["listed"], seen["drawn"]
    if listed != drawn:
        found.append(f"{where}: the legend lists {listed}, the canvas draws {drawn}")
    return found


def assert_uncluttered(seen: dict[str, Any], where: str) -> None:
    """No text over another or under an item, none squeezed, and the legend lists exactly the
    glyph classes drawn."""
    found = clutter_of(seen, where)
    assert not found, "\n".join(found)
