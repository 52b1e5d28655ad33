"""Files written whole or not at all, and targets refused before any work."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.output import check_target, write_whole, written_whole


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
