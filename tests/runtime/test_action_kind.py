"""Action kinds and faults are typed: one member per kind and per fault, each with its
docstring, traces reading the same text; and no string literal of a kind or a fault is
compared in the package (the tables that must hold every kind are tested beside them:
tests/runtime/world/test_world.py, test_independence.py, tests/views/test_captions.py)."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.action_kind import ActionKind, by_text
from flinkstate.runtime.options import FAULTS, Fault
from flinkstate.sim.action import Action

PACKAGE = Path(__file__).parents[2] / "flinkstate"
KINDS = frozenset(kind.value for kind in ActionKind)
FAULT_NAMES = frozenset(fault.value for fault in Fault)


def test_a_kind_is_its_text_in_actions_and_traces() -> None:
    made = Action("task source[0]", ActionKind.EMIT)
    read = Action("task source[0]", "emit")  # as a trace loads it
    assert made == read
    assert hash(made) == hash(read)
    assert str(made) == "task source[0]: emit"
    assert json.dumps(list(made)) == json.dumps(list(read))
    assert by_text({ActionKind.EMIT: 1})["emit"] == 1
    assert ActionKind("finish-input") is ActionKind.FINISH_INPUT


def _members_and_docstrings(name: str, path: Path) -> dict[str, str | None]:
    """Each member of the enum ``name`` in ``path``: the docstring below it, if any."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name)
    found: dict[str, str | None] = {}
    for statement, after in zip(cls.body, [*cls.body[1:], None], strict=True):
        if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            doc = (
                after.value.value
                if isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
                else None
            )
            found[statement.targets[0].id] = doc
    return found


@pytest.mark.parametrize(
    ("enum", "path"),
    [
        (ActionKind, PACKAGE / "runtime" / "action_kind.py"),
        (Fault, PACKAGE / "runtime" / "options.py"),
    ],
    ids=["ActionKind", "Fault"],
)
def test_every_member_says_what_it_is(enum: type[ActionKind] | type[Fault], path: Path) -> None:
    documented = _members_and_docstrings(enum.__name__, path)
    assert set(documented) == {member.name for member in enum}
    assert [name for name, doc in documented.items() if not doc] == []


def test_faults_are_the_members_and_text_is_parsed_at_the_edges() -> None:
    assert frozenset(Fault) == FAULTS
    assert len(FAULTS) == 17
    parsed = Fault.parse_all(["no-filter", Fault.LOSE_RECORD])
    assert parsed == {Fault.NO_FILTER, Fault.LOSE_RECORD}
    assert all(type(fault) is Fault for fault in parsed)
    refused = r"unknown fault\(s\) \['gremlins'\]; known: convert-before-consumed, "
    with pytest.raises(InvalidParameterError, match=refused) as error:
        Fault.parse_all(["lose-record", "gremlins"])
    assert "\n" not in str(error.value)


# -- no literals -------------------------------------------------------------------------------


def _literals(node: ast.expr) -> Iterator[str]:
    """The string constants ``node`` is or holds (a tuple, list or set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for element in node.elts:
            yield from _literals(element)


def _names_a_kind(node: ast.expr) -> bool:
    """Whether ``node`` reads an action's kind: ``action.kind``, ``event.action.kind``, a
    variable called ``kind`` or ``mail`` (a task's next recovery mail)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "kind"
    return isinstance(node, ast.Name) and (node.id.endswith("kind") or node.id == "mail")


def _names_the_faults(node: ast.expr) -> bool:
    """Whether ``node`` reads a set of faults: ``world.options.faults``, ``faults``."""
    if isinstance(node, ast.Attribute):
        return node.attr == "faults"
    return isinstance(node, ast.Name) and node.id == "faults"


def literal_uses(package: Path) -> list[str]:
    """Every comparison of an action's kind with a literal kind, every table keyed by literal
    kinds (a dict display whose keys, or their parts, are two or more kinds and nothing else),
    and every test of a literal fault against a set of faults, in ``package``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package.parent)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                literals = {text for operand in operands for text in _literals(operand)}
                if literals & KINDS and any(_names_a_kind(o) for o in operands):
                    found.append(f"{where}:{node.lineno}: kind {sorted(literals & KINDS)}")
                if literals & FAULT_NAMES and any(_names_the_faults(o) for o in operands):
                    found.append(f"{where}:{node.lineno}: fault {sorted(literals & FAULT_NAMES)}")
            elif isinstance(node, ast.Dict):
                keys = [key for key in node.keys if key is not None]
                texts = [text for key in keys for text in _literals(key)]
                if len(texts) >= 2 and len(keys) >= 2 and set(texts) <= KINDS:
                    found.append(f"{where}:{node.lineno}: a table keyed by literal kinds")
    return found


def test_no_literal_kind_or_fault_is_compared_in_the_package() -> None:
    assert literal_uses(PACKAGE) == []


def test_the_scan_finds_literals(tmp_path: Path) -> None:
    code = """
if action.kind == "send": pass
if event.action.kind in ("barrier", "trigger"): pass
if mail == "install-drainer": pass
if "lose-record" in world.options.faults: pass
if "no-upstream-block" not in faults: pass
HANDLERS = {"compute": 1, "emit": 2}
CAPTIONS = {(TASK, "emit"): 1, (TASK, "poll"): 2}
if item["kind"] == "barrier": pass  # a scene item's kind: not an action's
FIGURES = {"checkpoint": 1, "files": 2}  # not a table of kinds
"""
    (tmp_path / "sample.py").write_text(code, encoding="utf-8")
    found = [line.split(": ", 1)[1] for line in literal_uses(tmp_path)]
    assert found == [
        "kind ['send']",
        "kind ['barrier', 'trigger']",
        "kind ['install-drainer']",
        "fault ['lose-record']",
        "fault ['no-upstream-block']",
        "a table keyed by literal kinds",
        "a table keyed by literal kinds",
    ]
