"""A written run page, opened from disk in Chromium with no kernel and no network: the canvas
draws, step and the slider move it, the captions follow, and another run can be picked."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from flinkstate.output import write_whole
from flinkstate.views.page import scenario_page
from flinkstate.views.scene_layout import COLLAPSE_OVER
from tests.browser.clutter import CLUTTER, assert_uncluttered

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@contextmanager
def _offline_page(browser: Browser, width: int = 1280) -> Iterator[tuple[Page, list[str]]]:
    """A page in a context of its own with no network, ``width`` px wide, and the errors its
    scripts throw; the context is closed afterwards."""
    context = browser.new_context(viewport={"width": width, "height": 1000}, offline=True)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        yield page, errors
    finally:
        context.close()


def _open(page: Page, target: Path) -> None:
    """Open the page file ``target`` and wait until its script has drawn the first scene."""
    page.goto(target.as_uri())
    page.wait_for_function("document.body.dataset.ready === 'true'", timeout=60_000)


def _state(page: Page) -> dict[str, object]:
    result: dict[str, object] = page.evaluate(
        """() => {
          const canvas = document.querySelector('.flinkstate-canvas');
          const current = canvas.querySelector('.flinkstate-caption-current');
          return {
            step: Number(canvas.dataset.step),
            caption: current ? current.textContent : '',
            items: [...canvas.querySelectorAll('.fs-item')].filter((g) => g.style.opacity !== '0')
              .map((g) => `${g.dataset.id}@${g.style.transform}`).sort().join('|'),
            places: canvas.querySelectorAll('.fs-place').length,
          };
        }"""
    )
    return result


@pytest.mark.timeout(300)
def _drawn(page: Page, step: int) -> None:
    """Wait until the canvas shows ``step``."""
    page.wait_for_function(
        f"document.querySelector('.flinkstate-canvas').dataset.step === '{step}'",
        timeout=10_000,
    )


def _go_to(page: Page, step: int) -> None:
    """Type a step into the page's go-to box and wait until the canvas shows it."""
    page.fill("#goto", str(step))
    page.press("#goto", "Enter")
    _drawn(page, step)


def test_a_run_page_steps_offline(browser: Browser, tmp_path: Path, artifacts: Path) -> None:
    target = write_whole(tmp_path / "run.html", scenario_page("prefilter-deadlock"))
    with _offline_page(browser) as (page, errors):
        requests: list[str] = []
        page.on(
            "request",
            lambda r: (
                requests.append(r.url)
                if not r.url.startswith(("file:", "blob:", "data:"))
                else None
            ),
        )
        _open(page, target)
        # it opens on what the scenario is about: the restart, where it deadlocks
        start = _state(page)
        assert page.input_value("#phase") == "1"
        assert start["step"] == int(page.get_attribute("#slider", "max") or 0) > 0
        assert "waits-for cycle" in str(start["caption"])
        assert "waits-for cycle" in page.inner_text(".flinkstate-deadlock")
        assert page.locator('[data-glyph="cycle"]').count() >= 1
        assert start["places"] > 20
        page.wait_for_timeout(500)
        page.screenshot(path=artifacts / "run-page-opened.png", full_page=True)
        page.select_option("#phase", "0")  # the job before its restart, from its start
        _drawn(page, 0)
        page.fill("#goto", "300")
        page.press("#goto", "Enter")
        moved = False
        for step in range(301, 321):  # each click draws the next step; most move something
            before = _state(page)
            page.click("#step")
            _drawn(page, step)
            now = _state(page)
            assert str(now["caption"]).startswith(f"step {step}")
            moved |= now["items"] != before["items"]
        assert moved, "twenty steps moved nothing on the canvas"
        page.select_option("#phase", "1")  # the restart, which deadlocks
        last = int(page.get_attribute("#slider", "max") or 0)
        _go_to(page, last)
        assert "deadlock" in page.inner_text("#ending")
        page.wait_for_timeout(500)
        page.screenshot(path=artifacts / "run-page-deadlock.png", full_page=True)
        assert errors == []
        assert requests == []


@pytest.mark.timeout(300)
def test_a_run_page_draws_watermarks_between_records(
    browser: Browser, tmp_path: Path, artifacts: Path
) -> None:
    """FLINK-40517's before run: watermark pieces sit in the buffers in their own colour, the
    legend names them, and every task shows its watermark under its name."""
    target = write_whole(tmp_path / "run.html", scenario_page("merged-watermarks-passed-through"))
    with _offline_page(browser) as (page, errors):
        _open(page, target)
        page.select_option("#phase", "1")  # the restart
        last = int(page.get_attribute("#slider", "max") or 0)
        drawn = None
        for step in (120, 200, last):
            _go_to(page, step)
            page.wait_for_timeout(500)
            drawn = page.evaluate(
                """() => {
                  const canvas = document.querySelector('.flinkstate-canvas');
                  return {
                    pieces: canvas.querySelectorAll('[fill="#334155"]').length,
                    text: canvas.textContent,
                  };
                }"""
            )
            if drawn["pieces"]:
                break
        assert drawn is not None
        assert drawn["pieces"] > 0, "no watermark piece drawn"
        assert "watermark" in drawn["text"]  # the legend
        assert " rec · wm " in drawn["text"] or "wm none" in drawn["text"]  # tasks' watermarks
        page.screenshot(path=artifacts / "run-page-watermarks.png", full_page=True)
        # the late record: the run's last step, where the invariant names it
        _go_to(page, last)
        page.wait_for_timeout(500)
        assert "late-record" in page.inner_text("body")
        page.screenshot(path=artifacts / "run-page-late-record.png", full_page=True)
        assert errors == []


#: what the canvas shows, in drawing order: each place's markup, and each item's markup,
#: position and visibility (the transitions aside)
_DRAWN = """() => {
  const canvas = document.querySelector('.flinkstate-canvas');
  return {
    places: [...canvas.querySelectorAll('.fs-place')].map((g) => g.outerHTML),
    items: [...canvas.querySelectorAll('.fs-item')]
      .map((g) => `${g.dataset.id}@${g.style.transform}@${g.style.opacity}:${g.innerHTML}`)
      .sort(),
  };
}"""


@pytest.mark.timeout(300)
def test_a_canvas_drawn_step_by_step_shows_what_one_drawn_at_once_shows(
    browser: Browser, tmp_path: Path
) -> None:
    """The canvas draws again only the places and items that changed (issue 23: at P = 64
    most of a step's do not): twenty clicks on step end on the very drawing a fresh page
    makes of the same step in one go (a job one subtask over COLLAPSE_OVER: its lanes
    folded)."""
    over = COLLAPSE_OVER + 1
    big = {"source_parallelism": over, "parallelism": over, "records": 6}
    target = write_whole(tmp_path / "run.html", scenario_page("baseline-recovery", overrides=big))
    with _offline_page(browser) as (page, errors):
        drawings = []
        for clicks in (20, 0):
            _open(page, target)
            page.select_option("#phase", "0")  # the job before the restart the page opens on
            _drawn(page, 0)
            _go_to(page, 320 - clicks)
            for step in range(321 - clicks, 321):
                page.click("#step")
                _drawn(page, step)
            page.wait_for_timeout(700)  # the last travels and fades are over
            drawings.append(page.evaluate(_DRAWN))
        stepped, at_once = drawings
        assert 3 * over <= len(at_once["places"]) < 100  # 3 x 9 subtasks folded to a row each
        assert at_once["items"]
        assert stepped == at_once
        assert errors == []


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("scenario", "overrides"),
    [
        ("baseline-recovery", {"source_parallelism": 4, "parallelism": 4}),  # 4 x 4
        ("keyed-upscale", {}),  # a rescale 4 -> 7, every counter reading several old ones
    ],
)
def test_no_text_on_the_canvas_overlaps_another_or_an_item(
    browser: Browser, tmp_path: Path, artifacts: Path, scenario: str, overrides: dict[str, int]
) -> None:
    """A learner's review found "blocked" drawn as "bl", "credit 4 · backl…" cut, "+3" over
    a channel's label, "processed 0" under a task's buffer or its "waits" tag: at two widths
    and a few steps of the restart, no two texts overlap, no text is under an item it is not
    part of, and the legend lists exactly the glyph classes drawn."""
    target = write_whole(tmp_path / "run.html", scenario_page(scenario, overrides=overrides))
    for width in (900, 1400):
        _check_clutter(browser, target, width, artifacts / f"{scenario}-{width}.png")


def _check_clutter(browser: Browser, target: Path, width: int, screenshot: Path) -> None:
    """The restart of the page ``target`` at ``width`` px, at a few of its steps."""
    with _offline_page(browser, width) as (page, errors):
        _open(page, target)
        page.select_option("#phase", "1")  # the restart
        last = int(page.get_attribute("#slider", "max") or 0)
        for step in sorted({s for s in (0, 40, 150, 400) if s <= last} | {last // 2, last}):
            _go_to(page, step)
            page.wait_for_timeout(450)  # travels and fades are over
            seen = page.evaluate(CLUTTER)
            where = f"{target.name} at {width} px, step {step}"
            assert seen["texts"] > 20, where
            assert_uncluttered(seen, where)
        page.screenshot(path=screenshot, full_page=True)
        assert errors == []
