"""The widgets :mod:`tests.widgets.fuzz` drives, each built small: its controls and the rule
each value is held to, its clicks in odd orders, its constructor's bad arguments.

Imported only once the harness knows which checkout's package to use (``--package-root``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.widgets.fuzz import (
    HOSTILE_CHOICES,
    HOSTILE_INTS,
    HOSTILE_TEXTS,
    JAVA_INT_MAX,
    Construction,
    Control,
    Rule,
    Target,
    hostile,
    whole,
)

#: the committed datasets the Spark widget opens
DATA = Path(__file__).resolve().parents[2] / "data"
#: a stepper's run kept small: a few steps a second on a busy machine still ends in seconds
SMALL = {"records": 20}
SEEDS = whole(0, JAVA_INT_MAX)


def _never(widget: Any, value: object) -> bool:
    return False


def _any(widget: Any, value: object) -> bool:
    return True


def _within_run(stepper: Any, value: object) -> bool:
    return whole(0, stepper.total)(stepper, value)


def _choice(path: str) -> Rule:
    def valid(widget: Any, value: object) -> bool:
        from tests.widgets.fuzz import resolve

        options = resolve(widget, path).options
        return value in [o[1] if isinstance(o, tuple) else o for o in options]

    return valid


def _parameter_controls(
    widget: Any, prefix: str = "parameters", then: str | None = None
) -> list[Control]:
    """A control per parameter, held to the parameter's own bounds and choices."""
    parameters = _resolve_any(widget, prefix)
    controls = []
    for parameter in parameters.parameters:
        path = f"{prefix}.controls[{parameter.name}]"
        if isinstance(parameter.default, bool):
            valid: Rule = lambda w, v: isinstance(v, bool)  # noqa: E731
        elif parameter.choices:
            valid = _choice(path)
        elif isinstance(parameter.default, int):
            valid = whole(
                -(2**63) if parameter.minimum is None else parameter.minimum, parameter.maximum
            )
        else:
            valid = _any
        controls.append(Control(path, hostile(parameters.controls[parameter.name]), valid, then))
    return controls


def _resolve_any(widget: Any, path: str) -> Any:
    from tests.widgets.fuzz import resolve

    return resolve(widget, path)


# -- the recovery stepper ------------------------------------------------------------------------


def _stepper(**arguments: Any) -> Any:
    from flinkstate.widgets.recovery_stepper import RecoveryStepper

    arguments.setdefault("overrides", SMALL)
    arguments.setdefault("max_steps", 20_000)
    return RecoveryStepper("baseline-recovery", **arguments)


def _stepper_controls(stepper: Any) -> list[Control]:
    return [
        Control("slider", HOSTILE_INTS, _within_run),
        Control("play", HOSTILE_INTS, _within_run),
        Control("goto_box", HOSTILE_INTS, _within_run),
        Control("goto_box", (-5, 10**9), _within_run, then="goto_button"),
        Control("seed", HOSTILE_INTS, SEEDS),
        Control("speed", HOSTILE_CHOICES, _choice("speed")),
        Control("until", HOSTILE_CHOICES, _choice("until")),
        Control("phase", HOSTILE_CHOICES, _choice("phase")),
        Control("scenario", HOSTILE_CHOICES, _choice("scenario")),
        Control("trace_file", HOSTILE_TEXTS, _never, then="trace_button"),
        Control("page_file", ("missing/page.html", "/dev/zero", "/"), _never, "page_button"),
        *_parameter_controls(stepper),
    ]


STEPPER_CLICKS = (
    ("back_button", "back_button"),
    ("reset_button", "back_button", "step_button", "step_button"),
    ("next_button", "next_button", "next_button", "back_button"),
    ("=goto_box:-1", "goto_button", "step_button"),
    ("=trace_file:", "trace_button", "step_button"),
    ("=until:end of run (deadlock or finish)", "next_button", "step_button", "next_button"),
    ("=parameters.controls[records]:-1", "step_button", "next_button", "page_button"),
)


def _stepper_constructions() -> tuple[Construction, ...]:
    return (
        Construction("seed=-1", lambda: _stepper(seed=-1), False),
        Construction("seed=2**31", lambda: _stepper(seed=2**31), False),
        Construction("seed=None", lambda: _stepper(seed=None), False),
        Construction("max_steps=0", lambda: _stepper(max_steps=0), False),
        Construction("max_steps=None", lambda: _stepper(max_steps=None), False),
        Construction("phase='x'", lambda: _stepper(phase="x"), False),
        Construction("overrides records=-1", lambda: _stepper(overrides={"records": -1}), False),
        Construction("overrides nosuch=1", lambda: _stepper(overrides={"nosuch": 1}), False),
        Construction("seed=7", lambda: _stepper(seed=7), True, "seed", 7),
    )


def _settle_stepper(stepper: Any) -> None:
    stepper.total  # the preview's end: what the rules compare against  # noqa: B018


# -- the interleaving explorer -------------------------------------------------------------------


def _explorer(**arguments: Any) -> Any:
    from flinkstate.widgets.interleaving_explorer import InterleavingExplorer

    arguments = {"background": False, "max_states": 300, "max_depth": 6, **arguments}
    return InterleavingExplorer("keyed-upscale", **arguments)


def _bound(low: float) -> Rule:
    def valid(widget: Any, value: object) -> bool:
        try:
            number = float(str(value)) if str(value).strip() else None
        except ValueError:
            return False
        return number is None or (number >= low and number != float("inf"))

    return valid


BOUND_TEXTS = ("0", "-1", "abc", "1.5", "nan", "inf", None)


def _explorer_controls(explorer: Any) -> list[Control]:
    return [
        Control("seed", HOSTILE_INTS, SEEDS, then="run_button"),
        Control("max_states", BOUND_TEXTS, _bound(1), then="run_button"),
        Control("max_depth", BOUND_TEXTS, _bound(1), then="run_button"),
        Control("time", BOUND_TEXTS, _bound(1e-300), then="run_button"),
        Control("walks", ("0", "-1", "abc", "5"), _never, then="run_button"),
        Control("strategy", HOSTILE_CHOICES, _choice("strategy"), then="run_button"),
        Control("reduction", HOSTILE_CHOICES, _choice("reduction"), then="run_button"),
        Control("phase", HOSTILE_CHOICES, _choice("phase")),
        Control("subject", HOSTILE_CHOICES, _choice("subject")),
        Control("faults", (("nosuch",), None, "lose-record"), _never, then="run_button"),
        *_parameter_controls(explorer, then="run_button"),
    ]


EXPLORER_CLICKS = (
    ("stop_button", "run_button", "stop_button", "stop_button"),
    ("run_button", "run_button"),
)


def _explorer_constructions() -> tuple[Construction, ...]:
    return (
        Construction("max_states=0", lambda: _explorer(max_states=0), False),
        Construction("max_depth=-1", lambda: _explorer(max_depth=-1), False),
        Construction("time=-1", lambda: _explorer(time=-1), False),
        Construction("seed=-1", lambda: _explorer(seed=-1), False),
        Construction("faults=['nosuch']", lambda: _explorer(faults=["nosuch"]), False),
        Construction("strategy='x'", lambda: _explorer(strategy="x"), False),
        Construction("phase='x'", lambda: _explorer(phase="x"), False),
    )


# -- the rescale explorer, the comparison, the tour, an exercise ---------------------------------


def _rescale_explorer(**arguments: Any) -> Any:
    from flinkstate.widgets.rescale_explorer import RescaleExplorer

    return RescaleExplorer(**arguments)


def _rescale_valid(path: str) -> Rule:
    def valid(explorer: Any, value: object) -> bool:
        values = {
            name: getattr(explorer, name).value
            for name in ("max_parallelism", "old_parallelism", "new_parallelism")
        }
        values[path] = value
        if not all(whole(1, 32768)(explorer, v) for v in values.values()):
            return False
        limit = values["max_parallelism"]
        return values["old_parallelism"] <= limit and values["new_parallelism"] <= limit

    return valid


def _rescale_controls(explorer: Any) -> list[Control]:
    boxes = ("max_parallelism", "old_parallelism", "new_parallelism")
    return [
        *(Control(name, HOSTILE_INTS, _rescale_valid(name)) for name in boxes),
        Control("partitioner", HOSTILE_CHOICES, _choice("partitioner")),
        Control("recover_on_downstream", (None, "yes"), _never),
    ]


def _comparison(**arguments: Any) -> Any:
    from flinkstate.widgets.comparison import ComparisonPanel

    arguments = {"left": SMALL, "right": SMALL, "max_steps": 20_000, **arguments}
    return ComparisonPanel("baseline-recovery", **arguments)


def _comparison_controls(panel: Any) -> list[Control]:
    return [
        *_parameter_controls(panel, "sides[0]", then="compare_button"),
        Control("scenario", HOSTILE_CHOICES, _choice("scenario")),
    ]


def _tour(name: str | None = None) -> Any:
    from flinkstate.views.tours import TOURS
    from flinkstate.widgets.tour import TourWidget

    return TourWidget(name if name is not None else sorted(TOURS)[0])


def _exercise(answer: Any = None) -> Any:
    from flinkstate.errors import InvalidParameterError
    from flinkstate.widgets.exercise import Exercise

    def refused() -> str:
        raise InvalidParameterError("no such step")

    return Exercise("What is 1 + 1?", answer or refused, where="the canvas")


def _messages(*paths: str) -> Any:
    def messages(widget: Any) -> list[Any]:
        return [_resolve_any(widget, path) for path in paths]

    return messages


def targets(*, spark: bool) -> list[Target]:
    """Every widget to drive; with ``spark``, the checkpoint rescaler too (a JVM)."""
    made = [
        Target("recovery stepper", _stepper, _messages("message"), _stepper_controls,
               STEPPER_CLICKS, _stepper_constructions(), _settle_stepper),
        Target("interleaving explorer", _explorer, _messages("message"), _explorer_controls,
               EXPLORER_CLICKS, _explorer_constructions()),
        Target("rescale explorer", _rescale_explorer, _messages("message"), _rescale_controls,
               constructions=(
                   Construction("old_parallelism=0", lambda: _rescale_explorer(
                       old_parallelism=0), False),
                   Construction("max_parallelism=10**9", lambda: _rescale_explorer(
                       max_parallelism=10**9), False),
                   Construction("partitioner='nosuch'", lambda: _rescale_explorer(
                       partitioner="nosuch"), False),
               )),
        Target("comparison", _comparison, _messages("message"), _comparison_controls,
               (("compare_button", "compare_button"),),
               (Construction("scenario 'nosuch'", lambda: _comparison_named("nosuch"), False),
                Construction("left records=-1", lambda: _comparison(left={"records": -1}),
                             False))),
        Target("tour", _tour, _messages("stepper.message", "text"),
               lambda tour: [Control("chapters", (None, -1, 99, "x"), _choice("chapters"))],
               (("back_button", "back_button", "continue_button"),
                ("explore_button", "explore_button", "continue_button")),
               (Construction("'nosuch'", lambda: _tour("nosuch"), False),)),
        Target("exercise", _exercise, _messages("shown"), lambda exercise: [],
               (("button", "button"),)),
    ]  # fmt: skip
    if spark:
        made.append(_rescaler_target())
    return made


def _comparison_named(name: str) -> Any:
    from flinkstate.widgets.comparison import ComparisonPanel

    return ComparisonPanel(name)


def _rescaler_target() -> Target:
    from flinkstate.spark.session import spark_session

    session = spark_session()
    checkpoints = {name: DATA / name for name in ("keyed", "rebalance")}

    def rescaler(**arguments: Any) -> Any:
        from flinkstate.widgets.checkpoint_rescaler import CheckpointRescaler

        return CheckpointRescaler(session, checkpoints, **arguments)

    def controls(widget: Any) -> list[Control]:
        return [
            Control("to", (*HOSTILE_INTS, 7), lambda w, v: whole(1, w.to.max)(w, v)),
            Control("checkpoint", HOSTILE_CHOICES, _choice("checkpoint")),
            Control("exchange", HOSTILE_CHOICES, _choice("exchange")),
        ]

    return Target(
        "checkpoint rescaler", lambda: rescaler(checkpoint="keyed"), _messages("message"),
        controls, (),
        (Construction("to=0", lambda: rescaler(to=0), False, "to", 0),
         Construction("to=50", lambda: rescaler(to=50), False, "to", 50),
         Construction("checkpoint='nosuch'", lambda: rescaler(checkpoint="nosuch"), False)),
    )  # fmt: skip
