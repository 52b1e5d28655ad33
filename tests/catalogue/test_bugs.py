"""The bugs replayed: each with a pair of scenarios that exist and name it, the "before" ending
in what Flink's users saw, the "after" recovering or failing cleanly, in the order reported."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.bugs import BUGS, BugFamily, FlinkBug, bug
from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.scenarios import SCENARIOS
from flinkstate.errors import InvalidParameterError


@pytest.mark.parametrize("known", BUGS, ids=lambda b: b.issue)
def test_each_bug_has_a_pair_of_scenarios_that_name_it(known: FlinkBug) -> None:
    assert known.before
    assert known.after
    for name in (*known.before, *known.after):
        assert known.issue in SCENARIOS[name].bugs, name
    for name in known.before:
        assert SCENARIOS[name].expected is not Outcome.RECOVERED, name


def test_the_bugs_are_in_the_order_they_were_reported_each_once() -> None:
    reported = [(b.reported, b.issue) for b in BUGS]
    assert reported == sorted(reported)
    assert len({b.issue for b in BUGS}) == len(BUGS)
    assert all(2020 <= b.year <= 2026 for b in BUGS)


def test_every_family_has_a_bug() -> None:
    assert {b.family for b in BUGS} == set(BugFamily)


def test_an_unknown_bug_is_named_with_those_known() -> None:
    with pytest.raises(InvalidParameterError, match="FLINK-1 is not among the bugs replayed"):
        bug("FLINK-1")
