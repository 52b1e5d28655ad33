"""``flinkstate lessons``: a site of every page the index links, fetching nothing, written whole
or not at all; a folder that is not such a site is refused in one line, and Ctrl-C ends it in
one line with nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from flinkstate.cli import main
from flinkstate.views.site import MANIFEST, is_site
from tests.cli.test_cli import assert_interrupted

#: the attributes through which a page could fetch something
FETCHING = {"script": "src", "link": "href", "img": "src", "iframe": "src", "source": "src"}
#: a tour, a scenario that deadlocks and one Flink refuses: every kind of page, in seconds
ONLY = ["--only", "prefilter-deadlock", "--only", "small-page-size"]


class _Links(HTMLParser):
    """The addresses a page fetches (script, style sheet, image) and the ones it links to."""

    def __init__(self) -> None:
        super().__init__()
        self.fetched: list[str] = []
        self.linked: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag in FETCHING and values.get(FETCHING[tag]):
            self.fetched.append(str(values[FETCHING[tag]]))
        if tag == "a" and values.get("href"):
            self.linked.append(str(values["href"]))


def _links(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


@pytest.mark.slow
def test_a_site_links_every_page_and_fetches_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    assert main(["lessons", "--out", str(site), *ONLY, "--jobs", "2"]) == 0
    captured = capsys.readouterr()
    assert "writing pages" in captured.err  # the progress bar
    assert captured.out.startswith("wrote 4 pages (1 tour(s), 2 scenario(s) and the index")
    manifest = json.loads((site / MANIFEST).read_text())
    files = manifest["files"]
    assert set(manifest["seconds"]) == set(files) - {"index.html"}  # what each page took
    assert sorted(files) == [
        "index.html",
        "scenarios/prefilter-deadlock.html",
        "scenarios/small-page-size.html",
        "tours/prefilter-deadlock.html",
    ]
    assert all((site / name).is_file() for name in files)
    linked = _links(site / "index.html").linked
    assert sorted(linked) == sorted(f for f in files if f != "index.html")
    for name in files:
        page = _links(site / name)
        assert [u for u in page.fetched if not u.startswith(("data:", "blob:"))] == [], name
        for link in page.linked:  # the way back to the index, relative
            assert (site / name).parent.joinpath(link).resolve().is_file(), (name, link)
    tour = (site / "tours/prefilter-deadlock.html").read_text()
    assert '"stops":' in tour
    assert is_site(site)
    # written again, fewer pages: the earlier site is replaced whole, nothing of it left
    assert main(["lessons", "--out", str(site), "--only", "small-page-size"]) == 0
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")) == [
        "index.html",
        "scenarios/small-page-size.html",
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no hidden folder beside it


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--only", "nosuch"], "no tour or scenario named 'nosuch'"),
        (["--jobs=-1"], "--jobs -1 is out of range"),
    ],
    ids=["unknown-name", "negative-jobs"],
)
def test_bad_options_get_one_line(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lessons", "--out", str(tmp_path / "site"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert says in err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_a_folder_that_is_not_a_site_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    file = tmp_path / "file.txt"
    file.write_text("mine")
    for target, says in ((folder, "holds other files (notes.txt)"), (file, "it is a file")):
        assert main(["lessons", "--out", str(target)]) == 2
        captured = capsys.readouterr()
        refusal = f"flinkstate: error: cannot write a lessons site to {target}"
        assert captured.err.startswith(refusal)
        assert says in captured.err
        assert captured.err.count("\n") == 1
        assert "writing pages" not in captured.err  # refused before the progress bar
    assert (folder / "notes.txt").read_text() == "mine"
    assert file.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "mine"]


def test_a_site_with_a_file_added_is_not_replaced(tmp_path: Path) -> None:
    """A learner's notes put into the site's folder are not deleted by writing it again."""
    site = tmp_path / "site"
    assert main(["lessons", "--out", str(site), "--only", "small-page-size"]) == 0
    (site / "scenarios" / "my-notes.txt").write_text("mine")
    assert main(["lessons", "--out", str(site), "--only", "small-page-size"]) == 2
    assert (site / "scenarios" / "my-notes.txt").read_text() == "mine"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sent", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_ctrl_c_stops_the_workers_and_leaves_nothing(
    sent: signal.Signals, status: int, tmp_path: Path
) -> None:
    """Ctrl-C reaches the whole foreground group, workers included: the command stops them,
    removes its hidden folder and says so in one line."""
    with subprocess.Popen(
        [sys.executable, "-m", "flinkstate", "lessons", "--out", str(tmp_path / "site"), *ONLY],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".site.*/*")) and time.monotonic() < deadline:
            time.sleep(0.1)  # until the pages are being written
        assert process.poll() is None, process.communicate()
        if sent == signal.SIGINT:
            os.killpg(process.pid, sent)  # as a terminal's Ctrl-C
        else:
            process.send_signal(sent)
        out, errors = process.communicate(timeout=60)
    assert_interrupted(process.returncode, out, errors, status, tmp_path)  # no site, no hidden one
    leftover = subprocess.run(
        ["pgrep", "-s", str(process.pid)], capture_output=True, text=True, check=False
    )
    assert leftover.stdout == "", "a worker outlived the command"
