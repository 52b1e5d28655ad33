"""The distinct states an exploration has seen: each one's fingerprint stored as numbered parts
(each distinct part once for all states), the state it was first reached from and the action,
so that the shortest trace to it follows parent pointers back."""

from __future__ import annotations

from array import array
from collections.abc import Hashable
from itertools import compress, count
from operator import is_not
from typing import NamedTuple

from flinkstate.sim.action import Action


class Numbered(NamedTuple):
    """A state's key and its parts' numbers in a :class:`StateStore`: what the keys of the
    states reached from it are numbered against (:meth:`StateStore.number`)."""

    key: Hashable
    numbers: array[int]


class StateStore:
    """The distinct states seen: each one's key, the state it was first reached from (its
    parent) with the action, and its depth.

    Keys are interned part by part: each distinct part of a key (an element of a tuple key,
    or the whole of any other key) gets a number the first time it is met, and a state is
    stored as the bytes of its parts' numbers. Two keys are equal exactly when their parts are
    (the numbers come from equality, not from hashes), a component that did not change is
    stored once for all states, each key is hashed once per visit (its parts; the bytes cache
    their own hash), and a stored state costs a few bytes per part.

    A state reached by one action from another shares most of its key's parts with that
    state's, as the very same objects (a component's key is kept while it is unchanged):
    numbered against the other's key (:meth:`number`'s ``like``), only the parts that are
    other objects are looked up, found by identity in one pass at C speed."""

    def __init__(self) -> None:
        self._index: dict[bytes, int] = {}
        self._parts: dict[Hashable, int] = {}
        # per position of a tuple key, the part last packed there and its number: a part that
        # did not change since is the very same object in the next key (a component's key is
        # kept while it is unchanged), so its number is found by identity, without hashing or
        # comparing it (a held object keeps its identity)
        self._last: list[tuple[object, int]] = []
        self._parent = array("q")
        self._action: list[Action | None] = []
        self._depth = array("q")

    def __len__(self) -> int:
        return len(self._parent)

    def __contains__(self, key: Hashable) -> bool:
        return self.pack(key) in self._index

    def pack(self, key: Hashable) -> bytes:
        """The key as the numbers of its parts: equal for equal keys only. A tuple key and
        any other key never pack alike (the first number says which it is)."""
        return self.number(key).numbers.tobytes()

    def number(self, key: Hashable, like: Numbered | None = None) -> Numbered:
        """The key with its parts' numbers (:meth:`pack` is their bytes). ``like``: a key
        numbered before, of a state the key's is close to; a part of ``key`` that is the very
        object at the same position of ``like``'s key has its number."""
        parts = self._parts
        if type(key) is not tuple:
            number = parts.get(key)
            if number is None:
                number = parts[key] = len(parts)
            return Numbered(key, array("I", (0, number)))
        if like is not None:
            before = like.key
            if type(before) is tuple and len(before) == len(key):
                numbers = array("I", like.numbers)
                # the positions (counted from 1: the first number says "a tuple") of the
                # parts that are other objects than the state's numbered before
                for position in compress(count(1), map(is_not, key, before)):
                    part = key[position - 1]
                    number = parts.get(part)
                    if number is None:
                        number = parts[part] = len(parts)
                    numbers[position] = number
                return Numbered(key, numbers)
        numbers = array("I", (1,))
        append = numbers.append
        last = self._last
        if len(last) < len(key):
            last.extend([(None, 0)] * (len(key) - len(last)))
        for position, part in enumerate(key):
            seen, number = last[position]
            if seen is not part:
                number = parts.get(part)
                if number is None:
                    number = parts[part] = len(parts)
                last[position] = (part, number)
            append(number)
        return Numbered(key, numbers)

    def visit(
        self, key: Hashable, parent: int, action: Action | None, depth: int
    ) -> tuple[int, bool]:
        """The state's index, and whether it is new or now reached in fewer steps than before
        (its parent and depth are then this shorter way's)."""
        return self.visit_packed(self.pack(key), parent, action, depth)

    def visit_packed(
        self, packed: bytes, parent: int, action: Action | None, depth: int
    ) -> tuple[int, bool]:
        """:meth:`visit` with the key packed already (:meth:`pack`)."""
        index = self._index.get(packed)
        if index is None:
            index = len(self._parent)
            self._index[packed] = index
            self._parent.append(parent)
            self._action.append(action)
            self._depth.append(depth)
            return index, True
        if depth < self._depth[index]:
            self._parent[index] = parent
            self._action[index] = action
            self._depth[index] = depth
            return index, True
        return index, False

    def known(self, packed: bytes) -> bool:
        """Whether a packed key (:meth:`pack`) was stored."""
        return packed in self._index

    def depth(self, index: int) -> int:
        return self._depth[index]

    def trace(self, index: int) -> tuple[Action, ...]:
        """The actions from the start to the state, by parent pointers."""
        actions: list[Action] = []
        while index > 0:
            action = self._action[index]
            assert action is not None
            actions.append(action)
            index = self._parent[index]
        return tuple(reversed(actions))
