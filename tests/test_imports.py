"""The package's import graph: no module imports another's private names, and modules import
each other in circles nowhere but in the one known circle of the network model, which may
only shrink."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).parents[1] / "flinkstate"

#: the circle the network model's redesign removes; nothing may join it, no other may appear
KNOWN_CIRCLE = {
    "flinkstate.network.channel_state_filtering",
    "flinkstate.network.fetched_channel_state_drainer",
    "flinkstate.network.recovery",
    "flinkstate.network.spilling_handler",
    "flinkstate.network.world",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, list[tuple[str, list[str]]]]:
    """Each module's imports of package modules (type-only ones too), with the names taken."""
    found: dict[str, list[tuple[str, list[str]]]] = {}
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        found[name] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [a.name for a in node.names]
                if node.module in modules:
                    found[name].append((node.module, names))
                for taken in names:  # ``from flinkstate.sim import core``
                    if f"{node.module}.{taken}" in modules:
                        found[name].append((f"{node.module}.{taken}", []))
            elif isinstance(node, ast.Import):
                found[name] += [(a.name, []) for a in node.names if a.name in modules]
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    private = [
        f"{module} takes {taken} from {source}"
        for module, edges in imports().items()
        for source, names in edges
        for taken in names
        if taken.startswith("_") and not taken.startswith("__") and source != module
    ]
    assert private == []


def test_no_import_circle_but_the_known_one() -> None:
    graph = nx.DiGraph()
    for module, edges in imports().items():
        graph.add_node(module)
        graph.add_edges_from((module, source) for source, _ in edges if source != module)
    circles = [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    unknown = [sorted(c) for c in circles if not c <= KNOWN_CIRCLE]
    assert unknown == [], f"modules importing each other: {unknown}"


@pytest.mark.parametrize("module", sorted(KNOWN_CIRCLE))
def test_the_known_circle_lists_only_modules_that_exist(module: str) -> None:
    assert (PACKAGE.parent / (module.replace(".", "/") + ".py")).exists()
