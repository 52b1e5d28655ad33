"""Step through a scenario's restart (or the job before it) with buttons and a slider, while a
canvas draws the job's network stack with every buffer, barrier and record in its place, a
caption says what each step did, and the timelines show how the buffers moved over the run.

When a scenario is chosen the stepper shows its step 0 and previews the run to its end beside
it (``run_preview``: in a kernel a slice at a time between clicks, with a progress bar), so the
slider comes to span the whole run and the badge says how it ends. Every move is the
simulation's own ``step``/``goto``: the scheduler is deterministic, so stepping replays exactly
the run that was previewed. The figures are views of the world at the current step; the
buffer-ownership graph (the same places as the canvas, as a networkx graph) is one click away
under the canvas, drawn (and plotly's widget loaded, seconds the first time) only when opened.

Steps are counted as everywhere in flinkstate: step n is the world after n actions, and the
caption of step n describes the n-th action. The widgets themselves are made and laid out in
:mod:`~flinkstate.widgets.stepper_controls`, and the badge's text in
:mod:`~flinkstate.widgets.run_badge`; this module is what each control does to the run.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.collector import collector_paused
from flinkstate.errors import FlinkstateError, InvalidParameterError
from flinkstate.lab.forecast import Forecast, run_forecast
from flinkstate.lab.scenario_run import PHASES, ScenarioRun, prepare_scenario
from flinkstate.output import check_target, write_whole
from flinkstate.run_rules import MAX_STEPS, SEED
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.options import Fault
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.action import Action
from flinkstate.sim.core import Event, RunResult, Simulation
from flinkstate.sim.scheduler import Recorded
from flinkstate.views.captions import caption
from flinkstate.views.deadlock import deadlock_figure
from flinkstate.views.ownership import ownership_graph, ownership_spec
from flinkstate.views.page import forecast_page, scenario_page
from flinkstate.views.scene import build_scene
from flinkstate.views.scene_items import scene_items
from flinkstate.views.scene_layout import SceneLayout
from flinkstate.views.timelines import Timelines, timelines_spec
from flinkstate.widgets.controls import (
    ParameterControls,
    guarded,
    refusal,
    refused_no_choice,
    show_spec,
)
from flinkstate.widgets.run_badge import (
    badge_html,
    faults_text,
    forecast_summary,
    shorten,
    trace_html,
)
from flinkstate.widgets.run_preview import RunPreview
from flinkstate.widgets.stepper_controls import (
    EVENTS_OF_INTEREST,
    TIMELINES_TITLE,
    StepperControls,
    play_speed,
)

#: how many of the last steps the list under the canvas shows
RECENT_EVENTS = 8
#: captions kept under the canvas, newest first
CAPTIONS_KEPT = 4


class RecoveryStepper(StepperControls):
    """Scenario picker, its parameters, step controls, and three live figures: the controls
    (:class:`~flinkstate.widgets.stepper_controls.StepperControls`) wired to the run."""

    def __init__(
        self,
        scenario: str = "baseline-recovery",
        *,
        seed: int = 0,
        overrides: Mapping[str, object] | None = None,
        phase: str = "restart",
        max_steps: int = 200_000,
    ) -> None:
        item = get_scenario(scenario)
        if phase not in PHASES:
            raise InvalidParameterError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")
        SEED.check(seed)  # the seed box's rule, and flinkstate run --seed's
        self.max_steps = MAX_STEPS.check(max_steps)
        super().__init__(item, seed, overrides, phase, max_steps)
        #: the run to its end, previewed beside the run on display (``run_preview``)
        self._preview: RunPreview | None = None
        #: the scenario run on display, or a forecast's restored run (``open_forecast``)
        self.run: ScenarioRun | Forecast | None = None
        self._final: RunResult | None = None
        #: the run's steps to its end; while the preview runs, those previewed so far
        self._total = 0
        self.timelines: Timelines | None = None
        self.layout: SceneLayout | None = None
        self._syncing = False
        self._summary: dict[str, Any] = {}
        #: the caption of each step seen so far; the items of the step on display (what
        #: captions compare: ``step`` and ``items``) and its whole scene, once asked for
        self._captions: dict[int, str] = {}
        self._scene: dict[str, Any] | None = None
        self._whole: dict[str, Any] | None = None
        self._pinned: dict[int, list[str]] = {}
        #: the settings of a loaded trace are being put in place: no run per control
        self._restoring = False
        #: a loaded trace's actions of the phase on display, the faults it was written with
        #: and its file: the run follows them until a setting changes
        self.recorded: tuple[Action, ...] = ()
        self.faults: frozenset[Fault] = frozenset()
        self.trace_path: Path | None = None
        self.scheduler = "random"
        self._wire()
        self.load()

    def _wire(self) -> None:
        """Every control's observer and click handler: each move is the stepper's."""
        self.canvas.on_lanes_changed(lambda: self._render(animate=False))
        self._apply_speed()
        self.speed.observe(self._on_speed, names="value")
        self.until.observe(
            lambda change: refused_no_choice(self.until, change, self.message), names="value"
        )
        self.play.observe(self._on_play, names="value")
        self.play.observe(self._on_playing, names="playing")
        self.goto_box.observe(self._on_goto_box, names="value")
        self.ownership_box.observe(lambda _: self._render(), names="selected_index")
        self.timelines_box.observe(lambda _: self._render(), names="selected_index")
        self.scenario.observe(self._on_scenario, names="value")
        self.phase.observe(self._on_setting, names="value")
        self.seed.observe(self._on_setting, names="value")
        self.parameters.observe(self._on_setting)
        self.slider.observe(self._on_slider, names="value")
        self.step_button.on_click(lambda _: self.step())
        self.back_button.on_click(lambda _: self.back())
        self.next_button.on_click(lambda _: self.run_to_next())
        self.reset_button.on_click(lambda _: self.goto(0))
        self.goto_button.on_click(lambda _: self.goto_typed())
        self.page_button.on_click(lambda _: self.save_page())
        self.trace_button.on_click(lambda _: self.load_trace(self.trace_file.value.strip()))

    @property
    def total(self) -> int:
        """The run's steps to its end (the preview's end: finished now if it still runs)."""
        self._preview_ended()
        return self._total

    @property
    def final(self) -> RunResult | None:
        """How the run ends (the preview's end: finished now if it still runs)."""
        self._preview_ended()
        return self._final

    @property
    def previewing(self) -> bool:
        """Whether the run's end is still being previewed (``total`` would wait for it)."""
        return self._preview is not None and self._preview.end is None

    @property
    def scene(self) -> dict[str, Any] | None:
        """The whole scene of the step on display (the canvas may show a large job folded:
        this is built when asked for, as at P = 64 its folded places are most of a step's
        cost)."""
        simulation, world, layout, shown = self.simulation, self.world, self.layout, self._scene
        if simulation is None or world is None or layout is None or shown is None:
            return None
        if shown["step"] != simulation.step_count:
            return None
        whole = self._whole
        if whole is None or whole["step"] != shown["step"]:
            last = _last(simulation)
            whole = self._whole = build_scene(world, last, layout, items=shown["items"])
        return whole

    def pin(self, step: int, highlight: list[str]) -> None:
        """Highlight these places and items on the canvas while step ``step`` is on display
        (a tour's stop), opening the folded lanes they are in; the highlight goes when the
        step does."""
        self._pinned[step] = list(highlight)
        scene = self.scene
        if scene is not None and scene["step"] == step:
            wanted = set(highlight)
            wanted |= {i["place"] for i in scene["items"] if i["id"] in wanted}
            opened = {
                p["task"]
                for p in scene["places"]
                if p["id"] in wanted and p.get("operator") in scene["collapsible"]
            }
            if not opened <= self.canvas.expanded:
                self.canvas.expanded |= opened
                self._render(animate=False)
                return
        if self.current_step == step:
            self.canvas.highlight = list(highlight)

    @property
    def simulation(self) -> Simulation | None:
        return None if self.run is None else self.run.simulation

    @property
    def world(self) -> NetworkWorld | None:
        return None if self.run is None else self.run.world

    @property
    def summary(self) -> dict[str, Any]:
        """How the whole run ends (outcome, steps, bytes, deadlock), as the CLI reports it (the
        preview's end: finished now if it still runs)."""
        self._preview_ended()
        return dict(self._summary)

    @property
    def current_step(self) -> int:
        simulation = self.simulation
        return 0 if simulation is None else simulation.step_count

    # -- loading a run -----------------------------------------------------------------------

    def _on_scenario(self, change: dict[str, Any]) -> None:
        if self._restoring or refused_no_choice(self.scenario, change, self.message):
            return
        self._leave_trace()
        self._use_parameters(ParameterControls(get_scenario(self.scenario.value)))
        self.load()

    def _use_parameters(self, parameters: ParameterControls) -> None:
        self.parameters = parameters
        self.parameters.observe(self._on_setting)
        self.parameter_box.children = [self.parameters.box]

    def _on_setting(self, _change: dict[str, Any]) -> None:
        if not self._restoring:
            self._leave_trace()
            self.load()

    def _leave_trace(self) -> None:
        """A setting changed: the run is the scheduler's again, without the trace's faults."""
        self.recorded, self.faults, self.trace_path = (), frozenset(), None

    def load_trace(
        self, path: Path | str, *, step: int | None = None, phase: str | None = None
    ) -> bool:
        """Show the run a trace recorded (``flinkstate run SCENARIO --trace``, or a
        counterexample ``flinkstate explore`` or the explorer widget wrote), at ``step``
        (default: its last) of ``phase`` (default: the phase on display). The trace is
        replayed event by event first, so a trace of another version or other parameters is
        refused, not shown. Stepping then follows the recorded actions, back and forward, with
        the faults the trace was written with, until a setting changes."""
        from flinkstate.lab.scenario_trace import load_scenario_trace

        phase = self.phase.value if phase is None else phase
        try:
            if phase not in PHASES:
                raise InvalidParameterError(
                    f"phase must be one of {', '.join(PHASES)}, got {phase!r}"
                )
            loaded = load_scenario_trace(Path(path), phase=phase, step=step)
        except FlinkstateError as error:
            self.message.value = refusal(f"Trace not loaded: {error}")
            return False
        item = loaded.run.scenario
        self._restoring = True
        try:
            self.scenario.value = item.name
            self.phase.value = phase
            self.seed.value = loaded.seed
            self._use_parameters(ParameterControls(item, loaded.overrides))
        finally:
            self._restoring = False
        self.scheduler, self.max_steps = loaded.scheduler, loaded.max_steps
        self.recorded, self.faults, self.trace_path = loaded.actions, loaded.faults, Path(path)
        if not self.load():
            return False
        self.goto(loaded.step)
        faults = f", with {faults_text(self.faults)} put back" if self.faults else ""
        self.message.value = (
            f"Trace {html.escape(str(path))} loaded: {item.name}, seed {loaded.seed}, "
            f"{self.phase.value} at step {loaded.step} of {loaded.steps}{html.escape(faults)}."
        )
        return True

    def load(self) -> bool:
        """Prepare the chosen scenario, show its step 0, and preview it to its end (in a
        kernel while the learner looks at step 0 and steps: ``run_preview``).

        A refused value is reported in the widget and the current run stays on display.
        """
        try:
            seed = SEED.check(self.seed.value)
            overrides = self.parameters.values()
            run = prepare_scenario(
                self.scenario.value,
                seed=seed,
                overrides=overrides,
                scheduler=self.scheduler,
                max_steps=self.max_steps,
                phase=self.phase.value,
                faults=self.faults,
            )
        except FlinkstateError as error:
            self.message.value = refusal(f"Not applied: {error}")
            return False
        self.message.value = ""
        self._stop_preview()
        self.run = run
        simulation = run.simulation
        if simulation is not None and self.recorded:
            # a loaded trace's run, stepped again after going back: its recorded actions
            simulation.scheduler = Recorded(self.recorded, simulation.scheduler)
        self._captions = {}
        self._scene = self._whole = None
        self._pinned = {}
        if simulation is None:  # refused by Flink, or no checkpoint to restore from
            self._final, self._total, self.timelines, self.layout = None, 0, None, None
            self._set_range(0)
            self.message.value = refusal(f"{run.outcome.value}: {run.message}")
            self._summary = run.summary()
            self._render()
            return True
        self._final, self._total, self._summary = None, 0, {}
        world = self.world
        assert world is not None
        self.timelines = Timelines.start(world)
        self.timelines_box.set_title(
            0, TIMELINES_TITLE + (" and event time" if self.timelines.event_time else "")
        )
        self.layout = SceneLayout.of(world)
        self._set_range(0)
        self._preview = RunPreview(run, self.max_steps)
        self._preview.start(self._on_preview)
        if self.previewing:  # sliced in the kernel's loop: its progress shows from now
            self._on_preview(self._preview)
        self._render(animate=False)
        return True

    def _on_preview(self, preview: RunPreview) -> None:
        """The preview went on (or ended): widen the slider to what it has run, and at its end
        take the run's result and figures. A preview of a run no longer on display is
        ignored."""
        if preview is not self._preview:
            return
        end = preview.end
        self._total = preview.steps
        if end is None:
            self.preview_progress.value = preview.steps
            self.preview_note.value = (
                f"previewing the run to its end, to say how it ends: <b>{preview.steps:,}</b> "
                f"steps so far (at most {preview.max_steps:,}); step and go to any step meanwhile"
            )
            self.preview_box.layout.display = ""
        else:
            self._final, self._summary = end.result, dict(end.summary)
            self.preview_box.layout.display = "none"
        self._syncing = True
        try:
            self.slider.max = self.play.max = max(self._total, self.current_step)
        finally:
            self._syncing = False
        if self.layout is not None:  # the badge counts the steps previewed, then says the end
            self._show_status()

    def _preview_ended(self) -> None:
        """Finish a preview still running, now (a caller needs the run's end)."""
        preview = self._preview
        if preview is not None and preview.end is None:
            preview.finish()
            self._on_preview(preview)

    def _stop_preview(self) -> None:
        """Another run comes on display: its preview, if any, stops where it is."""
        if self._preview is not None:
            self._preview.cancel()
        self._preview = None
        self.preview_box.layout.display = "none"

    def open_forecast(self, forecast: Forecast) -> None:
        """Show a forecast's restored run (``lab.forecast.prepare_forecast``: a
        checkpoint Flink wrote, restored by the simulator) at step 0, run to its end first if
        it was not, to be stepped as a scenario's restart is. Choosing a scenario or a setting
        here loads that scenario again."""
        if forecast.simulation.step_count == 0 and not forecast.simulation.history:
            run_forecast(forecast, max_steps=self.max_steps, compare=())
        self._restoring = True  # the phase shown is the restart, without loading a scenario
        try:
            self.phase.value = "restart"
        finally:
            self._restoring = False
        self.recorded, self.faults, self.trace_path = (), frozenset(), None
        self._stop_preview()
        self.run = forecast
        self._captions = {}
        self._scene = self._whole = None
        self._pinned = {}
        self._final = forecast.result
        simulation = forecast.simulation
        self._total = simulation.step_count
        self._summary = forecast_summary(forecast)
        simulation.goto(0)
        world = forecast.world
        self.timelines = Timelines.start(world)
        self.timelines_box.set_title(
            0, TIMELINES_TITLE + (" and event time" if self.timelines.event_time else "")
        )
        self.layout = SceneLayout.of(world)
        self._set_range(self._total)
        self._render(animate=False)
        self.message.value = html.escape(
            f"Forecast of checkpoint {forecast.checkpoint_id} ({forecast.checkpoint}) restored "
            f"{forecast.to.describe()} with {forecast.generation.value}, seed "
            f"{forecast.seed}; choosing a scenario or a setting loads that scenario instead."
        )

    def _set_range(self, total: int) -> None:
        self._syncing = True
        try:
            self.slider.value = 0
            self.play.value = 0
            self.slider.max = total
            self.play.max = total
        finally:
            self._syncing = False

    # -- moving ------------------------------------------------------------------------------

    def step(self) -> None:
        self.goto(self.current_step + 1)

    def back(self) -> None:
        self.goto(self.current_step - 1)

    def goto_typed(self) -> None:
        self.goto(self.goto_box.value)

    def _on_goto_box(self, change: dict[str, Any]) -> None:
        """Enter (or leaving the box) goes to the typed step."""
        if not self._syncing and change["new"] != self.current_step:
            self.goto(int(change["new"]))

    def _apply_speed(self) -> None:
        self.play.step, self.play.interval = play_speed(self.speed.value)

    def _on_speed(self, change: dict[str, Any]) -> None:
        """A value that is no speed (None, say: ipywidgets itself refuses only a label that is
        no option) is refused in words, and the speed before it stays."""
        try:
            play_speed(change["new"])
        except InvalidParameterError as error:
            self.message.value = refusal(f"Not applied: {error}")
            self.speed.value = change["old"]
            return
        self._apply_speed()

    def _on_playing(self, change: dict[str, Any]) -> None:
        if change["new"]:  # play starts from the step on display
            self._sync_slider()

    def _on_play(self, change: dict[str, Any]) -> None:
        """A tick of play. Its stop button sets the value back to the minimum: that is
        ignored, so stop keeps the step on display as pause does."""
        if self._syncing:
            return
        if change["new"] == self.play.min and change["new"] != self.current_step:
            self._sync_slider()
            return
        if change["new"] != self.current_step and not self.goto(int(change["new"])):
            self._sync_slider()  # refused in words: play stays at the step on display

    def goto(self, target: int) -> bool:
        """Show step ``target`` of the run; out of the run's range is refused in the widget."""
        if self.simulation is None:
            self.message.value = refusal("Nothing to step: this configuration has no run.")
            return False
        if not 0 <= target <= self._last_step():
            self.message.value = refusal(
                f"Not applied: step {target} is outside this run (0 to {self._last_step()})"
            )
            return False
        self.message.value = ""
        # one pause of the collector for the whole click: the scene and items it makes live
        # until the next click, and a young collection in its middle would promote them
        # towards the full passes that take most of a second at P = 64
        with collector_paused():
            return guarded(self.message, lambda: self._move_to(target))

    def run_to_next(self) -> bool:
        """Step until the chosen event happens (or the run ends)."""
        simulation, timelines = self.simulation, self.timelines
        if simulation is None or timelines is None:
            self.message.value = refusal("Nothing to step: this configuration has no run.")
            return False
        kinds = EVENTS_OF_INTEREST[self.until.value]
        found = self._advance(self._last_step(), kinds)
        self.message.value = (
            ""
            if found or not kinds
            else refusal(f"No {self.until.value} after this step: stopped at the end of the run.")
        )
        self._sync_slider()
        self._render(animate=True)
        return found or not kinds

    def _last_step(self) -> int:
        """The last step one can go to: the run's end, or while it is still previewed the step
        limit (stepping stops at the end where the run ends first)."""
        return self.max_steps if self.previewing else self._total

    def _move_to(self, target: int) -> None:
        simulation, timelines = self.simulation, self.timelines
        assert simulation is not None
        assert timelines is not None
        if target < simulation.step_count:
            simulation.goto(target)
            timelines.rewind(target)
        else:
            self._advance(target)
        self._sync_slider()
        self._render(animate=True)  # back and the slider travel too

    def _advance(self, target: int, stop_at: tuple[ActionKind, ...] = ()) -> bool:
        """Step towards ``target``, recording the timelines; True when it stopped at an action
        of a kind in ``stop_at``."""
        simulation, timelines = self.simulation, self.timelines
        assert simulation is not None
        assert timelines is not None
        with collector_paused():
            while simulation.step_count < target:
                event = simulation.step()
                if event is None:
                    return False
                timelines.record(self._world(), event)
                if event.action.kind in stop_at:
                    return True
        return False

    def _on_slider(self, change: dict[str, Any]) -> None:
        """The slider moved: to its step, or (a step outside the run, set from code: the
        slider does not clamp it) refused in words, back at the step on display."""
        moved = not self._syncing and change["new"] != self.current_step
        if moved and not self.goto(int(change["new"])):
            self._sync_slider()

    def _sync_slider(self) -> None:
        self._syncing = True
        try:
            # ahead of the preview (a jump while it runs): the slider reaches the step shown
            self.slider.max = self.play.max = max(self.slider.max, self.current_step)
            self.slider.value = self.current_step
            self.goto_box.value = self.current_step
            self.play.value = self.current_step
        finally:
            self._syncing = False

    def _world(self) -> NetworkWorld:
        world = self.world
        assert world is not None
        return world

    # -- sharing -------------------------------------------------------------------------------

    def save_page(self) -> Path | None:
        """Write the run on display as a page a reviewer can attach to a ticket: the
        scenario's run as configured here, or the forecast's restored run when one is open
        (``open_forecast``); the message says where (or why not)."""
        run = self.run
        name = self.scenario.value
        default = (
            f"forecast-chk{run.checkpoint_id}-to{run.to.label}.html"
            if isinstance(run, Forecast)
            else f"{name}-seed{self.seed.value}.html"
        )
        target = Path(self.page_file.value.strip() or default)
        bar = self.page_progress

        def progress(phase: str, step: int, steps: int) -> None:
            if step == 1 or step == steps or step % 200 == 0:
                bar.description = f"drawing {phase}"
                bar.max = steps
                bar.value = step

        try:
            check_target(target)
            bar.layout.display = ""
            if isinstance(run, Forecast):
                page = self._forecast_page(run, progress)
            else:
                page = scenario_page(
                    name,
                    seed=self.seed.value,
                    overrides=self.parameters.values(),
                    max_steps=self.max_steps,
                    progress=progress,
                )
            written = write_whole(target, page)
        except FlinkstateError as error:
            self.message.value = refusal(f"No page written: {error}")
            return None
        finally:
            bar.layout.display = "none"
        self.message.value = (
            f"Page written to <code>{html.escape(str(written.resolve()))}</code> "
            f"({len(page.encode()):,} bytes): open it in any browser, no kernel needed."
        )
        return written

    def _forecast_page(self, forecast: Forecast, progress: Callable[[str, int, int], None]) -> str:
        """The forecast's page: drawing it steps the run on display from its start to its end,
        so the stepper goes back to the step it showed."""
        shown = self.current_step
        steps = forecast.result.steps
        try:
            return forecast_page(
                forecast, progress=lambda step: progress("the restored run", step, steps)
            )
        finally:
            forecast.simulation.goto(shown)

    # -- drawing -------------------------------------------------------------------------------

    def captions(self) -> list[tuple[int, str]]:
        """The captions of the last few steps up to the one on display, newest first."""
        simulation = self.simulation
        if simulation is None:
            return []
        step = simulation.step_count
        wanted = range(step, max(0, step - CAPTIONS_KEPT), -1)
        self._ensure_captions(step)
        return [(n, self._captions[n]) for n in wanted]

    def _ensure_captions(self, step: int) -> None:
        """Caption the steps shown under the canvas that have none yet: go back to before
        the first of them and step forward again (the run is deterministic), comparing the
        items before and after each step. Leaves the items of ``step`` in ``_scene``."""
        simulation, timelines, layout = self.simulation, self.timelines, self.layout
        assert simulation is not None
        assert timelines is not None
        assert layout is not None
        world = self._world()  # fetched again after a goto: going back replaces the world
        missing = [n for n in range(max(1, step - CAPTIONS_KEPT + 1), step + 1)]
        missing = [n for n in missing if n not in self._captions]
        scene = self._scene
        if not missing:
            if scene is None or scene["step"] != step:
                self._scene = _items(world, layout)
            return
        start = missing[0] - 1
        if (
            scene is not None
            and missing == [step]
            and scene["step"] == start
            and simulation.step_count == step
        ):  # one step forward from the scene on display: caption it from the two scenes
            event = _last(simulation)
            assert event is not None
            after = _items(world, layout)
            self._captions[step] = caption(event, world, scene, after)
            self._scene = after
            return
        if scene is None or scene["step"] != start or start != simulation.step_count:
            with collector_paused():
                if start < simulation.step_count:
                    simulation.goto(start)
                    timelines.rewind(start)
                world = self._world()
                scene = _items(world, layout)
        assert scene is not None
        with collector_paused():
            while simulation.step_count < step:
                event = simulation.step()
                assert event is not None, "a recorded step must replay"
                timelines.record(world, event)
                after = _items(world, layout)
                self._captions[simulation.step_count] = caption(event, world, scene, after)
                scene = after
        self._scene = scene

    def _render(self, *, animate: bool = True) -> None:
        simulation, world = self.simulation, self.world
        if simulation is None or world is None or self.layout is None:
            for figure in self.drawn_figures:  # those drawn before; none made for this
                show_spec(figure, {"data": [], "layout": {"title": {"text": "no run"}}})
            self.deadlock_box.layout.display = "none"
            self.badge.value = badge_html(self._summary, None, 0, 0, self.phase.value)
            self.recent.value = ""
            self.canvas.show({}, [], animate=False)
            return
        captions = self.captions()
        assert self._scene is not None
        last = _last(simulation)
        items = self._scene["items"]
        self.canvas.show(
            build_scene(world, last, self.layout, expanded=self.canvas.expanded, items=items),
            [[n, text] for n, text in captions],
            animate=animate,
            highlight=self._pinned.get(simulation.step_count, []),
        )
        if self.ownership_box.selected_index == 0:  # drawn only while it is open
            graph = ownership_graph(world, last, self.layout.ownership)
            show_spec(self.ownership, ownership_spec(graph, self.layout.ownership))
        assert self.timelines is not None
        if self.timelines_box.selected_index == 0:  # drawn only while it is open
            show_spec(self.timelines_figure, timelines_spec(self.timelines))
        self._show_status()

    def _show_status(self) -> None:
        """The badge, the waits-for graph at a deadlock's step and the last events: what
        depends on the run's end (shown again when its preview ends) and the step."""
        simulation, world = self.simulation, self.world
        assert simulation is not None
        assert world is not None
        final = self._final
        at_deadlock = (
            final is not None
            and final.deadlock is not None
            and simulation.step_count == self._total
        )
        if at_deadlock and final is not None and final.deadlock is not None:
            self.deadlock_box.layout.display = ""  # shown first: the figure measures its box
            show_spec(self.deadlock, deadlock_figure(final.deadlock))
        else:
            self.deadlock_box.layout.display = "none"
        self.badge.value = badge_html(
            self._summary,
            world,
            simulation.step_count,
            self._total,
            self.phase.value,
            previewing=self.previewing,
        ) + trace_html(self.trace_path, self.faults)
        recent = simulation.events[-RECENT_EVENTS:][::-1]
        items = "".join(
            f"<li><code>{e.step + 1}</code> {html.escape(shorten(e.describe()))}</li>"
            for e in recent
        )
        self.recent.value = (
            f"<b>last events</b><ul style='margin:0'>{items}</ul>"
            if items
            else "<i>step 0: nothing has happened yet; press step</i>"
        )


def _items(world: NetworkWorld, layout: SceneLayout) -> dict[str, Any]:
    """What a caption compares of a step's scene: its items (all of them, folded or not)."""
    return {"step": world.step, "items": scene_items(world, layout)}


def _last(simulation: Simulation) -> Event | None:
    return simulation.events[-1] if simulation.events else None
