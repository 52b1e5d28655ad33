"""Drive the comparison panel: the pre-filter deadlock before and after the fix."""

from __future__ import annotations

from flinkstate.widgets.comparison import ComparisonPanel, metrics_table


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
    table = metrics_table(panel.runs, panel.labels)
    assert table.loc["outcome"].tolist() == ["deadlock", "recovered"]
    assert table.loc["heap peak (bytes)", "network buffers"] == 0
    assert table.loc["heap peak (bytes)", "heap segment"] > 0
    assert "->" in table.loc["waits-for cycle", "network buffers"]
    assert table.loc["waits-for cycle", "heap segment"] == "-"
    assert "<td>deadlock</td>" in panel.metrics.value
    assert [box.layout.display for box in panel.deadlock_boxes] == ["", "none"]
    title = panel.deadlocks[0].layout.title.text
    assert title.startswith("network buffers: stuck at step 252")
    assert "waits-for cycle: channel-state-reader counter[0] waits for itself" in title
    assert panel.timelines[1].layout.title.text.startswith("heap segment: buffers per owner")
    assert panel.progress.value == ""


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
    assert "rejected, nothing ran" in panel.timelines[0].layout.title.text


def test_switching_scenario_rebuilds_both_sides() -> None:
    panel = ComparisonPanel("prefilter-deadlock")
    panel.scenario.value = "barrier-held-by-blocked-subpartition"
    for side in panel.sides:
        assert "blocked_priority" in side.controls
