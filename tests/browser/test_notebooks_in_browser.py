"""Run a notebook in JupyterLab in a real Chromium and press the stepper's step button.

The kernel-side tests cannot see what only a browser shows: that the widget extensions load,
that the ipywidgets, the plotly ``FigureWidget`` and the recovery canvas (both through
anywidget) render, and that a click travels to the kernel and comes back re-drawn. The contract
with a stepper notebook: a button with CSS class ``flinkstate-step`` and, in the same widget, a
canvas (``.flinkstate-canvas``) whose ``data-step`` says the step it draws; after one click it
draws step n+1, with a new caption and something moved.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from flinkstate.lab.scenario_run import run_scenario
from flinkstate.runtime.options import RecoveryCheckpointTrigger
from flinkstate.views.recovery_trigger import trigger_history
from flinkstate.views.tours import failed_as_finished_counterexample, get_tour, locate
from tests.browser.clutter import CLUTTER, clutter_of
from tests.browser.lab_server import LabServer, running_lab
from tests.kernel_spark import KernelSpark, uses_spark
from tests.notebooks.executed import installed_kernel

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Locator, Page

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).parents[2]
NOTEBOOKS = ROOT / "notebooks"
#: the notebook with the recovery stepper
STEPPER_NOTEBOOK = "02-stepping-through-recovery.ipynb"
STEP_BUTTON = ".flinkstate-step"
TITLE_PREFIX = "Buffer ownership at step"
TITLE_STEP = re.compile(rf"^{re.escape(TITLE_PREFIX)} (\d+)")

# each bounded; together (with the server's start) within the tests' own timeout
KERNEL_TIMEOUT = 90.0  # JupyterLab loads, the session starts, the kernel says idle
RUN_ALL_TIMEOUT = 180.0  # every cell of the notebook, including the stepper's preview run
RENDER_TIMEOUT = 60.0  # the widget extensions load and draw the stepper's figure
CLICK_TIMEOUT = 60.0  # one step in the kernel and the figure's update in the page

#: Helpers installed in every page before JupyterLab's own scripts; they read JupyterLab's
#: application object (exposed by the test server) and the DOM, never the notebook file.
PAGE_HELPERS = """
window.flinkstateTest = (() => {
  const panel = (path) => {
    const app = window.jupyterapp;
    if (!app || !app.shell) return null;
    for (const widget of app.shell.widgets('main')) {
      if (widget.context && widget.context.path === path && widget.sessionContext) return widget;
    }
    return null;
  };
  const kernel = (path) => {
    const p = panel(path);
    return p && p.sessionContext.session ? p.sessionContext.session.kernel : null;
  };
  const kernelName = (path) => (kernel(path) || {}).name || null;
  const kernelIdle = (path) => {
    const p = panel(path);
    const k = kernel(path);
    return Boolean(p && p.sessionContext.isReady && k && k.status === 'idle'
      && k.connectionStatus === 'connected');
  };
  const codeCells = (path) => panel(path).content.widgets.filter((c) => c.model.type === 'code');
  const errors = (path) => {
    const found = [];
    codeCells(path).forEach((cell, index) => {
      for (const output of cell.model.outputs.toJSON()) {
        if (output.output_type === 'error') {
          found.push(`code cell ${index + 1}: ${output.ename}: ${output.evalue}`);
        }
      }
      const selectors = '[data-mime-type="application/vnd.jupyter.error"], '
        + '[data-mime-type="application/vnd.jupyter.stderr"]';
      for (const node of cell.node.querySelectorAll(selectors)) {
        const text = node.textContent || '';
        if (node.matches('[data-mime-type="application/vnd.jupyter.error"]')
            || text.includes('Traceback')) {
          found.push(`code cell ${index + 1} shows: ${text.slice(0, 500)}`);
        }
      }
      for (const node of cell.node.querySelectorAll('.jp-OutputArea-output')) {
        if ((node.textContent || '').includes('Error displaying widget')) {
          found.push(`code cell ${index + 1}: ${node.textContent.slice(0, 500)}`);
        }
      }
    });
    return [...new Set(found)];
  };
  const runAll = (path) => {
    const app = window.jupyterapp;
    const p = panel(path);
    window.flinkstateRun = {done: false, result: null};
    window.flinkstateIopub = [];
    p.sessionContext.iopubMessage.connect((_, message) => {
      const type = message.header.msg_type;
      if (type === 'error') {
        window.flinkstateIopub.push(`error: ${message.content.ename}: ${message.content.evalue}`);
      } else if (type === 'stream' && message.content.name === 'stderr') {
        window.flinkstateIopub.push(`stderr: ${message.content.text}`);
      }
    });
    app.shell.activateById(p.id);
    app.commands.execute('notebook:run-all-cells').then(
      (result) => { window.flinkstateRun = {done: true, result: String(result)}; },
      (error) => { window.flinkstateRun = {done: true, result: `rejected: ${error}`}; },
    );
  };
  const runFinished = (path) => {
    if (errors(path).length) return 'error';
    if (!window.flinkstateRun || !window.flinkstateRun.done || !kernelIdle(path)) return null;
    const cells = codeCells(path);
    const pending = cells.some((c) => (c.node.querySelector('.jp-InputPrompt') || {})
      .textContent === '[*]:');
    const unrun = cells.some((c) => c.model.sharedModel.source.trim()
      && c.model.executionCount === null);
    return pending || unrun ? null : 'done';
  };
  const outputText = (path) => codeCells(path)
    .map((c) => c.model.outputs.toJSON()
      .map((o) => (o.output_type === 'stream' ? [].concat(o.text).join('') : '')).join(''))
    .join('');
  return {kernelName, kernelIdle, errors, runAll, runFinished, outputText};
})();
"""

#: The state of the stepper's figure, read from plotly's graph div: of the figures around the
#: button (walking up from it, so the figure belongs to the same widget), the first whose
#: title starts with the prefix. Its data is digested whole: one step may change only the
#: hover texts. ``gd.data`` may hold typed arrays (plotly decodes numpy's binary encoding into
#: them), which JSON.stringify would turn into index maps.
FIGURE_STATE = """
([button, prefix]) => {
  const titleOf = (gd) => {
    const title = gd.layout && gd.layout.title;
    return typeof title === 'string' ? title : (title && title.text) || '';
  };
  const plain = (key, value) => {
    if (key.startsWith('_')) return undefined;  // plotly's private bookkeeping
    return ArrayBuffer.isView(value) ? Array.from(value) : value;
  };
  for (let node = button.parentElement; node; node = node.parentElement) {
    const plots = [...node.querySelectorAll('.js-plotly-plot')]
      .filter((gd) => titleOf(gd).startsWith(prefix));
    if (plots.length) {
      const gd = plots[0];
      const index = [...document.querySelectorAll('.js-plotly-plot')].indexOf(gd);
      return {title: titleOf(gd), data: JSON.stringify(gd.data || [], plain), index};
    }
    if (node.classList.contains('jp-Notebook')) break;
  }
  return null;
}
"""

#: The state of the stepper's canvas: of the canvases around the button (walking up from it),
#: the first; its step, its newest caption, and where every item sits.
CANVAS_STATE = """
([button]) => {
  for (let node = button.parentElement; node; node = node.parentElement) {
    const canvas = node.querySelector('.flinkstate-canvas');
    if (canvas && canvas.dataset.step !== undefined) {
      const items = [...canvas.querySelectorAll('.fs-item')]
        .filter((g) => g.style.opacity !== '0')
        .map((g) => `${g.dataset.id}@${g.style.transform}`).sort();
      const current = canvas.querySelector('.flinkstate-caption-current');
      const index = [...document.querySelectorAll('.flinkstate-canvas')].indexOf(canvas);
      return {
        step: Number(canvas.dataset.step),
        caption: current ? current.textContent : '',
        items,
        places: canvas.querySelectorAll('.fs-place').length,
        index,
      };
    }
    if (node.classList.contains('jp-Notebook')) break;
  }
  return null;
}
"""

#: the stepper's contract, as small as it gets: proves the chain without the model
MINIMAL_STEPPER_SOURCE = f'''\
import sys

import ipywidgets as widgets
import plotly.graph_objects as go

import os
print("kernel prefix:", os.path.realpath(sys.prefix))
step = 0
button = widgets.Button(description="Step")
button.add_class("{STEP_BUTTON.removeprefix(".")}")
figure = go.FigureWidget(
    data=[go.Scatter(x=[0, 1, 2], y=[0, 0, 0], mode="lines+markers")],
    layout={{"title": {{"text": "{TITLE_PREFIX} 0"}}}},
)


def on_step(_button):
    global step
    step += 1
    with figure.batch_update():
        figure.layout.title.text = f"{TITLE_PREFIX} {{step}}"
        figure.data[0].y = [step, 2 * step, 3 * step]


button.on_click(on_step)
display(widgets.VBox([button, figure]))
'''


def write_minimal_stepper(directory: Path) -> str:
    return write_notebook(directory, "minimal-stepper", MINIMAL_STEPPER_SOURCE)


def write_notebook(directory: Path, stem: str, source: str) -> str:
    """A notebook of one code cell, ``stem.ipynb`` in ``directory``; its name."""
    name = f"{stem}.ipynb"
    cell: dict[str, Any] = {
        "cell_type": "code",
        "execution_count": None,
        "id": stem,
        "metadata": {},
        "outputs": [],
        "source": source,
    }
    name_of_kernel, display_name = installed_kernel()  # the notebooks' own
    kernelspec = {"name": name_of_kernel, "display_name": display_name, "language": "python"}
    notebook = {
        "cells": [cell],
        "metadata": {"kernelspec": kernelspec, "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (directory / name).write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return name


def _step_of(title: str) -> int:
    match = TITLE_STEP.match(title)
    assert match, f"figure title {title!r} does not say the step"
    return int(match.group(1))


def _digest(state: dict[str, Any]) -> str:
    return hashlib.sha256(state["data"].encode()).hexdigest()[:12]


class NotebookInBrowser:
    """One notebook open in JupyterLab, with what a failure message needs."""

    def __init__(
        self, page: Page, lab: LabServer, name: str, artifacts: Path, workspace: str
    ) -> None:
        self.page, self.lab, self.name, self.artifacts = page, lab, name, artifacts
        self.workspace = workspace
        self.console: list[str] = []
        page.on("pageerror", lambda error: self.console.append(f"page error: {error}"))
        page.on("console", self._on_console)

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.console.append(f"console {message.type}: {message.text}")

    def helper(self, name: str, *args: Any) -> Any:
        return self.page.evaluate(
            "([name, args]) => window.flinkstateTest[name](...args)", [name, list(args)]
        )

    def wait_for(self, what: str, condition: str, arg: Any, timeout: float) -> Any:
        """Wait for a JS condition in the page; a timeout says what did not happen."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            return self.page.wait_for_function(
                condition, arg=arg, timeout=timeout * 1000, polling=250
            ).json_value()
        except PlaywrightTimeout:
            raise AssertionError(f"{what} within {timeout:.0f}s") from None

    def open(self) -> None:
        """Open the notebook and wait for its kernel: the one its kernelspec names (the
        Makefile's ``flinkstate``, found in this environment's prefix), idle."""
        path = self.lab.root_dir / self.name
        asked = json.loads(path.read_text(encoding="utf-8"))["metadata"]["kernelspec"]["name"]
        self.page.goto(
            self.lab.notebook_url(self.name, self.workspace), wait_until="domcontentloaded"
        )
        self.wait_for(
            f"{self.name} did not open with an idle {asked} kernel",
            "(path) => window.flinkstateTest.kernelIdle(path)",
            self.name,
            KERNEL_TIMEOUT,
        )
        kernel = self.helper("kernelName", self.name)
        assert kernel == asked, f"{self.name} runs in kernel {kernel!r}, not {asked}"

    def run_all(self) -> None:
        started = time.monotonic()
        self.helper("runAll", self.name)
        outcome = self.wait_for(
            "Run All did not finish (a cell still [*] or never run, or the kernel busy)",
            "(path) => window.flinkstateTest.runFinished(path)",
            self.name,
            RUN_ALL_TIMEOUT,
        )
        errors = self.helper("errors", self.name)
        assert not errors, "cells failed:\n" + "\n".join(errors)
        assert outcome == "done", outcome
        print(f"{self.name}: Run All took {time.monotonic() - started:.1f}s")

    def step_button(self) -> Locator:
        """The first step button a reader can press (a tour hides its stepper's controls)."""
        buttons = self.page.locator(f"{STEP_BUTTON} >> visible=true")
        buttons.first.wait_for(state="visible", timeout=RENDER_TIMEOUT * 1000)
        return buttons.first

    def drawn_canvas(self) -> tuple[Locator, dict[str, Any]]:
        """The step button and the state of the canvas beside it, once it has drawn places."""
        button = self.step_button()
        state = self.wait_for(
            "no recovery canvas with places rendered next to the step button",
            f"([button]) => {{ const s = ({CANVAS_STATE})([button]); "
            "return s && s.places > 0 ? s : null; }",
            [button.element_handle()],
            RENDER_TIMEOUT,
        )
        return button, state

    def click_step(self, button: Locator, step: int) -> dict[str, Any]:
        """One click on ``button``: the canvas's state once it draws ``step`` with a caption;
        an error the kernel reports meanwhile fails at once."""
        seen = self.page.evaluate("window.flinkstateIopub.length")
        button.click()
        after = self.wait_for(
            f"one click on step did not re-draw the canvas at step {step}",
            f"""([button, step, seen]) => {{
              const failed = window.flinkstateIopub.slice(seen)
                .filter((line) => line.startsWith('error:'));
              if (failed.length) return {{kernelErrors: failed}};
              const now = ({CANVAS_STATE})([button]);
              return now && now.step === step && now.caption ? now : null;
            }}""",
            [button.element_handle(), step, seen],
            CLICK_TIMEOUT,
        )
        assert "kernelErrors" not in after, "the click failed in the kernel:\n" + "\n".join(
            after.get("kernelErrors", [])
        )
        return after

    def screenshot(self, target: Locator | None, label: str) -> Path:
        path = self.artifacts / f"{Path(self.name).stem}-{label}.png"
        if target is None:
            self.page.screenshot(path=path, full_page=True)
        else:
            target.screenshot(path=path)
        return path

    def screenshot_window(self, label: str) -> Path:
        """What the learner sees: the window as it is, not scrolled."""
        path = self.artifacts / f"{Path(self.name).stem}-{label}.png"
        self.page.screenshot(path=path)
        return path

    def diagnostics(self) -> str:
        parts = []
        try:
            dialogs = self.page.locator(".jp-Dialog").all_inner_texts()
            if dialogs:
                parts.append("open dialogs:\n" + "\n".join(dialogs))
            iopub = self.page.evaluate("window.flinkstateIopub || []")
            if iopub:
                lines = [line.rstrip("\n") for line in iopub]
                parts.append("kernel errors and stderr:\n" + "\n".join(lines)[-3000:])
        except Exception as error:  # the page may be gone; the server log still helps
            parts.append(f"(page not readable: {error})")
        if self.console:
            parts.append("browser console:\n" + "\n".join(self.console[-30:]))
        parts.append(f"--- JupyterLab log ({self.lab.log}) ---\n{self.lab.log_tail()}")
        return "\n\n".join(parts)

    @contextmanager
    def explained(self) -> Iterator[None]:
        """Turn a failure into one that shows the page, the kernel and the server log."""
        try:
            yield
        except Exception as error:
            try:
                shot = f"screenshot: {self.screenshot(None, 'failure')}"
            except Exception as screenshot_error:
                shot = f"(no screenshot: {screenshot_error})"
            with suppress(OSError):
                shutil.copy(self.lab.log, self.artifacts / self.lab.log.name)
            what = str(error) if isinstance(error, AssertionError) else repr(error)
            raise AssertionError(f"{what}\n{shot}\n\n{self.diagnostics()}") from error


class Labs:
    """One JupyterLab per folder served, started when a test first asks for it and shared by
    the module's tests (a server costs seconds to start); each test opens its notebook in a
    fresh workspace and ends its kernels."""

    def __init__(self, home: Path, stack: ExitStack, spark: KernelSpark) -> None:
        self.home, self.stack, self.spark = home, stack, spark
        self.running: dict[Path, LabServer] = {}

    def serving(self, root_dir: Path, name: str) -> LabServer:
        """The folder's server, for notebook ``name`` in it (one that opens a Spark session
        finds the test process's Spark Connect server running, as under ``make lab``)."""
        if root_dir not in self.running:
            home = self.home / f"jupyter-{len(self.running)}"
            environment = self.spark.kernel_environment()
            self.running[root_dir] = self.stack.enter_context(
                running_lab(root_dir, home, environment)
            )
        if uses_spark(root_dir / name):
            self.spark.ensure_running()
        return self.running[root_dir]


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory, kernel_spark: KernelSpark) -> Iterator[Labs]:
    with ExitStack() as stack:
        yield Labs(tmp_path_factory.mktemp("labs"), stack, kernel_spark)


@pytest.fixture(scope="module")
def notebook_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests write the notebooks they make (each under a name of its own), served
    by one JupyterLab."""
    return tmp_path_factory.mktemp("notebooks")


@pytest.fixture
def open_notebook(
    browser: Browser, labs: Labs, artifacts: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[[Path, str], NotebookInBrowser]]:
    """Open a notebook (its path in the folder served) in a new page of the folder's
    JupyterLab; afterwards close the page and end the notebook's kernel."""
    workspace = re.sub(r"[^A-Za-z0-9_-]+", "-", request.node.name).strip("-")
    with ExitStack() as stack:

        def open_in(root_dir: Path, name: str) -> NotebookInBrowser:
            lab = labs.serving(root_dir, name)
            stack.callback(lab.end_sessions)
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            stack.callback(context.close)
            context.add_init_script(script=PAGE_HELPERS)
            notebook = NotebookInBrowser(context.new_page(), lab, name, artifacts, workspace)
            with notebook.explained():
                notebook.open()
            return notebook

        yield open_in


def run_and_step(notebook: NotebookInBrowser) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run All, then one click on the step button; the figure's state before and after."""
    with notebook.explained():
        notebook.run_all()
        button = notebook.step_button()
        element = button.element_handle()
        before = notebook.wait_for(
            f"no figure titled {TITLE_PREFIX!r}... rendered next to the step button",
            FIGURE_STATE,
            [element, TITLE_PREFIX],
            RENDER_TIMEOUT,
        )
        figure = notebook.page.locator(".js-plotly-plot").nth(before["index"])
        notebook.screenshot(figure, "before")
        seen = notebook.page.evaluate("window.flinkstateIopub.length")
        button.click()
        # done when the figure shows a new title and new data, or at once if the click's
        # callback raised in the kernel (ipywidgets sends that to the log, not the cell)
        after = notebook.wait_for(
            f"one click on step did not re-draw the figure (still {before['title']!r}, "
            f"data {_digest(before)})",
            f"""([button, prefix, title, data, seen]) => {{
              const failed = window.flinkstateIopub.slice(seen)
                .filter((line) => line.startsWith('error:'));
              if (failed.length) return {{kernelErrors: failed}};
              const now = ({FIGURE_STATE})([button, prefix]);
              return now && now.title !== title && now.data !== data ? now : null;
            }}""",
            [element, TITLE_PREFIX, before["title"], before["data"], seen],
            CLICK_TIMEOUT,
        )
        assert "kernelErrors" not in after, "the click failed in the kernel:\n" + "\n".join(
            after.get("kernelErrors", [])
        )
        notebook.screenshot(figure, "after")
        errors = notebook.helper("errors", notebook.name)
        assert not errors, "cells show errors after the click:\n" + "\n".join(errors)
    return before, after


def run_and_step_canvas(notebook: NotebookInBrowser) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run All, then one click on the step button; the canvas's state before and after."""
    with notebook.explained():
        notebook.run_all()
        button, before = notebook.drawn_canvas()
        canvas = notebook.page.locator(".flinkstate-canvas").nth(before["index"])
        notebook.screenshot(canvas, "canvas-before")
        notebook.click_step(button, before["step"] + 1)
        notebook.page.wait_for_timeout(600)  # let the items travel before the picture
        # read once they have arrived: an item the step made fades in from opacity 0, which
        # the canvas's state at the moment it says the step is drawn may still show
        after = button.evaluate(f"(node) => ({CANVAS_STATE})([node])")
        notebook.screenshot(canvas, "canvas-after")
        errors = notebook.helper("errors", notebook.name)
        assert not errors, "cells show errors after the click:\n" + "\n".join(errors)
    return before, after


@pytest.mark.timeout(480)
def test_minimal_stepper_renders_and_steps_in_chromium(
    open_notebook: Callable[[Path, str], NotebookInBrowser], notebook_folder: Path
) -> None:
    """The whole chain on a notebook made here: lab, widget extensions, click, re-draw."""
    root_dir = notebook_folder
    notebook = open_notebook(root_dir, write_minimal_stepper(root_dir))
    before, after = run_and_step(notebook)
    # the notebook's kernel (the Makefile's, by the absolute path it was installed with) runs
    # in this environment; compared resolved, since a linked environment is the same one
    prefix = os.path.realpath(sys.prefix)
    assert f"kernel prefix: {prefix}" in notebook.helper("outputText", notebook.name)
    assert (_step_of(before["title"]), _step_of(after["title"])) == (0, 1)
    assert after["data"] != before["data"]


EXPLORER_SOURCE = """\
from flinkstate.widgets.rescale_explorer import RescaleExplorer

explorer = RescaleExplorer(partitioner="HASH", max_parallelism=128, old_parallelism=3,
                           new_parallelism=2)
explorer.widget
"""


@pytest.mark.timeout(480)
def test_the_rescale_explorer_refuses_a_typed_value_without_clamping_it(
    open_notebook: Callable[[Path, str], NotebookInBrowser], notebook_folder: Path
) -> None:
    """A learner types 0 as the new parallelism: the box keeps the 0, a red line says why it
    is not applied, and the figures of the last valid rescale stay; 5 then applies."""
    root_dir = notebook_folder
    notebook = open_notebook(
        root_dir, write_notebook(root_dir, "rescale-explorer", EXPLORER_SOURCE)
    )
    page = notebook.page
    with notebook.explained():
        notebook.run_all()
        box = page.locator(".widget-text", has_text="new par.").locator("input")
        box.wait_for(state="visible", timeout=RENDER_TIMEOUT * 1000)
        output = page.locator(".jp-OutputArea-output").last
        page.locator(".js-plotly-plot").first.wait_for(timeout=RENDER_TIMEOUT * 1000)
        box.fill("0")
        box.press("Enter")
        refusal = page.get_by_text("Not applied: new parallelism 0 is out of range")
        refusal.wait_for(timeout=CLICK_TIMEOUT * 1000)
        notebook.screenshot(output, "refused")
        assert box.input_value() == "0"  # the value typed stays: nothing clamped it
        assert page.locator(".js-plotly-plot").count() >= 2  # the last figures stay
        box.fill("5")
        box.press("Enter")
        refusal.wait_for(state="hidden", timeout=CLICK_TIMEOUT * 1000)
        page.get_by_text("new (5)").first.wait_for(timeout=CLICK_TIMEOUT * 1000)
        page.get_by_text("(3 -> 5, mapper RANGE)").wait_for(timeout=CLICK_TIMEOUT * 1000)
        notebook.screenshot(output, "applied")


ALIGNED_STEPPER_SOURCE = """\
from flinkstate.widgets.recovery_stepper import RecoveryStepper

stepper = RecoveryStepper("aligned-checkpoint-during-recovery", seed=0)
stepper.widget
"""


@pytest.mark.timeout(480)
def test_the_stepper_says_which_recovery_code_runs_and_why_in_chromium(
    open_notebook: Callable[[Path, str], NotebookInBrowser], notebook_folder: Path
) -> None:
    """FLINK-40518's "before" run: the line under the run's figures names the recovery code
    (v2) and why it meets aligned checkpoints, where a learner reads the outcome."""
    root_dir = notebook_folder
    notebook = open_notebook(
        root_dir, write_notebook(root_dir, "aligned-stepper", ALIGNED_STEPPER_SOURCE)
    )
    with notebook.explained():
        notebook.run_all()
        note = notebook.page.locator(".flinkstate-recovery-note").first
        note.wait_for(state="visible", timeout=RENDER_TIMEOUT * 1000)
        text = note.inner_text()
        assert text.startswith("recovery code v2:"), text
        assert "before FLINK-40518" in text
        box = note.bounding_box()
        assert box is not None
        assert box["height"] > 0
        notebook.screenshot(notebook.page.locator(".jp-OutputArea-output").first, "stepper")


@pytest.mark.timeout(480)
def test_stepper_notebook_steps_in_chromium(
    open_notebook: Callable[[Path, str], NotebookInBrowser],
) -> None:
    """The recovery stepper notebook, run as a reader would run it, then one step."""
    path = NOTEBOOKS / STEPPER_NOTEBOOK
    if not path.exists():
        pytest.skip(f"{STEPPER_NOTEBOOK} is not in notebooks/ yet")
    on_disk = path.read_bytes()
    # served as `make lab` serves it: the repository root, the notebook by its path from there
    notebook = open_notebook(ROOT, f"{NOTEBOOKS.name}/{STEPPER_NOTEBOOK}")
    before, after = run_and_step_canvas(notebook)
    assert after["step"] == before["step"] + 1
    assert after["caption"].startswith(f"step {after['step']}")
    assert after["items"] != before["items"], "the step moved nothing on the canvas"
    # autosave is off in the test's JupyterLab: running it must not write outputs back
    assert path.read_bytes() == on_disk, f"{path} changed while the test ran it"


LARGE_STEPPER_SOURCE = """\
from flinkstate.catalogue.presets import scenario_preset
from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.widgets.recovery_stepper import RecoveryStepper

large = scenario_preset("large", get_scenario("baseline-recovery")).values
stepper = RecoveryStepper("baseline-recovery", overrides=large, phase="job")
stepper.goto(5000)  # buffers in flight on every lane, as in bench_canvas
stepper.widget
"""

#: the stepper's preview of the run to its end has ended: its progress box is hidden and the
#: badge says how the run ends
PREVIEW_ENDED = """
() => {
  const box = document.querySelector('.flinkstate-preview');
  if (box === null || getComputedStyle(box).display !== 'none') return null;
  const badge = [...document.querySelectorAll('.widget-html-content')]
    .map((node) => node.textContent).find((text) => text.includes('the job before its restart'));
  return badge && !badge.includes('previewing') ? badge : null;
}
"""


@pytest.mark.timeout(600)
def test_the_stepper_of_a_64x64_job_opens_previews_and_steps_in_chromium(
    open_notebook: Callable[[Path, str], NotebookInBrowser], notebook_folder: Path
) -> None:
    """The ``large`` preset's 64 x 64 job (issue 23): step 5000 drawn with its lanes folded
    while the run's end is previewed beside it, then the outcome on the badge; one click on
    step draws step 5001 with its caption. Kept as screenshots, in a window tall enough for
    the canvas."""
    root_dir = notebook_folder
    notebook = open_notebook(
        root_dir, write_notebook(root_dir, "large-stepper", LARGE_STEPPER_SOURCE)
    )
    with notebook.explained():
        notebook.run_all()
        button, before = notebook.drawn_canvas()
        assert before["step"] == 5000
        # 3 operators x 64 subtasks, a row each, with the pools and writers: not 8,300 places
        assert 192 <= before["places"] < 400, before["places"]
        output = notebook.page.locator(".jp-OutputArea-output").first
        notebook.page.set_viewport_size({"width": 1400, "height": 5200})
        notebook.screenshot(output, "stepper-opened")
        badge = notebook.wait_for(
            "the preview of the run to its end did not finish",
            PREVIEW_ENDED,
            None,
            RUN_ALL_TIMEOUT,
        )
        assert "finished" in badge, badge
        canvas = notebook.page.locator(".flinkstate-canvas").nth(before["index"])
        after = notebook.click_step(button, 5001)
        assert after["caption"].startswith("step 5001")
        notebook.page.wait_for_timeout(600)  # let the items travel before the picture
        notebook.screenshot(canvas, "canvas-step-5001")
        notebook.screenshot(output, "stepper-step-5001")
        errors = notebook.helper("errors", notebook.name)
        assert not errors, "cells show errors after the click:\n" + "\n".join(errors)


REAL_CHECKPOINT_NOTEBOOK = "07-inspect-a-real-checkpoint.ipynb"


def test_the_forecast_of_a_real_checkpoint_steps_in_chromium(
    open_notebook: Callable[[Path, str], NotebookInBrowser],
) -> None:
    """Notebook 7's stepper over the forecast's run: a checkpoint Flink wrote, restored by the
    simulator at parallelism 3, drawn and stepped as a scenario's restart is."""
    notebook = open_notebook(ROOT, f"{NOTEBOOKS.name}/{REAL_CHECKPOINT_NOTEBOOK}")
    before, after = run_and_step_canvas(notebook)
    assert before["step"] == 0
    assert after["step"] == 1
    assert after["caption"].startswith("step 1")


#: notebooks that open with a guided tour, and the tour each opens with (a notebook with more
#: than one tour is listed with the one to follow)
TOUR_NOTEBOOKS = [
    ("01-unaligned-checkpoints-and-channel-state.ipynb", "unaligned-capture"),
    ("02-stepping-through-recovery.ipynb", "classic-recovery"),
    ("03-buffer-ownership-and-the-prefilter-deadlock.ipynb", "prefilter-deadlock"),
    ("04-rescaling-in-flight-data.ipynb", "rescaling-filtering"),
    ("05-restarting-from-a-checkpoint.ipynb", "blocked-subpartition"),
    ("06-checkpointing-during-recovery.ipynb", "checkpointing-during-recovery"),
    ("07-inspect-a-real-checkpoint.ipynb", "real-checkpoint-forecast"),
    ("08-exploring-every-interleaving.ipynb", "failed-as-finished-counterexample"),
]
TOUR = ".flinkstate-tour"
CONTINUE_BUTTON = ".flinkstate-tour-continue"
TOUR_TEXT = ".flinkstate-tour-text"


#: the stops kept as screenshots: the first, the middle and the last (each stop is shown: the
#: first, then one click on continue per further stop)
def tour_stops_pictured(stops: int) -> set[int]:
    return {1, (stops + 1) // 2, stops}


#: the window sizes of the learners' review: at each, a stop's text, what it rings and the step's
#: caption must be on screen together, the tour scrolled to the top of the notebook
LEARNER_VIEWPORTS = [{"width": 1440, "height": 900}, {"width": 1280, "height": 720}]
#: ms the canvas takes to glide to a stop's close-up (canvas.js ZOOM_MS, and a margin)
GLIDE_MS = 700

#: The tour on display: the stop its text names, and the step and highlights its canvas draws.
TOUR_STATE = """
([tour]) => {
  const text = tour.querySelector('.flinkstate-tour-text');
  const canvas = tour.querySelector('.flinkstate-canvas');
  const said = text ? text.textContent : '';
  const match = said.match(/Stop (\\d+) of (\\d+), step (\\d+)/);
  return {
    stop: match ? Number(match[1]) : null,
    stops: match ? Number(match[2]) : null,
    step: match ? Number(match[3]) : null,
    canvasStep: canvas && canvas.dataset.step !== undefined ? Number(canvas.dataset.step) : null,
    highlights: canvas ? canvas.querySelectorAll('.fs-highlight').length : 0,
    places: canvas ? canvas.querySelectorAll('.fs-place').length : 0,
  };
}
"""


#: What a learner sees of the tour, its top at the top of the notebook: the boxes of the stop's
#: text, of each ring on the canvas and of the step's caption, against what is on screen (the
#: window, the notebook's scrolling panel, and for the rings the canvas's own scrolling box).
TOUR_IN_VIEW = """
([tour]) => {
  const scroller = (node) => {
    for (let n = node.parentElement; n; n = n.parentElement) {
      const style = getComputedStyle(n);
      if (/(auto|scroll)/.test(style.overflowY) && n.scrollHeight > n.clientHeight) return n;
    }
    return null;
  };
  const clip = (a, b) => ({
    left: Math.max(a.left, b.left), top: Math.max(a.top, b.top),
    right: Math.min(a.right, b.right), bottom: Math.min(a.bottom, b.bottom),
  });
  const inside = (r, v) => r.width > 0 && r.height > 0 && r.left >= v.left - 1
    && r.top >= v.top - 1 && r.right <= v.right + 1 && r.bottom <= v.bottom + 1;
  const said = (r) => [r.left, r.top, r.right, r.bottom].map(Math.round).join(',');
  const panel = scroller(tour);
  const window_ = {left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight};
  const screen = panel ? clip(window_, panel.getBoundingClientRect()) : window_;
  const text = tour.querySelector('.flinkstate-tour-text');
  const caption = tour.querySelector('.flinkstate-caption-current');
  const holder = tour.querySelector('.flinkstate-canvas-holder');
  const drawing = holder ? clip(screen, holder.getBoundingClientRect()) : screen;
  const rings = [...tour.querySelectorAll('.fs-highlight')].map((n) => n.getBoundingClientRect());
  const out = [];
  if (!text || !inside(text.getBoundingClientRect(), screen))
    out.push(`the stop's text at ${text ? said(text.getBoundingClientRect()) : '-'}`);
  if (caption && !inside(caption.getBoundingClientRect(), screen))
    out.push(`the step's caption at ${said(caption.getBoundingClientRect())}`);
  const ringsOut = rings.filter((r) => !inside(r, drawing));
  if (ringsOut.length)
    out.push(`${ringsOut.length} of ${rings.length} rings, e.g. at ${said(ringsOut[0])}`);
  return {rings: rings.length, ringsIn: rings.length - ringsOut.length, out, screen: said(screen),
          caption: Boolean(caption), drawing: said(drawing),
          view: tour.querySelector('.flinkstate-canvas').dataset.view || null};
}
"""


def look_at_tour(
    notebook: NotebookInBrowser, tour: Locator, size: dict[str, int]
) -> dict[str, Any]:
    """The window at ``size``, the tour's top at the top of the notebook (as a learner who
    scrolled to it and clicked its buttons sees it), the canvas's glide done: what is in view."""
    notebook.page.set_viewport_size(size)
    tour.evaluate("(node) => node.scrollIntoView({block: 'start'})")
    notebook.page.wait_for_timeout(GLIDE_MS)
    seen: dict[str, Any] = tour.evaluate(f"(node) => ({TOUR_IN_VIEW})([node])")
    return seen


#: after "explore from here" and a step: the step button, the caption and the drawing's top
#: (its first 120 px, or all of it if shorter) on screen, the tour still at the notebook's top
EXPLORED_IN_VIEW = """
([tour]) => {
  const box = (selector) => { const n = tour.querySelector(selector);
                              return n ? n.getBoundingClientRect() : null; };
  const bottom = window.innerHeight - 30;  // JupyterLab's status bar
  const holder = box('.flinkstate-canvas-holder');
  const out = [];
  for (const [what, r] of [['the step button', box('.flinkstate-step')],
                           ["the step's caption", box('.flinkstate-caption-current')]]) {
    if (!r || r.top < 0 || r.bottom > bottom) out.push(`${what} at ${r ? r.top : '-'}`);
  }
  if (!holder || holder.top < 0 || Math.min(holder.bottom, holder.top + 120) > bottom)
    out.push(`the drawing at ${holder ? holder.top : '-'}`);
  return out;
}
"""


def explore_and_step(notebook: NotebookInBrowser, tour: Locator, step: int) -> list[str]:
    """At the smaller window, the tour at the notebook's top: "explore from here", then back
    and step; what of the step button, caption and drawing is then off screen."""
    notebook.page.set_viewport_size(LEARNER_VIEWPORTS[-1])
    tour.evaluate("(node) => node.scrollIntoView({block: 'start'})")
    tour.get_by_role("button", name="explore from here").click()
    button = tour.locator(f"{STEP_BUTTON} >> visible=true").first
    button.wait_for(state="visible", timeout=RENDER_TIMEOUT * 1000)
    tour.evaluate("(node) => node.scrollIntoView({block: 'start'})")
    # back, then step: the last stop may be the run's last step
    notebook.click_step(tour.locator(".flinkstate-back >> visible=true").first, step - 1)
    notebook.click_step(button, step)
    notebook.page.wait_for_timeout(GLIDE_MS)
    notebook.screenshot_window("explored-and-stepped")
    out: list[str] = tour.evaluate(f"(node) => ({EXPLORED_IN_VIEW})([node])")
    return out


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("name", "tour"), TOUR_NOTEBOOKS, ids=[n for n, _ in TOUR_NOTEBOOKS])
def test_tour_goes_from_stop_to_stop_in_chromium(
    open_notebook: Callable[[Path, str], NotebookInBrowser], name: str, tour: str
) -> None:
    """Run the notebook as a reader would, then follow its tour: the first stop, and continue
    to each next one; each stop's text, canvas step and highlight, kept as screenshots."""
    path = NOTEBOOKS / name
    on_disk = path.read_bytes()
    steps = locate(get_tour(tour))
    # served as `make lab` serves it: the repository root, the notebook by its path from there
    notebook = open_notebook(ROOT, f"{NOTEBOOKS.name}/{name}")
    with notebook.explained():
        notebook.run_all()
        notebook.page.set_viewport_size(LEARNER_VIEWPORTS[0])
        widget = notebook.page.locator(TOUR).filter(has_text=f"Tour: {get_tour(tour).title}")
        widget.first.wait_for(state="visible", timeout=RENDER_TIMEOUT * 1000)
        element = widget.first.element_handle()
        hidden: list[str] = []
        cluttered: list[str] = []
        rings = 0
        for stop in range(1, len(steps) + 1):
            if stop > 1:
                widget.first.locator(CONTINUE_BUTTON).click()
            state = notebook.wait_for(
                f"the tour did not show stop {stop} at step {steps[stop - 1]} with its "
                "highlight on the canvas",
                f"""([tour, stop, step]) => {{
                  const s = ({TOUR_STATE})([tour]);
                  return s.stop === stop && s.canvasStep === step && s.highlights > 0
                    ? s : null;
                }}""",
                [element, stop, steps[stop - 1]],
                CLICK_TIMEOUT,
            )
            assert state["stops"] == len(steps)
            assert state["places"] > 0
            for size in LEARNER_VIEWPORTS:
                seen = look_at_tour(notebook, widget.first, size)
                where = f"stop {stop} at {size['width']}x{size['height']}"
                hidden += [
                    f"{where}: {what} out of view ({seen['screen']})" for what in seen["out"]
                ]
                rings += seen["ringsIn"]
                if steps[stop - 1] > 0 and not seen["caption"]:  # step 0 has no caption
                    hidden.append(f"{where}: no caption of step {steps[stop - 1]}")
                seen_texts = widget.first.evaluate(f"(node) => ({CLUTTER})(node)")
                cluttered += clutter_of(seen_texts, where)
                if stop in tour_stops_pictured(len(steps)):
                    notebook.screenshot_window(f"tour-stop-{stop}-{size['width']}x{size['height']}")
        print(f"{name}: {len(steps)} stops x {len(LEARNER_VIEWPORTS)} sizes, {rings} rings in view")
        assert not hidden, "a learner would have to scroll:\n" + "\n".join(hidden)
        assert not cluttered, "texts a learner cannot read:\n" + "\n".join(cluttered)
        off = explore_and_step(notebook, widget.first, steps[-1])
        assert not off, "after explore from here and step, off screen: " + ", ".join(off)
        errors = notebook.helper("errors", notebook.name)
        assert not errors, "cells show errors after the tour's clicks:\n" + "\n".join(errors)
    assert path.read_bytes() == on_disk, f"{path} changed while the test ran it"


#: notebook 6's section on FLINK-40517: its two event-time figures, by how their titles start,
#: with the traces each must draw and the label of its screenshot
WATERMARK_NOTEBOOK = "06-checkpointing-during-recovery.ipynb"
WATERMARK_FIGURES = [
    ("Before the fix:", {"counter[0]", "dropped as late"}, "watermarks-before-the-fix"),
    ("After the fix:", {"counter[0]", "sink[1]"}, "watermarks-after-the-fix"),
]
#: the same notebook's section on PR #28554's review: the trigger figure and what it must draw
TRIGGER_FIGURE = "The recovery checkpoint trigger of"
TRIGGER_TRACES = {
    "trigger NOT_READY",
    "trigger DRAINER",
    "trigger NO_OP",
    "checkpoint declined",
    "checkpoint completes",
    "drain finished",
}
#: its two tables, by a text only each shows (a channel's name with its "<", escaped right)
TRIGGER_TABLES = [
    ("first checkpoint after the drain", "recovery-trigger-summary"),
    ("the restart begins", "recovery-trigger-steps"),
]
DECLINED_CHANNEL = "no RecoveryCheckpointBarrier of checkpoint 1 in counter[0]<source[0]"


def trigger_no_op_steps() -> list[int | None]:
    """The step counter[0]'s trigger turns NO_OP in the draft's run and in master's (seed 0)."""
    steps = []
    for name in ("trigger-no-op-after-drain", "trigger-no-op-after-consumed"):
        run = run_scenario(name, seed=0)
        assert run.simulation is not None
        history = trigger_history(run.simulation, "counter[0]")
        steps.append(history.since(RecoveryCheckpointTrigger.NO_OP))
    return steps


#: A figure of the page whose title starts with the prefix: its index among the page's
#: figures, its traces' names, and how many shapes (lines across it) it draws.
FIGURE_BY_TITLE = """
([prefix]) => {
  const titleOf = (gd) => {
    const title = gd.layout && gd.layout.title;
    return typeof title === 'string' ? title : (title && title.text) || '';
  };
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  const index = plots.findIndex((gd) => titleOf(gd).startsWith(prefix));
  if (index < 0) return null;
  const gd = plots[index];
  return {
    index,
    names: (gd.data || []).map((trace) => trace.name),
    shapes: ((gd.layout || {}).shapes || []).length,
    drawn: gd.querySelectorAll('.scatterlayer .trace').length,
    bars: gd.querySelectorAll('.barlayer .trace').length,
    notes: ((gd.layout || {}).annotations || []).map((note) => note.text),
  };
}
"""


@pytest.mark.timeout(600)
def test_the_watermarks_and_the_recovery_trigger_of_notebook_6_are_drawn_in_chromium(
    open_notebook: Callable[[Path, str], NotebookInBrowser],
) -> None:
    """Notebook 6, FLINK-40517's section: both event-time figures render in JupyterLab, the
    one before the fix with its red cross (the record dropped as late), the one after with no
    cross and MAX's dotted line. PR #28554's section (one Run All serves both): the trigger
    figure with its bars, markers and NO_OP notes, and both tables with the declined
    channel's name whole. Each kept as a screenshot."""
    path = NOTEBOOKS / WATERMARK_NOTEBOOK
    on_disk = path.read_bytes()
    notebook = open_notebook(ROOT, f"{NOTEBOOKS.name}/{WATERMARK_NOTEBOOK}")
    with notebook.explained():
        notebook.run_all()
        for prefix, traces, label in WATERMARK_FIGURES:
            state = notebook.wait_for(
                f"no figure titled {prefix!r}... drawn",
                f"([prefix]) => {{ const s = ({FIGURE_BY_TITLE})([prefix]); "
                "return s && s.drawn > 0 ? s : null; }",
                [prefix],
                RENDER_TIMEOUT,
            )
            assert traces <= set(state["names"]), state["names"]
            assert state["drawn"] == len(state["names"])
            if "dropped as late" not in traces:
                assert "dropped as late" not in state["names"]
                assert state["shapes"] == 2  # MAX's dotted line and the step marked
            figure = notebook.page.locator(".js-plotly-plot").nth(state["index"])
            figure.scroll_into_view_if_needed()
            notebook.page.wait_for_timeout(300)
            notebook.screenshot(figure, label)
        state = notebook.wait_for(
            f"no figure titled {TRIGGER_FIGURE!r}... drawn",
            f"([prefix]) => {{ const s = ({FIGURE_BY_TITLE})([prefix]); "
            "return s && s.bars > 0 ? s : null; }",
            [TRIGGER_FIGURE],
            RENDER_TIMEOUT,
        )
        assert set(state["names"]) >= TRIGGER_TRACES, state["names"]
        assert state["bars"] + state["drawn"] == len(state["names"])
        assert state["shapes"] == 2  # where each run's drain finished
        assert [note.split(",")[0] for note in state["notes"]] == [
            f"NO_OP from step {step}" for step in trigger_no_op_steps()
        ], state["notes"]
        figure = notebook.page.locator(".js-plotly-plot").nth(state["index"])
        figure.scroll_into_view_if_needed()
        notebook.page.wait_for_timeout(300)
        notebook.screenshot(figure, "recovery-trigger")
        for text, label in TRIGGER_TABLES:
            outputs = notebook.page.locator(".jp-OutputArea-output")
            table = outputs.filter(has=notebook.page.locator("table"), has_text=text).first
            table.scroll_into_view_if_needed()
            assert DECLINED_CHANNEL in table.inner_text()
            notebook.screenshot(table, label)
        errors = notebook.helper("errors", notebook.name)
        assert not errors, "cells show errors:\n" + "\n".join(errors)
    assert path.read_bytes() == on_disk, f"{path} changed while the test ran it"


#: notebook 8: the explorer widget, and the counterexample it opens in its stepper
EXPLORER_NOTEBOOK = "08-exploring-every-interleaving.ipynb"
BACK_BUTTON = ".flinkstate-back"
#: the job notebook 8 explores, as its cell sets it (the tour's copy, which
#: tests/views/tours/test_failed_as_finished_counterexample.py holds to the cell)
EXPLORED_JOB = failed_as_finished_counterexample.SCENARIO
EXPLORED_SETTINGS: Mapping[str, object] = failed_as_finished_counterexample.SMALL


def explored_failing_step() -> int:
    """The step where notebook 8's counterexample goes wrong, found as the notebook finds it."""
    from flinkstate.lab.counterexample import exploration_subject, failing_step
    from flinkstate.sim.explore import Bounds, explore

    subject = exploration_subject(EXPLORED_JOB, overrides=EXPLORED_SETTINGS, phase="job")
    result = explore(subject.initial, bounds=Bounds(max_states=2_000))
    return failing_step(result.findings[0])


@pytest.mark.timeout(480)
def test_the_explorer_notebook_opens_its_counterexample_where_it_goes_wrong_in_chromium(
    open_notebook: Callable[[Path, str], NotebookInBrowser],
) -> None:
    """Notebook 8, run as a reader would: the explorer's row with its open button, and under
    it the stepper's canvas at the step where the counterexample goes wrong; one click on back
    draws the step before it."""
    path = NOTEBOOKS / EXPLORER_NOTEBOOK
    on_disk = path.read_bytes()
    expected = explored_failing_step()
    notebook = open_notebook(ROOT, f"{NOTEBOOKS.name}/{EXPLORER_NOTEBOOK}")
    with notebook.explained():
        notebook.run_all()
        opener = notebook.page.locator(".flinkstate-open-counterexample >> visible=true")
        opener.first.wait_for(state="visible", timeout=RENDER_TIMEOUT * 1000)
        back = notebook.page.locator(f"{BACK_BUTTON} >> visible=true")
        back.first.wait_for(state="visible", timeout=RENDER_TIMEOUT * 1000)
        element = back.first.element_handle()
        at = notebook.wait_for(
            f"the stepper's canvas did not draw step {expected}, where the counterexample "
            "goes wrong",
            f"([button, step]) => {{ const s = ({CANVAS_STATE})([button]); "
            "return s && s.places > 0 && s.step === step ? s : null; }",
            [element, expected],
            RENDER_TIMEOUT,
        )
        canvas = notebook.page.locator(".flinkstate-canvas").nth(at["index"])
        notebook.screenshot(canvas, "counterexample")
        back.first.click()
        notebook.wait_for(
            f"one click on back did not draw step {expected - 1}",
            f"([button, step]) => {{ const s = ({CANVAS_STATE})([button]); "
            "return s && s.step === step ? s : null; }",
            [element, expected - 1],
            CLICK_TIMEOUT,
        )
        errors = notebook.helper("errors", notebook.name)
        assert not errors, "cells show errors after the click:\n" + "\n".join(errors)
    assert path.read_bytes() == on_disk, f"{path} changed while the test ran it"
