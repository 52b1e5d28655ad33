"""The recovery stepper's controls and panels, laid out: what a learner sets, clicks and sees,
made apart from what a click does (:class:`~flinkstate.widgets.recovery_stepper.RecoveryStepper`
wires them to the run), so each half reads on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import ipywidgets as widgets

from flinkstate.catalogue.scenario import Scenario
from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.widgets.canvas import RecoveryCanvas
from flinkstate.widgets.controls import (
    ParameterControls,
    Unclamped,
    icon_button,
    live_figure,
    scenario_picker,
)
from flinkstate.widgets.lesson_frame import settings_box, stepper_frame, stepping_box

if TYPE_CHECKING:
    import plotly.graph_objects as go

#: what "run to next" can stop at, and the action kinds that are that event
EVENTS_OF_INTEREST: Mapping[str, tuple[ActionKind, ...]] = {
    "barrier": (ActionKind.BARRIER,),
    "checkpoint triggered or acknowledged": (ActionKind.TRIGGER, ActionKind.CHECKPOINT),
    "output state restored": (ActionKind.FINISH_OUTPUT,),
    "input state read": (ActionKind.FINISH_INPUT,),
    "gate conversion": (ActionKind.CONVERT, ActionKind.REQUEST_PARTITIONS),
    "spill files written (v2)": (ActionKind.FINISH_FETCH,),
    "drainer installed (v2)": (ActionKind.INSTALL_DRAINER,),
    "drain finished (v2)": (ActionKind.FINISH_DRAIN,),
    "end of run (deadlock or finish)": (),
}
#: the timelines' box; a run with watermarks adds " and event time" (its fifth panel)
TIMELINES_TITLE = "timelines: buffers, credits, records and checkpoints over the steps"
#: play speeds in steps per second: (label, steps per tick, ms between ticks)
SPEEDS: Mapping[str, tuple[int, int]] = {
    "1 step/s": (1, 1000),
    "2 steps/s": (1, 500),
    "5 steps/s": (1, 200),
    "10 steps/s": (1, 100),
    "50 steps/s": (5, 100),
    "250 steps/s": (25, 100),
    "1000 steps/s": (100, 100),
}


def play_speed(label: object) -> tuple[int, int]:
    """A speed's steps per tick and ms between ticks; anything that is no speed's label is
    refused naming the speeds (play would otherwise fail where it looks the speed up)."""
    if not isinstance(label, str) or label not in SPEEDS:
        raise InvalidParameterError(f"speed must be one of {', '.join(SPEEDS)}, got {label!r}")
    return SPEEDS[label]


class StepSlider(Unclamped, widgets.IntSlider):  # type: ignore[misc]
    """The step slider: a step set outside the run reaches the stepper, which refuses it."""


class StepPlay(Unclamped, widgets.Play):  # type: ignore[misc]
    """Play: a step set outside the run reaches the stepper, which refuses it."""


class StepperControls:
    """Scenario picker, its parameters, step controls, sharing, and the panels that show the
    run: the canvas, badge, captions and three live figures, laid out once in :attr:`widget`."""

    def __init__(
        self,
        scenario: Scenario,
        seed: int,
        overrides: Mapping[str, object] | None,
        phase: str,
        max_steps: int,
    ) -> None:
        self.scenario = scenario_picker(scenario.name)
        self.phase = widgets.ToggleButtons(
            options=[("the restart", "restart"), ("the job before it", "job")],
            value=phase,
            description="step through",
        )
        self.seed = widgets.IntText(value=seed, description="seed")
        self.parameters = ParameterControls(scenario, overrides)
        self.parameter_box = widgets.VBox([self.parameters.box])
        self._make_moves()
        self._make_sharing()
        self._make_panels(max_steps)
        self._widget: widgets.Widget | None = None
        #: what sets a run up, and what steps through it: laid out apart (a tour shows neither
        #: until the learner explores, and then beside the canvas)
        self.controls: widgets.VBox = settings_box(self)
        self.stepping: widgets.VBox = stepping_box(self)

    def _make_moves(self) -> None:
        """The buttons, slider, play and go-to box that move through the run."""
        self.step_button = icon_button("step", "step-forward", "one step forward")
        self.step_button.add_class("flinkstate-step")
        self.back_button = icon_button("back", "step-backward", "one step back")
        self.back_button.add_class("flinkstate-back")
        self.next_button = icon_button(
            "run to next", "fast-forward", "run to the next chosen event"
        )
        self.reset_button = icon_button("reset", "undo", "back to step 0")
        self.until = widgets.Dropdown(options=list(EVENTS_OF_INTEREST), description="next")
        self.slider = StepSlider(
            value=0,
            min=0,
            max=0,
            description="step",
            continuous_update=False,
            layout=widgets.Layout(width="100%", max_width="900px"),
        )
        self.play = StepPlay(
            value=0,
            min=0,
            max=0,
            step=1,
            interval=200,
            description="play",
            tooltip="play from this step (pause and stop keep the step you are on)",
            show_repeat=False,
        )
        self.speed = widgets.Dropdown(options=list(SPEEDS), value="5 steps/s", description="speed")
        self.speed.tooltip = "how many steps play advances per second"
        self.goto_box = widgets.IntText(value=0, description="go to step", continuous_update=False)
        self.goto_box.tooltip = "type a step and press Enter"
        self.goto_button = icon_button("go", "share", "jump to the step in the box")

    def _make_sharing(self) -> None:
        """Saving the run as a page, and loading a trace."""
        self.page_file = widgets.Text(
            value="", placeholder="SCENARIO-seedN.html", description="page file"
        )
        self.page_file.tooltip = "where to write the page (relative to the notebook's folder)"
        self.page_button = icon_button(
            "save as page",
            "download",
            "write this run (the job and its restart) as one self-contained HTML page: the "
            "canvas, the captions, a slider and play; it needs no kernel and no network",
        )
        self.trace_file = widgets.Text(value="", placeholder="run.jsonl", description="trace file")
        self.trace_file.tooltip = "a trace written by flinkstate run SCENARIO --trace FILE"
        self.trace_button = icon_button(
            "load trace",
            "upload",
            "show the run the trace recorded, at its last step (replayed and checked first)",
        )
        self.page_progress = widgets.IntProgress(
            value=0, min=0, max=1, description="drawing", layout=widgets.Layout(display="none")
        )

    def _make_panels(self, max_steps: int) -> None:
        """What shows the run: message, badge, canvas, figures' boxes, the preview's bar."""
        self.message = widgets.HTML()
        self.badge = widgets.HTML()
        self.recent = widgets.HTML()
        self.canvas = RecoveryCanvas()
        #: the figures, made when first drawn (plotly's widget takes seconds to load)
        self._figures: dict[str, go.FigureWidget] = {}
        self.ownership_box = widgets.Accordion(
            children=[widgets.VBox()], titles=("buffer ownership graph (networkx)",)
        )
        self.ownership_box.selected_index = None
        self.timelines_box = widgets.Accordion(children=[widgets.VBox()], titles=(TIMELINES_TITLE,))
        self.timelines_box.selected_index = None
        self.deadlock_box = widgets.VBox([], layout=widgets.Layout(display="none"))
        #: the run to its end, previewed beside the run on display (``run_preview``)
        self.preview_progress = widgets.IntProgress(
            value=0, min=0, max=max_steps, description="previewing"
        )
        self.preview_note = widgets.HTML()
        self.preview_box = widgets.HBox(
            [self.preview_progress, self.preview_note], layout=widgets.Layout(display="none")
        )
        self.preview_box.add_class("flinkstate-preview")

    @property
    def widget(self) -> widgets.Widget:
        """The whole stepper, ready to display (built once: a tour shows the same one)."""
        if self._widget is None:
            self._widget = stepper_frame(self)
        return self._widget

    def _figure(self, name: str, box: widgets.Box) -> go.FigureWidget:
        """The live figure ``name``, made and put in ``box`` the first time it is asked for."""
        figure = self._figures.get(name)
        if figure is None:
            figure = self._figures[name] = live_figure()
            box.children = [figure]
        return figure

    @property
    def ownership(self) -> go.FigureWidget:
        """The buffer-ownership graph's figure (drawn while its box is open)."""
        return self._figure("ownership", self.ownership_box)

    @property
    def timelines_figure(self) -> go.FigureWidget:
        """The timelines' figure (drawn while its box is open)."""
        return self._figure("timelines", self.timelines_box)

    @property
    def deadlock(self) -> go.FigureWidget:
        """The waits-for graph's figure (drawn at a deadlock's step)."""
        return self._figure("deadlock", self.deadlock_box)

    @property
    def drawn_figures(self) -> tuple[go.FigureWidget, ...]:
        """The live figures made so far (each is made when first drawn)."""
        return tuple(self._figures.values())
