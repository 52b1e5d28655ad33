"""Outputs written whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.whole_file import check_writable, write_whole


def test_writes_the_text_and_replaces_an_older_file(tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    target.write_text("old")
    assert write_whole(target, "new text") == target
    assert target.read_text() == "new text"
    assert list(tmp_path.iterdir()) == [target]
    assert oct(target.stat().st_mode & 0o777) != oct(0o600)


def test_a_failure_while_writing_leaves_neither_a_partial_file_nor_a_temporary(
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


@pytest.mark.parametrize(
    ("where", "message"),
    [("nowhere/x.html", "no directory"), (".", "it is a directory")],
)
def test_destinations_that_cannot_be_a_file_are_refused(
    tmp_path: Path, where: str, message: str
) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        check_writable(tmp_path / where)


def test_a_special_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InvalidParameterError, match="not a regular file"):
        check_writable(fifo)
