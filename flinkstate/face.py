"""A package's public face: the names other packages (and people) may use, loaded on first use.

Each package's ``__init__`` lists its face as a table from name to defining module and hands
it to :func:`lazy_face`; ``__all__`` is the table's names. Nothing is imported until a name is
used (PEP 562), so importing one module of a package does not load the rest of it, the face
cannot make an import cycle, and a package that starts Spark or draws figures costs nothing
until asked. ``tests/test_faces.py`` holds every import across packages to the faces: what one
package takes from another is on the other's face.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

Getattr = Callable[[str], Any]
Dir = Callable[[], list[str]]


def lazy_face(
    package: str, where: Mapping[str, str], *, relative_to: str | None = None
) -> tuple[Getattr, Dir]:
    """The ``__getattr__`` and ``__dir__`` of a package whose face is ``where``: each name
    from its module, imported when first asked for. Modules are named relative to the
    package, or to ``relative_to`` (``""``: absolute names).

    Examples
    --------
    >>> import sys
    >>> getattr_, dir_ = lazy_face("flinkstate", {"assign_to_key_group": "keygroups"})
    >>> getattr_("assign_to_key_group")(42, 128)
    29
    >>> "assign_to_key_group" in dir_()
    True
    >>> getattr_("nothing")
    Traceback (most recent call last):
        ...
    AttributeError: module 'flinkstate' has no attribute 'nothing' (its face: assign_to_key_group)
    """
    names = sorted(where)
    root = package if relative_to is None else relative_to

    def face_getattr(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(
                f"module {package!r} has no attribute {name!r} (its face: {', '.join(names)})"
            )
        return getattr(importlib.import_module(f"{root}.{module}" if root else module), name)

    def face_dir() -> list[str]:
        defined = importlib.import_module(package).__dict__
        return sorted({*defined, *names})

    return face_getattr, face_dir
