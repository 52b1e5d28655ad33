"""Pictures of a recovery."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import run_scenario
from flinkstate.lab.whatif import what_if
from flinkstate.runtime.world.metrics import BufferCounts
from flinkstate.views.palette import GROUP_COLOURS, OWNER_GROUPS
from flinkstate.views.recovery import owner_counts, owner_timeline_figure, whatif_figure


def test_owner_counts_replay_the_moves_and_end_where_the_run_ends() -> None:
    run = run_scenario("keyed-upscale", seed=1)
    assert run.simulation is not None
    assert run.buffers is not None
    owners = run.initial_owners
    counts = owner_counts(run.simulation.events, owners, every=50)
    assert counts.iloc[0]["step"] == 0
    assert counts.iloc[-1]["step"] == len(run.simulation.events)
    last = counts.iloc[-1]
    expected = BufferCounts.start(owners).apply_all(run.simulation.events)
    for kind, value in expected.current.items():
        assert last[kind] == value
    total = counts.drop(columns="step").sum(axis=1)
    assert (total == len(owners)).all()  # a segment is always somewhere, exactly once
    every_step = owner_counts(run.simulation.events, owners)
    for kind in ("recovered", "recovered-exclusive", "deserializer"):
        assert every_step[kind].max() == expected.peak[kind]


def test_timeline_shows_recovery_owners_and_hides_idle_pools() -> None:
    run = run_scenario("baseline-recovery", seed=0)
    assert run.simulation is not None
    owners = run.initial_owners
    figure = owner_timeline_figure(run.simulation.events, owners)
    traces = {trace.name: trace for trace in figure.data}
    assert set(traces) <= set(OWNER_GROUPS)  # a line per group, not per owner kind
    recovery = traces["in recovery"]
    assert "recovered" in recovery.hovertemplate  # the kinds on hover
    assert recovery.line.color == GROUP_COLOURS["in recovery"]
    assert traces["in pools"].visible == "legendonly"
    assert max(recovery.y) == max(
        owner_counts(run.simulation.events, owners)[list(OWNER_GROUPS["in recovery"])].sum(axis=1)
    )
    with pytest.raises(InvalidParameterError, match="every must be at least 1"):
        owner_counts(run.simulation.events, owners, every=0)


@pytest.mark.slow
def test_whatif_figure_colours_by_outcome() -> None:
    table = what_if(
        "prefilter-deadlock",
        {"record_size": [36_000, 37_000]},
        progress=False,
    )
    figure = whatif_figure(table, "record_size", "steps")
    assert {trace.name for trace in figure.data} == {"recovered", "deadlock"}
    with pytest.raises(InvalidParameterError, match="no column 'nope'"):
        whatif_figure(table, "nope", "steps")
