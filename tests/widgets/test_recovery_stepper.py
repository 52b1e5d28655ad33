"""Drive the recovery stepper as a user would: press buttons, move the slider, type bad values."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from flinkstate.catalogue.presets import scenario_preset
from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.forecast import Forecast
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.views.ownership import ownership_graph, ownership_spec
from flinkstate.views.scene import build_scene
from flinkstate.views.scene_layout import SceneLayout
from flinkstate.widgets.recovery_stepper import RecoveryStepper
from flinkstate.widgets.stepper_controls import EVENTS_OF_INTEREST


@pytest.fixture(scope="module")
def stepper() -> RecoveryStepper:
    stepper = RecoveryStepper("baseline-recovery", overrides={"records": 40})
    stepper.ownership_box.selected_index = 0  # the graph is drawn while it is open
    stepper.timelines_box.selected_index = 0  # and so are the timelines
    return stepper


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
    assert stepper.canvas.scene["step"] == 0
    assert stepper.canvas.captions == []


def test_the_canvas_shows_the_step_on_display_with_its_captions(stepper: RecoveryStepper) -> None:
    """One numbering everywhere: the slider's step, the scene's step, the newest caption."""
    stepper.goto(0)
    for _ in range(6):
        stepper.step_button.click()
    assert stepper.canvas.scene["step"] == stepper.slider.value == 6
    steps = [n for n, _ in stepper.canvas.captions]
    assert steps == [6, 5, 4, 3]
    simulation = stepper.simulation
    assert simulation is not None
    assert simulation.events[-1].step + 1 == 6  # the sixth action made step 6
    assert "<code>6</code>" in stepper.recent.value
    captions_at_6 = list(stepper.canvas.captions)
    stepper.goto(200)
    stepper.goto(6)  # the same step again: the same captions, the same scene
    assert stepper.canvas.captions == captions_at_6
    assert stepper.canvas.scene["step"] == 6
    assert stepper.canvas.animate  # a jump travels too (items keep their ids)
    stepper.step_button.click()
    assert stepper.canvas.animate


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
    assert stepper.canvas.scene == build_scene(world, simulation.events[-1], layout)
    spec = ownership_spec(
        ownership_graph(world, simulation.events[-1], layout.ownership), layout.ownership
    )
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
    stepper.speed.value = "250 steps/s"
    assert (stepper.play.step, stepper.play.interval) == (25, 100)
    stepper.speed.value = "2 steps/s"
    assert (stepper.play.step, stepper.play.interval) == (1, 500)
    stepper.speed.value = "250 steps/s"
    stepper.play.value = 50  # what the play widget's timer does, tick by tick
    assert stepper.slider.value == 50
    assert stepper.current_step == 50


@pytest.mark.parametrize("control", ["slider", "play", "goto_box"])
@pytest.mark.parametrize("target", [10**9, -5])
def test_every_way_to_a_step_refuses_one_outside_the_run_in_words(
    stepper: RecoveryStepper, control: str, target: int
) -> None:
    """The slider and play refuse what the go-to box refuses, in its words: none of them
    clamps a step outside the run to its first or last step without a word."""
    stepper.goto(10)
    total = stepper.total
    getattr(stepper, control).value = target
    assert stepper.message.value == (
        "<span style='color:#d62728'>Not applied: step "
        f"{target} is outside this run (0 to {total})</span>"
    )
    assert stepper.current_step == 10
    if control != "goto_box":  # the box keeps what was typed, to be corrected
        assert stepper.slider.value == stepper.play.value == 10
    stepper.goto(total)  # after a refusal, every control still moves the run
    stepper.slider.value = 3
    assert stepper.current_step == stepper.play.value == 3
    assert stepper.message.value == ""


def test_no_scenario_is_refused_in_words_and_the_run_stays(stepper: RecoveryStepper) -> None:
    """``scenario.value = None`` (code can set it; the page cannot) was a KeyError."""
    stepper.goto(3)
    run = stepper.run
    stepper.scenario.value = None
    assert stepper.message.value == (
        "<span style='color:#d62728'>Not applied: scenario must be one of its choices, got "
        "None</span>"
    )
    assert stepper.scenario.value == "baseline-recovery"
    assert stepper.run is run  # not reloaded: the parameters set stay
    assert stepper.current_step == 3
    assert stepper.parameters.values()["records"] == 40


def test_no_event_to_run_to_is_refused_in_words(stepper: RecoveryStepper) -> None:
    """``until.value = None`` was kept without a word, and run to next raised KeyError."""
    stepper.until.value = "barrier"
    stepper.until.value = None
    assert "Not applied: next must be one of its choices, got None" in stepper.message.value
    assert stepper.until.value == "barrier"


def test_a_speed_that_is_no_speed_is_refused_in_words(stepper: RecoveryStepper) -> None:
    stepper.speed.value = "250 steps/s"
    stepper.speed.value = None  # raised KeyError in the observer
    assert "Not applied: speed must be one of 1 step/s, 2 steps/s" in stepper.message.value
    assert "got None" in stepper.message.value
    assert stepper.speed.value == "250 steps/s"  # the speed before stays
    assert (stepper.play.step, stepper.play.interval) == (25, 100)
    stepper.speed.value = "2 steps/s"
    assert (stepper.play.step, stepper.play.interval) == (1, 500)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"max_steps": 0}, "max_steps must be at least 1, got 0"),  # blamed checkpoint_interval
        ({"max_steps": -3}, "max_steps must be at least 1, got -3"),
        ({"seed": -1}, "seed must be between 0 and 2147483647, got -1"),
        ({"seed": 2**31}, "seed must be between 0 and 2147483647, got 2147483648"),
    ],
)
def test_the_constructor_holds_seed_and_max_steps_to_their_rules(
    arguments: dict[str, int], message: str
) -> None:
    with pytest.raises(InvalidParameterError) as refused:
        RecoveryStepper("baseline-recovery", **arguments)
    assert str(refused.value) == message


def test_the_seed_box_refuses_in_the_constructor_s_words(stepper: RecoveryStepper) -> None:
    """One rule for the seed: the box, the constructor and ``flinkstate run --seed``."""
    with pytest.raises(InvalidParameterError) as refused:
        RecoveryStepper("baseline-recovery", seed=-1)
    stepper.goto(10)
    stepper.seed.value = -1
    assert stepper.message.value == (
        f"<span style='color:#d62728'>Not applied: {refused.value}</span>"
    )
    assert stepper.current_step == 10  # the run on display is kept
    stepper.seed.value = 0
    assert stepper.message.value == ""


@pytest.mark.slow
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


@pytest.mark.slow
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
    assert "the job before its restart: finished" in stepper.badge.value
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


def test_flinks_keys_are_taken_and_the_misnamed_one_is_refused() -> None:
    stepper = RecoveryStepper(
        "aligned-restart-recovers-classic",
        overrides={"execution.checkpointing.tolerable-failed-checkpoints": 2},
    )
    assert stepper.parameters.values()["tolerable_failed_checkpoints"] == 2
    right = r"reads execution\.checkpointing\.during-recovery"
    with pytest.raises(InvalidParameterError, match=right):
        RecoveryStepper(
            overrides={"execution.checkpointing.unaligned.during-recovery.enabled": True}
        )


def test_the_stepper_says_why_recovery_runs_the_code_it_runs() -> None:
    before = RecoveryStepper("aligned-checkpoint-during-recovery")
    assert "recovery code <b>v2</b>" in before.badge.value
    assert "before FLINK-40518" in before.badge.value
    after = RecoveryStepper("aligned-restart-recovers-classic")
    assert "recovery code <b>classic</b>" in after.badge.value
    assert "aligned checkpoints" in after.badge.value
    assert "recovery code" not in RecoveryStepper("checkpoint-during-drain").badge.value


def test_overriding_a_parameter_that_does_not_matter_adds_its_control() -> None:
    stepper = RecoveryStepper("baseline-recovery", overrides={"records": 40, "parallelism": 2})
    assert list(stepper.parameters.controls)[-1] == "parallelism"
    world = stepper.world
    assert world is not None
    assert sum(1 for t in world.tasks.values() if t.operator == "counter") == 2


def test_stop_keeps_the_step_like_pause(stepper: RecoveryStepper) -> None:
    """The play widget's stop sets its value back to the minimum; the stepper stays put."""
    stepper.goto(0)
    stepper.play.playing = True
    stepper.play.value = 30
    stepper.play.playing = False
    stepper.play.value = stepper.play.min  # what stop does
    assert stepper.current_step == stepper.slider.value == 30
    assert stepper.play.value == 30  # play resumes from here


def test_enter_in_the_step_box_goes_there(stepper: RecoveryStepper) -> None:
    stepper.goto(0)
    stepper.goto_box.value = 77  # the box sends its value on Enter (continuous_update off)
    assert stepper.current_step == stepper.slider.value == 77


def test_every_button_says_what_it_does(stepper: RecoveryStepper) -> None:
    for control in (
        stepper.step_button,
        stepper.back_button,
        stepper.reset_button,
        stepper.next_button,
        stepper.goto_button,
        stepper.play,
        stepper.speed,
    ):
        assert control.tooltip


def test_the_job_before_the_restart_is_not_called_a_failure() -> None:
    stepper = RecoveryStepper("baseline-recovery", overrides={"records": 20}, phase="job")
    assert "the job before its restart" in stepper.badge.value
    assert "not as expected" not in stepper.badge.value


@pytest.mark.slow
def test_save_as_page_writes_the_run_or_says_why_not(tmp_path: Path) -> None:
    stepper = RecoveryStepper("prefilter-deadlock")
    stepper.page_file.value = str(tmp_path / "deadlock.html")
    stepper.page_button.click()
    page = tmp_path / "deadlock.html"
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert "Page written to" in stepper.message.value
    assert stepper.page_progress.layout.display == "none"
    stepper.page_file.value = str(tmp_path / "missing" / "x.html")
    assert stepper.save_page() is None
    assert "No page written: cannot write" in stepper.message.value


def test_a_click_on_a_collapsed_subtask_opens_its_lane() -> None:
    big = {"source_parallelism": 12, "parallelism": 12, "records": 20}
    stepper = RecoveryStepper("baseline-recovery", overrides=big, phase="job")
    stepper.goto(300)

    def lane(task: str) -> list[str]:
        return [p["id"] for p in stepper.canvas.scene["places"] if p.get("task") == task]

    assert lane("counter[5]") == ["task counter[5]"]
    # as the page sends it: a custom message over the widget's comm
    message = {
        "content": {"data": {"method": "custom", "content": {"expand": "counter[5]"}}},
        "buffers": [],
    }
    stepper.canvas.comm.handle_msg(message)
    assert len(lane("counter[5]")) > 10
    assert stepper.current_step == 300  # opening a lane moves nothing
    stepper.step_button.click()
    assert len(lane("counter[5]")) > 10  # and it stays open while stepping
    stepper.canvas.receive({"collapse": "counter[5]"})
    assert lane("counter[5]") == ["task counter[5]"]
    stepper.canvas.receive({"something": "else"})  # ignored


@pytest.mark.slow
def test_a_trace_loads_back_into_the_stepper_at_the_same_state(tmp_path: Path) -> None:
    from flinkstate.cli import main
    from flinkstate.lab.scenario_trace import load_scenario_trace

    trace = tmp_path / "run.jsonl"
    assert (
        main(["run", "keyed-upscale", "--seed", "3", "--set", "records=20", "--trace", str(trace)])
        == 0
    )
    stepper = RecoveryStepper("baseline-recovery", overrides={"records": 10})
    assert stepper.load_trace(trace)
    loaded = load_scenario_trace(trace)
    assert stepper.scenario.value == "keyed-upscale"
    assert stepper.seed.value == 3
    assert stepper.parameters.values()["records"] == 20
    assert stepper.current_step == loaded.step == stepper.total
    world = stepper.world
    assert world is not None
    assert loaded.run.world is not None
    assert world.fingerprint() == loaded.run.world.fingerprint()
    assert "loaded: keyed-upscale, seed 3" in stepper.message.value
    assert stepper.load_trace(trace, step=10)
    assert stepper.current_step == 10
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json\n")
    assert not stepper.load_trace(broken)
    assert "Trace not loaded" in stepper.message.value
    assert stepper.current_step == 10  # the run on display stays


def test_a_counterexample_of_the_job_loads_in_its_phase_and_steps_through_its_actions(
    tmp_path: Path,
) -> None:
    from flinkstate.cli import main
    from flinkstate.lab.scenario_trace import load_scenario_trace

    folder = tmp_path / "found"
    small = ["records=2", "parallelism=1", "source_parallelism=1"]
    args = ["explore", "baseline-recovery", "--phase", "job", "--fault", "duplicate-record"]
    args += [arg for value in small for arg in ("--set", value)]
    assert main([*args, "--trace-dir", str(folder), "--quiet"]) == 1
    trace = folder / "violation-exactly-once.jsonl"
    stepper = RecoveryStepper("baseline-recovery", overrides={"records": 10})
    assert not stepper.load_trace(trace, phase="first-restart")
    assert "phase must be one of restart, job" in stepper.message.value
    loaded = load_scenario_trace(trace, phase="job")
    assert stepper.load_trace(trace, step=loaded.step - 1, phase="job")
    assert stepper.phase.value == "job"
    assert stepper.faults == frozenset({"duplicate-record"})
    assert "with fault duplicate-record put back" in stepper.message.value
    assert stepper.current_step == loaded.step - 1
    stepper.step_button.click()  # the recorded action, not the scheduler's
    world = stepper.world
    assert world is not None
    assert loaded.run.world is not None
    assert world.fingerprint() == loaded.run.world.fingerprint()
    assert stepper.current_step == stepper.total == loaded.step


def test_closed_figures_are_not_drawn_and_open_at_the_step_on_display() -> None:
    stepper = RecoveryStepper("baseline-recovery", overrides={"records": 20})
    stepper.goto(40)
    assert stepper.timelines_figure.data == ()
    assert stepper.ownership.data == ()
    stepper.timelines_box.selected_index = 0
    assert stepper.timelines_figure.layout.title.text == "Over the steps, up to step 40"
    stepper.ownership_box.selected_index = 0
    assert stepper.ownership.layout.title.text == "Buffer ownership at step 40"


def test_going_back_from_a_late_record_takes_its_cross_off_the_timelines() -> None:
    """FLINK-40517's run before the fix: at the step that drops the record the event-time
    panel marks it; one step back the mark is gone and the counter's watermark is as it was."""
    stepper = RecoveryStepper("merged-watermarks-passed-through")
    assert stepper.timelines_box.get_title(0).endswith("over the steps and event time")
    stepper.timelines_box.selected_index = 0
    stepper.goto(stepper.total)
    timelines = stepper.timelines
    assert timelines is not None
    (late,) = timelines.late
    assert late.step == stepper.total
    crosses = [t for t in stepper.timelines_figure.data if t.name == "dropped as late"]
    assert [list(t.x) for t in crosses] == [[stepper.total]]
    stepper.back()
    assert stepper.current_step == stepper.total - 1
    assert timelines.late == []
    assert not any(t.name == "dropped as late" for t in stepper.timelines_figure.data)
    line = next(t for t in stepper.timelines_figure.data if t.name == late.task)
    assert line.x[-1] == stepper.total - 1


def test_a_run_without_watermarks_keeps_the_timelines_title() -> None:
    stepper = RecoveryStepper("baseline-recovery", overrides={"records": 10})
    assert stepper.timelines_box.get_title(0) == (
        "timelines: buffers, credits, records and checkpoints over the steps"
    )


def test_a_forecast_of_a_real_checkpoint_is_stepped_like_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stepper opens the restored run ``flinkstate forecast`` runs (a checkpoint Flink
    wrote): its whole run on the slider, the same world step by step, back and forth."""
    from flinkstate.flinkcheckpoint import real_checkpoint
    from flinkstate.flinkcheckpoint.export import ExchangeSpec, key_function
    from flinkstate.flinkcheckpoint.stream_element import value_decoder
    from flinkstate.lab.forecast import prepare_forecast, run_forecast

    def make() -> Forecast:
        return prepare_forecast(
            real_checkpoint("bigrecord-10k-keyed-p2-p3"),
            2,
            exchanges={"to-record->slow-counter": ExchangeSpec("hash", key_function("f0%1000"))},
            generation="v2",
            value=value_decoder("Tuple2<Long,String>"),
        )

    reference = run_forecast(make(), compare=())
    stepper = RecoveryStepper("baseline-recovery", overrides={"records": 20})
    forecast = make()
    stepper.open_forecast(forecast)
    assert stepper.run is forecast
    assert stepper.current_step == 0
    assert stepper.total == reference.result.steps
    assert stepper.summary["outcome"] == "recovered"
    assert stepper.summary["spill_files"] == reference.memory()["spill_files"] > 0
    assert "Forecast of checkpoint 46" in stepper.message.value
    assert "this run: recovered" in stepper.badge.value
    stepper.goto(stepper.total)
    world = stepper.world
    assert world is not None
    assert world.tasks.keys() == reference.world.tasks.keys()
    assert world.deliveries == reference.world.deliveries
    stepper.goto(3)
    assert stepper.current_step == 3
    assert (
        [e.action for e in stepper.simulation.events]
        == [  # type: ignore[union-attr]
            e.action for e in reference.simulation.events[:3]
        ]
    )
    # its page is the forecast's, not the scenario picked before, and the stepper stays at
    # the step it showed
    stepper.page_file.value = ""
    monkeypatch.chdir(tmp_path)
    written = stepper.save_page()
    assert written is not None
    assert written.name == "forecast-chk46-to2.html"
    page = (tmp_path / written.name).read_text()
    assert "flinkstate forecast: checkpoint 46" in page
    assert "baseline-recovery" not in page
    assert stepper.current_step == 3
    assert stepper.world is not None
    assert stepper.world.step == 3


LARGE_KEYED_UPSCALE = scenario_preset("large", get_scenario("keyed-upscale")).values


def _opened_in_a_kernel(
    scenario: str, overrides: Mapping[str, object], then: Callable[[RecoveryStepper], None]
) -> RecoveryStepper:
    """A stepper opened in a running event loop, as a kernel runs a cell; ``then`` runs
    before the loop gets to the preview's first slice."""

    async def open_it() -> RecoveryStepper:
        stepper = RecoveryStepper(scenario, overrides=overrides)
        then(stepper)
        return stepper

    return asyncio.run(open_it())


def test_opened_in_a_kernel_it_shows_step_zero_at_once_and_the_preview_s_progress() -> None:
    overrides = {"records": 30}
    before = RecoveryStepper("baseline-recovery", overrides=overrides)  # no loop: at once
    assert not before.previewing
    assert before.preview_box.layout.display == "none"
    before.goto(2)
    captions_at_2 = list(before.canvas.captions)
    before.goto(0)

    async def open_step_and_wait() -> RecoveryStepper:
        stepper = RecoveryStepper("baseline-recovery", overrides=overrides)
        assert stepper.previewing
        assert stepper.preview_box.layout.display == ""
        assert "previewing the run to its end" in stepper.preview_note.value
        assert "this run: previewing its end" in stepper.badge.value
        assert stepper.canvas.scene == before.canvas.scene  # the same step 0
        stepper.step_button.click()  # stepping does not wait for the preview
        stepper.step_button.click()
        assert stepper.current_step == 2
        assert stepper.canvas.captions == captions_at_2
        while stepper.previewing:  # the loop runs the preview's slices
            await asyncio.sleep(0)
        return stepper

    stepper = asyncio.run(open_step_and_wait())
    assert stepper.preview_box.layout.display == "none"
    assert stepper.slider.max == stepper.total == before.total
    assert stepper.summary == before.summary
    assert stepper.current_step == 2
    before.goto(2)
    assert stepper.badge.value == before.badge.value  # "this run: recovered", its figures


def test_what_needs_the_run_s_end_finishes_its_preview_there_and_then() -> None:
    stepper = _opened_in_a_kernel("baseline-recovery", {"records": 30}, lambda _: None)
    whole = RecoveryStepper("baseline-recovery", overrides={"records": 30})
    # the loop ended before the preview: asking for the end finishes it
    assert stepper.summary == whole.summary
    assert not stepper.previewing
    assert stepper.total == stepper.slider.max == whole.total
    assert stepper.goto(stepper.total)
    assert not stepper.goto(stepper.total + 1)


def test_a_jump_ahead_of_the_preview_is_taken_and_a_new_setting_drops_the_old_preview() -> None:
    def jump_and_change(stepper: RecoveryStepper) -> None:
        assert stepper.goto(500)  # nothing previewed yet: the run itself steps there
        assert stepper.slider.max >= stepper.slider.value == 500
        stepper.seed.value = 1  # another run: its own preview, the first one's dropped
        assert stepper.current_step == 0
        assert stepper.previewing

    stepper = _opened_in_a_kernel("baseline-recovery", {"records": 30}, jump_and_change)
    assert (
        stepper.summary
        == RecoveryStepper("baseline-recovery", seed=1, overrides={"records": 30}).summary
    )


def test_the_figures_are_made_only_when_they_are_drawn() -> None:
    stepper = RecoveryStepper("baseline-recovery", overrides={"records": 20})
    assert stepper.ownership_box.children[0].__class__.__name__ == "VBox"
    assert stepper.timelines_box.children[0].__class__.__name__ == "VBox"
    assert stepper.deadlock_box.children == ()
    stepper.ownership_box.selected_index = 0
    assert stepper.ownership_box.children == (stepper.ownership,)
    assert stepper.ownership.layout.title.text == "Buffer ownership at step 0"
    assert stepper.timelines_box.children[0].__class__.__name__ == "VBox"


@pytest.mark.slow
def test_at_the_large_preset_it_opens_at_step_zero_with_the_progress_shown() -> None:
    """64-wide keyed upscale (36 -> 63): step 0 is the restored job's, as a whole run's step 0
    is; the run's end is previewed after it, its progress on show."""

    def at_open(stepper: RecoveryStepper) -> None:
        assert stepper.previewing
        assert stepper.preview_box.layout.display == ""
        assert stepper.current_step == 0

    stepper = _opened_in_a_kernel("keyed-upscale", LARGE_KEYED_UPSCALE, at_open)
    run = prepare_scenario("keyed-upscale", overrides=LARGE_KEYED_UPSCALE)
    assert run.world is not None
    expected = build_scene(run.world, None, SceneLayout.of(run.world))
    assert stepper.scene == expected
    assert stepper.canvas.scene["collapsible"]  # 63 subtasks an operator: lanes folded
    assert stepper.canvas.scene["step"] == 0


def test_an_outcome_missed_at_other_values_names_whose_expectation_it_was() -> None:
    """Changed values may end a race otherwise: the badge says the expectation is the
    scenario's own values', and says nothing of them at those values."""
    own = RecoveryStepper("failed-task-counted-as-finished")
    assert "as expected" not in own.badge.value  # "expected violation)" with no verdict
    assert "(expected violation)" in own.badge.value
    other = RecoveryStepper(
        "failed-task-counted-as-finished", overrides={"terminal_tasks": "abort"}
    )
    assert (
        "(expected violation with the scenario's own values, <b>not as expected</b>)"
        in other.badge.value
    )


def test_the_job_phase_badge_shows_the_bytes_its_first_checkpoint_persists() -> None:
    """Notebook 01's exercise reads the first checkpoint's size off the badge of the job's
    stepper: the badge must show it, and it must be the checkpoint the restart starts from."""
    job = RecoveryStepper("baseline-recovery", phase="job", overrides={"records": 40})
    persisted = job.summary["checkpoint_bytes"]
    job.goto(1)
    restarted = prepare_scenario("baseline-recovery", overrides={"records": 40})
    assert restarted.checkpoint is not None
    assert persisted == restarted.checkpoint.in_flight_bytes
    assert f"its first checkpoint persists <b>{persisted:,}</b> bytes in flight" in job.badge.value
