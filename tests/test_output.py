"""Files and folders written whole or not at all, and targets refused before any work."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.output import (
    check_directory_target,
    check_target,
    directory_written_whole,
    write_whole,
    written_whole,
)


def test_a_file_appears_only_when_written_whole(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    with written_whole(target) as out:
        out.write("first\n")
        assert not target.exists()
        assert len(list(tmp_path.iterdir())) == 1  # the temporary file beside it
    assert target.read_text() == "first\n"
    assert list(tmp_path.iterdir()) == [target]
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("failure", [RuntimeError("boom"), KeyboardInterrupt()])
def test_a_failure_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, failure: BaseException
) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old\n")

    def write_half() -> None:
        with written_whole(target) as out:
            out.write("half")
            raise failure

    with pytest.raises(type(failure)):
        write_half()
    assert target.read_text() == "old\n"
    assert list(tmp_path.iterdir()) == [target]


def test_an_existing_file_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    assert check_target(target) == target
    with written_whole(target) as out:
        out.write("new\n")
    assert target.read_text() == "new\n"


def test_targets_that_cannot_be_written_whole_are_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    refused = {
        tmp_path: "it is a directory",
        tmp_path / "missing" / "t.jsonl": "no directory",
        tmp_path / "fifo": "it is a FIFO",
        Path("/dev/null"): "it is a character device",
        Path("/proc/version"): "no file can be created in /proc",
    }
    with socket.socket(socket.AF_UNIX) as listening:
        sock = tmp_path / "sock"
        listening.bind(str(sock))
        refused[sock] = "it is a socket"
        for path, reason in refused.items():
            with pytest.raises(InvalidParameterError) as error:
                check_target(path)
            assert str(error.value).startswith(f"cannot write {path}: {reason}")
            with pytest.raises(InvalidParameterError), written_whole(path):
                pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "sock"]


def test_a_file_in_a_file_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("")
    with pytest.raises(InvalidParameterError, match="not a directory"):
        check_target(plain / "t.jsonl")


def test_write_whole_replaces_an_older_file(tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    target.write_text("old")
    assert write_whole(target, "new text") == target
    assert target.read_text() == "new text"
    assert list(tmp_path.iterdir()) == [target]


def test_a_failure_while_renaming_leaves_the_older_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "page.html"
    target.write_text("the earlier page")

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_whole(target, "x" * 100_000)
    assert target.read_text() == "the earlier page"
    assert list(tmp_path.iterdir()) == [target]


def _ours(folder: Path) -> bool:
    """A folder a test writer may replace: one it marked as its own."""
    return (folder / "ours").is_file()


def _fill(folder: Path, *names: str) -> None:
    (folder / "ours").write_text("")
    for name in names:
        (folder / name).write_text(name)


def _write(
    target: Path,
    *names: str,
    failure: BaseException | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> None:
    """Write a folder of ``names`` to ``target`` whole; then, still in the block, call
    ``meanwhile`` and raise ``failure``."""
    with directory_written_whole(target, _ours, "a set") as folder:
        _fill(folder, *names)
        if meanwhile is not None:
            meanwhile()
        if failure is not None:
            raise failure


def test_a_folder_appears_only_when_written_whole(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "out"
    assert check_directory_target(target, _ours, "a set") == target
    assert list(tmp_path.iterdir()) == []  # the check leaves nothing behind
    with directory_written_whole(target, _ours, "a set") as folder:
        _fill(folder, "a")
        assert not target.exists()
        assert folder.parent == target.parent
        assert folder.name.startswith(".out.")
    assert sorted(p.name for p in target.iterdir()) == ["a", "ours"]
    assert list(target.parent.iterdir()) == [target]
    assert target.stat().st_mode & 0o777 == 0o777 & ~_umask()


@pytest.mark.parametrize("failure", [RuntimeError("boom"), KeyboardInterrupt()])
def test_a_failed_folder_leaves_the_old_one_and_nothing_else(
    tmp_path: Path, failure: BaseException
) -> None:
    old = tmp_path / "old"
    old.mkdir()
    _fill(old, "a", "b")
    fresh = tmp_path / "missing" / "parents" / "fresh"
    for target in (old, fresh):
        with pytest.raises(type(failure)):
            _write(target, "a", failure=failure)
    assert sorted(p.name for p in old.iterdir()) == ["a", "b", "ours"]
    assert (old / "a").read_text() == "a"
    assert list(tmp_path.iterdir()) == [old]  # no temporary, no parent created for nothing


@pytest.mark.parametrize("before", ["ours", "empty"])
def test_a_replaceable_or_empty_folder_is_replaced_whole(tmp_path: Path, before: str) -> None:
    target = tmp_path / "out"
    target.mkdir()
    if before == "ours":
        _fill(target, "only-in-the-old-one")
    _write(target, "new")
    assert sorted(p.name for p in target.iterdir()) == ["new", "ours"]
    assert list(tmp_path.iterdir()) == [target]


def test_a_folder_of_something_else_is_never_mixed_into(tmp_path: Path) -> None:
    target = tmp_path / "notes"
    target.mkdir()
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (target / name).write_text("mine")
    message = r"a set to .*: the folder holds other files \(a.txt, b.txt, c.txt and 1 more\)"
    with pytest.raises(InvalidParameterError, match=message):
        check_directory_target(target, _ours, "a set")
    with pytest.raises(InvalidParameterError, match=message):
        _write(target, "new", failure=AssertionError("the block ran"))
    assert sorted(p.name for p in target.iterdir()) == ["a.txt", "b.txt", "c.txt", "d.txt"]
    assert list(tmp_path.iterdir()) == [target]


def test_a_folder_that_changed_meanwhile_is_not_replaced(tmp_path: Path) -> None:
    """Checked when the block starts and again before the swap: files the user put there
    while the folder was being written stay."""
    target = tmp_path / "out"

    def meanwhile() -> None:
        target.mkdir()
        (target / "mine").write_text("mine")

    with pytest.raises(InvalidParameterError, match=r"holds other files \(mine\)"):
        _write(target, "new", meanwhile=meanwhile)
    assert [p.name for p in target.iterdir()] == ["mine"]
    assert list(tmp_path.iterdir()) == [target]


def test_folder_targets_that_cannot_be_written_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    plain.write_text("")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    inside = tmp_path / "inside"
    inside.mkdir()
    monkeypatch.chdir(inside)
    refused = {
        plain: "it is a file",
        fifo: "it is a FIFO",
        Path("/dev/null"): "it is a character device",
        plain / "out": f"not a directory: {plain}",
        Path("/proc/out"): "no folder can be created in /proc",
        inside: "it holds the current folder",
        Path("."): "it holds the current folder",
        Path("/"): "name a folder below it",
    }
    for path, reason in refused.items():
        with pytest.raises(InvalidParameterError) as error:
            check_directory_target(path, _ours, "a set")
        assert str(error.value).startswith(f"cannot write a set to {path}: {reason}")
        with pytest.raises(InvalidParameterError), directory_written_whole(path, _ours, "a set"):
            pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "inside", "plain"]
    assert list(inside.iterdir()) == []


def test_a_failure_while_swapping_puts_the_old_folder_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out"
    target.mkdir()
    _fill(target, "old")
    renames: list[tuple[str, str]] = []
    rename = os.rename

    def second_fails(source: str | Path, destination: str | Path) -> None:
        renames.append((Path(source).name, Path(destination).name))
        if len(renames) == 2:  # the new folder onto the target, the old one set aside
            raise KeyboardInterrupt
        rename(source, destination)

    monkeypatch.setattr(os, "rename", second_fails)
    with pytest.raises(KeyboardInterrupt):
        _write(target, "new")
    assert renames[0][0] == "out"
    assert renames[1][1] == "out"
    assert sorted(p.name for p in target.iterdir()) == ["old", "ours"]
    assert list(tmp_path.iterdir()) == [target]


def test_a_linked_folder_is_replaced_where_the_link_points(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    _fill(real, "old")
    link = tmp_path / "link"
    link.symlink_to(real)
    _write(link, "new")
    assert link.is_symlink()
    assert sorted(p.name for p in real.iterdir()) == ["new", "ours"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]
