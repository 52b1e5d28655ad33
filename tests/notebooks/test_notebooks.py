"""Every notebook runs top to bottom in a fresh kernel, and is committed without outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS


#: run after a notebook's own cells, in its kernel: press every "show answer" it displayed
PRESS_EVERY_ANSWER = """
import gc, json
from flinkstate.widgets.exercise import Exercise
_exercises = [o for o in gc.get_objects() if isinstance(o, Exercise)]
print(json.dumps([{"question": e.question.value, "answer": e.reveal(),
                   "shown": e.shown.value} for e in _exercises]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_and_answers_its_exercises(path: Path, tmp_path: Path) -> None:
    import nbformat  # imported here: jsonschema's format checkers take seconds to import
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    asked = sum(cell.source.count("Exercise(") for cell in notebook.cells)
    notebook.cells.append(nbformat.v4.new_code_cell(PRESS_EVERY_ANSWER))
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()  # raises CellExecutionError naming the failing cell
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert errors == []
    printed = "".join(o.get("text", "") for o in notebook.cells[-1].outputs)
    exercises = json.loads(printed)
    assert len(exercises) == asked, "every exercise shown in the notebook was pressed"
    for exercise in exercises:
        assert exercise["answer"].strip(), f"no answer to {exercise['question'][:80]}"
        assert "No answer" not in exercise["shown"], exercise["shown"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stripped(path: Path) -> None:
    raw = json.loads(path.read_text(encoding="utf-8"))
    for cell in raw["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name} has outputs"
            assert cell.get("execution_count") is None
    assert "widgets" not in raw.get("metadata", {})
