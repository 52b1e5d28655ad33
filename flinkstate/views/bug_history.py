"""Flink's bugs as a history a learner can walk: one row per family of invariants that catches
them, the bugs in the order they were reported, each marked by what its "before" ended in.

The figure is drawn from replays (``lab.bug_history.replay``): every mark's colour and every
word of its hover text comes from the runs, and a bug whose runs did not end as its scenarios
expect is drawn hollow, so a reader sees at once where the model would not have caught it.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from flinkstate.catalogue import BugFamily, Outcome
from flinkstate.lab import BugReplay
from flinkstate.views.palette import ALERT, CATEGORY_COLOURS, LEGEND_BELOW, figure_layout, wrap

#: what a "before" ended in, by colour: the kinds of failure Flink's users saw
ENDINGS: dict[Outcome, tuple[str, str]] = {
    Outcome.VIOLATION: (ALERT, "data lost, duplicated or out of order (an invariant broke)"),
    Outcome.DEADLOCK: (CATEGORY_COLOURS[7], "recovery hung (a deadlock)"),
    Outcome.JOB_FAILED: (CATEGORY_COLOURS[1], "checkpoints failed until the job failed"),
    Outcome.REJECTED: (CATEGORY_COLOURS[0], "the restore was refused"),
}
#: the families from top to bottom
FAMILIES = tuple(BugFamily)
#: a row's height in pixels
ROW = 70


def bug_history_figure(replays: Sequence[BugReplay], *, title: str | None = None) -> go.Figure:
    """The replayed bugs on a timeline (in the order they were reported, a year's first bug
    labelled with the year), one row per family; a hollow mark for a bug whose runs did not all
    end as expected.

    Examples
    --------
    >>> from flinkstate.catalogue.bugs import bug
    >>> from flinkstate.lab.bug_history import replay
    >>> figure = bug_history_figure([replay(bug("FLINK-17315")), replay(bug("FLINK-38930"))])
    >>> [trace.name for trace in figure.data]
    ['data lost, duplicated or out of order (an invariant broke)', 'recovery hung (a deadlock)']
    >>> figure.layout.xaxis.ticktext
    ('2020', '2026')
    """
    ordered = sorted(replays, key=lambda r: (r.bug.reported, r.bug.issue))
    traces = []
    for outcome, (colour, words) in ENDINGS.items():
        shown = [(x, r) for x, r in enumerate(ordered) if _ending(r) is outcome]
        if not shown:
            continue
        traces.append(
            go.Scatter(
                x=[x for x, _ in shown],
                y=[r.bug.family.heading for _, r in shown],
                mode="markers+text",
                name=words,
                text=[r.bug.issue.removeprefix("FLINK-") for _, r in shown],
                textposition=["top center" if x % 2 else "bottom center" for x, _ in shown],
                textfont={"size": 11},
                marker={
                    "size": 14,
                    "color": [colour if r.caught else "white" for _, r in shown],
                    "line": {"color": colour, "width": 2},
                },
                hovertext=[_hover(r) for _, r in shown],
                hoverinfo="text",
            )
        )
    years: dict[int, int] = {}
    for x, r in enumerate(ordered):
        years.setdefault(r.bug.year, x)
    caught = sum(r.caught for r in ordered)
    heading = title or (
        f"Flink's unaligned-checkpoint bugs replayed: {caught} of {len(ordered)} caught "
        f"(seed {ordered[0].seed if ordered else 0})"
    )
    layout = figure_layout(
        heading,
        height=ROW * len(FAMILIES) + 60,
        subtitle="each mark a bug, by what its code as it was ended in; hollow: a run did not "
        "end as its scenario expects",
        left=230,
        bottom=70,
        xaxis={
            "tickvals": list(years.values()),
            "ticktext": [str(year) for year in years],
            "range": [-0.8, max(len(ordered) - 0.2, 0.2)],
            "showgrid": True,
            "zeroline": False,
        },
        yaxis={
            "categoryorder": "array",
            "categoryarray": [f.heading for f in reversed(FAMILIES)],
            "range": [-0.6, len(FAMILIES) - 0.4],
        },
        legend=LEGEND_BELOW,
    )
    return go.Figure(data=traces, layout=layout)


def _ending(replay: BugReplay) -> Outcome:
    """What the bug's first "before" ended in (a violation where it is none of the endings)."""
    outcome = replay.before[0].outcome if replay.before else Outcome.VIOLATION
    return outcome if outcome in ENDINGS else Outcome.VIOLATION


def _hover(replay: BugReplay) -> str:
    bug = replay.bug
    before = "; ".join(f"{v.scenario}: {v.describe()}" for v in replay.before)
    after = "; ".join(f"{v.scenario}: {v.describe()}" for v in replay.after)
    return "<br>".join(
        [
            f"<b>{bug.issue}</b> ({bug.reported}, fixed in {bug.fixed_in})",
            wrap(bug.saw),
            wrap(f"before: {before}"),
            wrap(f"after: {after}"),
        ]
    )
