"""A widget to explore a rescale: pick an exchange and parallelisms, see who reads what.

The controller validates every value before it touches a figure: a value Flink would refuse
(a parallelism above max parallelism, say) is reported in the widget and the figures keep
showing the last valid choice. The number boxes never clamp what is typed (0 stays 0 and is
refused with Flink's bounds). A rescale too large to draw subtask by subtask is refused the
same way, with the limit, before any of it is computed. No traceback reaches the user.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from flinkstate.errors import FlinkstateError, InvalidParameterError
from flinkstate.keygroups import (
    check_max_parallelism,
    check_parallelism,
    check_parallelism_against_max,
)
from flinkstate.rescale import (
    ExchangeRescale,
    ExchangeSummary,
    Partitioner,
    rescale_exchange,
    summarise_exchange,
)
from flinkstate.views.palette import html_table
from flinkstate.views.rescaling import (
    key_group_ownership_figure,
    not_keyed_note,
    state_reading_figure,
)
from flinkstate.widgets.controls import live_figure, show_spec

PARTITIONER_CHOICES = [(p.datastream_call, p.name) for p in Partitioner]
#: the graph draws a node per subtask, 40 px each: more is no longer a picture
MAX_DRAWN_SUBTASKS = 256
#: values of the plan drawn and tabulated (virtual channels, state handles, channels): its cost
#: (keyBy from 4095 to 2 subtasks is 17 million virtual channels)
MAX_PLAN_SIZE = 200_000


class RescaleExplorer:
    """Controls (partitioner, max parallelism, old and new parallelism) and two live figures;
    the key-group figure only for a keyed exchange, a sentence saying why for any other."""

    def __init__(
        self,
        partitioner: str = "HASH",
        max_parallelism: int = 128,
        old_parallelism: int = 3,
        new_parallelism: int = 2,
    ) -> None:
        self.partitioner = widgets.Dropdown(
            options=PARTITIONER_CHOICES,
            value=Partitioner.parse(partitioner).name,
            description="exchange",
        )
        self.max_parallelism = _parallelism_box(max_parallelism, "max par.")
        self.old_parallelism = _parallelism_box(old_parallelism, "old par.")
        self.new_parallelism = _parallelism_box(new_parallelism, "new par.")
        self.recover_on_downstream = widgets.Checkbox(
            value=False,
            description="recover output on downstream",
        )
        self.message = widgets.HTML()
        self.summary = widgets.HTML()
        self.ownership = live_figure()
        self.ownership_box = widgets.VBox([self.ownership])
        self.not_keyed = widgets.HTML()
        self.reading = live_figure()
        self.plan: ExchangeRescale | None = None
        for control in self.controls:
            control.observe(self._on_change, names="value")
        self.refresh()

    @property
    def controls(self) -> tuple[widgets.ValueWidget, ...]:
        return (
            self.partitioner,
            self.max_parallelism,
            self.old_parallelism,
            self.new_parallelism,
            self.recover_on_downstream,
        )

    @property
    def widget(self) -> widgets.Widget:
        """The whole explorer, ready to display."""
        return widgets.VBox(
            [
                widgets.HBox([self.partitioner, self.recover_on_downstream]),
                widgets.HBox([self.max_parallelism, self.old_parallelism, self.new_parallelism]),
                self.message,
                self.not_keyed,
                self.ownership_box,
                self.reading,
                self.summary,
            ]
        )

    def _on_change(self, _change: dict[str, Any]) -> None:
        self.refresh()

    def refresh(self) -> bool:
        """Recompute and redraw; on a refused value show why and keep the last figures."""
        max_p = self.max_parallelism.value
        old_p, new_p = self.old_parallelism.value, self.new_parallelism.value
        try:
            check_max_parallelism(max_p)
            check_parallelism(old_p, "old parallelism")
            check_parallelism(new_p, "new parallelism")
            check_parallelism_against_max(old_p, max_p)
            check_parallelism_against_max(new_p, max_p)
            recover = self.recover_on_downstream.value
            kind = Partitioner.parse(self.partitioner.value)
            _check_drawn_subtasks(kind, old_p, new_p)
            # sized in ranges first, so a plan too large to draw is never built
            _check_plan_size(
                summarise_exchange(
                    kind, (old_p, new_p), (old_p, new_p), recover_output_on_downstream=recover
                )
            )
            plan = rescale_exchange(
                self.partitioner.value,
                (old_p, new_p),
                (old_p, new_p),
                recover_output_on_downstream=recover,
            )
        except FlinkstateError as error:
            self.message.value = (
                f"<span style='color:#d62728'>Not applied: {html.escape(str(error))}</span>"
            )
            return False
        self.message.value = ""
        self.plan = plan
        note = not_keyed_note(self.partitioner.value)
        self.not_keyed.value = "" if note is None else f"<p><i>{html.escape(note)}</i></p>"
        self.ownership_box.layout.display = "none" if note else ""
        if note is None:
            show_spec(self.ownership, key_group_ownership_figure(max_p, old_p, new_p))
        show_spec(self.reading, state_reading_figure(plan))
        self.summary.value = _summary_html(plan)
        return True


def _parallelism_box(value: int, label: str) -> widgets.IntText:
    """A number box that keeps what is typed: a bounded box would silently clamp 0 to 1 and
    10^9 to 32768 and show a figure of a value nobody chose; ``refresh`` refuses it instead,
    with Flink's bounds."""
    return widgets.IntText(value=value, description=label)


def _table_command(kind: Partitioner, old_p: int, new_p: int) -> str:
    call = kind.datastream_call.removesuffix("()")
    return f"flinkstate mapping --partitioner {call} --old {old_p} --new {new_p}"


def _check_drawn_subtasks(kind: Partitioner, old_p: int, new_p: int) -> None:
    """Refuse more subtasks than the graph can draw, naming the limit."""
    if max(old_p, new_p) > MAX_DRAWN_SUBTASKS:
        raise InvalidParameterError(
            f"the explorer draws every subtask, at most {MAX_DRAWN_SUBTASKS} on a side, and "
            f"{old_p} -> {new_p} has {max(old_p, new_p)}; for the whole plan as a table run "
            f"`{_table_command(kind, old_p, new_p)}`"
        )


def _check_plan_size(plan: ExchangeSummary) -> None:
    """Refuse a plan too large to compute and draw at once, naming the limit."""
    old_p, new_p = plan.downstream_parallelism
    if plan.plan_size > MAX_PLAN_SIZE:
        raise InvalidParameterError(
            f"{plan.partitioner.datastream_call} {old_p} -> {new_p} is a plan of "
            f"{plan.plan_size:,} values (virtual channels, state handles, channels), more than "
            f"the {MAX_PLAN_SIZE:,} the explorer draws; choose smaller parallelisms, or run "
            f"`{_table_command(plan.partitioner, old_p, new_p)}` for it as a table"
        )


def _summary_html(plan: ExchangeRescale) -> str:
    if not plan.carries_channel_state:
        return f"<p>{html.escape(plan.note)}</p>"
    return html_table(
        ["new subtask", "reads input state of old", "virtual channels", "filters"],
        [
            [
                d.subtask,
                ", ".join(map(str, d.input_state_from)) or None,
                len(d.all_virtual_channels),
                d.filters,
            ]
            for d in plan.downstream
        ],
    )
