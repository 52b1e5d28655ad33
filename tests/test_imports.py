"""The package's import graph: no module imports another's private names, no modules import
each other in a circle, and the network model's values and components import no behaviour."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).parents[1] / "flinkstate"

#: the network model's values and components: what the behaviour modules (the reader, the
#: generations of recovery, the world) build on; they import nothing but each other
NETWORK_BELOW_BEHAVIOUR = {
    f"flinkstate.network.{name}"
    for name in (
        "actors",
        "buffer",
        "channel_state_reader",
        "channel_state_writer",
        "checkpoint",
        "checkpoint_plan",
        "combined_watermark_status",
        "config",
        "consumer",
        "coordinator_state",
        "copying",
        "event_time",
        "events",
        "execution_state",
        "failure_handling",
        "fetched_channel_state",
        "footprint",
        "gate_buffers_spec",
        "graph",
        "ledger",
        "netty_shuffle_utils",
        "options",
        "owners",
        "partial_copy",
        "partition",
        "pipelined_region",
        "pools",
        "record_order",
        "records",
        "result_partition_type",
        "state",
        "state_assignment",
        "status_watermark_valve",
        "task",
        "virtual_channel_watermarks",
    )
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


@pytest.mark.slow
def test_the_network_models_values_and_components_import_no_behaviour() -> None:
    found = imports()
    upward = [
        f"{module} imports {source}"
        for module in sorted(NETWORK_BELOW_BEHAVIOUR)
        for source, _ in found[module]
        if source.startswith("flinkstate.network.") and source not in NETWORK_BELOW_BEHAVIOUR
    ]
    assert upward == []


@pytest.mark.parametrize("module", sorted(NETWORK_BELOW_BEHAVIOUR))
def test_the_layer_lists_only_modules_that_exist(module: str) -> None:
    assert (PACKAGE.parent / (module.replace(".", "/") + ".py")).exists()
