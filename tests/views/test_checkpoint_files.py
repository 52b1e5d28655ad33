"""The figures of a real checkpoint show the summary's numbers."""

from __future__ import annotations

from flinkstate.flinkcheckpoint.export import ExchangeSpec, to_dataset
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.flinkcheckpoint.summary import summarize
from flinkstate.views.checkpoint_files import in_flight_figure, key_group_figure, records_figure
from tests.flinkcheckpoint.test_metadata import CHECKPOINTS


def test_bars_are_the_bytes_and_records_of_each_channel() -> None:
    checkpoint = next(p for p in CHECKPOINTS if p.parents[1].name == "keyed-hash-p2-p4")
    summary = summarize(checkpoint, value=value_decoder("Tuple2<Long,String>"))
    figure = in_flight_figure(summary)
    inputs, outputs, split = figure.data
    channels = summary["logical_channels"]
    assert list(inputs.y) == [c["input_bytes"] for c in channels]
    assert list(outputs.y) == [c["output_bytes"] for c in channels]
    assert len(split.x) == sum(c["split_record"] for c in channels) == 4
    assert "checkpoint 48" in figure.layout.title.text
    records = records_figure(summary)
    assert sum(records.data[0].y) == summary["totals"]["records"] == 1643


def test_key_group_bars_are_the_exported_keyed_state() -> None:
    checkpoint = next(p for p in CHECKPOINTS if p.parents[1].name == "keyed-hash-p2-p4")
    rows = (
        to_dataset(
            checkpoint,
            {"to-record->slow-counter": ExchangeSpec("hash", key=key_function("f0%1000"))},
            value=value_decoder("Tuple2<Long,String>"),
        )
        .tables["keyed_state"]
        .to_pylist()
    )
    figure = key_group_figure(rows)
    assert [t.name for t in figure.data] == [f"subtask {i}" for i in range(4)]
    for subtask, trace in enumerate(figure.data):
        assert list(trace.x) == list(range(32 * subtask, 32 * subtask + 32))
    assert sum(sum(t.y) for t in figure.data) == 1000
