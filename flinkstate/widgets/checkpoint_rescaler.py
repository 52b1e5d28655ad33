"""A widget to ask Spark what a new parallelism does to a checkpoint's in-flight data.

Pick a checkpoint dataset and an exchange, move the slider: the sankey, the per-subtask bars and
the key-group heatmap follow. What does not depend on the slider is computed once per
checkpoint and kept: the tables and each record's key group stay cached in Spark
(:class:`~flinkstate.spark.rescaling.RescalingPipeline`), and the what-if sweep over the
slider's whole range is one Spark job run when the checkpoint is picked. While an answer is
computed the figures on show are greyed and a bar counts the Spark phases and their tasks, so
a long job is seen to move and an old answer is not mistaken for the new one. A value Flink
would refuse is reported in the widget; the figures keep the last valid answer.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import ipywidgets as widgets

from flinkstate.errors import InvalidParameterError
from flinkstate.spark.rescaling import RescaleResult, RescalingPipeline
from flinkstate.spark.tables import load
from flinkstate.views.movement import (
    key_group_heatmap,
    movement_sankey,
    subtask_bars,
    sweep_figure,
)
from flinkstate.views.rescaling import not_keyed_note
from flinkstate.widgets.controls import (
    UnclampedIntSlider,
    guarded,
    live_figure,
    refusal,
    refused_no_choice,
    show_spec,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: the slider's upper end: enough to see the trend without a long sweep
SLIDER_MAX = 12
#: the CSS class of the figures while they show an answer that is being replaced
STALE = "flinkstate-stale"
_STALE_STYLE = f"<style>.{STALE} {{ opacity: 0.35; }}</style>"


class CheckpointRescaler:
    """Checkpoint and exchange pickers, a parallelism slider, four live figures."""

    def __init__(
        self,
        spark: SparkSession,
        checkpoints: Mapping[str, Path],
        *,
        checkpoint: str | None = None,
        to: int = 3,
    ) -> None:
        if not checkpoints:
            raise InvalidParameterError("give at least one checkpoint dataset")
        self.spark = spark
        self.checkpoints = dict(checkpoints)
        first = checkpoint if checkpoint is not None else next(iter(self.checkpoints))
        if first not in self.checkpoints:
            raise InvalidParameterError(
                f"unknown checkpoint {first!r}; known: {', '.join(self.checkpoints)}"
            )
        _check_to(to, SLIDER_MAX)  # as the slider refuses it, not moved into range
        self.checkpoint = widgets.Dropdown(
            options=list(self.checkpoints), value=first, description="checkpoint"
        )
        self.exchange = widgets.Dropdown(options=[], description="exchange")
        #: a value set outside the slider's range reaches ``_on_to``, which refuses it in
        #: words: ipywidgets' own slider moved it to the nearest end without a word
        self.to = UnclampedIntSlider(
            value=to,
            min=1,
            max=SLIDER_MAX,
            description="new par.",
            continuous_update=False,
        )
        self.message = widgets.HTML()
        self.summary = widgets.HTML()
        self.sankey = live_figure()
        self.bars = live_figure()
        self.heatmap = live_figure()
        #: the heatmap, hidden for an exchange that is not keyed, and the sentence saying why
        self.heatmap_box = widgets.VBox([self.heatmap])
        self.not_keyed = widgets.HTML()
        self.sweep = live_figure()
        self.figures = widgets.VBox(
            [self.sankey, self.bars, self.not_keyed, self.heatmap_box, self.sweep]
        )
        self.progress = widgets.IntProgress(min=0, max=1, bar_style="info")
        self.status = widgets.HTML()
        self.computing = widgets.HBox(
            [self.progress, self.status], layout=widgets.Layout(display="none")
        )
        self._busy = 0
        self.pipeline: RescalingPipeline | None = None
        self.swept: RescaleResult | None = None
        self.result: RescaleResult | None = None
        self._opening = False
        #: the parallelism of the answer on show (the slider is put back to it on a refusal)
        self._shown_to = to
        #: the checkpoint of the answer on show (the picker is put back to it on a refusal)
        self._shown_checkpoint: str | None = None
        self._putting_back = False
        self.checkpoint.observe(self._on_checkpoint, names="value")
        self.exchange.observe(self._on_exchange, names="value")
        self.to.observe(self._on_to, names="value")
        self._guard(self._open)

    @property
    def widget(self) -> widgets.VBox:
        return widgets.VBox(
            [
                widgets.HTML(_STALE_STYLE, layout=widgets.Layout(display="none")),
                widgets.HBox([self.checkpoint, self.exchange, self.to]),
                self.computing,
                self.message,
                self.summary,
                self.figures,
            ]
        )

    def close(self) -> None:
        if self.pipeline is not None:
            self.pipeline.close()
            self.pipeline = None

    def _guard(self, action: Callable[[], None]) -> None:
        self.message.value = ""
        with self._computing():
            guarded(self.message, action)

    @contextmanager
    def _computing(self) -> Iterator[None]:
        """Grey the figures and show the progress until the new answer, or a refusal, is
        shown; re-entrant, since a control changed by an action fires its own observer."""
        self._busy += 1
        if self._busy == 1:
            self._progress(0, 0, "")
            self.computing.layout.display = "flex"
            self.figures.add_class(STALE)
        try:
            yield
        finally:
            self._busy -= 1
            if self._busy == 0:
                self.figures.remove_class(STALE)
                self.computing.layout.display = "none"

    def _progress(self, done: int, phases: int, what: str) -> None:
        """The bar at ``done`` of ``phases`` (0: not counted) and what runs now; Spark's
        phases call it from a watcher thread too, which ipywidgets allows."""
        step = f" (phase {min(done + 1, phases)} of {phases})" if phases else ""
        with self.progress.hold_trait_notifications():  # no clamping to the old bounds
            self.progress.max = max(phases, 1)
            self.progress.value = min(done, self.progress.max)
        self.status.value = f"computing&hellip;{step} {html.escape(what)}"

    def _open(self) -> None:
        """A new checkpoint: read it and sweep the slider's range once, then answer the
        slider. Nothing on show changes until the sweep is done: a refusal (or Ctrl-C) keeps
        the answer on show, with its pipeline, and puts the picker back to its checkpoint."""
        name = self.checkpoint.value
        self._progress(0, 0, f"reading {name}")
        pipeline: RescalingPipeline | None = None
        try:
            pipeline = RescalingPipeline(load(self.spark, self.checkpoints[name]))
            limit = max(
                1, min(SLIDER_MAX, *(op.max_parallelism for op in pipeline.shape.operators))
            )
            swept = pipeline.analyse(list(range(1, limit + 1)), progress=self._progress)
        except BaseException:
            if pipeline is not None:
                pipeline.close()
            self._put_back_checkpoint()
            raise
        self.close()
        self.pipeline, self.swept, self._shown_checkpoint = pipeline, swept, name
        self.to.max = limit
        exchanges = list(swept.exchanges)
        self._opening = True  # the options change fires the exchange observer: not yet
        try:
            self.exchange.options = exchanges
            self.exchange.value = exchanges[0] if exchanges else None
        finally:
            self._opening = False
        show_spec(self.sweep, sweep_figure(swept))
        self._ask()

    def _put_back_checkpoint(self) -> None:
        """The picker back at the checkpoint of the answer on show, without opening it."""
        if self._shown_checkpoint is None or self.checkpoint.value == self._shown_checkpoint:
            return
        self._putting_back = True
        try:
            self.checkpoint.value = self._shown_checkpoint
        finally:
            self._putting_back = False

    def _on_checkpoint(self, change: dict[str, object]) -> None:
        if not self._putting_back and not refused_no_choice(self.checkpoint, change, self.message):
            self._guard(self._open)

    def _on_exchange(self, change: dict[str, object]) -> None:
        """Another exchange drawn; none is refused (but a checkpoint without any has none)."""
        if not self._opening and not refused_no_choice(self.exchange, change, self.message):
            self._guard(self._draw)

    def _on_to(self, _change: dict[str, object]) -> None:
        if not self._putting_back:
            self._guard(self._ask)

    def _ask(self) -> None:
        """The slider moved: the answer at that parallelism comes from the cached sweep; a
        parallelism outside the slider's range (set from code: the page keeps it inside) is
        refused in words, and the slider put back to the answer on show."""
        if self.swept is None:
            return
        to = int(self.to.value)
        try:
            _check_to(to, self.to.max)
        except InvalidParameterError as error:
            self.message.value = refusal(f"Not applied: {error}")
            self._put_back()
            return
        self.result = self.swept
        self._shown_to = to
        self._draw()

    def _put_back(self) -> None:
        """The slider back at the parallelism of the answer on show, without asking again."""
        self._putting_back = True
        try:
            self.to.value = min(self._shown_to, self.to.max)
        finally:
            self._putting_back = False

    def _draw(self) -> None:
        if self._opening:
            return
        result, pipeline = self.result, self.pipeline
        exchange = self.exchange.value
        if result is None or pipeline is None or not exchange:
            self.summary.value = "<i>No exchange of this checkpoint carries in-flight data.</i>"
            return
        to = int(self.to.value)
        show_spec(self.sankey, movement_sankey(result, exchange, to))
        show_spec(self.bars, subtask_bars(result, exchange, to))
        note = not_keyed_note(pipeline.shape.exchange(exchange).partitioner)
        self.not_keyed.value = "" if note is None else f"<p><i>{html.escape(note)}</i></p>"
        self.heatmap_box.layout.display = "none" if note else ""
        if note is None:
            plan = result.plans[to][exchange]
            old_p, new_p = plan.downstream_parallelism
            self._progress(0, 0, f"key groups of {exchange}")
            groups = pipeline.key_groups(exchange, new_p)
            show_spec(self.heatmap, key_group_heatmap(groups, exchange, old_p, new_p))
        row = result.sweep[(result.sweep["to"] == to) & (result.sweep["exchange"] == exchange)]
        r = row.iloc[0]
        self.summary.value = (
            f"<b>{html.escape(exchange)}</b> at {r['old_parallelism']} -> "
            f"{r['new_parallelism']}: {int(r['delivered_bytes']):,} bytes read back "
            f"({r['amplification']:.2f} x the checkpoint), {int(r['moved_bytes']):,} by another "
            f"subtask; {int(r['filtered_records']):,} of {int(r['records']):,} records filtered "
            f"out; {int(r['spanning_records']):,} span buffers; busiest subtask "
            f"{r['skew']:.2f} x the mean."
        )


def _check_to(to: object, limit: int) -> int:
    """``to`` if the slider can show it: a whole number from 1 to ``limit`` (its range: at
    most :data:`SLIDER_MAX`, and the checkpoint's max parallelism)."""
    if isinstance(to, bool) or not isinstance(to, int):
        raise InvalidParameterError(f"the new parallelism must be a whole number, got {to!r}")
    if not 1 <= to <= limit:
        raise InvalidParameterError(
            f"new parallelism {to} is outside the slider's range, 1 to {limit} (at most "
            f"{SLIDER_MAX}, and this checkpoint's max parallelism)"
        )
    return to
