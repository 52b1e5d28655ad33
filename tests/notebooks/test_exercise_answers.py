"""Every "show answer" of a notebook's exercises, clicked in the kernel that ran the notebook.

The notebook runs top to bottom in a fresh kernel (once for both its tests: executed.py). Then
one more cell, added there and never saved (``screens.CLICK``), does for each exercise what its
question asks (sets the widgets, goes to the tour's stop), reads the figures the screen shows
there (a widget's text, the canvas, a table a cell displayed), and clicks the exercise's button.
Each answer must be computed without a refusal and state every figure its screen shows.

A figure is a piece of text the answer must contain, compared with tags stripped and
thousands separators dropped; ``re:`` makes it a regular expression searched line by line.
"""

from __future__ import annotations

import html
import re

import pytest

from tests.notebooks.executed import NOTEBOOK_FOLDER, execute, marks
from tests.notebooks.screens import SCREENS


def _normal(text: str) -> str:
    """Thousands separators dropped, so 75,100 and 75100 read the same."""
    return re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)


def states(answer: str, figure: str) -> bool:
    if figure.startswith("re:"):
        return re.search(figure.removeprefix("re:"), _normal(answer), re.MULTILINE) is not None
    return _normal(figure) in _normal(answer)


def exercise_cells(name: str) -> int:
    import nbformat

    notebook = nbformat.read(NOTEBOOK_FOLDER / name, as_version=4)
    return sum(
        1 for cell in notebook.cells if cell.cell_type == "code" and "Exercise(\n" in cell.source
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=marks(NOTEBOOK_FOLDER / n)) for n in sorted(SCREENS)]
)
def test_every_answer_states_what_its_screen_shows(name: str) -> None:
    report = execute(name).clicked
    assert report is not None
    checked = report["checked"]
    assert isinstance(checked, list)
    assert report["exercises"] == len(checked) == exercise_cells(name), (
        "every exercise of the notebook has its screen here, and only those"
    )
    for item in checked:
        answer = html.unescape(item["answer"])
        assert answer.strip(), f"{item['question']!r}: no answer shown"
        assert not answer.startswith("No answer"), f"{item['question']!r}: {answer}"
        assert item["button"] == "answer (computed from the model)"
        missing = [figure for figure in item["shown"] if not states(answer, figure)]
        assert not missing, f"{item['question']!r}: the answer\n{answer}\ndoes not state {missing}"


def test_figures_are_compared_without_thousands_separators() -> None:
    assert states("75,100 bytes read back", "75100 bytes")
    assert states("new subtasks [4, 5, 6, 7]", "[4, 5, 6, 7]")
    assert states("E + L = 2 + 8 = 10; x\nok, deadlock", r"re:^ok, deadlock$")
    assert not states("750 bytes", "75 bytes")
