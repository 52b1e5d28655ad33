"""The package's import graph: no module imports another's private names, no modules import
each other in a circle, and folders import only folders below them (``TIERS``)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).parents[1] / "flinkstate"

#: the package's folders (and top-level modules), lowest first: a module imports its own
#: folder and the folders of lower tiers. Inside ``runtime/`` the order is Flink's, from the
#: values every component shares up to the world that holds them all; ``catalogue`` (data) and
#: ``lab`` (running the model for people) sit above the model, the views, widgets and the
#: command line above everything. A folder not named here takes its parent's place.
TIERS: tuple[tuple[str, ...], ...] = (
    (
        "",
        "errors",
        "face",
        "choice",
        "filekinds",
        "javahash",
        "memory_size",
        "memory_segment",
        "output",
        "run_rules",
    ),
    ("keygroups",),
    ("rescale",),
    ("dataset", "collector"),
    ("flinkcheckpoint", "generator"),
    ("spark",),
    ("sim",),
    ("runtime",),
    ("runtime.shuffle",),
    ("runtime.buffer",),
    ("runtime.partition",),
    ("runtime.partition.consumer",),
    ("runtime.checkpoint",),
    ("runtime.checkpoint.channel",),
    ("runtime.watermark",),
    ("runtime.tasks",),
    ("runtime.failover",),
    ("runtime.world.exploration",),
    ("runtime.world",),
    ("catalogue",),
    ("lab", "samples"),
    ("views",),
    ("widgets",),
    ("cli", "lessons"),
    ("launch",),
    ("__main__",),
)
RANK = {folder: tier for tier, folders in enumerate(TIERS) for folder in folders}

#: the imports that still reach a higher folder, by importing module (without ``flinkstate.``):
#: none. A lower room names what it needs of a higher component as a protocol of its own (the
#: coordinator's ``CheckpointableTask``), or calls a method of its world protocol that the world
#: implements by calling the higher room (``fail_externally``); the test fails on a new entry
#: and on one that no longer exists, so the list stays empty.
STILL_UPWARD: dict[str, tuple[str, ...]] = {}


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
                taken_from_package = [n for n in names if f"{node.module}.{n}" not in modules]
                if node.module in modules and taken_from_package:
                    found[name].append((node.module, taken_from_package))
                for taken in names:  # ``from flinkstate.sim import core``
                    if f"{node.module}.{taken}" in modules:
                        found[name].append((f"{node.module}.{taken}", []))
            elif isinstance(node, ast.Import):
                found[name] += [(a.name, []) for a in node.names if a.name in modules]
    return found


@pytest.mark.slow
def test_no_module_imports_another_modules_private_names() -> None:
    private = [
        f"{module} takes {taken} from {source}"
        for module, edges in imports().items()
        for source, names in edges
        for taken in names
        if taken.startswith("_") and not taken.startswith("__") and source != module
    ]
    assert private == []


@pytest.mark.slow
def test_no_import_circle() -> None:
    graph = nx.DiGraph()
    for module, edges in imports().items():
        graph.add_node(module)
        graph.add_edges_from((module, source) for source, _ in edges if source != module)
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert circles == [], f"modules importing each other: {circles}"


def folder_of(module: str) -> str:
    """The folder ``TIERS`` names for a module: the longest one containing it.

    Examples
    --------
    >>> folder_of("flinkstate.runtime.buffer.pools")
    'runtime.buffer'
    >>> folder_of("flinkstate.views.tours.base")
    'views'
    >>> folder_of("flinkstate")
    ''
    """
    parts = module.split(".")[1:]
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in RANK:
            return ".".join(parts[:end])
    if not parts:
        return ""
    raise AssertionError(f"{module} lies in no folder of TIERS")


def upward_imports() -> dict[str, set[str]]:
    """Each module's imports of a module in a higher folder (without ``flinkstate.``)."""
    upward: dict[str, set[str]] = {}
    for module, edges in imports().items():
        for source, _ in edges:
            if RANK[folder_of(source)] > RANK[folder_of(module)]:
                upward.setdefault(module.removeprefix("flinkstate."), set()).add(
                    source.removeprefix("flinkstate.")
                )
    return upward


def test_every_folder_has_its_tier() -> None:
    assert {folder_of(module) for module in imports()} <= set(RANK)


def test_folders_import_only_lower_folders_but_for_the_listed_ones() -> None:
    found = upward_imports()
    new = {m: sorted(s - set(STILL_UPWARD.get(m, ()))) for m, s in found.items()}
    gone = {m: sorted(set(s) - found.get(m, set())) for m, s in STILL_UPWARD.items()}
    assert {m: s for m, s in new.items() if s} == {}, "imports from a lower folder to a higher one"
    assert {m: s for m, s in gone.items() if s} == {}, "listed in STILL_UPWARD, no longer upward"


def test_the_runtime_reaches_nothing_above_it() -> None:
    above = RANK["runtime.world"]
    assert not [
        (module, source)
        for module, sources in upward_imports().items()
        for source in sources
        if RANK[folder_of("flinkstate." + source)] > above
    ]


@pytest.mark.parametrize(
    "module",
    ["flinkstate.dataset", "flinkstate.flinkcheckpoint.summary", "flinkstate.spark.rescaling"],
)
def test_the_format_the_reader_and_spark_load_nothing_of_the_simulator(module: str) -> None:
    code = (
        f"import sys, {module}; "
        "print(sorted(m for m in sys.modules "
        "if m.startswith(('flinkstate.runtime', 'flinkstate.sim', 'flinkstate.catalogue'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
