"""Files written whole or not at all.

A command that runs for minutes and then writes its result must neither leave half a file
behind when it fails or is interrupted, nor find out only at the end that it cannot write
where it was asked to. :func:`check_target` refuses a target before any work is done;
:func:`written_whole` writes under a temporary name beside the target and renames it over the
target only when everything was written (``os.replace`` is atomic within a directory).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from flinkstate.errors import InvalidParameterError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_target(path: Path) -> Path:
    """``path`` (user's ``~`` expanded) if a file can be written there whole; otherwise
    :class:`InvalidParameterError` naming the path: a missing folder, a directory, a special
    file (FIFO, device, socket), or a folder where no file can be created (``/proc``)."""
    target = _plain_target(path)
    _temporary(target).unlink()
    return target


@contextmanager
def written_whole(path: Path) -> Iterator[TextIO]:
    """A text file to write, renamed to ``path`` when the block ends; removed instead when
    the block raises (``KeyboardInterrupt`` too), so ``path`` is untouched."""
    target = _plain_target(path)
    temporary = _temporary(target)
    try:
        with temporary.open("w", encoding="utf-8", newline="\n") as out:
            yield out
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # an ordinary new file, not mkstemp's 0600
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _plain_target(path: Path) -> Path:
    target = path.expanduser()
    directory = target.parent
    if not directory.is_dir():
        what = "no directory" if not directory.exists() else "not a directory:"
        raise InvalidParameterError(f"cannot write {target}: {what} {directory}")
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return target
    except OSError as error:
        raise InvalidParameterError(f"cannot write {target}: {error.strerror}") from None
    for test, kind in _KINDS:
        if test(mode):
            raise InvalidParameterError(f"cannot write {target}: it is {kind}")
    return target


def _temporary(target: Path) -> Path:
    """A new empty file beside ``target``, hidden, named after it."""
    try:
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as error:
        raise InvalidParameterError(
            f"cannot write {target}: no file can be created in {target.parent} ({error.strerror})"
        ) from None
    os.close(handle)
    return Path(name)


def write_whole(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` whole (:func:`written_whole`); the path written."""
    with written_whole(path) as out:
        out.write(text)
    return path.expanduser()
