"""A V2 task's recovery checkpoint trigger, as the world held it after every step, and the
checkpoints that met it: PR #28554's draft (NO_OP when the drain ends) against master (NO_OP
once every channel has left recovery)."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import ScenarioRun, prepare_scenario, run_scenario
from flinkstate.runtime.options import CheckpointFailureReason, RecoveryCheckpointTrigger
from flinkstate.views.palette import ALERT
from flinkstate.views.recovery_trigger import (
    IN_RECOVERY_COLUMN,
    TRIGGER,
    WHAT,
    TriggerHistory,
    trigger_figure,
    trigger_history,
    trigger_table,
)

DRAFT, MASTER = "trigger-no-op-after-drain", "trigger-no-op-after-consumed"
NOT_READY = RecoveryCheckpointTrigger.NOT_READY
DRAINER = RecoveryCheckpointTrigger.DRAINER
NO_OP = RecoveryCheckpointTrigger.NO_OP


def _pair(seed: int) -> tuple[ScenarioRun, ScenarioRun, str]:
    """Both runs and the counter that declines the draft's checkpoint."""
    draft, master = run_scenario(DRAFT, seed=seed), run_scenario(MASTER, seed=seed)
    assert draft.world is not None
    (failure,) = draft.world.checkpoints.failures
    return draft, master, draft.world.task_named(failure.task).key


def _histories(seed: int) -> dict[str, TriggerHistory]:
    draft, master, task = _pair(seed)
    assert draft.simulation is not None
    assert master.simulation is not None
    return {
        "draft": trigger_history(draft.simulation, task),
        "master": trigger_history(master.simulation, task),
    }


def test_the_history_is_what_the_world_held_after_every_step() -> None:
    run = run_scenario(MASTER, seed=1)
    assert run.simulation is not None
    history = trigger_history(run.simulation, "counter[1]")
    replay = prepare_scenario(MASTER, seed=1)
    task = replay.world.tasks["counter[1]"]
    drainer = replay.world.drainers[task.name]
    steps = 0
    while True:
        seen = history.at(replay.world.step)
        assert seen.trigger is task.recovery_trigger
        assert seen.drain_finished == drainer.finished
        assert seen.in_recovery == sum(
            c.recoverable.in_recovery for g in task.gates for c in g.channels
        )
        if replay.simulation.step() is None:
            break
        steps += 1
    assert history.steps == steps == run.simulation.step_count
    assert history.channels == sum(len(g.channels) for g in task.gates)


@pytest.mark.parametrize("seed", range(3))
def test_the_draft_is_no_op_from_the_drains_end_and_master_once_no_channel_recovers(
    seed: int,
) -> None:
    histories = _histories(seed)
    for history in histories.values():
        assert history.points[0].step == 0
        assert history.points[0].trigger is NOT_READY
        drained = history.drain_finished_at
        assert drained is not None
        drainer = history.since(DRAINER)
        assert drainer is not None
        assert 0 < drainer < drained
        # channels are built in recovery before the drainer is installed
        assert history.at(drainer).in_recovery == history.channels
    draft, master = histories["draft"], histories["master"]
    assert draft.since(NO_OP) == draft.drain_finished_at
    assert draft.at(draft.drain_finished_at).in_recovery == draft.channels
    idle = master.since(NO_OP)
    assert idle is not None
    assert master.drain_finished_at is not None
    assert idle > master.drain_finished_at
    assert master.at(idle).in_recovery == 0
    assert master.at(idle - 1).in_recovery > 0
    # the window: drain over, channels in recovery, the drainer still the trigger
    window = [p for p in master.points if master.drain_finished_at <= p.step < idle]
    assert window
    assert {p.trigger for p in window} == {DRAINER}


@pytest.mark.parametrize("seed", range(3))
def test_a_checkpoint_in_the_window_is_declined_in_the_draft_and_cut_on_master(seed: int) -> None:
    histories = _histories(seed)
    draft, master = histories["draft"], histories["master"]
    (declined,) = draft.checkpoints
    assert declined.declined is not None
    assert declined.declined.reason is CheckpointFailureReason.CHECKPOINT_DECLINED
    assert declined.declined.detail.startswith(
        f"no RecoveryCheckpointBarrier of checkpoint {declined.checkpoint} in {draft.task}<"
    )
    assert declined.trigger is NO_OP
    assert declined.in_recovery > 0
    assert declined.completed_at is None
    assert draft.job_failed_at == declined.step == draft.steps
    assert draft.job_failed.startswith(declined.declined.describe())
    assert draft.tolerable_failed_checkpoints == 0
    # master: the same checkpoint reaches the task with the drainer as trigger, and completes
    same = next(c for c in master.checkpoints if c.checkpoint == declined.checkpoint)
    assert same.declined is None
    assert same.trigger is DRAINER
    assert same.in_recovery > 0
    assert same.completed_at is not None
    assert "a RecoveryCheckpointBarrier into each of its" in same.describe()
    assert draft.in_window() == (declined,)
    assert same in master.in_window()
    assert all(c.trigger is DRAINER for c in master.in_window())
    assert master.job_failed_at is None
    assert master.job_failed == ""
    assert all(c.declined is None and c.completed_at for c in master.checkpoints)


def test_the_table_puts_the_runs_side_by_side_step_by_step() -> None:
    histories = _histories(0)
    draft, master = histories["draft"], histories["master"]
    table = trigger_table(histories)
    assert table.index.name == "step"
    assert list(table.columns.get_level_values(0).unique()) == ["draft", "master"]
    assert set(table.columns.get_level_values(1)) == {TRIGGER, IN_RECOVERY_COLUMN, WHAT}
    for label, history in histories.items():
        for point in history.points:
            row = table.loc[point.step, label]
            assert row[TRIGGER] == point.trigger.name
            assert row[IN_RECOVERY_COLUMN] == f"{point.in_recovery} of {history.channels}"
            assert point.what in row[WHAT]
    (declined,) = draft.checkpoints
    assert declined.declined is not None
    said = table.loc[declined.step, ("draft", WHAT)]
    assert declined.declined.detail in said
    assert "the job fails over (0 failed checkpoint(s) tolerated)" in said
    # after the draft's end its columns are blank; master goes on to its NO_OP
    after = table.loc[table.index > draft.steps, "draft"]
    assert not after.empty
    assert (after == "").all().all()
    idle = master.since(NO_OP)
    assert table.loc[idle, ("master", TRIGGER)] == "NO_OP"
    assert table.loc[idle, ("master", IN_RECOVERY_COLUMN)] == f"0 of {master.channels}"
    for checkpoint in master.checkpoints:
        assert checkpoint.completed_at is not None
        said = table.loc[checkpoint.completed_at, ("master", WHAT)]
        assert f"checkpoint {checkpoint.checkpoint} completes" in said


def test_the_figure_draws_each_runs_trigger_and_marks_the_declined_checkpoint() -> None:
    histories = _histories(0)
    draft, master = histories["draft"], histories["master"]
    figure = trigger_figure(histories).to_plotly_json()
    layout = figure["layout"]
    assert list(layout["yaxis"]["ticktext"]) == [
        "draft: trigger",
        "draft: channels in recovery",
        "master: trigger",
        "master: channels in recovery",
    ]
    legend = {t["name"] for t in figure["data"] if t.get("showlegend")}
    assert {"trigger NOT_READY", "trigger DRAINER", "trigger NO_OP"} <= legend
    assert {"checkpoint declined", "checkpoint reaches the task", "drain finished"} <= legend
    crosses = [t for t in figure["data"] if t.get("name") == "checkpoint declined"]
    (cross,) = crosses
    assert list(cross["x"]) == [draft.checkpoints[0].step]
    assert cross["marker"]["color"] == ALERT
    notes = [a["text"] for a in layout["annotations"]]
    assert notes == [
        f"NO_OP from step {draft.since(NO_OP)}, with {draft.channels} of {draft.channels} "
        "channels in recovery",
        f"NO_OP from step {master.since(NO_OP)}, with 0 of {master.channels} channels in recovery",
    ]
    # the bars of a run cover its steps without a gap, trigger row and recovery row alike
    for row, history in enumerate([draft, draft, master, master]):
        bars = sorted(
            (t["base"][0], t["x"][0])
            for t in figure["data"]
            if t["type"] == "bar" and t["y"][0] == row
        )
        assert bars[0][0] == 0
        ends = [base + length for base, length in bars]
        assert [base for base, _ in bars[1:]] == ends[:-1]
        assert ends[-1] == history.steps


def test_a_task_without_a_drainer_or_unknown_is_refused_in_one_line() -> None:
    run = run_scenario(MASTER, seed=0)
    assert run.simulation is not None
    with pytest.raises(InvalidParameterError, match="no task 'counter\\[9\\]'; the tasks are"):
        trigger_history(run.simulation, "counter[9]")
    with pytest.raises(InvalidParameterError, match="source\\[0\\] has no drainer"):
        trigger_history(run.simulation, "source[0]")
