"""What a run of ``flinkstate run`` shows besides its summary, for topologies and scenarios
alike: the buffers per owner kind, a task failure and its failover, the invariants' verdict,
the drawn page."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from flinkstate.cli.table import render_table
from flinkstate.runtime.checkpoint.happenings import ManualCheckpointNotTaken
from flinkstate.runtime.jobgraph import OperatorKind
from flinkstate.runtime.watermark.watermarks import watermark_text
from flinkstate.runtime.world.metrics import OWNER_KINDS, RECOVERY_KINDS, BufferCounts
from flinkstate.runtime.world.narration import sentence
from flinkstate.runtime.world.state import NetworkState
from flinkstate.sim.core import RunResult


def write_run_page(
    args: argparse.Namespace, overrides: Mapping[str, object], scenario: bool
) -> dict[str, Any]:
    """Draw every step of the run into ``args.html`` (a progress bar on stderr); where the
    page went and its size."""
    from tqdm.auto import tqdm

    from flinkstate.output import write_whole
    from flinkstate.views.page import scenario_page, topology_page

    bars: dict[str, Any] = {}

    def progress(phase: str, step: int, steps: int) -> None:
        bar = bars.get(phase)
        if bar is None:
            for done in bars.values():
                done.close()
            bar = bars[phase] = tqdm(
                total=steps, desc=f"drawing {phase}", unit="step", file=sys.stderr
            )
        bar.n = step
        if step == steps or step % 250 == 0:
            bar.refresh()

    build = scenario_page if scenario else topology_page
    steps = 2_000_000 if args.steps is None else args.steps
    try:
        page = build(
            args.name,
            seed=args.seed,
            overrides=overrides,
            scheduler=args.scheduler,
            max_steps=steps,
            progress=progress,
        )
    finally:
        for bar in bars.values():
            bar.close()
    written = write_whole(args.html, page)
    return {"page": str(written), "page_bytes": len(page.encode())}


def page_line(page: dict[str, Any]) -> str:
    return f"page written to {page['page']} ({page['page_bytes']:,} bytes)"


def buffer_table(counts: BufferCounts, *, only_used: bool = False) -> str:
    """Segments per owner kind at the end and at peak; recovery owners only when used."""
    return render_table(
        ["buffers held by", "at end", "at peak"],
        [
            [k, counts.current[k], counts.peak[k]]
            for k in OWNER_KINDS
            if counts.peak[k] or not (only_used or k in RECOVERY_KINDS)
        ],
    )


def event_time_line(world: NetworkState) -> str:
    """A job with watermarks: how many records keyed operators found late, and where each
    keyed subtask's watermark ended."""
    ends = ", ".join(
        f"{task.key} {watermark_text(world.event_time.watermark[task.name])}"
        for task in world.tasks.values()
        if task.kind is OperatorKind.KEYED and task.name in world.event_time.watermark
    )
    return f"event time: {len(world.event_time.late)} late record(s); watermarks: {ends or 'none'}"


def invariant_lines(result: RunResult) -> list[str]:
    """The invariant verdict, the first broken ones, and a deadlock report if any."""
    verdict = "all held" if not result.violations else f"{len(result.violations)} broken"
    lines = [f"invariants: {verdict}", *(f"  {v}" for v in result.violations[:10])]
    if result.deadlock is not None:
        lines += ["", result.deadlock.describe()]
    return lines


def failover_lines(world: NetworkState) -> list[str]:
    """A task failure (and the region's restart, if the run got there), every checkpoint
    failure of the run and a checkpoint asked for by hand that the model could not carry out,
    then a blank line; nothing for a run without a task failure."""
    failover = world.failover
    if failover is None:
        return []
    failures = [f"  {f.describe()}" for f in world.checkpoints.failures]
    not_taken = world.checkpoints.manual_not_taken
    return [
        f"task failure: {world.checkpoints.job_failed or failover.describe()}",
        *(["checkpoint failures:", *failures] if failures else []),
        *([sentence(ManualCheckpointNotTaken(not_taken)), MANUAL_BEYOND] if not_taken else []),
        "",
    ]


#: what a manual checkpoint the model did not take means for the run's outcome
MANUAL_BEYOND = (
    "  (Flink would carry this plan out; the model triggers sources only and aligns every "
    "channel, so this run goes on without the checkpoint Flink would take)"
)
