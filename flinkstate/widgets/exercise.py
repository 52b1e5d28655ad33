"""An exercise with a "show answer" button whose answer the model computes when asked.

An answer is never typed into a notebook as text: it is a function of the run on screen, so
it stays true when the model, a scenario or a parameter changes, and the learner can check it
against the figures the widgets show.
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets
import mistune

from flinkstate.errors import FlinkstateError
from flinkstate.widgets.controls import icon_button, refusal


class Exercise:
    """A question (markdown), and its answer (markdown) computed on demand."""

    def __init__(self, question: str, answer: Callable[[], str], *, where: str = "") -> None:
        self.answer = answer
        self.question = widgets.HTML(_markdown(question))
        self.where = widgets.HTML(
            f"<p style='color:#4b5563;margin:0'><i>Read it on screen: {_inline(where)}</i></p>"
            if where
            else ""
        )
        self.button = icon_button("show answer", "eye", "compute the answer from the model")
        self.button.add_class("flinkstate-show-answer")
        self.shown = widgets.HTML()
        self.button.on_click(lambda _: self.reveal())
        self.widget = widgets.VBox(
            [self.question, self.where, self.button, self.shown],
            layout=widgets.Layout(border_left="3px solid #93c5fd", padding="0 0 0 8px"),
        )

    def reveal(self) -> str:
        """Compute the answer now and show it; a refusal from the model is shown instead."""
        try:
            text = self.answer()
        except FlinkstateError as error:
            self.shown.value = refusal(f"No answer: {error}")
            return ""
        self.shown.value = (
            "<div style='background:#f0fdf4;border-radius:4px;padding:4px 8px'>"
            f"{_markdown(text)}</div>"
        )
        self.button.description = "answer (computed from the model)"
        return text


def _markdown(text: str) -> str:
    return str(mistune.html(text))


def _inline(text: str) -> str:
    html = _markdown(text).strip()
    return html.removeprefix("<p>").removesuffix("</p>")
