"""The stepper's badge and status lines: where the run on display is, how it ends against what
its scenario expects, its figures to the end, and the trace it follows; HTML made from a run's
summary, so a forecast's run reads like a scenario's.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flinkstate.catalogue.scenario import Outcome, expectation
from flinkstate.lab.forecast import Forecast
from flinkstate.runtime.options import Fault
from flinkstate.runtime.world.world import NetworkWorld

#: the badge's colours: as expected, broken, neither
OK = "#2ca02c"
BAD = "#d62728"
WARN = "#ff7f0e"


def forecast_summary(forecast: Forecast) -> dict[str, Any]:
    """A forecast's figures under the names the badge reads a scenario run's by (a forecast
    hopes to recover: that is what it is held to)."""
    figures = forecast.summary()
    return {
        "outcome": forecast.outcome,
        "expected": Outcome.RECOVERED.value,
        "as_expected": forecast.outcome == Outcome.RECOVERED.value,
        "deadlock": figures["deadlock"],
        "recovered_bytes": figures["recovered_bytes"],
        "filtered_records": sum(s.filtered_records for s in forecast.subtasks),
        "resumed_step": figures["running_step"],
        "effective_generation": figures["effective_generation"],
        **figures["memory"],
    }


def faults_text(faults: frozenset[Fault]) -> str:
    return ("fault " if len(faults) == 1 else "faults ") + ", ".join(sorted(faults))


def trace_html(path: Path | None, faults: frozenset[Fault]) -> str:
    """What the run on display follows when it is a loaded trace's: its file, and the faults
    (bugs put back on purpose) it was written with."""
    if path is None:
        return ""
    faults_note = (
        f", with the {html.escape(faults_text(faults))} put back on purpose" if faults else ""
    )
    return (
        "<div class='flinkstate-trace-note' style='color:#1e40af;margin-top:2px'>"
        f"following the trace <code>{html.escape(path.name)}</code>{faults_note}: back and "
        "step replay its recorded actions; changing a setting leaves it</div>"
    )


def shorten(text: str, limit: int = 220) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def badge_html(
    summary: Mapping[str, Any],
    world: NetworkWorld | None,
    step: int,
    total: int,
    phase: str,
    *,
    previewing: bool = False,
) -> str:
    """Where the run on display is and how it ends (``previewing``: its end is not known yet,
    ``total`` is the steps previewed so far)."""
    outcome = summary.get("outcome", "")
    expected = summary.get("expected", "")
    colour = OK if outcome in (Outcome.RECOVERED, Outcome.FINISHED) else BAD
    if outcome in (Outcome.CHECKPOINT_EXPIRED, Outcome.STOPPED):
        colour = WARN
    if previewing:
        ending = (
            "<span style='background:#6b7280;color:white;padding:2px 6px;border-radius:3px'>"
            "this run: previewing its end</span> (its outcome and figures follow)"
        )
    elif phase == "job":
        # the scenario's expectation is about the restart; the job before it is its setting
        ending = (
            f"<span style='background:{colour};color:white;padding:2px 6px;border-radius:3px'>"
            f"the job before its restart: {html.escape(str(outcome))}</span> its first "
            "checkpoint is what the restart starts from (the scenario expects the restart to "
            f"end: {html.escape(str(expected))})"
        )
    else:
        missed = not summary.get("as_expected")
        expected_text = html.escape(
            expectation(
                str(expected), other_values=missed and bool(summary.get("differs_from_scenario"))
            ),
            quote=False,
        )
        ending = (
            f"<span style='background:{colour};color:white;padding:2px 6px;border-radius:3px'>"
            f"this run: {html.escape(str(outcome))}</span> ({expected_text}"
            + (", <b>not as expected</b>" if missed else "")
            + ")"
        )
    if world is None:
        return f"<div>{ending}</div>"
    if world.violations:
        first = world.violations[0]
        state = (
            f"<span style='color:{BAD}'><b>invariant broken</b> {html.escape(str(first))}</span>"
        )
    else:
        state = (
            f"<span style='color:{OK}'>&#10003; invariants hold</span> (no buffer leaked "
            "or owned twice, no record lost or duplicated, order kept per channel)"
        )
    where = (
        f"step <b>{step}</b> (the run's end is being previewed: {total:,} steps so far)"
        if previewing
        else f"step <b>{step}</b> of {total}"
    )
    if total and step == total and summary.get("deadlock"):
        where += " &mdash; <b>stuck here</b>: see the waits-for graph below"
    figures = run_figures(summary, phase)
    return f"<div>{where} &middot; {state}<br>{ending}{figures}</div>"


def run_figures(summary: Mapping[str, Any], phase: str) -> str:
    """The run's figures to the end (the numbers exercises ask for), as one line."""
    parts = []

    def add(key: str, text: str) -> None:
        value = summary.get(key)
        if value:
            grouped = isinstance(value, int) and not key.endswith("_step")
            parts.append(text.format(f"{value:,}" if grouped else value))

    if phase == "job":
        add("checkpoint_bytes", "its first checkpoint persists <b>{}</b> bytes in flight")
    else:
        add("checkpoint_bytes", "restored from a checkpoint of <b>{}</b> bytes in flight")
        add("recovered_bytes", "<b>{}</b> bytes recovered")
        add("filtered_records", "<b>{}</b> records filtered out")
        add("resumed_step", "every task running from step <b>{}</b>")
        add("first_checkpoint_step", "first checkpoint completed at step <b>{}</b>")
        add("failed_checkpoints", "<b>{}</b> failed checkpoint(s)")
        add("heap_peak_bytes", "heap peak <b>{}</b> bytes")
        add("spilled_bytes", "<b>{}</b> bytes spilled")
        add("spill_files", "<b>{}</b> spill file(s)")
        add("spill_segments", "<b>{}</b> spill segment(s)")
    note = summary.get("recovery_note") if phase != "job" else ""
    why = (
        f"<div class='flinkstate-recovery-note' style='color:#92400e;margin-top:2px'>"
        f"recovery code <b>{html.escape(str(summary.get('effective_generation')))}</b>: "
        f"{html.escape(str(note))}</div>"
        if note
        else ""
    )
    if not parts:
        return why
    return (
        "<div class='flinkstate-run-figures' style='color:#374151;margin-top:2px'>"
        f"to its end: {' &middot; '.join(parts)}</div>" + why
    )
