"""Where a handle's bytes are: inline, in the checkpoint directory, or in a file stored by an
absolute path that may have moved.

Flink stores some paths absolute (``FileStateHandle``, file-merging segments and their physical
files, the names of inlined handles): ``file:/flink-checkpoints/<job>/chk-7/...``. A checkpoint
copied elsewhere must still open, so an absolute path is re-rooted: by the user's own prefix
mapping first, else at the job directory (the ``<job>`` component, the parent of ``chk-N``).
Relative handles resolve against the ``chk-N`` directory, as in Flink.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import BinaryIO

from flinkstate.errors import CheckpointFormatError, InvalidParameterError, StoredPathError
from flinkstate.filekinds import special_kind
from flinkstate.flinkcheckpoint.handles import (
    ByteStreamStateHandle,
    EmptySegmentFileStateHandle,
    FileStateHandle,
    RelativeFileStateHandle,
    SegmentFileStateHandle,
    StreamStateHandle,
)


def stored_path(path: str) -> PurePosixPath:
    """A path as Flink stored it, without its ``file:`` scheme.

    Examples
    --------
    >>> stored_path("file:/flink-checkpoints/keyed-hash-p2-p4/shared/a2b4c6d8")
    PurePosixPath('/flink-checkpoints/keyed-hash-p2-p4/shared/a2b4c6d8')
    """
    for scheme in ("file://", "file:"):
        if path.startswith(scheme):
            path = path[len(scheme) :]
            break
    return PurePosixPath(path)


#: the folders Flink writes in a job's checkpoint folder (``CheckpointStorageLocation``s)
_JOB_SUBFOLDERS = frozenset({"shared", "taskowned"})
_CHECKPOINT_FOLDER = re.compile(r"chk-\d+")


class StateFiles:
    """Opens the files a checkpoint's handles name, each once, mapped read-only.

    Examples
    --------
    The checkpoint written with file merging stores the absolute paths of the files it wrote in
    ``/flink-checkpoints/...``; copied into ``data/real-checkpoints``, each is found under the
    job's folder there:

    >>> from flinkstate.flinkcheckpoint import REAL_CHECKPOINTS, real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4-filemerging")
    >>> _, channel = next(read_metadata(checkpoint).channel_handles())
    >>> segment = channel.delegate
    >>> segment.physical_path.split("/")[:3]
    ['file:', 'flink-checkpoints', 'keyed-hash-p2-p4-filemerging']
    >>> with StateFiles(checkpoint) as files:
    ...     local = files.local_path(segment.physical_path)
    ...     print(local.relative_to(REAL_CHECKPOINTS).parts[:3])
    ...     print(len(files.stream(segment)), segment.start, segment.size)
    ('keyed-hash-p2-p4-filemerging', '7c3a3cbf187bc6a3551d62ab3a52af98', 'taskowned')
    68984 0 68984

    Where a file is not where its path says, the error says which ``--reroot`` maps the folder the
    job wrote in to where it is now:

    >>> with StateFiles(checkpoint) as files:
    ...     print(files.reroot_hint(segment.physical_path).split("=")[0])
    /flink-checkpoints/keyed-hash-p2-p4-filemerging/7c3a3cbf187bc6a3551d62ab3a52af98
    """

    def __init__(self, checkpoint_dir: str | Path, reroot: Mapping[str, str] | None = None):
        self.checkpoint_dir = Path(checkpoint_dir)
        self.job_dir = self.checkpoint_dir.parent
        self.reroot = dict(reroot or {})
        self._maps: dict[Path, memoryview] = {}
        self._mmaps: list[mmap.mmap] = []
        #: the whole-file streams already checked, by handle: a checkpoint's many channel
        #: handles share a few files, and finding a file's path costs more than its chunks
        self._whole: dict[RelativeFileStateHandle | FileStateHandle, memoryview] = {}

    def __enter__(self) -> StateFiles:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Unmap every file. A view still in use (held by an error's traceback, or by a
        caller) keeps its map alive until it is collected: closing must never replace the
        error being reported with a ``BufferError``."""
        for view in self._maps.values():
            with contextlib.suppress(BufferError):
                view.release()
        for mapped in self._mmaps:
            with contextlib.suppress(BufferError):
                mapped.close()
        self._maps.clear()
        self._mmaps.clear()
        self._whole.clear()

    def local_path(self, path: str) -> Path:
        """Where an absolute stored path is on this machine: under the folder a ``reroot``
        prefix maps it to, else under the checkpoint's job folder (the part of the path after
        the job folder's name). A path that is neither, or that climbs out with ``..``, is a
        :class:`StoredPathError`: nothing outside those folders is opened."""
        stored = stored_path(path)
        if ".." in stored.parts:
            raise StoredPathError(self.metadata, path, "climbs out of its folder with '..'")
        for prefix, local in self.reroot.items():
            start = stored_path(prefix)
            if stored.parts[: len(start.parts)] == start.parts:
                return Path(local).joinpath(*stored.parts[len(start.parts) :])
        parts = stored.parts
        name = self.job_dir.name
        if name in parts:
            at = len(parts) - 1 - parts[::-1].index(name)
            return self.job_dir.joinpath(*parts[at + 1 :])
        raise StoredPathError(
            self.metadata,
            path,
            f"is outside the checkpoint's job folder {self.job_dir}; if the checkpoint was "
            "moved, map the folder it was written in to where it is now: on the command line "
            f"--reroot {self.reroot_hint(path)}, in Python reroot=",
        )

    def relative_path(self, relative: str) -> Path:
        """A relative handle's file: a name inside the checkpoint's folder, as Flink writes
        one (an absolute path, ``..`` or a folder is a :class:`StoredPathError`)."""
        name = PurePosixPath(relative)
        if name.is_absolute() or len(name.parts) != 1 or name.parts[0] in (".", ".."):
            raise StoredPathError(
                self.metadata,
                relative,
                f"is not a file name inside the checkpoint's folder {self.checkpoint_dir}",
            )
        return self.checkpoint_dir / name.parts[0]

    @property
    def metadata(self) -> str:
        """The file the stored paths come from, for errors."""
        return str(self.checkpoint_dir / "_metadata")

    def reroot_hint(self, stored: str) -> str:
        """``STORED=LOCAL`` for a file not found where its stored path says: the job's folder
        as Flink wrote it (the folder holding ``chk-N``, ``shared`` and ``taskowned``) and the
        job folder this checkpoint is in now, or the file's folder where the stored path does
        not show the job's."""
        path = stored_path(stored)
        for position, part in enumerate(path.parts):
            if part in _JOB_SUBFOLDERS or _CHECKPOINT_FOLDER.fullmatch(part):
                return f"{PurePosixPath(*path.parts[:position])}={self.job_dir}"
        return f"{path.parent}=NEW_FOLDER"

    def describe(self, handle: StreamStateHandle) -> str:
        """The handle's bytes as a user would look for them."""
        if isinstance(handle, ByteStreamStateHandle):
            return f"inline bytes {handle.name!r} in _metadata"
        if isinstance(handle, RelativeFileStateHandle):
            return str(self.relative_path(handle.relative_path))
        if isinstance(handle, FileStateHandle):
            return str(self.local_path(handle.path))
        if isinstance(handle, SegmentFileStateHandle):
            return f"{self.local_path(handle.physical_path)} [{handle.start}, +{handle.size})"
        return "an empty segment"

    def stream(self, handle: StreamStateHandle) -> memoryview:
        """The handle's stream: inline bytes, a whole file, or a file-merging segment."""
        if isinstance(handle, ByteStreamStateHandle):
            return memoryview(handle.data)
        if isinstance(handle, EmptySegmentFileStateHandle):
            return memoryview(b"")
        if isinstance(handle, RelativeFileStateHandle | FileStateHandle):
            known = self._whole.get(handle)
            if known is not None:
                return known
            if isinstance(handle, RelativeFileStateHandle):
                path, stored = self.relative_path(handle.relative_path), handle.relative_path
            else:
                path, stored = self.local_path(handle.path), handle.path
            view = self._file(path, stored)
            if len(view) != handle.size:
                raise CheckpointFormatError(
                    str(path),
                    min(len(view), handle.size),
                    f"the {handle.size} bytes the checkpoint's metadata gives this file, "
                    f"found {len(view)}",
                )
            self._whole[handle] = view
            return view
        view = self._file(self.local_path(handle.physical_path), handle.physical_path)
        if handle.start + handle.size > len(view):
            raise CheckpointFormatError(
                str(self.local_path(handle.physical_path)),
                len(view),
                f"a segment of {handle.size} bytes from byte {handle.start}, but the file has "
                f"{len(view)} bytes",
            )
        return view[handle.start : handle.start + handle.size]

    def _file(self, path: Path, stored: str) -> memoryview:
        view = self._maps.get(path)
        if view is not None:
            return view
        what = f"a state file the checkpoint's metadata names ({stored})"
        try:
            with open_regular(path, what) as file:
                size = os.fstat(file.fileno()).st_size
                if size == 0:
                    view = memoryview(b"")
                else:
                    mapped = map_file(file, path, what)
                    self._mmaps.append(mapped)
                    view = memoryview(mapped)
        except FileNotFoundError:
            raise CheckpointFormatError(
                str(path),
                0,
                f"a state file the checkpoint's metadata names ({stored}); if the checkpoint "
                "was moved, map the folder it was written in to where it is now: on the "
                f"command line --reroot {self.reroot_hint(stored)}, in Python reroot=",
            ) from None
        self._maps[path] = view
        return view


def map_file(file: BinaryIO, path: Path, what: str) -> mmap.mmap:
    """An open file mapped read-only: its pages are read when touched, so a file of
    gigabytes costs only the bytes really read.

    Examples
    --------
    A file mapped read-only: pages are read as they are touched:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> path = real_checkpoint("keyed-hash-p2-p4") / "_metadata"
    >>> with open_regular(path, "a checkpoint _metadata file") as file:
    ...     with map_file(file, path, "a checkpoint _metadata file") as mapped:
    ...         print(len(mapped), mapped[:4].hex())
    41112 4960672d
    """
    try:
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise CheckpointFormatError(str(path), 0, f"{what} that can be mapped ({reason})") from None


def open_regular(path: Path, what: str) -> BinaryIO:
    """``path`` opened for reading if it is a regular file (symbolic links followed); a
    :class:`CheckpointFormatError` naming ``what`` otherwise. Special files are refused from
    their ``stat``, before anything opens them; ``FileNotFoundError`` is left to the caller,
    which knows what a missing file means.

    Examples
    --------
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> with open_regular(real_checkpoint("keyed-hash-p2-p4") / "_metadata", "_metadata") as file:
    ...     print(file.read(8).hex())
    4960672d00000006

    A device, a pipe or a socket is refused before anything opens it:

    >>> from flinkstate.errors import CheckpointFormatError
    >>> try:
    ...     open_regular(Path("/dev/null"), "a checkpoint _metadata file")
    ... except CheckpointFormatError as error:
    ...     print(error.expected)
    a checkpoint _metadata file, a regular file, found a character device
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise
    except ValueError:  # a NUL byte in a path read from the checkpoint
        raise CheckpointFormatError(
            repr(str(path)), 0, f"{what}: a path without NUL bytes"
        ) from None
    except OSError as error:
        raise CheckpointFormatError(str(path), 0, f"{what} ({error.strerror})") from None
    kind = special_kind(mode)
    if kind is not None:
        raise CheckpointFormatError(str(path), 0, f"{what}, a regular file, found {kind}")
    try:
        return path.open("rb")
    except OSError as error:
        raise CheckpointFormatError(str(path), 0, f"{what} ({error.strerror})") from None


def reroot_options(items: Iterable[str]) -> dict[str, str]:
    """A command line's ``--reroot STORED=LOCAL`` options: where files stored under an
    absolute path are now.

    Examples
    --------
    >>> reroot_options(["/flink-checkpoints/keyed-hash-p2-p4=/mnt/backup/keyed-hash-p2-p4"])
    {'/flink-checkpoints/keyed-hash-p2-p4': '/mnt/backup/keyed-hash-p2-p4'}
    >>> reroot_options(["/flink-checkpoints"])
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: --reroot takes STORED=LOCAL, got '/flink-checkpoints'
    >>> reroot_options(["flink-checkpoints=/mnt"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: --reroot 'flink-checkpoints=/mnt': STORED is an ...
    """
    reroot: dict[str, str] = {}
    for item in items:
        stored, sep, local = item.partition("=")
        if not sep or not stored or not local:
            raise InvalidParameterError(f"--reroot takes STORED=LOCAL, got {item!r}")
        if not stored_path(stored).is_absolute():  # no stored path starts with it
            raise InvalidParameterError(
                f"--reroot {item!r}: STORED is an absolute path as the checkpoint stored it "
                "(e.g. /flink-checkpoints/JOB)"
            )
        if stored in reroot:  # one of the two would win without a word
            raise InvalidParameterError(
                f"--reroot {stored} is given twice ({reroot[stored]!r} and {local!r}); give it once"
            )
        reroot[stored] = local
    return reroot
