"""Logical channels inferred from the metadata alone are the ones Flink's job had, and their
stitched records are Flink's."""

from __future__ import annotations

from pathlib import Path

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.inflight import Edge, infer_edges, logical_channels, read_records
from flinkstate.flinkcheckpoint.metadata import read_metadata
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from tests.flinkcheckpoint.test_metadata import CHECKPOINTS, ground_truth


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_inferred_channels_are_flinks_stitched_channels(checkpoint: Path) -> None:
    metadata, truth = read_metadata(checkpoint), ground_truth(checkpoint)
    edges = infer_edges(metadata)
    assert len(edges) == 1  # one keyBy or rebalance exchange carries state in every job
    decoder = value_decoder("Tuple2<Long,String>")
    ours = {}
    with StateFiles(checkpoint) as files:
        for channel in logical_channels(metadata, edges):
            records = read_records(channel, files, decoder)
            key = (
                channel.edge.upstream,
                channel.upstream_subtask,
                channel.edge.partition,
                channel.edge.downstream,
                channel.downstream_subtask,
                channel.edge.gate,
            )
            ours[key] = (
                records.input_bytes,
                records.output_bytes,
                len(records.records),
                records.trailing,
                records.split,
            )
    theirs = {
        (
            c["upstream_uid"],
            c["upstream_subtask"],
            c["partition_idx"],
            c["downstream_uid"],
            c["downstream_subtask"],
            c["gate_idx"],
        ): (
            c["input_state_bytes"],
            c["output_state_bytes"],
            c["decode"]["num_complete_elements"],
            c["decode"]["trailing_partial_bytes"],
            c.get("record_split_across_input_and_output_state", False),
        )
        for c in truth["stitched_channels"]
    }
    assert ours == theirs


def test_edges_are_parsed_and_bad_ones_refused() -> None:
    assert Edge.parse("to-record:0>slow-counter:0") == Edge("to-record", 0, "slow-counter", 0)
    with pytest.raises(InvalidParameterError, match="UP:PARTITION>DOWN:GATE"):
        Edge.parse("to-record>slow-counter")
    metadata = read_metadata(CHECKPOINTS[0])
    with pytest.raises(InvalidParameterError, match="no operator 'nowhere'"):
        logical_channels(metadata, [Edge("nowhere", 0, "sink", 0)])
