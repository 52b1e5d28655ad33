"""Broken copies of the committed checkpoints: what a mutation is, where a checkpoint's files
are, the ways a file is damaged (bits flipped, cut short, overwritten, replaced by a special
file) and ``_metadata`` rewritten with a field changed."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flinkstate.flinkcheckpoint import REAL_CHECKPOINTS
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, read_metadata
from flinkstate.flinkcheckpoint.metadata_writer import write_metadata

#: the file beside a committed checkpoint that holds its job's configuration
JOB_CONFIG = "job-config.txt"


def committed_checkpoints() -> list[Path]:
    """Every committed ``chk-N`` directory."""
    return sorted(p for p in REAL_CHECKPOINTS.glob("*/*/chk-*") if p.is_dir())


@dataclass(frozen=True, slots=True)
class Mutation:
    """One way of breaking one checkpoint: ``apply`` breaks a copy of its job's folder (the
    variant's folder: the job directory and ``job-config.txt``) at the path it is given."""

    checkpoint: Path
    family: str
    what: str
    apply: Callable[[Path], None]

    @property
    def kind(self) -> str:
        return self.family

    def __str__(self) -> str:
        return f"{self.checkpoint.parents[1].name}: {self.family}: {self.what}"


def variant_path(chk: Path, relative: Path | str) -> Path:
    """``relative`` (to a ``chk-N``'s job directory) relative to its variant's folder."""
    return Path(chk.parent.name) / relative


def checkpoint_files(chk: Path) -> list[Path]:
    """The checkpoint's files relative to its variant's folder (``_metadata`` first): every
    file a reader opens but ``job-config.txt``."""
    job = chk.parent
    found = [p.relative_to(job) for p in job.rglob("*") if p.is_file()]
    found.sort(key=lambda p: (p.name != "_metadata", str(p)))
    return [
        variant_path(chk, p)
        for p in found
        if chk.name in p.parts or "taskowned" in p.parts or "shared" in p.parts
    ]


def read_places(chk: Path) -> list[Path]:
    """Every place a reader opens a file, relative to the variant's folder: the checkpoint's
    files and its ``job-config.txt``."""
    return [*checkpoint_files(chk), Path(JOB_CONFIG)]


def flip(relative: Path, bits: list[int]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        path = root / relative
        data = bytearray(path.read_bytes())
        for bit in bits:
            data[(bit // 8) % len(data)] ^= 1 << (bit % 8)
        path.write_bytes(bytes(data))

    return apply


def truncate(relative: Path, length: int) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        path = root / relative
        path.write_bytes(path.read_bytes()[:length])

    return apply


def overwrite(relative: Path, at: int, value: bytes) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        path = root / relative
        data = bytearray(path.read_bytes())
        data[at : at + len(value)] = value
        path.write_bytes(bytes(data[: max(len(data), at)]))

    return apply


def write_bytes(relative: Path, data: bytes) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        (root / relative).write_bytes(data)

    return apply


#: what a file of a checkpoint can be replaced by
SPECIAL_KINDS = (
    "fifo",
    "dev-zero",
    "dev-null",
    "symlink-loop",
    "broken-link",
    "directory",
    "sparse-3GiB",
)


def make_special(path: Path, kind: str) -> None:
    """Replace the file ``path`` (or put at ``path``, where there is none) a special file of
    ``kind`` (one of SPECIAL_KINDS)."""
    if os.path.lexists(path):
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dev-null":
        path.symlink_to("/dev/null")
    elif kind == "symlink-loop":
        path.symlink_to(path.name)
    elif kind == "broken-link":
        path.symlink_to(f"{path.name}.gone")
    elif kind == "directory":
        path.mkdir()
    elif kind == "sparse-3GiB":
        with path.open("wb") as out:
            out.truncate(3 << 30)
    else:
        raise ValueError(kind)


def special(relative: Path, kind: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        make_special(root / relative, kind)

    return apply


def copy_checkpoint(chk: Path, into: Path) -> Path:
    """A copy of a committed checkpoint's job directory in ``into``; its ``chk-N``."""
    shutil.copytree(chk.parent, into / chk.parent.name, symlinks=True)
    return into / chk.parent.name / chk.name


def copy_variant(chk: Path, into: Path) -> Path:
    """A copy of a committed checkpoint's variant folder (its job directory and
    ``job-config.txt``) as ``into``; the copy's ``chk-N``."""
    variant = chk.parents[1]
    into.mkdir(parents=True)
    shutil.copytree(chk.parent, into / chk.parent.name, symlinks=True)
    shutil.copy2(variant / JOB_CONFIG, into / JOB_CONFIG)
    return into / chk.parent.name / chk.name


def remove_tree(folder: Path) -> None:
    """``folder`` and everything in it, special files and links included (never followed)."""
    if not os.path.lexists(folder):
        return
    if folder.is_symlink() or not folder.is_dir():
        folder.unlink()
        return
    for path in sorted(folder.rglob("*"), reverse=True):
        if path.is_symlink() or not path.is_dir():
            path.unlink()
        else:
            path.rmdir()
    folder.rmdir()


def rewrite_metadata(chk: Path, change: Callable[[CheckpointMetadata], CheckpointMetadata]) -> None:
    """``chk``'s ``_metadata`` rewritten (same version and trailer) with ``change`` applied."""
    (chk / "_metadata").write_bytes(rewritten(chk, change))


def rewritten(chk: Path, change: Callable[[CheckpointMetadata], CheckpointMetadata]) -> bytes:
    """The bytes of ``chk``'s ``_metadata`` with ``change`` applied."""
    metadata = read_metadata(chk)
    data = (chk / "_metadata").read_bytes()
    return write_metadata(change(metadata), metadata.version, data[metadata.trailer_offset :])


def metadata_written(chk: Path, data: bytes) -> Callable[[Path], None]:
    """What writes ``data`` as the copy's ``_metadata``."""
    return write_bytes(variant_path(chk, Path(chk.name) / "_metadata"), data)
