"""Every notebook runs top to bottom in a fresh kernel (executed.py), every answer it shows is
computed, and it is committed without outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.notebooks.executed import NOTEBOOKS, execute, installed_kernel, marks


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS


@pytest.mark.slow
@pytest.mark.parametrize(
    "path", [pytest.param(p, marks=marks(p)) for p in NOTEBOOKS], ids=lambda p: p.name
)
def test_notebook_executes_and_answers_its_exercises(path: Path) -> None:
    run = execute(path.name)
    assert run.errors == []
    assert len(run.pressed) == run.asked, "every exercise shown in the notebook was pressed"
    for exercise in run.pressed:
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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_asks_for_the_kernel_make_installs(path: Path) -> None:
    """A notebook that asks for ``python3`` opens in whatever Python that is on the learner's
    machine, without flinkstate; the Makefile installs this environment's kernel by name."""
    name, display_name = installed_kernel()
    spec = json.loads(path.read_text(encoding="utf-8"))["metadata"]["kernelspec"]
    assert (spec["name"], spec["display_name"]) == (name, display_name)
