"""Files and folders written whole or not at all.

A command that runs for minutes and then writes its result must neither leave half a file
behind when it fails or is interrupted, nor find out only at the end that it cannot write
where it was asked to. :func:`check_target` refuses a target before any work is done;
:func:`written_whole` writes under a temporary name beside the target and renames it over the
target only when everything was written (``os.replace`` is atomic within a directory).

A folder of files (a dataset) is written the same way: :func:`directory_written_whole` fills
a hidden temporary folder beside the target and swaps it in with two renames once it is
complete, so an earlier folder there is replaced only by a whole new one; a folder holding
something else than what the writer replaces is refused up front
(:func:`check_directory_target`), never mixed into.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from flinkstate.errors import InvalidParameterError
from flinkstate.filekinds import special_kind


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
    kind = special_kind(mode)
    if kind is not None:
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


#: whether an existing, non-empty folder is one a writer may replace (a dataset for datasets)
Replaceable = Callable[[Path], bool]


def check_directory_target(path: Path, replaceable: Replaceable, what: str) -> Path:
    """``path`` (user's ``~`` expanded) if a folder of ``what`` can be written there whole:
    missing (its missing parents are created when it is written), an empty folder, or a folder
    ``replaceable`` accepts. Anything else is an :class:`InvalidParameterError` naming the path:
    a file, a folder holding other things, a place where no folder can be created."""
    target, real = _folder_target(path, replaceable, what)
    _temporary_folder(target, _existing_ancestor(real.parent), what).rmdir()
    return target


@contextmanager
def directory_written_whole(path: Path, replaceable: Replaceable, what: str) -> Iterator[Path]:
    """A new empty folder to fill, swapped in as ``path`` when the block ends; removed instead
    when the block raises (``KeyboardInterrupt`` too), and so are the parents it created, so
    ``path`` is untouched. ``path`` is checked as :func:`check_directory_target` checks it when
    the block starts and again before the swap (it may have changed meanwhile)."""
    target, real = _folder_target(path, replaceable, what)
    created = _make_parents(target, real.parent)
    try:
        temporary = _temporary_folder(target, real.parent, what)
    except BaseException:
        _remove_parents(created)
        raise
    try:
        yield temporary
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o777 & ~umask)  # an ordinary new folder, not mkdtemp's 0700
        _folder_target(path, replaceable, what)
        _swap_in(temporary, real, target)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        _remove_parents(created)
        raise


def _folder_target(path: Path, replaceable: Replaceable, what: str) -> tuple[Path, Path]:
    """The target as given (``~`` expanded) and the absolute folder to replace (a symbolic
    link's destination: the link stays)."""
    target = path.expanduser()
    real = Path(os.path.realpath(target)) if target.is_symlink() else Path(os.path.abspath(target))
    if real.parent == real:
        raise InvalidParameterError(f"cannot write {what} to {target}: name a folder below it")
    if _current_folder().is_relative_to(real):
        raise InvalidParameterError(
            f"cannot write {what} to {target}: it holds the current folder; name another"
        )
    ancestor = _existing_ancestor(real.parent)
    if not ancestor.is_dir():
        raise InvalidParameterError(f"cannot write {what} to {target}: not a directory: {ancestor}")
    try:
        mode = real.stat().st_mode
    except FileNotFoundError:
        return target, real
    except OSError as error:
        raise InvalidParameterError(f"cannot write {what} to {target}: {error.strerror}") from None
    if not stat.S_ISDIR(mode):
        kind = special_kind(mode) or "a file"
        raise InvalidParameterError(f"cannot write {what} to {target}: it is {kind}")
    try:
        entries = sorted(entry.name for entry in real.iterdir())
    except OSError as error:
        raise InvalidParameterError(f"cannot write {what} to {target}: {error.strerror}") from None
    if entries and not replaceable(real):
        shown = ", ".join(entries[:3]) + (
            f" and {len(entries) - 3} more" if len(entries) > 3 else ""
        )
        raise InvalidParameterError(
            f"cannot write {what} to {target}: the folder holds other files ({shown}), not "
            f"{what}; name a new or empty folder, or {what} to replace"
        )
    return target, real


def _current_folder() -> Path:
    """The working directory; the root when it is gone (nothing then lies inside a target)."""
    try:
        return Path.cwd()
    except OSError:
        return Path("/")


def _existing_ancestor(folder: Path) -> Path:
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    return folder


def _make_parents(target: Path, folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; those created, outermost first."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    created: list[Path] = []
    try:
        for parent in reversed(missing):
            parent.mkdir()
            created.append(parent)
    except OSError as error:
        _remove_parents(created)
        raise InvalidParameterError(
            f"cannot write {target}: cannot create {error.filename} ({error.strerror})"
        ) from None
    return created


def _remove_parents(created: list[Path]) -> None:
    for folder in reversed(created):
        try:
            folder.rmdir()
        except OSError:
            return


def _temporary_folder(target: Path, parent: Path, what: str) -> Path:
    """A new empty folder in ``parent``, hidden, named after ``target``."""
    try:
        return Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    except OSError as error:
        raise InvalidParameterError(
            f"cannot write {what} to {target}: no folder can be created in {parent} "
            f"({error.strerror})"
        ) from None


def _swap_in(temporary: Path, real: Path, target: Path) -> None:
    """Rename ``temporary`` to ``real``; an existing folder there is first renamed aside (onto
    an empty placeholder, which ``rename`` replaces), put back if the second rename fails, and
    removed once the new one is in place."""
    if not os.path.lexists(real):
        try:
            os.rename(temporary, real)
        except OSError as error:
            raise InvalidParameterError(f"cannot write {target}: {error.strerror}") from None
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{real.name}.old-", dir=real.parent))
    try:
        os.rename(real, aside)
    except BaseException as error:
        aside.rmdir()
        if isinstance(error, OSError):
            raise InvalidParameterError(f"cannot replace {target}: {error.strerror}") from None
        raise
    try:
        os.rename(temporary, real)
    except BaseException as error:
        os.rename(aside, real)
        if isinstance(error, OSError):
            raise InvalidParameterError(f"cannot replace {target}: {error.strerror}") from None
        raise
    shutil.rmtree(aside, ignore_errors=True)
