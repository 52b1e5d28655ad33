"""What a path is, when it is not a regular file: said before anything opens or replaces it.

Reading a FIFO blocks until a writer comes, a character device such as ``/dev/zero`` never
ends, and writing over either does not make a file; so the readers and writers of flinkstate
look at a path's ``stat`` first and name the kind of file they refuse.
"""

from __future__ import annotations

import stat

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(mode: int) -> str | None:
    """``"a FIFO"``, ``"a directory"``, ... for a ``st_mode`` that is not a regular file's;
    ``None`` for a regular file."""
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return None
