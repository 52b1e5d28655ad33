"""Every bug replayed from runs: the "before" ends in what Flink's users saw and the "after"
recovers or fails cleanly, read from the runs themselves."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.bugs import BUGS, bug
from flinkstate.catalogue.scenario import Outcome
from flinkstate.lab.bug_history import ScenarioVerdict, replay, replay_all, verdict


def test_a_replay_reads_the_outcome_and_the_invariants_from_the_runs() -> None:
    found = replay(bug("FLINK-40345"))
    assert [v.describe() for v in found.before] == ["violation of double-recycle"]
    assert [v.outcome for v in found.after] == [Outcome.JOB_FAILED]
    assert found.caught


def test_a_run_that_ends_otherwise_than_expected_is_not_caught() -> None:
    recovered = ScenarioVerdict("x", Outcome.RECOVERED, Outcome.VIOLATION, ())
    assert not recovered.as_expected
    assert verdict("local-channel-persists-in-flight").as_expected


@pytest.mark.slow
def test_every_bug_replayed_is_caught_with_seed_zero() -> None:
    """Measured: 20 bugs, 42 runs, 13 s."""
    replays = replay_all()
    assert len(replays) == len(BUGS)
    assert [r.bug.issue for r in replays if not r.caught] == []
    for found in replays:  # the fix changes what the run ends in
        befores = {(v.outcome, v.invariants) for v in found.before}
        assert befores.isdisjoint((v.outcome, v.invariants) for v in found.after), found.bug
