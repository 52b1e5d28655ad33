"""Chromium through Playwright for the end-to-end tests, and a loud notice when they cannot run.

Playwright cannot download its own browser on a closed network, so the tests use the system's
Chromium. Without one they skip, unless FLINKSTATE_REQUIRE_BROWSER=1 (as in CI), where a
browser test that did not run must fail the build instead of passing silently.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

ROOT = Path(__file__).parents[2]
DEFAULT_CHROMIUM = Path("/usr/bin/chromium")
#: Without the background-networking switches Chromium keeps dialling Google services, and
#: on a closed network the refused connections swamp it.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: starts every skip reason of a browser test that could not run; the summary looks for it
NOT_RUN = "BROWSER TEST DID NOT RUN"
HOW_TO_ENABLE = (
    "install Chromium (apt-get install chromium chromium-driver) or point FLINKSTATE_CHROMIUM "
    "at a Chromium binary"
)


def browser_required() -> bool:
    return os.environ.get("FLINKSTATE_REQUIRE_BROWSER", "") == "1"


def cannot_run(why: str) -> NoReturn:
    """Skip the browser test, or fail it when the run promised a browser."""
    if browser_required():
        pytest.fail(f"FLINKSTATE_REQUIRE_BROWSER=1 but {why}; {HOW_TO_ENABLE}", pytrace=False)
    pytest.skip(
        f"{NOT_RUN}: {why}; to run it, {HOW_TO_ENABLE} "
        "(FLINKSTATE_REQUIRE_BROWSER=1 makes this skip a failure)"
    )


def find_chromium() -> Path | None:
    """FLINKSTATE_CHROMIUM if set (even when it is wrong: an override must not fall back)."""
    override = os.environ.get("FLINKSTATE_CHROMIUM")
    candidate = Path(override) if override else DEFAULT_CHROMIUM
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    wanted = os.environ.get("FLINKSTATE_CHROMIUM") or str(DEFAULT_CHROMIUM)
    chromium = find_chromium()
    if chromium is None:
        cannot_run(f"no Chromium executable at {wanted}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        cannot_run(f"the playwright package is missing ({error}; pip install -e '.[dev]')")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> Path:
    """Screenshots and logs to keep: $FLINKSTATE_ARTIFACTS, else build/test-artifacts.

    One folder per test, emptied first, so nothing in it is left from an earlier run.
    """
    base = Path(os.environ.get("FLINKSTATE_ARTIFACTS") or ROOT / "build" / "test-artifacts")
    directory = base / re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name).strip("_")
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    return directory


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """A banner nobody can miss: a skipped browser test leaves the widgets untested."""
    reasons = sorted(
        {
            reason
            for report in terminalreporter.stats.get("skipped", [])
            if NOT_RUN in (reason := _skip_reason(report))
        }
    )
    if not reasons:
        return
    terminalreporter.write_sep(
        "!", f"{NOT_RUN}: the notebooks were not tested in a browser", red=True, bold=True
    )
    for reason in reasons:
        terminalreporter.write_line(reason, yellow=True, bold=True)
    terminalreporter.write_sep("!", NOT_RUN, red=True, bold=True)
