"""The lessons as a static site: an index, a page per guided tour and a page per scenario of
the catalogue, each self-contained, opened from disk or any static host with no install.

An onboarding engineer without Java, Spark or Jupyter opens ``index.html``. Every page holds
its own scripts and styles (the canvas's module, the run packed in the page), so the site
fetches nothing, and pages link to each other by relative paths only. The pages are
independent of each other, so a writer may make them in any order and in parallel
(``flinkstate lessons``); the index is made last, from what each page reported. A manifest
names every file the site holds, so that writing a site again may replace an earlier one and
nothing else.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from flinkstate.errors import InvalidParameterError
from flinkstate.output import check_directory_target

#: the site's manifest: the files it holds, so that a site is told from any other folder
MANIFEST = "flinkstate-site.json"
#: what the manifest says it is
GENERATOR = "flinkstate lessons"
#: what a refusal names the folder as
WHAT = "a lessons site"
#: a page's way back to the index (its pages sit one folder down)
_BACK = '<nav class="site"><a href="../index.html">&#8592; all lessons</a></nav>'


@dataclass(frozen=True)
class SitePage:
    """One page of the site: a tour's or a scenario's, where it goes and how the index
    describes it.

    Examples
    --------
    >>> SitePage("scenario", "prefilter-deadlock", "A deadlock", "keyed").path
    'scenarios/prefilter-deadlock.html'
    """

    kind: str
    name: str
    title: str
    about: str

    @property
    def path(self) -> str:
        """The page's path in the site, relative to the index."""
        return f"{self.kind}s/{self.name}.html"


def site_pages(only: Collection[str] = ()) -> list[SitePage]:
    """The site's pages: every tour (in the notebooks' order), then every scenario of the
    catalogue; with ``only``, those named (a tour's or a scenario's name), refused in one line
    for a name that is neither.

    Examples
    --------
    >>> pages = site_pages()
    >>> pages[0].path, sum(p.kind == "tour" for p in pages) >= 9
    ('tours/unaligned-capture.html', True)
    >>> [p.path for p in site_pages(["prefilter-deadlock"])]
    ['tours/prefilter-deadlock.html', 'scenarios/prefilter-deadlock.html']
    """
    from flinkstate.catalogue.scenarios import SCENARIOS
    from flinkstate.views.tours import TOURS

    pages = [SitePage("tour", t.name, t.title, t.opening().describe()) for t in TOURS.values()] + [
        SitePage("scenario", s.name, s.title, f"{s.topology}; expected: {s.expected.value}")
        for s in SCENARIOS.values()
    ]
    unknown = sorted(set(only) - {p.name for p in pages})
    if unknown:
        raise InvalidParameterError(
            f"no tour or scenario named {', '.join(map(repr, unknown))}; "
            "flinkstate scenarios lists the scenarios"
        )
    return [p for p in pages if not only or p.name in only]


def write_site_page(page: SitePage, folder: Path) -> int:
    """Write ``page`` into the site being made in ``folder``; its size in bytes. A scenario
    Flink refuses (no run to draw) gets a short page saying why.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     size = write_site_page(site_pages(["small-page-size"])[0], Path(folder))
    ...     print(size > 0, (Path(folder) / "scenarios" / "small-page-size.html").is_file())
    True True
    """
    from flinkstate.views.page import scenario_page
    from flinkstate.views.tour_page import tour_page

    if page.kind == "tour":
        text = tour_page(page.name, nav=_BACK)
    else:
        try:
            text = scenario_page(page.name, nav=_BACK)
        except InvalidParameterError as refused:
            text = _refused_page(page, str(refused))
    target = folder / page.path
    target.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    target.write_bytes(data)
    return len(data)


def _refused_page(page: SitePage, why: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>flinkstate: {html.escape(page.name)}</title></head>"
        '<body style="font-family:system-ui,sans-serif;max-width:60em;margin:1.2em auto">'
        f"{_BACK}<h1>flinkstate: {html.escape(page.name)}</h1>"
        f"<p>{html.escape(page.title)}</p><p>Nothing to step through: {html.escape(why)}</p>"
        "</body></html>\n"
    )


def index_page(pages: Collection[SitePage], sizes: dict[str, int]) -> str:
    """The site's index: the tours first (the lessons), then the scenarios to step through,
    each linked by its relative path, with its size.

    Examples
    --------
    >>> page = SitePage("tour", "t", "A tour", "x (restart)")
    >>> 'href="tours/t.html"' in index_page([page], {page.path: 2048})
    True
    """

    def rows(kind: str) -> str:
        return "\n".join(
            f'<li><a href="{html.escape(p.path)}">{html.escape(p.title)}</a> '
            f'<span class="about">{html.escape(p.name)}: {html.escape(p.about)}, '
            f"{sizes.get(p.path, 0) / 1e6:.1f} MB</span></li>"
            for p in pages
            if p.kind == kind
        )

    return _INDEX.format(tours=rows("tour"), scenarios=rows("scenario"))


_INDEX = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>flinkstate: lessons</title>
<style>
body {{ font-family: system-ui, -apple-system, Segoe UI, Roboto, sans-serif; margin: 1.2em auto;
  max-width: 60em; padding: 0 1em; color: #111827; line-height: 1.5; }}
h1 {{ font-size: 1.5em; margin-bottom: .2em; }}
li {{ margin: .25em 0; }}
a {{ color: #1d4ed8; }}
.about {{ color: #6b7280; font-size: .9em; }}
</style></head>
<body>
<h1>How Flink recovers in-flight data: lessons</h1>
<p>A model of Apache Flink's network stack during recovery from unaligned checkpoints, drawn
step by step: every buffer, barrier and record in its place. These pages need no install and
no network: open them from disk or any static host. To change parameters and explore, use
the notebooks (<code>make lab</code>).</p>
<h2>Guided tours</h2>
<p>Each tour stops at the moments that matter; the text beside the canvas says what to look
at (marked with magenta corners). Back and next move between stops; the slider and play go
anywhere in the run.</p>
<ol class="tours">
{tours}
</ol>
<h2>Scenarios</h2>
<p>Every scenario of the catalogue: the job before its restart and the restart, opened on the
step it is about (a deadlock's waits-for cycle marked).</p>
<ul class="scenarios">
{scenarios}
</ul>
</body></html>
"""


def write_manifest(
    folder: Path, pages: Collection[SitePage], seconds: Mapping[str, float] | None = None
) -> None:
    """Name every file of the site in its manifest (the index and the pages), with the
    seconds each page took to make where given (what to make faster first).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_manifest(Path(folder), [SitePage("tour", "t", "A tour", "")])
    ...     print(json.loads((Path(folder) / MANIFEST).read_text())["files"])
    ['index.html', 'tours/t.html']
    """
    files = ["index.html", *(p.path for p in pages)]
    manifest = {"generator": GENERATOR, "files": files, "seconds": dict(seconds or {})}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


def is_site(folder: Path) -> bool:
    """Whether ``folder`` is a site this writer made and nothing else: its manifest names
    every file in it (a file someone added makes it a folder not to replace).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_manifest(Path(folder), [])
    ...     _ = (Path(folder) / "index.html").write_text("")
    ...     before = is_site(Path(folder))
    ...     _ = (Path(folder) / "notes.txt").write_text("mine")
    ...     print(before, is_site(Path(folder)))
    True False
    """
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    if not isinstance(manifest, dict) or manifest.get("generator") != GENERATOR:
        return False
    listed = {MANIFEST, *map(str, manifest.get("files", ()))}
    for root, _, files in os.walk(folder):
        for name in files:
            if Path(root, name).relative_to(folder).as_posix() not in listed:
                return False
    return True


def check_site_target(folder: Path) -> Path:
    """``folder`` if a site can be written there whole (new, empty, or a site to replace),
    else an :class:`~flinkstate.errors.InvalidParameterError` in one line.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = (Path(folder) / "notes.txt").write_text("mine")
    ...     try:
    ...         check_site_target(Path(folder))
    ...     except InvalidParameterError as error:
    ...         print(str(error).replace(folder, "DIR"))  # doctest: +NORMALIZE_WHITESPACE
    cannot write a lessons site to DIR: the folder holds other files (notes.txt), not a
    lessons site; name a new or empty folder, or a lessons site to replace
    """
    return check_directory_target(folder, is_site, WHAT)
