"""Every link into the repository's docs resolves: from the notebooks' markdown (opened in
JupyterLab, which serves the repository root), from the docs themselves, and from the code's
citations of ``docs/...md#section``. A section is an explicit ``<a id="...">`` anchor, the one
kind both JupyterLab's markdown viewer and GitHub can scroll to."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
CITATION = re.compile(r"\bdocs/[\w./-]+\.md(?:#[\w-]+)?")


def _markdown_of_notebook(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def _sources() -> list[tuple[Path, str]]:
    """(the file a link is relative to, its markdown)."""
    found = [(p, _markdown_of_notebook(p)) for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    pages = [ROOT / "README.md", ROOT / "data" / "README.md"]
    pages += sorted((ROOT / "docs").rglob("*.md"))
    found += [(p, p.read_text(encoding="utf-8")) for p in pages]
    return found


def _problem(target: Path, fragment: str) -> str | None:
    if not target.exists():
        return f"no file {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}"
    if fragment and fragment not in ANCHOR.findall(target.read_text(encoding="utf-8")):
        return f"no anchor #{fragment} in {target.relative_to(ROOT)}"
    return None


@pytest.mark.parametrize(("path", "text"), _sources(), ids=lambda v: getattr(v, "name", ""))
def test_relative_links_resolve(path: Path, text: str) -> None:
    problems = []
    for link in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", link):  # http:, mailto: ...
            continue
        file, _, fragment = link.partition("#")
        target = (path.parent / file).resolve() if file else path
        problem = _problem(target, fragment)
        if problem:
            problems.append(f"{link}: {problem}")
    assert problems == []


def test_code_cites_existing_doc_sections() -> None:
    problems = []
    for source in sorted((ROOT / "flinkstate").rglob("*.py")):
        for citation in CITATION.findall(source.read_text(encoding="utf-8")):
            file, _, fragment = citation.partition("#")
            problem = _problem(ROOT / file, fragment)
            if problem:
                problems.append(f"{source.relative_to(ROOT)}: {citation}: {problem}")
    assert problems == []


def test_notebooks_cite_no_document_outside_the_repository() -> None:
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert "primer" not in _markdown_of_notebook(path).lower(), path.name
