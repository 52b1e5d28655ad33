"""Happenings: every kind is a small immutable value of its room's ``happenings`` module, and
behaviour tells the journal happenings, never words."""

from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path

from flinkstate.runtime.happening import Happening

RUNTIME = Path(__file__).parents[2] / "flinkstate" / "runtime"


def happening_modules() -> list[str]:
    """Every room's ``happenings`` module, by its dotted name."""
    return sorted(
        ".".join(path.relative_to(RUNTIME.parents[1]).with_suffix("").parts)
        for path in RUNTIME.rglob("happenings.py")
    )


def kinds() -> list[type[Happening]]:
    """Every kind of happening the runtime defines: each class of a room's module that
    derives from :class:`Happening` (a subclass search would also find the classes a slotted
    dataclass replaces)."""
    found = [
        kind
        for module in happening_modules()
        for kind in vars(importlib.import_module(module)).values()
        if isinstance(kind, type)
        and issubclass(kind, Happening)
        and kind is not Happening
        and kind.__module__ == module
    ]
    return sorted(found, key=lambda k: k.__name__)


def test_every_room_that_tells_happenings_has_its_module() -> None:
    assert happening_modules() == [
        "flinkstate.runtime.checkpoint.channel.happenings",
        "flinkstate.runtime.checkpoint.happenings",
        "flinkstate.runtime.failover.happenings",
        "flinkstate.runtime.partition.happenings",
        "flinkstate.runtime.tasks.happenings",
        "flinkstate.runtime.watermark.happenings",
    ]


def test_every_kind_is_a_frozen_slotted_dataclass_of_a_happenings_module() -> None:
    found = kinds()
    assert len(found) > 50
    for kind in found:
        assert kind.__module__.endswith(".happenings"), kind
        params = kind.__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen, kind
        assert "__slots__" in kind.__dict__, kind
        assert kind.__doc__, kind
        assert kind.__doc__ != Happening.__doc__, kind


def test_kinds_have_distinct_names() -> None:
    names = [kind.__name__ for kind in kinds()]
    assert len(names) == len(set(names))


def test_fields_hold_values_not_containers_that_change() -> None:
    """A happening outlives its step (``Event.happenings``) and is shared by copies: no list,
    set or dict in a field."""
    for kind in kinds():
        for field in dataclasses.fields(kind):
            assert not str(field.type).startswith(("list", "set", "dict")), (kind, field.name)


def _note_assignments(tree: ast.AST) -> list[int]:
    """Lines assigning or appending to an attribute ``note`` of something named ``journal``."""
    lines = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and target.attr == "note"
                and "journal" in ast.unparse(target.value)
            ):
                lines.append(node.lineno)
    return lines


def test_no_behaviour_writes_words_into_the_journal() -> None:
    written = {
        str(path.relative_to(RUNTIME)): lines
        for path in sorted(RUNTIME.rglob("*.py"))
        if (lines := _note_assignments(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert written == {}


def test_the_check_finds_a_note_written() -> None:
    code = 'world.journal.note = "x"\nworld.journal.note += "; y"\njournal.tell(x)\n'
    assert _note_assignments(ast.parse(code)) == [1, 2]
