"""The floor plan's measures, kept: no module over 800 lines and no function over 80 lines but
the listed ones, and how many functions outside ``runtime/world/`` take the whole world.

The lists are ratchets: a new long module or function fails, and so does a listed one that got
short enough (take it off the list). The counts of functions that take the whole world
(``NetworkState`` or ``NetworkWorld``) are exact, so that each behaviour moved onto the component
Flink gives it to lowers its folder's count here."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "flinkstate"
MODULE_LINES = 800
FUNCTION_LINES = 80

#: modules over 800 lines, each with why it is still one module
LONG_MODULES: dict[str, str] = {}

#: functions over 80 lines (without their docstrings), as module.function
LONG_FUNCTIONS: set[str] = set()

#: functions that take the whole world, by folder (outside runtime/world/, which owns it): the
#: views, lab and command line, which draw or run a whole world; no behaviour of runtime/ (each
#: takes a protocol naming the parts of the world it reaches)
TAKE_THE_WORLD = {
    "cli": 3,
    "lab": 8,
    "views": 37,  # 12 more with the scenes a page derives step by step (views/scene_steps);
    # 2 with a tour's page, which reads its stops from the world its page draws (tour_page)
    "views/captions": 2,
    "views/tours": 45,
    "widgets": 1,
}
WORLD_TYPES = {"NetworkState", "NetworkWorld"}


def modules() -> dict[str, ast.Module]:
    return {
        path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(module path, function) of every function and method in the package."""
    return [
        (path, node)
        for path, tree in modules().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def test_long_modules_are_the_listed_ones() -> None:
    long = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if len(path.read_text(encoding="utf-8").splitlines()) > MODULE_LINES
    }
    assert long == set(LONG_MODULES)


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The lines of a function from its signature to its end, without its docstring (examples
    are documentation, however long)."""
    body = node.body
    first = body[0]
    docstring = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    doc_lines = (first.end_lineno or first.lineno) - first.lineno + 1 if docstring else 0
    return (node.end_lineno or node.lineno) - node.lineno + 1 - doc_lines


def test_long_functions_are_the_listed_ones() -> None:
    long = {
        path.removesuffix(".py").replace("/", ".") + "." + node.name
        for path, node in functions()
        if code_lines(node) > FUNCTION_LINES
    }
    assert long == LONG_FUNCTIONS


def takes_the_world(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
    return any(
        a.annotation is not None and ast.unparse(a.annotation).strip("'\"") in WORLD_TYPES
        for a in arguments
    )


def test_functions_that_take_the_whole_world_by_folder() -> None:
    found = Counter(path.rsplit("/", 1)[0] for path, node in functions() if takes_the_world(node))
    outside = {folder: n for folder, n in found.items() if not folder.startswith("runtime/world")}
    assert outside == TAKE_THE_WORLD
