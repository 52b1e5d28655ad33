"""The recovery canvas in a real browser: from a click on *step* to the canvas redrawn.

A notebook with the recovery stepper runs in JupyterLab in Chromium (the browser tests' own
server and flags). Each sample clicks *step* and waits in the page until the canvas has drawn
the next step: the kernel's step, scene and caption, the widget message over the websocket,
and the drawing in SVG. The baseline, measured in the same run in this process, is the kernel's
part alone (the stepper's ``step``), so the ratio is what the browser adds. Targets (issue 18):
at most 150 ms for the 4x4 keyed job and 500 ms for a 16x16 one; issue 23: 500 ms for the
64x64 job of the ``large`` preset (its lanes folded, 8,300 places), clicked once the stepper's
preview of the run to its end has finished (it runs between clicks, a slice at a time).

Needs Chromium (``/usr/bin/chromium`` or ``FLINKSTATE_CHROMIUM``); without it the benchmark
says so and measures nothing.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Measurement
from flinkstate.catalogue.presets import Preset, scenario_preset
from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.widgets.recovery_stepper import RecoveryStepper

#: the baseline-recovery scenario under the ``large`` preset: 64 x 64, four slots a TaskManager
LARGE = dict(scenario_preset(Preset.LARGE, get_scenario("baseline-recovery")).values)

#: (label, overrides of the baseline-recovery scenario, the step the clicks start from, the
#: target in seconds)
SIZES: tuple[tuple[str, dict[str, int], int, float], ...] = (
    ("4x4", {"records": 60, "parallelism": 4, "source_parallelism": 4}, 300, 0.150),
    ("16x16", {"records": 30, "parallelism": 16, "source_parallelism": 16}, 300, 0.500),
    ("64x64", LARGE, 5000, 0.500),
)

#: one click on the stepper's step button, resolved with the milliseconds until the canvas
#: says it draws the next step (its ``data-step``, set once the scene is drawn)
CLICK = """
async () => {
  const canvas = document.querySelector('.flinkstate-canvas');
  const button = document.querySelector('.flinkstate-step');
  const before = Number(canvas.dataset.step);
  const start = performance.now();
  return await new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      if (Number(canvas.dataset.step) === before + 1) {
        observer.disconnect();
        requestAnimationFrame(() => resolve(performance.now() - start));
      }
    });
    observer.observe(canvas, {attributes: true, attributeFilter: ['data-step']});
    button.click();
  });
}
"""


#: the notebook is open and its kernel idle (JupyterLab's app, exposed by the test server)
_KERNEL_IDLE = """
() => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return false;
  for (const widget of app.shell.widgets('main')) {
    const session = widget.sessionContext;
    const kernel = session && session.session && session.session.kernel;
    if (session && session.isReady && kernel && kernel.status === 'idle') return true;
  }
  return false;
}
"""


_DRAW_MS = "() => document.querySelector('.flinkstate-canvas').dataset.drawMs"

#: the stepper's preview of the run to its end has finished (its progress box is hidden)
_PREVIEW_ENDED = """
() => {
  const box = document.querySelector('.flinkstate-preview');
  return box !== null && getComputedStyle(box).display === 'none';
}
"""


def _notebook(directory: Path, overrides: dict[str, int], start: int) -> str:
    source = (
        "from flinkstate.widgets.recovery_stepper import RecoveryStepper\n"
        f"stepper = RecoveryStepper('baseline-recovery', overrides={overrides!r}, phase='job')\n"
        f"stepper.goto({start})\n"
        "stepper.widget"
    )
    cell: dict[str, object] = {
        "cell_type": "code",
        "execution_count": None,
        "id": "stepper",
        "metadata": {},
        "outputs": [],
        "source": source,
    }
    notebook = {
        "cells": [cell],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    name = "canvas-benchmark.ipynb"
    (directory / name).write_text(json.dumps(notebook), encoding="utf-8")
    return name


def _kernel_step_seconds(overrides: dict[str, int], start: int, clicks: int) -> float:
    stepper = RecoveryStepper("baseline-recovery", overrides=overrides, phase="job")
    stepper.goto(start)
    samples = []
    for _ in range(clicks):
        begin = time.perf_counter()
        stepper.step()
        samples.append(time.perf_counter() - begin)
    shown = json.dumps(stepper.canvas.scene)
    print(
        f"canvas: kernel: a click's message carries a scene of {len(shown):,} bytes "
        f"({len(stepper.canvas.scene['places'])} places, {len(stepper.canvas.scene['items'])} "
        f"items); the slowest of {clicks} clicks took {max(samples) * 1000:.0f} ms"
    )
    return statistics.median(samples)


def run(smoke: bool) -> list[Measurement]:
    chromium = Path(os.environ.get("FLINKSTATE_CHROMIUM") or "/usr/bin/chromium")
    if not chromium.is_file():
        print(f"canvas: no Chromium at {chromium}; the browser benchmark did not run")
        return []
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM_ARGS
    from tests.browser.lab_server import running_lab

    clicks = 3 if smoke else 25
    sizes = SIZES[:1] if smoke else SIZES
    results = []
    with tempfile.TemporaryDirectory(prefix="flinkstate-canvas-bench-") as scratch:
        root = Path(scratch)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS
            )
            try:
                for label, overrides, start, target in sizes:
                    folder = root / label
                    folder.mkdir()
                    name = _notebook(folder, overrides, start)
                    with running_lab(folder, root / f"home-{label}") as lab:
                        page = browser.new_page(viewport={"width": 1400, "height": 1000})
                        page.goto(lab.notebook_url(name, label), wait_until="domcontentloaded")
                        page.wait_for_function(_KERNEL_IDLE, timeout=90_000, polling=250)
                        page.evaluate(
                            "() => window.jupyterapp.commands.execute('notebook:run-all-cells')"
                        )
                        page.wait_for_function(
                            f"() => {{ const c = document.querySelector('.flinkstate-canvas');"
                            f" return c && c.dataset.step === '{start}'; }}",
                            timeout=180_000,
                            polling=250,
                        )
                        page.wait_for_function(_PREVIEW_ENDED, timeout=300_000, polling=500)
                        page.evaluate(CLICK)  # the first click warms the path
                        samples = [page.evaluate(CLICK) / 1000 for _ in range(clicks)]
                        print(
                            f"canvas: {label}: clicks in the browser: median "
                            f"{statistics.median(samples) * 1000:.0f} ms, slowest "
                            f"{max(samples) * 1000:.0f} ms"
                        )
                        draws = [
                            float(page.evaluate(_DRAW_MS)) for _ in range(1)
                        ]  # the last click's drawing alone
                        print(f"canvas: {label}: drawing the scene took {draws[0]:.1f} ms")
                        page.close()
                    browser_seconds = statistics.median(samples)
                    results.append(
                        Measurement(
                            f"click to redrawn canvas, {label} job (median of {clicks}; "
                            f"target {target * 1000:.0f} ms)",
                            browser_seconds,
                            "the kernel's step alone",
                            _kernel_step_seconds(overrides, start, clicks),
                            1,
                        )
                    )
            finally:
                browser.close()
    return results
