"""Whatever a user types into a widget, the widget answers in words: no traceback escapes."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinkstate.catalogue.scenarios import SCENARIOS
from flinkstate.widgets.controls import parameters_of
from flinkstate.widgets.recovery_stepper import RecoveryStepper

#: one stepper, re-pointed by every example: building a widget is not what is being tested
_STEPPER = RecoveryStepper("baseline-recovery", overrides={"records": 20}, max_steps=20_000)
_INTS = st.integers(min_value=-3, max_value=70_000)


@st.composite
def user_choices(draw: st.DrawFn) -> tuple[str, str, int | bool | str]:
    scenario = draw(st.sampled_from(sorted(SCENARIOS)))
    parameters = parameters_of(SCENARIOS[scenario])
    parameter = draw(st.sampled_from(parameters))
    if isinstance(parameter.default, bool):
        value: int | bool | str = draw(st.booleans())
    elif parameter.choices:
        value = draw(st.sampled_from(parameter.choices))
    else:
        value = draw(st.one_of(_INTS, st.sampled_from([0, 1, 2, 3, 4096, 8192])))
    return scenario, parameter.name, value


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(choice=user_choices(), target=st.integers(min_value=-5, max_value=30_000))
def test_any_choice_is_applied_or_refused_in_words(
    choice: tuple[str, str, int | bool | str], target: int
) -> None:
    scenario, name, value = choice
    stepper = _STEPPER
    stepper.scenario.value = scenario  # rebuilds the controls and loads the scenario
    control = stepper.parameters.controls[name]
    control.value = value
    if stepper.simulation is None:
        assert stepper.message.value  # rejected or no checkpoint: said in the widget
        return
    stepper.goto(target)
    if not 0 <= target <= stepper.total:
        assert "outside this run" in stepper.message.value
    else:
        assert stepper.current_step == target
    stepper.step_button.click()
    stepper.back_button.click()


@pytest.mark.slow
def test_every_widget_action_is_applied_or_refused_in_words() -> None:
    """The widget harness of ``make fuzz`` (:mod:`tests.widgets.fuzz`), without the Spark
    widget (its slider's refusals are pinned in test_checkpoint_rescaler): no silent clamp,
    no value outside its rule kept without a word, no exception."""
    from tests.widgets.fuzz import FAILURES, run_all, table
    from tests.widgets.fuzz_targets import targets

    results = run_all(targets(spark=False))
    failed = [f"{r.outcome}: {r.widget}: {r.action}: {r.detail}" for r in results
              if r.outcome in FAILURES]  # fmt: skip
    assert failed == [], table(results)
    assert len({r.widget for r in results}) == 6
