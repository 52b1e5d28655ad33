"""Files written whole or not at all.

A report, a page or a trace that a command is interrupted while writing must not be left
behind half written under its name, where it would pass for a whole one. The text goes to a
temporary file beside the destination, which is renamed into place once complete (a rename
within one directory is atomic), and removed on any failure, Ctrl-C included.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from flinkstate.errors import InvalidParameterError


def check_writable(path: Path) -> Path:
    """The expanded destination, refused (one line, before any work) when it cannot be a
    file we replace: a missing directory, a directory, or something other than a file."""
    target = path.expanduser()
    directory = target.parent
    if not directory.is_dir():
        raise InvalidParameterError(f"cannot write {target}: no directory {directory}")
    if target.is_dir():
        raise InvalidParameterError(f"cannot write {target}: it is a directory")
    if target.exists() and not target.is_file():
        raise InvalidParameterError(f"cannot write {target}: it is not a regular file")
    return target


def write_whole(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` whole: a partial file never appears under that name."""
    target = check_writable(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as an ordinary new file, not mkstemp's 0600
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
