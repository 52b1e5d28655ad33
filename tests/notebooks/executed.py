"""Each notebook executed once per test process, for both of its tests.

A notebook runs top to bottom in a fresh kernel, then two cells added here and never saved:
one presses every "show answer" as the notebook left its widgets (test_notebooks), then puts
each exercise back as it was; one sets each exercise's screen as its question asks and clicks
it (test_exercise_answers, ``screens.CLICK``). Executing the notebook is nearly all of either
test's cost, so the two read one run: under pytest-xdist both carry the notebook's
``xdist_group``, and ``--dist loadgroup`` sends them to one worker.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.notebooks.screens import CLICK, REPORT, SCREENS, TOURS

NOTEBOOK_FOLDER = Path(__file__).parents[2] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_FOLDER.glob("*.ipynb"))
MAKEFILE = Path(__file__).parents[2] / "Makefile"


def installed_kernel() -> tuple[str, str]:
    """The kernel the Makefile's install step registers (``--name``, ``--display-name``):
    the one the notebooks ask for, and so the one their tests run them in."""
    found = re.search(
        r'ipykernel install .*--name (\S+) --display-name "([^"]+)"', MAKEFILE.read_text()
    )
    assert found, "the Makefile's install step no longer registers a kernel"
    return found.group(1), found.group(2)


def kernel_of(notebook: Any) -> str:
    """The kernel a notebook asks for, which must be installed: ``make`` installs it (its
    stamp target), a bare ``pip install`` does not, and nbclient's own error would not say so."""
    from jupyter_client.kernelspec import KernelSpecManager

    name = str(notebook.metadata.kernelspec.name)
    if name not in KernelSpecManager().find_kernel_specs():
        pytest.fail(
            f"no Jupyter kernel {name!r} here: run make (its install step registers it), or "
            f"{sys.executable} -m ipykernel install --sys-prefix --name {name}"
        )
    return name


#: run after a notebook's own cells, in its kernel: press every "show answer" it displayed,
#: then leave each exercise as it was, so that the clicks after it start where a learner does
PRESS = """
import gc as _gc, json as _json
from flinkstate.widgets.exercise import Exercise as _Exercise
_pressed = []
for _e in [o for o in _gc.get_objects() if isinstance(o, _Exercise)]:
    _before = (_e.button.description, _e.shown.value)
    _pressed.append({"question": _e.question.value, "answer": _e.reveal(),
                     "shown": _e.shown.value})
    _e.button.description, _e.shown.value = _before
print(PRESSED + _json.dumps(_pressed))
"""
PRESSED = "PRESSED "


@dataclass(frozen=True)
class Executed:
    """What one execution of a notebook showed."""

    #: the error outputs of the notebook's own cells
    errors: list[dict[str, Any]]
    #: how many ``Exercise(`` the notebook's cells make
    asked: int
    #: each exercise pressed as the notebook left it: question, answer, what it shows
    pressed: list[dict[str, str]]
    #: ``screens.CLICK``'s report, for a notebook with screens
    clicked: dict[str, Any] | None


def marks(path: Path) -> pytest.MarkDecorator:
    """The xdist group of a notebook's tests (one worker executes it, once)."""
    return pytest.mark.xdist_group(f"notebook {path.name}")


def _printed_after(cell: Any, prefix: str) -> Any:
    text = "".join(o.get("text", "") for o in cell.get("outputs", []) if "text" in o)
    return json.loads(text.split(prefix, 1)[1])


@functools.cache
def execute(name: str) -> Executed:
    """Execute the notebook once in this process (raises ``CellExecutionError`` naming the
    failing cell)."""
    import nbformat  # imported here: jsonschema's format checkers take seconds to import
    from nbclient import NotebookClient

    notebook = nbformat.read(NOTEBOOK_FOLDER / name, as_version=4)
    own = len(notebook.cells)
    asked = sum(cell.source.count("Exercise(") for cell in notebook.cells)
    notebook.cells.append(nbformat.v4.new_code_cell(f"PRESSED = {PRESSED!r}\n{PRESS}"))
    if name in SCREENS:
        screens = [(s.question, s.code) for s in SCREENS[name]]
        setup = f"{TOURS}\nSCREENS = {screens!r}\nREPORT = {REPORT!r}\n"
        notebook.cells.append(nbformat.v4.new_code_cell(setup + CLICK))
    with tempfile.TemporaryDirectory(prefix="flinkstate-notebook-") as folder:
        client = NotebookClient(
            notebook,
            timeout=300,
            kernel_name=kernel_of(notebook),
            resources={"metadata": {"path": folder}},
        )
        client.execute()
    errors = [
        output
        for cell in notebook.cells[:own]
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    return Executed(
        errors,
        asked,
        _printed_after(notebook.cells[own], PRESSED),
        _printed_after(notebook.cells[own + 1], REPORT) if name in SCREENS else None,
    )
