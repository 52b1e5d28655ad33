"""A written run page, opened from disk in Chromium with no kernel and no network: the canvas
draws, step and the slider move it, the captions follow, and another run can be picked."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from flinkstate.output import write_whole
from flinkstate.views.page import scenario_page
from flinkstate.views.scene import COLLAPSE_OVER

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.slow, pytest.mark.browser]


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
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, offline=True)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        requests: list[str] = []
        page.on(
            "request",
            lambda r: (
                requests.append(r.url)
                if not r.url.startswith(("file:", "blob:", "data:"))
                else None
            ),
        )
        page.goto(target.as_uri())
        page.wait_for_function("document.body.dataset.ready === 'true'", timeout=60_000)
        start = _state(page)
        assert start["step"] == 0
        assert start["places"] > 20
        page.screenshot(path=artifacts / "run-page-step-0.png", full_page=True)
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
    finally:
        context.close()


@pytest.mark.timeout(300)
def test_a_run_page_draws_watermarks_between_records(
    browser: Browser, tmp_path: Path, artifacts: Path
) -> None:
    """FLINK-40517's before run: watermark pieces sit in the buffers in their own colour, the
    legend names them, and every task shows its watermark under its name."""
    target = write_whole(tmp_path / "run.html", scenario_page("merged-watermarks-passed-through"))
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, offline=True)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(target.as_uri())
        page.wait_for_function("document.body.dataset.ready === 'true'", timeout=60_000)
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
    finally:
        context.close()


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
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, offline=True)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        drawings = []
        for clicks in (20, 0):
            page.goto(target.as_uri())
            page.wait_for_function("document.body.dataset.ready === 'true'", timeout=60_000)
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
    finally:
        context.close()
