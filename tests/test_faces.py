"""Each package's face (``__all__``, ``flinkstate.face``): whole, lazy, and the only way in.

What one package takes from another is on the other's face: an import of a name another
package does not list fails here, so a package's surface is written down in one place (its
``__init__``) and grows only on purpose.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from flinkstate.lessons import WHERE

PACKAGE = Path(__file__).parents[1] / "flinkstate"
#: the packages with a face (folders of ``flinkstate/``)
PACKAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
#: packages whose faces load nothing heavy (no Spark, no figures, no widgets) until asked
LAZY = ("catalogue", "flinkcheckpoint", "lab", "runtime", "spark", "views", "widgets")


def _face_of(module: str) -> str:
    """The face an import from ``module`` goes through: the nearest package at or above it
    with a face of its own (``sim.explore`` has one; ``sim.trace`` is on ``sim``'s)."""
    parts = module.split(".")
    for end in range(len(parts), 1, -1):
        candidate = ".".join(parts[:end])
        is_package = (PACKAGE.parent / Path(*candidate.split(".")) / "__init__.py").exists()
        if is_package and hasattr(importlib.import_module(candidate), "__all__"):
            return candidate
    return ".".join(parts[:2])


def _imports_across() -> list[tuple[str, str, str]]:
    """(importing file, face imported through, name) for every ``from flinkstate.P... import
    N`` whose P is a package other than the importing module's."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        own = parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            module = node.module.split(".")
            if module[0] != "flinkstate" or len(module) < 2 or module[1] == own:
                continue
            if module[1] in PACKAGES:
                face = _face_of(node.module)
                found += [(str(path.relative_to(PACKAGE)), face, a.name) for a in node.names]
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_on_a_face_is_what_its_module_defines(package: str) -> None:
    face = importlib.import_module(f"flinkstate.{package}")
    names = getattr(face, "__all__", None)
    assert names, f"flinkstate.{package} has no face (__all__)"
    for name in names:
        assert getattr(face, name) is not None, name
    assert set(names) <= set(dir(face))


def test_what_a_package_takes_from_another_is_on_its_face() -> None:
    off_face = []
    for where, package, name in _imports_across():
        if name not in importlib.import_module(package).__all__:
            off_face.append(f"{where}: {name} (from {package})")
    assert not off_face, "names used across packages but not on the face:\n" + "\n".join(off_face)


def test_the_lessons_use_only_names_on_the_faces() -> None:
    for name, module in WHERE.items():
        if module.split(".")[1] in PACKAGES:
            face = importlib.import_module(_face_of(module))
            assert name in face.__all__, f"{name} ({module})"
            assert getattr(face, name) is getattr(importlib.import_module(module), name)


def test_an_unknown_name_says_what_the_face_has() -> None:
    views = importlib.import_module("flinkstate.views")
    with pytest.raises(AttributeError, match=r"no attribute 'nothing' .*its face: .*scenario_page"):
        views.nothing  # noqa: B018


def test_a_face_loads_nothing_until_a_name_is_used() -> None:
    code = (
        "import sys\n"
        + "".join(f"import flinkstate.{p}\n" for p in LAZY)
        + "heavy = [m for m in ('pyspark', 'plotly', 'anywidget', 'ipywidgets', 'pyarrow',"
        " 'flinkstate.runtime.world.world', 'flinkstate.views.scene') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
