"""``flinkstate lessons``: write the lessons as a static site (``flinkstate.views.site``).

Each page is a run drawn step by step, seconds of work, and the pages are independent: they
are made by a pool of processes, one per core, into a hidden folder beside the target that
becomes it only once every page and the index are written. Ctrl-C stops the workers, removes
that folder and says so in one line.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flinkstate.cli.interruption import CommandInterrupted, interrupted
from flinkstate.errors import InvalidParameterError
from flinkstate.views.site import (
    WHAT,
    SitePage,
    check_site_target,
    index_page,
    is_site,
    site_pages,
    write_manifest,
    write_site_page,
)


def add_lessons_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "lessons",
        help="write the lessons as a static site: the guided tours and every scenario, offline",
        description="Write an index, a page per guided tour (the stop's text beside the "
        "canvas, back and next between stops, the step slider and play) and a page per "
        "scenario of the catalogue into DIR. The pages need no install and no network: open "
        "DIR/index.html from disk or serve DIR from any static host. The site appears whole "
        "or not at all; it replaces an earlier site in DIR, and a DIR holding other files is "
        "refused.",
    )
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="the site's folder")
    parser.add_argument(
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="pages made at once, each in a process of its own (default: one per core)",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="only this tour or scenario (and its namesake); repeatable",
    )
    parser.set_defaults(handler=_lessons)


def _lessons(args: argparse.Namespace) -> str:
    from tqdm.auto import tqdm

    from flinkstate.output import directory_written_whole

    if args.jobs < 0:
        raise InvalidParameterError(f"--jobs {args.jobs} is out of range: 0 (one per core) or more")
    target = check_site_target(args.out)  # refused before any work
    pages = site_pages(args.only)
    jobs = min(args.jobs or os.cpu_count() or 1, len(pages))
    started = time.perf_counter()
    sizes: dict[str, int] = {}
    seconds: dict[str, float] = {}
    try:
        with (
            directory_written_whole(target, is_site, WHAT) as folder,
            tqdm(total=len(pages), desc="writing pages", unit="page", file=sys.stderr) as bar,
        ):
            for page, size, took in _written(pages, folder, jobs):
                sizes[page.path] = size
                seconds[page.path] = round(took, 1)
                bar.set_postfix_str(page.path, refresh=False)
                bar.update()
            index = index_page(pages, sizes)
            (folder / "index.html").write_text(index, encoding="utf-8")
            write_manifest(folder, pages, seconds)
    except KeyboardInterrupt:
        raise CommandInterrupted(interrupted([])) from None
    took = time.perf_counter() - started
    tours = sum(p.kind == "tour" for p in pages)
    total = sum(sizes.values()) + len(index.encode())
    slowest = max(seconds, key=seconds.__getitem__)
    return (
        f"wrote {len(pages) + 1} pages ({tours} tour(s), {len(pages) - tours} scenario(s) and "
        f"the index, {total / 1e6:.1f} MB) to {target} in {took:.0f} s with {jobs} "
        f"process(es), the slowest page {slowest} in {seconds[slowest]:.0f} s; open "
        f"{target / 'index.html'}"
    )


def _written(
    pages: list[SitePage], folder: Path, jobs: int
) -> Iterator[tuple[SitePage, int, float]]:
    """Each page with its size and seconds as it is written: here, one after the other, or by
    ``jobs`` processes (the scenarios first: their runs are the longest, and end the pool's
    tail)."""
    if jobs <= 1:
        for page in pages:
            yield _Writer(folder)(page)
        return
    ordered = sorted(pages, key=lambda p: p.kind != "scenario")
    pool = multiprocessing.get_context("fork").Pool(jobs, initializer=_worker_signals)
    try:
        yield from pool.imap_unordered(_Writer(folder), ordered, chunksize=1)
        pool.close()
    finally:
        pool.terminate()  # a worker still busy (Ctrl-C, an error) stops now
        pool.join()


class _Writer:
    """What a worker process runs: one page into the folder (picklable, unlike a closure)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __call__(self, page: SitePage) -> tuple[SitePage, int, float]:
        started = time.perf_counter()
        size = write_site_page(page, self.folder)
        return page, size, time.perf_counter() - started


def _worker_signals() -> None:
    """A worker leaves Ctrl-C to the command (which stops it) and dies of SIGTERM at once,
    rather than unwinding as the command's own handlers would have it do."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
