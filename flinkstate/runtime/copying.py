"""Cheap copies of the model's components, for snapshots and exploration, and the keys that
say when two copies hold the same state.

Every mutable component of a run has a ``copy()`` and, beside it, a ``state_key()``: a
hashable value equal for two components exactly when they hold the same state, built from
plain tuples so that a world's fingerprint (``NetworkState.state_key``) is cheap enough to
compute for every state a model checker explores. What a component leaves out of its key is
named, field by field, in its ``NOT_STATE`` with the reason (fixed when the world is built,
presentation only, a link to a component keyed elsewhere, ...); a test walks every field of
every component and fails on a field that is neither read by the key nor listed there, so a
new field cannot be forgotten silently.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

_T = TypeVar("_T")

#: a component's state as a hashable value (``state_key()``)
StateKey = tuple[Hashable, ...]
#: the fields a component's ``state_key`` leaves out, each with the reason
NotState = Mapping[str, str]

#: the reason of the fields that never change once the world is built: names, indices,
#: capacities, the owners a container's segments take (equal in every state of one run)
FIXED = "fixed when the world is built"


class Fixed:
    """A value that never changes during a run (its configuration), hashed once: a world's
    fingerprint holds it, and every copy shares it, so comparing two states of one run
    costs nothing for it, while worlds of different configurations still differ.

    Examples
    --------
    Two fixed values are equal when their values are, whatever their identity:

    >>> Fixed(("keyed", 4)) == Fixed(("keyed", 4)), Fixed(("keyed", 4)) == Fixed(("keyed", 2))
    (True, False)
    """

    __slots__ = ("_hash", "value")

    def __init__(self, value: Hashable) -> None:
        self.value = value
        self._hash = hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, Fixed) and self._hash == other._hash and self.value == other.value
        )

    def __repr__(self) -> str:
        return f"Fixed({self.value!r})"


def shallow_copier(cls: type[_T]) -> Callable[[_T], _T]:
    """A shallow copy through the dataclass's own ``__init__``: several times faster than
    ``copy.copy`` on a slotted class, and snapshots copy every channel and task.

    Examples
    --------
    >>> from flinkstate.runtime.jobgraph import SubtaskId
    >>> copy = shallow_copier(SubtaskId)
    >>> subtask = SubtaskId("keyed", 2)
    >>> copy(subtask) == subtask, copy(subtask) is subtask
    (True, False)
    """
    get = operator.attrgetter(*(f.name for f in dataclasses.fields(cls)))  # type: ignore[arg-type]

    def shallow_copy(obj: _T) -> _T:
        values: tuple[Any, ...] = get(obj)
        return cls(*values)

    return shallow_copy
