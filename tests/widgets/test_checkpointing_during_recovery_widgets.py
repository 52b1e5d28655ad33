"""Notebook 6's widgets driven as a user would: the stepper through V2's milestones, the
comparison of v1 and v2."""

from __future__ import annotations

import pytest

from flinkstate.runtime.options import RecoveryCheckpointTrigger
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.views.ownership import ownership_graph
from flinkstate.widgets.comparison import ComparisonPanel
from flinkstate.widgets.recovery_stepper import RecoveryStepper


@pytest.fixture(scope="module")
def stepper() -> RecoveryStepper:
    return RecoveryStepper("checkpoint-during-drain", seed=0)


def test_run_to_the_drainer_shows_it_installed_while_channels_recover(
    stepper: RecoveryStepper,
) -> None:
    stepper.goto(0)
    stepper.until.value = "drainer installed (v2)"
    stepper.next_button.click()
    world, simulation = stepper.world, stepper.simulation
    assert world is not None
    assert simulation is not None
    event = simulation.events[-1]
    assert event.action.kind == "install-drainer"
    task = world.task_named(event.action.actor)
    assert task.phase == TaskPhase.RUNNING
    assert task.recovery_trigger is RecoveryCheckpointTrigger.DRAINER
    drainer = world.drainers[task.name]
    assert stepper.layout is not None
    graph = ownership_graph(world, event, stepper.layout.ownership)
    hover = graph.nodes[drainer.name]["hover"]
    assert "recovery checkpoint trigger: drainer" in hover
    assert "spill files: 1" in hover
    assert any(data["kind"] == "drain" for _, _, data in graph.edges(data=True))
    scene = stepper.canvas.scene
    assert scene["step"] == stepper.current_step
    drainer_place = next(p for p in scene["places"] if p["id"] == drainer.name)
    assert drainer_place["installed"]
    assert drainer_place["spill_files"] == 1
    newest = stepper.canvas.captions[0][1]
    assert "installed its drainer as the recovery checkpoint trigger" in newest


def test_run_to_a_checkpoint_while_the_drain_goes_on(stepper: RecoveryStepper) -> None:
    stepper.goto(0)
    stepper.until.value = "checkpoint triggered or acknowledged"
    world = stepper.world
    assert world is not None
    while stepper.run_to_next():
        world = stepper.world
        assert world is not None
        if any(c.recoverable.in_recovery for c in world.channels.values()):
            break
    else:
        pytest.fail("no checkpoint met a channel in recovery")
    assert world.checkpoints.pending is not None
    stepper.until.value = "drain finished (v2)"
    assert stepper.run_to_next()
    world = stepper.world
    assert world is not None
    assert any(d.finished for d in world.drainers.values())


@pytest.mark.slow
def test_comparing_v1_and_v2_reports_spilled_bytes_and_heap() -> None:
    panel = ComparisonPanel(
        "checkpoint-during-drain", left={"generation": "v1"}, right={"generation": "v2"}
    )
    assert panel.compare()
    v1, v2 = panel.runs
    assert v1.summary()["spilled_bytes"] == 0
    assert v2.summary()["spilled_bytes"] > 0
    assert v1.summary()["heap_peak_bytes"] > v2.summary()["heap_peak_bytes"]
    assert "bytes spilled to disk" in panel.metrics.value
    assert "step first checkpoint completed" in panel.metrics.value


def test_a_classic_generation_with_the_option_on_is_shown_as_refused() -> None:
    panel = ComparisonPanel("checkpoint-during-drain", right={"generation": "classic"})
    assert panel.compare()
    assert [r.outcome.value for r in panel.runs] == ["recovered", "rejected"]
    assert "does not exist in the classic generation" in panel.runs[1].message
