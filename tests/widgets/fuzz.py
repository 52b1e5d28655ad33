"""A harness for the notebooks' widgets: every control set to what a user (or a notebook's
code) should not give it, buttons clicked in odd orders, constructors given bad arguments.

Each public widget a notebook uses (the recovery stepper, the interleaving explorer, the
rescale explorer, the comparison panel, the tour, an exercise, and with Spark the checkpoint
rescaler) is built small, and each action's outcome is classified:

- ``refused-with-message``: the widget says why in its message (or traitlets refuses a value
  of the wrong type with its ``TraitError``, the control unchanged), or a constructor raises
  one of the package's errors naming the value;
- ``accepted``: a valid value kept, or a click that did its work;
- failures: ``silent-clamp`` (the control shows another value than the one set, without a
  word), ``silent-accept`` (a value outside the control's rule kept without a word) and
  ``exception`` (anything else raised, in an observer or a click's handler).

``python -m tests.widgets.fuzz [--no-spark] [--package-root DIR]`` (``make fuzz``) prints the
counts per widget and lists the failures; ``--package-root`` imports the widgets from another
checkout (an older commit, to count what it did).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLEAN = ("refused-with-message", "accepted")
FAILURES = ("silent-clamp", "silent-accept", "exception")
#: the colour every refusal in a widget is written in (``controls.refusal``)
REFUSAL = "d62728"
#: what a user may set a whole-number control to that it should not take
HOSTILE_INTS: tuple[object, ...] = (-5, -1, 0, 10**9, 2**31, 2**63, None, "x")
HOSTILE_CHOICES: tuple[object, ...] = (None, "nosuch", 12345)
HOSTILE_TEXTS: tuple[object, ...] = ("", "  ", "missing/nothing.jsonl", "/dev/zero", "/", None)
HOSTILE_FLAGS: tuple[object, ...] = (None, "yes")
JAVA_INT_MAX = 2**31 - 1

Rule = Callable[[Any, object], bool]


@dataclass(frozen=True)
class Control:
    """A control of a widget (``path``: attribute names from the widget, ``controls[name]``
    for a parameter's), the values to try, whether a value is valid, and the button whose
    click applies it (None: its observer does)."""

    path: str
    values: tuple[object, ...]
    valid: Rule
    then: str | None = None


@dataclass(frozen=True)
class Construction:
    """A constructor call with one bad (or valid) argument, and the control showing it."""

    what: str
    make: Callable[[], Any]
    valid: bool
    control: str | None = None
    value: object = None


@dataclass
class Target:
    """One widget: how to build it, what shows its messages, its controls, its clicks."""

    name: str
    make: Callable[[], Any]
    message: Callable[[Any], list[Any]]
    controls: Callable[[Any], list[Control]]
    clicks: tuple[tuple[str, ...], ...] = ()
    constructions: tuple[Construction, ...] = ()
    settle: Callable[[Any], None] = field(default=lambda widget: None)


@dataclass(frozen=True)
class Result:
    widget: str
    action: str
    outcome: str
    detail: str


def resolve(widget: Any, path: str) -> Any:
    """The object at ``path`` (``parameters.controls[records]``) of ``widget``."""
    current = widget
    for part in path.split("."):
        name, _, key = part.partition("[")
        current = getattr(current, name)
        if key:
            index = key.rstrip("]")
            current = current[int(index) if index.isdigit() else index]
    return current


class Callbacks:
    """Exceptions a click's handler raised: ipywidgets logs them and carries on, so the
    harness records them instead."""

    def __init__(self) -> None:
        self.raised: list[BaseException] = []

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        from ipywidgets.widgets.widget import CallbackDispatcher

        original = CallbackDispatcher.__call__
        raised = self.raised

        def call(dispatcher: Any, *args: Any, **kwargs: Any) -> Any:
            value = None
            for callback in dispatcher.callbacks:
                try:
                    local = callback(*args, **kwargs)
                except Exception as error:  # what a notebook would show as a traceback
                    raised.append(error)
                else:
                    value = local if local is not None else value
            return value

        CallbackDispatcher.__call__ = call  # type: ignore[method-assign]
        try:
            yield
        finally:
            CallbackDispatcher.__call__ = original  # type: ignore[method-assign]


def _said(target: Target, widget: Any) -> str:
    return " ".join(str(m.value) for m in target.message(widget))


def _hush(target: Target, widget: Any) -> None:
    for message in target.message(widget):
        message.value = ""


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error)[:160]}"


def set_value(
    target: Target, widget: Any, control: Control, value: object, callbacks: Callbacks
) -> Result:
    """Set one control to ``value`` (then click what applies it) and classify what followed."""
    action = f"{control.path} = {value!r}" + (f", then {control.then}" if control.then else "")
    from traitlets import TraitError

    try:
        held = resolve(widget, control.path)
    except (AttributeError, KeyError):
        return Result(target.name, action, "skipped", "no such control")
    original = held.value
    _hush(target, widget)
    callbacks.raised.clear()
    try:
        held.value = value
        if control.then:
            resolve(widget, control.then).click()
        target.settle(widget)
    except TraitError as error:
        changed = held.value != original
        outcome = "silent-clamp" if changed else "refused-with-message"
        return _restored(target, widget, held, original, Result(
            target.name, action, outcome, f"TraitError: {str(error)[:120]}"))  # fmt: skip
    except Exception as error:  # an observer's failure reaches the one who set the value
        return _restored(target, widget, held, original, Result(
            target.name, action, "exception", _describe(error)))  # fmt: skip
    if callbacks.raised:
        result = Result(target.name, action, "exception", _describe(callbacks.raised[0]))
    elif REFUSAL in _said(target, widget):
        result = Result(target.name, action, "refused-with-message", _text(target, widget))
    elif held.value != value or type(held.value) is not type(value):
        shown = held.value
        result = Result(target.name, action, "silent-clamp", f"the control shows {shown!r}")
    elif control.valid(widget, value):
        result = Result(target.name, action, "accepted", "")
    else:
        result = Result(target.name, action, "silent-accept", "kept, nothing said")
    return _restored(target, widget, held, original, result)


def _text(target: Target, widget: Any) -> str:
    import re

    return re.sub(r"<[^>]+>", "", _said(target, widget))[:160]


def _restored(target: Target, widget: Any, held: Any, original: object, result: Result) -> Result:
    """``result``, once the control is back at its value before the action."""
    with contextlib.suppress(Exception):
        if held.value != original:
            held.value = original
            target.settle(widget)
    _hush(target, widget)
    return result


def click(target: Target, widget: Any, buttons: tuple[str, ...], callbacks: Callbacks) -> Result:
    """Click ``buttons`` in turn; an exception anywhere is a failure."""
    action = "click " + " -> ".join(buttons)
    _hush(target, widget)
    callbacks.raised.clear()
    try:
        for name in buttons:
            if name.startswith("="):  # a value to type first: "=trace_file:missing"
                path, _, typed = name[1:].partition(":")
                resolve(widget, path).value = typed
                continue
            resolve(widget, name).click()
            target.settle(widget)
    except (AttributeError, KeyError) as error:
        return Result(target.name, action, "skipped", _describe(error))
    except Exception as error:
        return Result(target.name, action, "exception", _describe(error))
    if callbacks.raised:
        return Result(target.name, action, "exception", _describe(callbacks.raised[0]))
    said = REFUSAL in _said(target, widget)
    return Result(target.name, action, "refused-with-message" if said else "accepted",
                  _text(target, widget) if said else "")  # fmt: skip


def construct(target: Target, made: Construction, callbacks: Callbacks) -> Result:
    """Build the widget with one bad argument: refused by one of the package's errors, or
    built showing a refusal; a control showing another value without a word is a clamp."""
    from flinkstate.errors import FlinkstateError

    action = f"{target.name}({made.what})"
    callbacks.raised.clear()
    try:
        widget = made.make()
    except FlinkstateError as error:
        outcome = "refused-with-message" if not made.valid else "exception"
        return Result(target.name, action, outcome, _describe(error))
    except Exception as error:
        return Result(target.name, action, "exception", _describe(error))
    if callbacks.raised:
        return Result(target.name, action, "exception", _describe(callbacks.raised[0]))
    if REFUSAL in _said(target, widget):
        return Result(target.name, action, "refused-with-message", _text(target, widget))
    if made.control is not None:
        shown = resolve(widget, made.control).value
        if shown != made.value:
            return Result(target.name, action, "silent-clamp", f"the control shows {shown!r}")
    return Result(target.name, action, "accepted" if made.valid else "silent-accept", "")


def hostile(control: Any) -> tuple[object, ...]:
    """The values to try on ``control``, by its kind."""
    import ipywidgets as widgets

    if isinstance(control, widgets.Checkbox):
        return HOSTILE_FLAGS
    if isinstance(control, (widgets.Dropdown, widgets.ToggleButtons, widgets.Select)):
        return HOSTILE_CHOICES
    if isinstance(control, widgets.Text):
        return HOSTILE_TEXTS
    return HOSTILE_INTS


def whole(low: int, high: int | None) -> Rule:
    def valid(widget: Any, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, int):
            return False
        return value >= low and (high is None or value <= high)

    return valid


def run_target(target: Target, callbacks: Callbacks) -> list[Result]:
    """Every construction, control value and click sequence of one widget."""
    results = [construct(target, made, callbacks) for made in target.constructions]
    try:
        widget = target.make()
    except Exception as error:
        return [*results, Result(target.name, "build", "exception", _describe(error))]
    for control in target.controls(widget):
        for value in control.values:
            results.append(set_value(target, widget, control, value, callbacks))
    for buttons in target.clicks:
        results.append(click(target, widget, buttons, callbacks))
    with contextlib.suppress(Exception):
        widget.close()
    return results


def table(results: Sequence[Result]) -> str:
    """Tried, clean and failed per widget, with the outcomes of each."""
    rows = [("widget", "tried", "clean", "failures", "outcomes")]
    names = list(dict.fromkeys(r.widget for r in results))
    for name in [*names, "total"]:
        chosen = [r for r in results if name in ("total", r.widget) and r.outcome != "skipped"]
        counts = Counter(r.outcome for r in chosen)
        clean = sum(counts[o] for o in CLEAN)
        outcomes = ", ".join(f"{o} {n}" for o, n in sorted(counts.items()))
        rows.append((name, str(len(chosen)), str(clean), str(len(chosen) - clean), outcomes))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join([r[0].ljust(widths[0]), *(r[i].rjust(widths[i]) for i in (1, 2, 3)), r[4]])
        for r in rows
    )


def run_all(
    targets: Sequence[Target], report: Callable[[Result], None] | None = None
) -> list[Result]:
    """Every target's actions, in a temporary working folder (a page saved under its default
    name lands there)."""
    callbacks = Callbacks()
    results: list[Result] = []
    previous = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="flinkstate-widget-fuzz-") as folder:
        os.chdir(folder)
        try:
            with callbacks.recording():
                for target in targets:
                    for result in run_target(target, callbacks):
                        if report is not None:
                            report(result)
                        results.append(result)
        finally:
            os.chdir(previous)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.widgets.fuzz", description=__doc__)
    parser.add_argument("--no-spark", action="store_true", help="leave out the Spark widget")
    parser.add_argument("--widget", action="append", help="only these widgets (by name)")
    parser.add_argument("--package-root", type=Path, help="import flinkstate from this checkout")
    parser.add_argument("--verbose", action="store_true", help="a line per action")
    args = parser.parse_args(argv)
    if args.package_root is not None:
        sys.path.insert(0, str(args.package_root.resolve()))
    import flinkstate
    from tests.widgets.fuzz_targets import targets

    print(f"widgets of {Path(flinkstate.__file__).parent}")
    started = time.monotonic()

    def report(result: Result) -> None:
        if args.verbose or result.outcome in FAILURES:
            print(f"{result.outcome:22} {result.widget}: {result.action}", flush=True)

    chosen = [t for t in targets(spark=not args.no_spark)
              if not args.widget or t.name in args.widget]  # fmt: skip
    results = run_all(chosen, report)
    print(f"\n{table(results)}\n\n{time.monotonic() - started:.0f} s")
    failed = [r for r in results if r.outcome in FAILURES]
    for result in failed:
        print(f"\n{result.outcome}: {result.widget}: {result.action}\n  {result.detail}")
    return 1 if failed else 0


if __name__ == "__main__":  # one copy of this module, as fuzz_targets imports it
    from tests.widgets import fuzz

    raise SystemExit(fuzz.main())
