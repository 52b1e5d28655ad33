"""The lesson frame: how the stepper's and a tour's parts are laid out so that what a learner
reads, what the canvas rings and the step's caption are on screen together.

A learner reviewing the notebooks at 1440x900 and 1280x720 found every tour stop's highlight
and caption below the fold: the controls, badge and legend stood between the text and the
drawing. Here the narration (or the stepper's controls) stands in a column beside the canvas,
the caption sits over the drawing, and the drawing is no taller than the window (it scrolls
inside, and ``flinkstate/views/canvas.js`` zooms to what a stop highlights). What a control
does stays in :mod:`~flinkstate.widgets.recovery_stepper` and :mod:`~flinkstate.widgets.tour`.
"""

from __future__ import annotations

from typing import Protocol

import ipywidgets as widgets

from flinkstate.widgets.canvas import RecoveryCanvas


class StepperParts(Protocol):
    """The stepper's widgets the frame places (``StepperControls`` makes them; named here so
    the frame does not import the stepper, which lays itself out with the frame)."""

    scenario: widgets.Widget
    seed: widgets.Widget
    phase: widgets.Widget
    parameter_box: widgets.Widget
    page_file: widgets.Widget
    page_button: widgets.Widget
    page_progress: widgets.Widget
    trace_file: widgets.Widget
    trace_button: widgets.Widget
    step_button: widgets.Widget
    back_button: widgets.Widget
    reset_button: widgets.Widget
    play: widgets.Widget
    speed: widgets.Widget
    next_button: widgets.Widget
    until: widgets.Widget
    goto_box: widgets.Widget
    goto_button: widgets.Widget
    slider: widgets.Widget
    message: widgets.Widget
    badge: widgets.Widget
    recent: widgets.Widget
    canvas: RecoveryCanvas
    deadlock_box: widgets.Widget
    ownership_box: widgets.Widget
    timelines_box: widgets.Widget
    preview_box: widgets.Widget
    controls: widgets.VBox
    stepping: widgets.VBox


#: the drawing's height in a tour: the window less JupyterLab's bars, the tour's heading and
#: chapters, the canvas's toolbar and caption (measured at 1280x720 and 1440x900)
TOUR_CANVAS_HEIGHT = "max(260px, calc(100vh - 405px))"
#: a stop's text in its column: the window less the bars, heading, chapters and buttons
TOUR_TEXT_HEIGHT = "max(220px, calc(100vh - 365px))"
#: the drawing's height in the free stepper, under its step buttons and slider
STEPPER_CANVAS_HEIGHT = "max(300px, calc(100vh - 300px))"
#: the narration's share of the tour's width (the canvas takes the rest)
NARRATION_WIDTH = "31%"


def settings_box(parts: StepperParts) -> widgets.VBox:
    """What sets up a run (scenario, seed, phase, parameters, sharing): set once, then out of
    the way, above the badge, so stepping does not scroll past it."""
    return widgets.VBox(
        [
            widgets.HBox([parts.scenario, parts.seed]),
            parts.phase,
            parts.parameter_box,
            widgets.HBox(
                [
                    parts.page_file,
                    parts.page_button,
                    parts.page_progress,
                    parts.trace_file,
                    parts.trace_button,
                ],
                layout=widgets.Layout(flex_flow="row wrap"),
            ),
        ]
    )


def stepping_box(parts: StepperParts) -> widgets.VBox:
    """The buttons, play and slider that move through the run, in three wrapping rows: put
    right over the canvas (or beside it in a tour), so a press shows its effect in view."""
    wrap = widgets.Layout(flex_flow="row wrap")
    box = widgets.VBox(
        [
            widgets.HBox(
                [
                    parts.step_button,
                    parts.back_button,
                    parts.reset_button,
                    parts.play,
                    parts.speed,
                ],
                layout=wrap,
            ),
            widgets.HBox(
                [parts.next_button, parts.until, parts.goto_box, parts.goto_button], layout=wrap
            ),
            parts.slider,
        ]
    )
    box.add_class("flinkstate-stepping")
    return box


def below_canvas(parts: StepperParts) -> list[widgets.Widget]:
    """What is read after the drawing: the waits-for graph, the figures' boxes, recent steps."""
    return [parts.deadlock_box, parts.ownership_box, parts.timelines_box, parts.recent]


def stepper_frame(parts: StepperParts) -> widgets.VBox:
    """The free stepper: settings, then the run's message, preview and badge, then the step
    controls directly over the canvas, whose drawing fits the window."""
    parts.canvas.max_height = STEPPER_CANVAS_HEIGHT
    return widgets.VBox(
        [
            parts.controls,
            parts.message,
            parts.preview_box,
            parts.badge,
            parts.stepping,
            parts.canvas,
            *below_canvas(parts),
        ]
    )


def tour_frame(moves: widgets.Widget, text: widgets.Widget, parts: StepperParts) -> widgets.HBox:
    """A tour's stop: the tour's buttons, then (once exploring) the stepper's step controls,
    then the stop's text, in a column beside the canvas; the badge and figures under the
    canvas. The step controls come before the text so that a long text does not push them
    below the fold; the run's settings come last."""
    parts.canvas.max_height = TOUR_CANVAS_HEIGHT
    column = widgets.VBox(
        [moves, parts.message, parts.stepping, text, parts.controls],
        layout=widgets.Layout(
            flex=f"0 0 {NARRATION_WIDTH}",
            width=NARRATION_WIDTH,
            min_width="260px",
            padding="0 10px 0 0",
        ),
    )
    column.add_class("flinkstate-narration")
    drawing = widgets.VBox(
        [parts.canvas, parts.preview_box, parts.badge, *below_canvas(parts)],
        layout=widgets.Layout(flex="1 1 0", min_width="0"),
    )
    frame = widgets.HBox([column, drawing], layout=widgets.Layout(align_items="flex-start"))
    frame.add_class("flinkstate-lesson-frame")
    return frame
