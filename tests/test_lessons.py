"""``flinkstate.lessons``: the notebooks import from it alone, it names exactly what they use,
and each name resolves to the thing its module defines."""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import pytest

from flinkstate import lessons

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))


def imported_from_flinkstate(notebook: Path) -> list[tuple[str, str]]:
    """(module, name) of every ``from flinkstate... import name`` in the notebook's code."""
    found = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        lines = "".join(cell["source"]).splitlines()
        code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in lines)
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("flinkstate"):
                found += [(node.module or "", alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                found += [(a.name, "") for a in node.names if a.name.startswith("flinkstate")]
    return found


def test_there_are_lessons() -> None:
    assert len(NOTEBOOKS) >= 8


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_lesson_imports_from_flinkstate_lessons_only(notebook: Path) -> None:
    deep = [f"{m}.{n}" for m, n in imported_from_flinkstate(notebook) if m != "flinkstate.lessons"]
    assert deep == []


def test_the_face_names_exactly_what_the_lessons_use() -> None:
    used = {name for nb in NOTEBOOKS for _, name in imported_from_flinkstate(nb)}
    assert used == set(lessons.__all__)


@pytest.mark.parametrize("name", sorted(lessons.WHERE))
def test_each_name_is_its_modules_own(name: str) -> None:
    assert getattr(lessons, name) is getattr(importlib.import_module(lessons.WHERE[name]), name)


def test_an_unknown_name_is_one_clear_error() -> None:
    with pytest.raises(
        AttributeError,
        match=r"module 'flinkstate\.lessons' has no attribute 'RecoveryStepr' \(its face: ",
    ):
        lessons.RecoveryStepr  # noqa: B018
