"""A widget to explore a rescale: pick an exchange and parallelisms, see who reads what.

The controller validates every value before it touches a figure: a value Flink would refuse
(a parallelism above max parallelism, say) is reported in the widget and the figures keep
showing the last valid choice. No traceback reaches the user.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from flinkstate.errors import FlinkstateError
from flinkstate.keygroups import UPPER_BOUND_MAX_PARALLELISM, check_parallelism_against_max
from flinkstate.rescale import ExchangeRescale, Partitioner, rescale_exchange
from flinkstate.views.palette import html_table
from flinkstate.views.rescaling import (
    key_group_ownership_figure,
    not_keyed_note,
    state_reading_figure,
)
from flinkstate.widgets.controls import live_figure, show_spec

PARTITIONER_CHOICES = [(p.datastream_call, p.name) for p in Partitioner]


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
            check_parallelism_against_max(old_p, max_p)
            check_parallelism_against_max(new_p, max_p)
            plan = rescale_exchange(
                self.partitioner.value,
                (old_p, new_p),
                (old_p, new_p),
                recover_output_on_downstream=self.recover_on_downstream.value,
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


def _parallelism_box(value: int, label: str) -> widgets.BoundedIntText:
    """A number box bounded as Flink bounds parallelism (1 to 32768)."""
    return widgets.BoundedIntText(
        value=value, min=1, max=UPPER_BOUND_MAX_PARALLELISM, description=label
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
