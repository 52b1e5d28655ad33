"""The Spark rescale widget, driven as a user would: pick, slide, see the figures follow."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.spark.rescaling import RescaleResult, RescalingPipeline
from flinkstate.widgets.checkpoint_rescaler import STALE, CheckpointRescaler

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[2] / "data"
CHECKPOINTS = {name: DATA / name for name in ("keyed", "rebalance", "spanning-records")}


@pytest.fixture(scope="module")
def rescaler(spark: SparkSession) -> Iterator[CheckpointRescaler]:
    made = CheckpointRescaler(spark, CHECKPOINTS, checkpoint="keyed", to=3)
    yield made
    made.close()


def test_opens_with_the_answer_at_the_slider(rescaler: CheckpointRescaler) -> None:
    assert rescaler.message.value == ""
    assert rescaler.exchange.value == "source->counter"
    assert "at 4 -> 3" in rescaler.sankey.layout.title.text
    assert "parallelism 3" in rescaler.bars.layout.title.text
    assert "key groups change subtask" in rescaler.heatmap.layout.title.text
    assert rescaler.swept is not None
    assert sorted(rescaler.swept.targets) == list(range(1, rescaler.to.max + 1))
    assert len(rescaler.sweep.data) == 3  # one exchange carries state: 3 lines


def test_slider_redraws_from_the_cached_sweep(rescaler: CheckpointRescaler) -> None:
    rescaler.checkpoint.value = "keyed"
    swept = rescaler.swept
    rescaler.to.value = 7
    assert rescaler.swept is swept  # no new sweep for a slider move
    assert "at 4 -> 7" in rescaler.sankey.layout.title.text
    assert len(rescaler.bars.data[0].x) == 7
    assert "4 -> 7" in rescaler.summary.value
    assert rescaler.message.value == ""


def test_another_checkpoint_and_exchange(rescaler: CheckpointRescaler) -> None:
    rescaler.checkpoint.value = "rebalance"
    assert rescaler.message.value == ""
    assert rescaler.exchange.options == ("source->map", "map->slow", "slow->sink")
    # no empty key-group chart for a rebalance: a sentence instead
    assert rescaler.heatmap_box.layout.display == "none"
    assert "not keyed (rebalance()): records go round robin" in rescaler.not_keyed.value
    rescaler.exchange.value = "map->slow"
    assert "map->slow" in rescaler.sankey.layout.title.text
    assert rescaler.heatmap_box.layout.display == ""
    assert rescaler.not_keyed.value == ""
    assert "key groups change subtask" in rescaler.heatmap.layout.title.text
    rescaler.to.value = 1
    assert "at 4 -> 1" in rescaler.sankey.layout.title.text


def _computing(rescaler: CheckpointRescaler) -> tuple[bool, str]:
    """Whether the figures are greyed, and whether the progress shows."""
    return STALE in rescaler.figures._dom_classes, rescaler.computing.layout.display


def _other_checkpoint(rescaler: CheckpointRescaler) -> str:
    return next(name for name in CHECKPOINTS if name != rescaler.checkpoint.value)


def test_figures_grey_while_spark_computes_and_the_phases_count(
    rescaler: CheckpointRescaler, monkeypatch: pytest.MonkeyPatch
) -> None:
    during: list[tuple[bool, str]] = []
    statuses: list[str] = []
    bar: list[int] = []
    analyse = RescalingPipeline.analyse

    def watched(pipeline: RescalingPipeline, *args: Any, **kwargs: Any) -> RescaleResult:
        during.append(_computing(rescaler))
        result = analyse(pipeline, *args, **kwargs)
        during.append(_computing(rescaler))
        return result

    def seen(change: dict[str, Any]) -> None:
        statuses.append(change["new"])

    def counted(change: dict[str, Any]) -> None:
        bar.append(change["new"])

    monkeypatch.setattr(RescalingPipeline, "analyse", watched)
    assert _computing(rescaler) == (False, "none")
    rescaler.status.observe(seen, names="value")
    rescaler.progress.observe(counted, names="value")
    try:
        rescaler.checkpoint.value = _other_checkpoint(rescaler)
    finally:
        rescaler.status.unobserve(seen, names="value")
        rescaler.progress.unobserve(counted, names="value")
    assert during == [(True, "flex"), (True, "flex")]
    for phase in range(1, 5):
        assert any(f"(phase {phase} of 4)" in status for status in statuses), statuses
    assert [n for n in bar if n] == [1, 2, 3, 4], bar  # the bar filled phase by phase
    assert _computing(rescaler) == (False, "none")  # the new answer is on show
    assert rescaler.message.value == ""
    assert f"{rescaler.exchange.value}" in rescaler.sankey.layout.title.text


def test_a_refused_answer_ungreys_the_figures(
    rescaler: CheckpointRescaler, monkeypatch: pytest.MonkeyPatch
) -> None:
    during: list[tuple[bool, str]] = []

    def refused(pipeline: RescalingPipeline, *args: Any, **kwargs: Any) -> RescaleResult:
        during.append(_computing(rescaler))
        raise InvalidParameterError("no answer today")

    shown = rescaler.checkpoint.value, rescaler.exchange.value, rescaler.pipeline
    title = rescaler.sankey.layout.title.text
    monkeypatch.setattr(RescalingPipeline, "analyse", refused)
    rescaler.checkpoint.value = _other_checkpoint(rescaler)
    assert during == [(True, "flex")]
    assert "no answer today" in rescaler.message.value
    assert _computing(rescaler) == (False, "none")
    # the answer on show kept, and the picker put back to its checkpoint: the slider answers
    # for that checkpoint again (the new checkpoint's pipeline with the old exchange was a
    # refusal of its own, "no exchange 'map->slow' in this checkpoint")
    assert (rescaler.checkpoint.value, rescaler.exchange.value, rescaler.pipeline) == shown
    assert rescaler.sankey.layout.title.text == title
    rescaler.to.value = rescaler.to.value % rescaler.to.max + 1
    assert rescaler.message.value == ""
    assert f"-> {rescaler.to.value}" in rescaler.sankey.layout.title.text


def test_unknown_checkpoint_is_named(spark: SparkSession) -> None:
    with pytest.raises(InvalidParameterError, match="unknown checkpoint 'nope'"):
        CheckpointRescaler(spark, CHECKPOINTS, checkpoint="nope")


def test_a_checkpoint_flink_wrote_rescales_like_a_sample(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Notebook 7's last step: a real checkpoint, exported, in the same widget."""
    from flinkstate.dataset import write_dataset
    from flinkstate.flinkcheckpoint import real_checkpoint
    from flinkstate.flinkcheckpoint.export import ExchangeSpec, to_dataset
    from flinkstate.flinkcheckpoint.key_selector import key_function
    from flinkstate.flinkcheckpoint.stream_element import value_decoder

    dataset = to_dataset(
        real_checkpoint("keyed-hash-p2-p4"),
        {"to-record->slow-counter": ExchangeSpec("hash", key=key_function("f0%1000"))},
        value=value_decoder("Tuple2<Long,String>"),
    )
    write_dataset(dataset, tmp_path / "real")
    made = CheckpointRescaler(spark, {"real": tmp_path / "real"}, to=3)
    try:
        assert made.message.value == ""
        assert made.exchange.value == "to-record->slow-counter"
        assert "at 4 -> 3" in made.sankey.layout.title.text
        made.to.value = 2
        assert "at 4 -> 2" in made.sankey.layout.title.text
        assert made.message.value == ""
    finally:
        made.close()


@pytest.mark.parametrize("typed", [50, 0, -5])
def test_a_parallelism_outside_the_slider_is_refused_in_words_not_clamped(
    rescaler: CheckpointRescaler, typed: int
) -> None:
    """ipywidgets' slider moved 50 to 12 (and 0 to 1) without a word: the project's rule is
    the stepper's, a refusal in the widget and the answer on show kept."""
    rescaler.checkpoint.value = "keyed"
    rescaler.to.value = 5
    rescaler.to.value = typed
    assert rescaler.message.value == (
        f"<span style='color:#d62728'>Not applied: new parallelism {typed} is outside the "
        "slider&#x27;s range, 1 to 12 (at most 12, and this checkpoint&#x27;s max "
        "parallelism)</span>"
    )
    assert rescaler.to.value == 5  # put back to the answer on show
    assert "at 4 -> 5" in rescaler.sankey.layout.title.text
    rescaler.to.value = 6  # and the slider answers again
    assert rescaler.message.value == ""
    assert "at 4 -> 6" in rescaler.sankey.layout.title.text


@pytest.mark.parametrize("to", [50, 0])
def test_the_constructor_refuses_a_parallelism_the_slider_cannot_show(
    spark: SparkSession, to: int
) -> None:
    with pytest.raises(InvalidParameterError, match=f"new parallelism {to} is outside"):
        CheckpointRescaler(spark, CHECKPOINTS, to=to)


def test_no_checkpoint_or_exchange_is_refused_in_words(rescaler: CheckpointRescaler) -> None:
    """``checkpoint.value = None`` was a KeyError; ``exchange.value = None`` left the figures
    of the exchange before under "No exchange of this checkpoint carries in-flight data"."""
    rescaler.checkpoint.value = "keyed"
    rescaler.checkpoint.value = None
    assert "Not applied: checkpoint must be one of its choices, got None" in (
        rescaler.message.value
    )
    assert rescaler.checkpoint.value == "keyed"
    rescaler.exchange.value = None
    assert "Not applied: exchange must be one of its choices, got None" in rescaler.message.value
    assert rescaler.exchange.value == "source->counter"
