"""The lessons site opened from disk in Chromium with no network: the index leads to a tour's
page, whose back and next move between stops; at 1440x900 and 1280x720 the stop's text, every
highlighted item and the step's caption are on screen together at every stop of every tour, no
text of the canvas overlaps another, the legend lists what is drawn, and no script fails."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from flinkstate.cli import main
from flinkstate.views.site import site_pages, write_site_page
from flinkstate.views.tours import TOURS
from tests.browser.clutter import CLUTTER, assert_uncluttered

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.slow, pytest.mark.browser]

#: the tour the test walks: six stops over a restart, each ringing what it names
TOUR = "classic-recovery"
SIZES = [(1440, 900), (1280, 720)]
#: the boxes that must lie in the viewport at a stop: its text, its caption, each ring
BOXES = """() => {
  const box = (e) => { if (!e) return null; const b = e.getBoundingClientRect();
    return [b.left, b.top, b.right, b.bottom].map(Math.round); };
  const current = document.querySelector('.flinkstate-caption-current');
  const canvas = document.querySelector('.flinkstate-canvas');
  return {
    stop: Number(document.getElementById('stop-text').dataset.stop),
    step: Number(canvas.dataset.step),
    text: box(document.getElementById('stop-text')),
    caption: box(current),
    captionText: current ? current.textContent : '',
    rings: [...document.querySelectorAll('.fs-highlight')].map(box),
    holder: box(document.querySelector('.flinkstate-canvas-holder')),
    viewport: [0, 0, window.innerWidth, window.innerHeight],
  };
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site of the tour and one small scenario page, as ``flinkstate lessons`` writes it."""
    folder = tmp_path_factory.mktemp("lessons") / "site"
    only = ["--only", TOUR, "--only", "small-page-size", "--jobs", "1"]
    assert main(["lessons", "--out", str(folder), *only]) == 0
    return folder


@contextmanager
def _offline(browser: Browser, size: tuple[int, int]) -> Iterator[tuple[Page, list[str]]]:
    """A page of a context of its own, offline, at ``size``; the script errors and every
    request that left the disk are collected as errors."""
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height}, offline=True)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on(
            "request",
            lambda r: (
                errors.append(f"fetched {r.url}")
                if not r.url.startswith(("file:", "blob:", "data:"))
                else None
            ),
        )
        yield page, errors
    finally:
        context.close()


def _inside(box: list[int], frame: list[int]) -> bool:
    left, top, right, bottom = box
    return left >= frame[0] and top >= frame[1] and right <= frame[2] and bottom <= frame[3]


def _check_stop(page: Page, number: int, step: int) -> dict[str, Any]:
    """Stop ``number`` is on display at ``step``, its text, caption and rings on screen."""
    page.wait_for_function(
        f"document.getElementById('stop-text').dataset.stop === '{number}' && "
        f"document.querySelector('.flinkstate-canvas').dataset.step === '{step}'",
        timeout=10_000,
    )
    page.wait_for_timeout(700)  # the close-up's glide
    shown: dict[str, Any] = page.evaluate(BOXES)
    viewport = shown["viewport"]
    where = f"stop {number} (step {step}) at {viewport[2]}x{viewport[3]}"
    assert _inside(shown["text"], viewport), f"{where}: the stop's text {shown['text']}"
    if step:  # the run's start has no step to caption
        assert _inside(shown["caption"], viewport), f"{where}: the caption {shown['caption']}"
        assert str(shown["captionText"]).startswith(f"step {step}")
    rings = shown["rings"]
    holder = shown["holder"]
    frame = [max(a, b) for a, b in zip(viewport[:2], holder[:2], strict=True)] + [
        min(a, b) for a, b in zip(viewport[2:], holder[2:], strict=True)
    ]
    outside = [ring for ring in rings if not _inside(ring, frame)]
    assert outside == [], f"{where}: rings outside the viewport or canvas: {outside}"
    assert_uncluttered(page.evaluate(CLUTTER), where)
    return shown


@pytest.mark.timeout(600)
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_index_opens_a_tour_whose_stops_fit_the_screen(
    browser: Browser, site: Path, artifacts: Path, size: tuple[int, int]
) -> None:
    tour = TOURS[TOUR]
    name = f"{size[0]}x{size[1]}"
    with _offline(browser, size) as (page, errors):
        page.goto((site / "index.html").as_uri())
        page.screenshot(path=artifacts / f"site-index-{name}.png", full_page=True)
        page.click(f"text={tour.title}")
        page.wait_for_function("document.body.dataset.ready === 'true'", timeout=60_000)
        assert page.url.startswith((site / "tours" / f"{TOUR}.html").as_uri())
        steps = [
            int(s)
            for s in page.eval_on_selector_all("#stop-list a", "a => a.map(x => x.title.slice(5))")
        ]
        assert len(steps) == len(tour.stops)
        assert steps == sorted(steps)
        ringed = 0
        for index, step in enumerate(steps):
            shown = _check_stop(page, index + 1, step)
            ringed += len(shown["rings"])
            if index in (0, len(steps) // 2, len(steps) - 1):
                page.screenshot(path=artifacts / f"site-{TOUR}-stop{index + 1}-{name}.png")
            if index < len(steps) - 1:
                page.click("#stop-next")
        assert ringed > 0, "no stop rings anything"
        assert page.is_disabled("#stop-next")
        page.click("#stop-back")  # back to the stop before
        _check_stop(page, len(steps) - 1, steps[-2])
        page.click("#step")  # the run's own controls go on from the stop
        page.wait_for_function(
            f"document.querySelector('.flinkstate-canvas').dataset.step === '{steps[-2] + 1}'"
        )
        page.click("a[href='../index.html']")
        page.wait_for_url((site / "index.html").as_uri())
        assert errors == []


@pytest.fixture(scope="module")
def tours_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every tour's page, as the site holds them (made here, one after the other)."""
    folder = tmp_path_factory.mktemp("tours")
    for page in site_pages():
        if page.kind == "tour":
            write_site_page(page, folder)
    return folder


@pytest.mark.timeout(600)
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("name", list(TOURS))
def test_every_stop_of_every_tour_fits_the_screen(
    browser: Browser, tours_site: Path, artifacts: Path, name: str, size: tuple[int, int]
) -> None:
    """Each stop, reached with next from the first: its text, rings and caption on screen;
    the first, middle and last stop kept as screenshots."""
    stops = len(TOURS[name].stops)
    with _offline(browser, size) as (page, errors):
        page.goto((tours_site / "tours" / f"{name}.html").as_uri())
        page.wait_for_function("document.body.dataset.ready === 'true'", timeout=60_000)
        steps = [
            int(s)
            for s in page.eval_on_selector_all("#stop-list a", "a => a.map(x => x.title.slice(5))")
        ]
        assert len(steps) == stops
        for index, step in enumerate(steps):
            _check_stop(page, index + 1, step)
            if index in (0, stops // 2, stops - 1):
                page.screenshot(path=artifacts / f"{name}-stop{index + 1}.png")
            if index < stops - 1:
                page.click("#stop-next")
        assert errors == []
