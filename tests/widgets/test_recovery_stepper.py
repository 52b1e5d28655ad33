"""Drive the recovery stepper as a user would: press buttons, move the slider, type bad values."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.recovery.scenarios import get_scenario
from flinkstate.views.ownership import ownership_graph, ownership_spec
from flinkstate.widgets.recovery_stepper import EVENTS_OF_INTEREST, RecoveryStepper


@pytest.fixture(scope="module")
def stepper() -> RecoveryStepper:
    return RecoveryStepper("baseline-recovery", overrides={"records": 40})


def _markers(stepper: RecoveryStepper) -> list[object]:
    return [list(t.marker.size or []) + list(t.hovertext or []) for t in stepper.ownership.data]


def test_opens_at_step_zero_with_the_whole_run_on_the_slider(stepper: RecoveryStepper) -> None:
    stepper.goto(0)
    assert stepper.current_step == 0
    assert stepper.slider.max == stepper.total > 0
    assert stepper.ownership.layout.title.text == "Buffer ownership at step 0"
    assert "this run: recovered" in stepper.badge.value
    assert "invariants hold" in stepper.badge.value
    assert "press step" in stepper.recent.value


def test_step_and_back_update_the_figures_in_place(stepper: RecoveryStepper) -> None:
    stepper.goto(0)
    figure = stepper.ownership
    before = _markers(stepper)
    stepper.step_button.click()
    assert stepper.current_step == stepper.slider.value == 1
    assert stepper.ownership is figure
    assert figure.layout.title.text == "Buffer ownership at step 1"
    assert _markers(stepper) != before
    simulation = stepper.simulation
    assert simulation is not None
    assert (
        simulation.events[0].describe()[:40].replace("<", "&lt;").replace(">", "&gt;")
        in stepper.recent.value
    )
    stepper.back_button.click()
    assert stepper.current_step == 0
    assert _markers(stepper) == before


def test_widget_shows_exactly_the_view_of_the_current_step(stepper: RecoveryStepper) -> None:
    stepper.slider.value = 321
    simulation, world, layout = stepper.simulation, stepper.world, stepper.layout
    assert simulation is not None
    assert world is not None
    assert layout is not None
    assert world.step == 321
    spec = ownership_spec(ownership_graph(world, simulation.events[-1], layout), layout)
    live = stepper.ownership.to_plotly_json()
    for shown, expected in zip(live["data"], spec["data"], strict=True):
        assert list(shown["x"]) == list(expected["x"])
        assert list(shown.get("hovertext", [])) == list(expected.get("hovertext", []))
    assert len(live["layout"]["annotations"]) == len(spec["layout"]["annotations"])
    assert stepper.timelines_figure.layout.title.text == "Over the steps, up to step 321"


def test_going_back_and_forth_reproduces_the_run(stepper: RecoveryStepper) -> None:
    stepper.goto(600)
    simulation = stepper.simulation
    assert simulation is not None
    first = [e.action for e in simulation.events]
    stepper.goto(100)
    stepper.goto(600)
    assert [e.action for e in simulation.events] == first


@pytest.fixture(scope="module")
def v2_stepper() -> RecoveryStepper:
    return RecoveryStepper(
        "baseline-recovery",
        overrides={
            "records": 40,
            "recover_output_on_downstream": True,
            "checkpointing_during_recovery": True,
            "generation": "v2",
        },
    )


@pytest.mark.parametrize("label", [k for k, kinds in EVENTS_OF_INTEREST.items() if kinds])
def test_run_to_next_stops_at_the_chosen_event(request: pytest.FixtureRequest, label: str) -> None:
    """V2's milestones in a V2 run, the others in the classic one."""
    stepper: RecoveryStepper = request.getfixturevalue(
        "v2_stepper" if "(v2)" in label else "stepper"
    )
    stepper.goto(0)
    stepper.until.value = label
    assert stepper.run_to_next()
    simulation = stepper.simulation
    assert simulation is not None
    assert simulation.events[-1].action.kind in EVENTS_OF_INTEREST[label]
    assert stepper.slider.value == stepper.current_step
    assert stepper.message.value == ""


def test_run_to_end_and_nothing_further(stepper: RecoveryStepper) -> None:
    stepper.goto(0)
    stepper.until.value = "end of run (deadlock or finish)"
    stepper.next_button.click()
    assert stepper.current_step == stepper.total
    stepper.until.value = "gate conversion"
    assert not stepper.run_to_next()
    assert "No gate conversion after this step" in stepper.message.value


def test_play_moves_the_slider_and_the_run(stepper: RecoveryStepper) -> None:
    stepper.goto(0)
    stepper.speed.value = 25
    assert stepper.play.step == 25
    stepper.play.value = 50  # what the play widget's timer does, tick by tick
    assert stepper.slider.value == 50
    assert stepper.current_step == 50


def test_out_of_range_values_are_refused_in_the_widget(stepper: RecoveryStepper) -> None:
    stepper.goto(10)
    total = stepper.total
    stepper.goto_box.value = total + 5
    stepper.goto_button.click()
    assert f"step {total + 5} is outside this run (0 to {total})" in stepper.message.value
    assert stepper.current_step == 10
    stepper.goto_box.value = -1
    stepper.goto_button.click()
    assert "step -1 is outside this run" in stepper.message.value
    records = stepper.parameters.controls["records"]
    records.value = -5
    assert "Not applied: records = -5 is below its minimum 0" in stepper.message.value
    assert stepper.total == total  # the run on display is kept
    assert stepper.current_step == 10
    records.value = 40
    stepper.seed.value = -3
    assert "seed must be between 0 and" in stepper.message.value
    stepper.seed.value = 0
    assert stepper.message.value == ""


def test_choosing_a_scenario_rebuilds_its_parameters_and_shows_a_deadlock() -> None:
    stepper = RecoveryStepper("baseline-recovery", overrides={"records": 20})
    stepper.scenario.value = "prefilter-deadlock"
    names = list(stepper.parameters.controls)
    assert names == list(get_scenario("prefilter-deadlock").matters)
    assert "this run: deadlock" in stepper.badge.value
    assert stepper.deadlock_box.layout.display == "none"
    stepper.goto(stepper.total)
    assert stepper.deadlock_box.layout.display == ""
    assert "waits-for cycle" in stepper.deadlock.layout.title.text
    assert "stuck here" in stepper.badge.value
    stepper.parameters.controls["prefilter_source"].value = "heap-segment"
    assert "this run: recovered" in stepper.badge.value
    assert stepper.deadlock_box.layout.display == "none"


def test_a_configuration_flink_refuses_is_explained_not_run() -> None:
    stepper = RecoveryStepper("small-page-size")
    assert stepper.simulation is None
    assert "Minimum memory segment size is 4096" in stepper.message.value
    assert "this run: rejected" in stepper.badge.value
    stepper.step_button.click()
    assert "Nothing to step" in stepper.message.value


def test_the_job_before_the_restart_can_be_stepped_through_its_checkpoint() -> None:
    stepper = RecoveryStepper("baseline-recovery", phase="job", overrides={"records": 20})
    assert "this run: finished" in stepper.badge.value
    stepper.until.value = "checkpoint triggered or acknowledged"
    assert stepper.run_to_next()
    simulation = stepper.simulation
    assert simulation is not None
    assert simulation.events[-1].action.kind == "trigger"


def test_bad_arguments_name_the_problem() -> None:
    with pytest.raises(InvalidParameterError, match="unknown scenario"):
        RecoveryStepper("no-such-scenario")
    with pytest.raises(InvalidParameterError, match="phase must be one of restart, job"):
        RecoveryStepper(phase="sideways")
    with pytest.raises(InvalidParameterError, match="has no parameter colour; it has"):
        RecoveryStepper(overrides={"colour": 3})


def test_overriding_a_parameter_that_does_not_matter_adds_its_control() -> None:
    stepper = RecoveryStepper("baseline-recovery", overrides={"records": 40, "parallelism": 2})
    assert list(stepper.parameters.controls)[-1] == "parallelism"
    world = stepper.world
    assert world is not None
    assert sum(1 for t in world.tasks.values() if t.operator == "counter") == 2
