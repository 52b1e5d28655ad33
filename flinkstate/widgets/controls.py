"""Pieces every widget shares: a control per scenario parameter, refusals shown in the widget,
and live figures updated in place.

A parameter's control never clamps a value silently: an integer box accepts what is typed and
the parameter's own check (the same one the CLI uses) decides, so a refusal names the bound.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeAlias

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
import traitlets

from flinkstate.catalogue.parameters import Parameter, by_name
from flinkstate.catalogue.scenario import RESTORE_PARAMETERS, Scenario
from flinkstate.catalogue.scenarios import SCENARIOS
from flinkstate.catalogue.topologies import topology
from flinkstate.catalogue.topology import Topology
from flinkstate.errors import FlinkstateError, InvalidParameterError

#: every parameter control is a ValueWidget (Checkbox, Dropdown, IntText or Text)
Control: TypeAlias = Any


class Unclamped:
    """A bounded int widget that hands a value set outside its range to its observer, which
    refuses it in words (as the stepper's go-to box does): ipywidgets' own would move it to
    the nearest end without a word. The page itself never sends one: a slider stays in its
    range, play stops at its end."""

    @traitlets.validate("value")
    def _validate_value(self, proposal: Mapping[str, Any]) -> int:
        return int(proposal["value"])


class UnclampedIntSlider(Unclamped, widgets.IntSlider):  # type: ignore[misc]
    """An int slider whose owner refuses, in words, a value set outside its range."""


def refusal(message: str) -> str:
    """A refusal as the widget shows it: red, escaped, one line per problem."""
    return f"<span style='color:#d62728'>{html.escape(message)}</span>"


def refused_no_choice(
    picker: widgets.ValueWidget,
    change: Mapping[str, Any],
    message: widgets.HTML,
    what: str | None = None,
) -> bool:
    """Whether a picker's change is to be ignored by its owner: set to no choice (None, which
    ipywidgets lets code set and a page never sends; refused here in ``message``, and the
    picker put back) or that putting back (the only change from None). ``what`` names the
    picker (default: its description)."""
    if change["new"] is None:
        named = what or picker.description or "the picker"
        message.value = refusal(f"Not applied: {named} must be one of its choices, got None")
        picker.value = change["old"]
        return True
    return change["old"] is None


def scenario_picker(value: str) -> widgets.Dropdown:
    """Every registered scenario, by name and title. The picker takes the width its row leaves
    (titles run long), and its tooltip is the chosen scenario's whole line, for where it is
    still cut off."""
    labels = {s.name: f"{s.name}: {s.title}" for s in SCENARIOS.values()}
    picker = widgets.Dropdown(
        options=[(label, name) for name, label in labels.items()],
        value=value,
        description="scenario",
        tooltip=labels[value],
        layout=widgets.Layout(width="auto", flex="1 1 auto", min_width="320px", max_width="100%"),
    )

    def show_whole(change: dict[str, Any]) -> None:
        picker.tooltip = labels.get(change["new"], "")  # None: refused by the picker's owner

    picker.observe(show_whole, names="value")
    return picker


def parameters_of(scenario: Scenario, also: Iterable[str] = ()) -> list[Parameter]:
    """The parameters a scenario names as the ones that matter, in its order, then ``also``
    (parameters a caller set); a name that is no parameter of the scenario is refused."""
    known = {p.name: p for p in (*topology(scenario.topology).parameters, *RESTORE_PARAMETERS)}
    unknown = sorted(set(also) - known.keys())
    if unknown:
        raise InvalidParameterError(
            f"scenario {scenario.name} has no parameter {', '.join(unknown)}; it has "
            + ", ".join(sorted(known))
        )
    names = [n for n in scenario.matters if n in known]
    names += [n for n in also if n not in names]
    return [known[name] for name in names]


def control_for(parameter: Parameter, value: object) -> Control:
    """A control for one parameter, showing ``value``; bounds go in the tooltip, not a clamp."""
    bounds = []
    if parameter.minimum is not None:
        bounds.append(f"min {parameter.minimum}")
    if parameter.maximum is not None:
        bounds.append(f"max {parameter.maximum}")
    tooltip = parameter.help + (f" ({', '.join(bounds)})" if bounds else "")
    style = {"description_width": "initial"}
    control: Control
    if isinstance(parameter.default, bool):
        control = widgets.Checkbox(value=bool(value), description=parameter.name, indent=False)
    elif parameter.choices:
        control = widgets.Dropdown(
            options=list(parameter.choices), value=str(value), description=parameter.name
        )
    elif isinstance(parameter.default, int):
        control = widgets.IntText(value=int(str(value)), description=parameter.name)
    else:
        control = widgets.Text(value=str(value), description=parameter.name)
    control.tooltip = tooltip
    control.style = style
    control.layout = widgets.Layout(width="auto")
    return control


class ParameterControls:
    """One control per parameter that matters to a scenario, and per parameter the caller
    overrides; a topology names none as the ones that matter, so it gets one per parameter.
    ``values()`` checks them all."""

    def __init__(
        self, item: Scenario | Topology, overrides: Mapping[str, object] | None = None
    ) -> None:
        self.item = item
        if isinstance(item, Scenario):
            overrides = item.by_name(overrides or {})
            self.parameters = parameters_of(item, overrides)
        else:
            overrides = by_name(overrides or {}, item.parameters)
            self.parameters = list(item.parameters)
        resolved = item.resolve(overrides)
        self.controls = {p.name: control_for(p, resolved[p.name]) for p in self.parameters}
        self.box = widgets.HBox(
            list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap")
        )

    def values(self) -> dict[str, object]:
        """The user's values, each checked by its parameter (raises naming the first bad one)."""
        checked: dict[str, object] = {}
        for parameter in self.parameters:
            checked[parameter.name] = parameter.parse(self.controls[parameter.name].value)
        return checked

    def observe(self, handler: Callable[[dict[str, Any]], None]) -> None:
        for control in self.controls.values():
            control.observe(handler, names="value")


def live_figure() -> go.FigureWidget:
    """An empty figure widget for :func:`show_spec` to fill, as wide as the column it is in.

    It validates what it is given, as every ``FigureWidget`` must: plotly sends a change to
    the browser only through its validating setters. ``show_spec`` keeps that cheap by setting
    only what changed.

    Plotly's widget draws a figure before the notebook puts it on the page, when there is no
    column to measure, so an autosized figure comes out 700 px wide, and the widget never
    measures again by itself. Two fixes: plotly's ``responsive`` option refits it when the
    window resizes, and :func:`_fit_width` asks the page to measure once the figure is there.
    """
    figure = go.FigureWidget()
    figure._config = {**figure._config, "responsive": True, "displaylogo": False}
    _fit_width(figure)
    return figure


def _fit_width(figure: go.FigureWidget) -> None:
    """Once a page has drawn ``figure`` (it then reports the traces it drew), ask it to size
    the figure to its container again, unless the figure has a fixed width.

    The page measures on any relayout of a figure whose layout sets ``autosize`` (every view
    sets it), so a step that changes a title refits it too; this covers the first drawing,
    and a figure shown again later. The report of the first drawing is the first one; one
    that acknowledges an edit already acknowledged is another drawing (a report that
    acknowledges a new edit is not: refitting at every step would redraw every step). Plotly
    sends a relayout only for a value that changed, hence the message sent directly.
    """
    acknowledged: set[int] = set()

    def drawn(change: Mapping[str, Any]) -> None:
        report = change["new"]
        if not report:
            return
        edit = int(report["trace_edit_id"])
        again = not acknowledged or edit in acknowledged
        acknowledged.add(edit)
        fixed = getattr(figure, "_flinkstate_layout", {}).get("width") is not None
        if again and not fixed:
            figure._send_relayout_msg({"autosize": True})

    figure.observe(drawn, names="_js2py_traceDeltas")


def show_spec(target: go.FigureWidget, spec: Mapping[str, Any] | go.Figure) -> None:
    """Copy a figure (plotly JSON or a ``go.Figure``) into a live figure, in place.

    The first figure, and one with other traces, is set through plotly's validating setters.
    After that only the properties that differ from what the widget shows are sent, in one
    update: re-sending thousands of unchanged points at every step would cost most of the
    step's time. The page does not redraw from scratch and the user's zoom stays.

    Every trace in the update gets a value for every property in it (its current one where it
    did not change). Plotly's browser model keeps the figure for pages that draw it later (a
    figure shown inside a box, a notebook reopened) and writes a property missing for one
    trace as the string "_undefined_" into that trace: a page drawing it then lost the nodes
    of every trace whose positions had not changed.
    """
    if isinstance(spec, go.Figure):
        spec = spec.to_plotly_json()
    data = [_flatten(trace) for trace in spec.get("data", [])]
    layout = dict(spec.get("layout", {}))
    shown: list[dict[str, Any]] | None = getattr(target, "_flinkstate_shown", None)
    previous: dict[str, Any] = getattr(target, "_flinkstate_layout", {})
    relayout: dict[str, Any] = {k: None for k in previous.keys() - layout.keys()}
    relayout.update((k, v) for k, v in layout.items() if not _same(previous.get(k, _MISSING), v))
    if (
        shown is not None
        and len(shown) == len(data) == len(target.data)
        and all(old.get("type") == new.get("type") for old, new in zip(shown, data, strict=True))
    ):
        edits: dict[int, dict[str, Any]] = {}
        for index, (old, new) in enumerate(zip(shown, data, strict=True)):
            changed = {key: None for key in old.keys() - new.keys()}
            changed.update(
                (key, value)
                for key, value in new.items()
                if key != "type" and not _same(old.get(key, _MISSING), value)
            )
            if changed:
                edits[index] = changed
        indexes = sorted(edits)
        keys = sorted({key for changed in edits.values() for key in changed})
        restyle = {key: [edits[i].get(key, data[i].get(key)) for i in indexes] for key in keys}
        if restyle or relayout:
            target.plotly_update(
                restyle_data=restyle, relayout_data=relayout, trace_indexes=indexes
            )
    else:
        with target.batch_update():
            target.data = []
            if data:
                target.add_traces([_unflatten(trace) for trace in data])
            if relayout:
                target.layout.update(relayout, overwrite=True)
    target._flinkstate_shown = data
    target._flinkstate_layout = layout


_MISSING = object()


def _flatten(trace: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"marker": {"size": 3}}`` as ``{"marker.size": 3}``: the paths plotly can set."""
    flat: dict[str, Any] = {}
    for key, value in trace.items():
        if isinstance(value, Mapping) and "bdata" in value:
            flat[f"{prefix}{key}"] = _typed_array(value)
        elif isinstance(value, Mapping):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _typed_array(encoded: Mapping[str, Any]) -> np.ndarray:
    """A numpy array back from plotly's JSON encoding of one (``bdata``, ``dtype``, ``shape``),
    so the live figure holds the same values as a figure built from the array."""
    values = np.frombuffer(base64.b64decode(encoded["bdata"]), dtype=np.dtype(encoded["dtype"]))
    shape = encoded.get("shape")
    if shape:
        values = values.reshape([int(n) for n in str(shape).split(",")])
    return values


def _same(old: object, new: object) -> bool:
    if isinstance(old, np.ndarray) or isinstance(new, np.ndarray):
        return (
            isinstance(old, np.ndarray)
            and isinstance(new, np.ndarray)
            and old.shape == new.shape
            and bool(np.array_equal(old, new))
        )
    return old == new


def _unflatten(flat: Mapping[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for path, value in flat.items():
        *parents, leaf = path.split(".")
        node = nested
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return nested


def guarded(message: widgets.HTML, action: Callable[[], None]) -> bool:
    """Run ``action``; a refusal from the model is shown in ``message`` instead of raised."""
    try:
        action()
    except FlinkstateError as error:
        message.value = refusal(str(error))
        return False
    return True


def icon_button(label: str, icon: str, tooltip: str) -> widgets.Button:
    """A button with an icon and a tooltip that says what it does."""
    return widgets.Button(
        description=label, icon=icon, tooltip=tooltip, layout=widgets.Layout(width="auto")
    )
