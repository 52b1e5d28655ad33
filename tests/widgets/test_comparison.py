"""Drive the comparison panel: the pre-filter deadlock before and after the fix."""

from __future__ import annotations

import html

import plotly.graph_objects as go
import pytest

from flinkstate.widgets.comparison import ComparisonPanel, configuration_labels, metrics_table


def _title(figure: go.FigureWidget) -> str:
    """A figure's title as one line (titles are wrapped to fit half the column)."""
    return str(figure.layout.title.text).replace("<br>", " ")


@pytest.mark.slow
def test_before_and_after_the_fix_side_by_side() -> None:
    panel = ComparisonPanel(
        "prefilter-deadlock",
        left={},
        right={"prefilter_source": "heap-segment"},
        labels=("network buffers", "heap segment"),
    )
    panel.compare_button.click()
    assert panel.message.value == ""
    left, right = panel.runs
    assert left.outcome.value == "deadlock"
    assert right.outcome.value == "recovered"
    # each side named by its own words and by what sets it apart from the other
    assert panel.labels == (
        "network buffers, prefilter_source=network",
        "heap segment, prefilter_source=heap-segment",
    )
    table = metrics_table(panel.runs, panel.labels)
    a, b = panel.labels
    assert table.loc["outcome"].tolist() == ["deadlock", "recovered"]
    assert table.loc["heap peak (bytes)", a] == 0
    assert table.loc["heap peak (bytes)", b] > 0
    assert table.loc["waits-for cycle", a] == "channel-state-reader counter[0] waits for itself"
    assert table.loc["waits-for cycle", b] == "-"
    assert ">deadlock</td>" in panel.metrics.value
    assert f">{a}</th>" in panel.metrics.value
    assert [box.layout.display for box in panel.deadlock_boxes] == ["", "none"]
    assert _title(panel.deadlocks[0]).startswith(f"{a}: stuck at step 252")
    assert _title(panel.timelines[1]).startswith(f"{b}: buffers per owner")
    assert panel.progress.value == ""
    for figure in (*panel.timelines, panel.deadlocks[0]):
        assert figure.layout.width is None  # half the column, whatever the column is


@pytest.mark.slow
def test_labels_and_titles_follow_the_parameters() -> None:
    panel = ComparisonPanel("prefilter-deadlock", right={"prefilter_source": "heap-segment"})
    assert [h.value for h in panel.headers] == [
        "<h4>prefilter_source=network</h4>",
        "<h4>prefilter_source=heap-segment</h4>",
    ]
    assert panel.compare()
    assert _title(panel.deadlocks[0]).startswith("prefilter_source=network: stuck")
    panel.sides[1].controls["prefilter_source"].value = "heap-fallback"
    assert panel.headers[1].value == "<h4>prefilter_source=heap-fallback</h4>"
    # the table still shows the runs it has, named by what they ran, and says they are old
    assert ">prefilter_source=heap-segment</th>" in panel.metrics.value
    assert "parameters changed since these runs" in panel.metrics.value
    assert panel.compare()
    assert panel.labels == ("prefilter_source=network", "prefilter_source=heap-fallback")
    assert ">prefilter_source=heap-fallback</th>" in panel.metrics.value
    assert "parameters changed" not in panel.metrics.value
    assert _title(panel.timelines[1]).startswith("prefilter_source=heap-fallback:")
    panel.sides[0].controls["record_size"].value = 36_000
    assert panel.headers[0].value == ("<h4>prefilter_source=network, record_size=36000</h4>")


def test_a_callers_name_is_dropped_once_its_side_changes() -> None:
    names = ("deadlocks", "recovers")
    same = [{"a": 1, "b": 2}, {"a": 1, "b": 3}]
    assert configuration_labels(same, names, same) == ("deadlocks, b=2", "recovers, b=3")
    changed = [{"a": 0, "b": 2}, {"a": 1, "b": 3}]
    assert configuration_labels(changed, names, same) == ("a=0, b=2", "recovers, a=1, b=3")
    assert configuration_labels([{"a": 1}, {"a": 1}]) == (
        "A (same parameters)",
        "B (same parameters)",
    )


def test_refused_value_runs_nothing_and_says_which() -> None:
    panel = ComparisonPanel("prefilter-deadlock")
    panel.sides[1].controls["buffers_per_channel"].value = 65
    assert not panel.compare()
    assert "buffers_per_channel = 65 is above its maximum 64" in panel.message.value
    assert panel.runs == []


def test_a_rejected_side_is_shown_as_such() -> None:
    panel = ComparisonPanel("small-page-size", right={"segment_size": 4096})
    assert panel.compare()
    assert [r.outcome.value for r in panel.runs] == ["rejected", "recovered"]
    assert "rejected, nothing ran" in _title(panel.timelines[0])


@pytest.mark.slow
def test_switching_scenario_rebuilds_both_sides_and_clears_the_old_runs() -> None:
    panel = ComparisonPanel("prefilter-deadlock")
    assert panel.compare()
    panel.scenario.value = "barrier-held-by-blocked-subpartition"
    for side in panel.sides:
        assert "blocked_priority" in side.controls
    assert panel.runs == []
    assert panel.metrics.value == ""
    for timeline in panel.timelines:  # no figure of the other scenario's runs stays up
        assert _title(timeline) == "press compare to run both sides"
    assert [box.layout.display for box in panel.deadlock_boxes] == ["none", "none"]
    assert panel.headers[1].value == "<h4>B (same parameters)</h4>"
    panel.sides[1].controls["blocked_priority"].value = "fixed"
    assert panel.headers[1].value == "<h4>blocked_priority=fixed</h4>"


def test_every_refused_side_says_why() -> None:
    panel = ComparisonPanel("small-page-size", right={"segment_size": 4096, "max_parallelism": 128})
    panel.sides[0].controls["segment_size"].value = 10**9
    panel.sides[1].controls["max_parallelism"].value = 2
    assert panel.compare()
    assert [r.outcome.value for r in panel.runs] == ["rejected", "rejected"]
    left, right = panel.labels
    shown = html.unescape(panel.message.value)
    assert (
        f"{left}: rejected: Invalid configuration value for taskmanager.memory.segment-size : "
        "1000000000 - Memory segment size must be a power of 2."
    ) in shown
    assert (
        f"{right}: rejected: parallelism 4 is above max parallelism 2: every subtask needs at "
        "least one key group"
    ) in shown
    panel.sides[1].controls["max_parallelism"].value = 128
    assert panel.compare()
    assert [r.outcome.value for r in panel.runs] == ["rejected", "recovered"]
    shown = html.unescape(panel.message.value)
    assert shown.count("rejected") == 1  # the side that ran says nothing
    assert "max parallelism" not in shown


def test_no_scenario_is_refused_in_words_and_the_sides_stay() -> None:
    """``scenario.value = None`` (code can set it; the page cannot) was a KeyError."""
    panel = ComparisonPanel("baseline-recovery", {"records": 20}, {"records": 30})
    panel.scenario.value = None
    assert "Not applied: scenario must be one of its choices, got None" in panel.message.value
    assert panel.scenario.value == "baseline-recovery"
    assert [side.values()["records"] for side in panel.sides] == [20, 30]
