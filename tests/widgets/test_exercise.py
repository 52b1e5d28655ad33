"""Exercises: the answer is computed when asked, from whatever the model says then."""

from __future__ import annotations

from flinkstate.errors import InvalidParameterError
from flinkstate.widgets.exercise import Exercise


def test_the_answer_is_computed_when_asked() -> None:
    calls: list[int] = []

    def answer() -> str:
        calls.append(1)
        return f"**{40 + len(calls)}** bytes"

    exercise = Exercise("How many *bytes*?", answer, where="the badge")
    assert calls == []
    assert exercise.shown.value == ""
    assert "<em>bytes</em>" in exercise.question.value
    assert "the badge" in exercise.where.value
    exercise.button.click()
    assert "<strong>41</strong> bytes" in exercise.shown.value
    exercise.button.click()
    assert "<strong>42</strong> bytes" in exercise.shown.value  # asked again, computed again


def test_a_refusal_is_shown_not_raised() -> None:
    def answer() -> str:
        raise InvalidParameterError("this run has no checkpoint")

    exercise = Exercise("Q", answer)
    assert exercise.reveal() == ""
    assert "No answer: this run has no checkpoint" in exercise.shown.value
