"""The figures of a real checkpoint show the summary's numbers."""

from __future__ import annotations

from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.flinkcheckpoint.summary import summarize
from flinkstate.views.checkpoint_files import in_flight_figure, records_figure
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
