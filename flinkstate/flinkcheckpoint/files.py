"""Where a handle's bytes are: inline, in the checkpoint directory, or in a file stored by an
absolute path that may have moved.

Flink stores some paths absolute (``FileStateHandle``, file-merging segments and their physical
files, the names of inlined handles): ``file:/flink-checkpoints/<job>/chk-7/...``. A checkpoint
copied elsewhere must still open, so an absolute path is re-rooted: by the user's own prefix
mapping first, else at the job directory (the ``<job>`` component, the parent of ``chk-N``).
Relative handles resolve against the ``chk-N`` directory, as in Flink.
"""

from __future__ import annotations

import mmap
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from types import TracebackType

from flinkstate.errors import CheckpointFormatError
from flinkstate.flinkcheckpoint.handles import (
    ByteStreamStateHandle,
    EmptySegmentFileStateHandle,
    FileStateHandle,
    RelativeFileStateHandle,
    SegmentFileStateHandle,
    StreamStateHandle,
)


def stored_path(path: str) -> PurePosixPath:
    """A path as Flink stored it, without its ``file:`` scheme."""
    for scheme in ("file://", "file:"):
        if path.startswith(scheme):
            path = path[len(scheme) :]
            break
    return PurePosixPath(path)


class StateFiles:
    """Opens the files a checkpoint's handles name, each once, mapped read-only."""

    def __init__(self, checkpoint_dir: str | Path, reroot: Mapping[str, str] | None = None):
        self.checkpoint_dir = Path(checkpoint_dir)
        self.job_dir = self.checkpoint_dir.parent
        self.reroot = dict(reroot or {})
        self._maps: dict[Path, memoryview] = {}
        self._mmaps: list[mmap.mmap] = []

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
        for view in self._maps.values():
            view.release()
        for mapped in self._mmaps:
            mapped.close()
        self._maps.clear()
        self._mmaps.clear()

    def local_path(self, path: str) -> Path:
        """Where an absolute stored path is on this machine."""
        stored = stored_path(path)
        for prefix, local in self.reroot.items():
            start = stored_path(prefix)
            if stored.parts[: len(start.parts)] == start.parts:
                return Path(local).joinpath(*stored.parts[len(start.parts) :])
        parts = stored.parts
        name = self.job_dir.name
        if name in parts:
            at = len(parts) - 1 - parts[::-1].index(name)
            return self.job_dir.joinpath(*parts[at + 1 :])
        return Path(stored)

    def describe(self, handle: StreamStateHandle) -> str:
        """The handle's bytes as a user would look for them."""
        if isinstance(handle, ByteStreamStateHandle):
            return f"inline bytes {handle.name!r} in _metadata"
        if isinstance(handle, RelativeFileStateHandle):
            return str(self.checkpoint_dir / handle.relative_path)
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
        if isinstance(handle, RelativeFileStateHandle):
            return self._file(self.checkpoint_dir / handle.relative_path, handle.relative_path)
        if isinstance(handle, FileStateHandle):
            return self._file(self.local_path(handle.path), handle.path)
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
        try:
            with path.open("rb") as file:
                size = path.stat().st_size
                if size == 0:
                    view = memoryview(b"")
                else:
                    mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
                    self._mmaps.append(mapped)
                    view = memoryview(mapped)
        except FileNotFoundError:
            raise CheckpointFormatError(
                str(path),
                0,
                f"a state file the checkpoint's metadata names ({stored}); give reroot= a "
                "mapping from where it was written to where it is now",
            ) from None
        except IsADirectoryError:
            raise CheckpointFormatError(str(path), 0, "a state file, found a directory") from None
        self._maps[path] = view
        return view
