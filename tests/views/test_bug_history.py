"""The history figure: a mark per bug in its family's row, coloured by what its "before" ended
in, hollow where a run did not end as expected, the years along the bottom."""

from __future__ import annotations

from flinkstate.catalogue.bugs import bug
from flinkstate.catalogue.scenario import Outcome
from flinkstate.lab.bug_history import BugReplay, ScenarioVerdict
from flinkstate.views.bug_history import ENDINGS, bug_history_figure


def _replay(issue: str, before: Outcome, *, caught: bool = True) -> BugReplay:
    known = bug(issue)
    expected = before if caught else Outcome.VIOLATION
    return BugReplay(
        known,
        0,
        (ScenarioVerdict(known.before[0], before, expected, ()),),
        (ScenarioVerdict(known.after[0], Outcome.RECOVERED, Outcome.RECOVERED, ()),),
    )


def test_each_mark_sits_in_its_familys_row_coloured_by_its_ending() -> None:
    figure = bug_history_figure(
        [_replay("FLINK-38930", Outcome.DEADLOCK), _replay("FLINK-17315", Outcome.VIOLATION)]
    )
    by_name = {trace.name: trace for trace in figure.data}
    hung = by_name[ENDINGS[Outcome.DEADLOCK][1]]
    assert list(hung.y) == ["Buffers during recovery"]
    assert list(hung.text) == ["38930"]
    assert list(hung.x) == [1]  # after 17315, reported earlier
    assert list(hung.marker.color) == [ENDINGS[Outcome.DEADLOCK][0]]
    assert "recovery hung" in hung.name
    assert figure.layout.xaxis.ticktext == ("2020", "2026")
    assert "2 of 2 caught" in figure.layout.title.text


def test_a_bug_whose_runs_ended_otherwise_is_drawn_hollow() -> None:
    figure = bug_history_figure([_replay("FLINK-17315", Outcome.RECOVERED, caught=False)])
    (trace,) = figure.data
    assert list(trace.marker.color) == ["white"]
    assert "0 of 1 caught" in figure.layout.title.text
    assert "before: local-channel-forgets-in-flight: recovered" in trace.hovertext[0]
