"""Logical channels inferred from the metadata alone are the ones Flink's job had, and their
stitched records are Flink's."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint import real_checkpoint
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.inflight import (
    Edge,
    check_edges,
    infer_edges,
    logical_channels,
    read_records,
)
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, read_metadata
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


UNION = real_checkpoint("union-keyed-p2-p3-p4")


def test_a_unions_two_gates_are_each_matched_to_their_own_upstream() -> None:
    """``to-record (p=2) UNION to-record-b (p=3) -> keyBy -> slow-counter (p=4)``: the keyed
    operator reads gate 0 from the first input of the union and gate 1 from the second (the
    order the job gave them). Gate 1's channel 2 fits only the 3-subtask upstream, which
    leaves to-record for gate 0; before, only gate 1 was inferred and gate 0's 85 KB of
    in-flight records were missing from the totals without a word."""
    metadata = read_metadata(UNION)
    assert [str(e) for e in infer_edges(metadata)] == [
        "to-record:0>slow-counter:0",
        "to-record-b:0>slow-counter:1",
    ]
    channels = logical_channels(metadata)
    covered = {id(h) for c in channels for h in (c.input, c.output) if h is not None}
    assert all(id(h) in covered for _, h in metadata.channel_handles())
    upstream_subtasks: dict[str, set[int]] = {}
    for channel in channels:
        upstream_subtasks.setdefault(channel.edge.upstream, set()).add(channel.upstream_subtask)
    assert upstream_subtasks == {"to-record": {0, 1}, "to-record-b": {0, 1, 2}}


def without(metadata: CheckpointMetadata, label: str) -> CheckpointMetadata:
    """``metadata`` with one operator's channel state gone."""
    return dataclasses.replace(
        metadata,
        operators=tuple(
            dataclasses.replace(
                o,
                subtasks=tuple(
                    dataclasses.replace(s, input_channel_state=(), result_subpartition_state=())
                    for s in o.subtasks
                ),
            )
            if o.label == label
            else o
            for o in metadata.operators
        ),
    )


def test_a_union_whose_gates_both_fit_both_upstreams_is_refused_with_the_options() -> None:
    """Two upstreams of equal parallelism leave two ways to match; none is guessed."""
    metadata = read_metadata(UNION)
    wider = dataclasses.replace(
        metadata,
        operators=tuple(
            dataclasses.replace(o, parallelism=3) if o.label == "to-record" else o
            for o in metadata.operators
        ),
    )
    with pytest.raises(InvalidParameterError) as raised:
        infer_edges(wider)
    message = str(raised.value)
    assert "fits more than one set of exchanges" in message
    for option in (
        "--edge 'to-record:0>slow-counter:0'",
        "--edge 'to-record-b:0>slow-counter:0'",
        "--edge 'to-record-b:0>slow-counter:1'",
    ):
        assert option in message


def test_a_gate_whose_upstream_has_no_output_state_is_refused_with_the_options() -> None:
    metadata = without(read_metadata(UNION), "to-record")
    with pytest.raises(InvalidParameterError, match="no set of exchanges accounts") as raised:
        infer_edges(metadata)
    assert "--edge 'to-record:0>slow-counter:0'" in str(raised.value)


@pytest.mark.parametrize(
    ("edges", "message"),
    [
        (["slow-counter:0>to-record:0"], "matches no channel state"),
        (["to-record:0>slow-counter:1"], "slow-counter has no input state on gate 1"),
        (["to-record:0>slow-counter:1", "to-record-b:0>slow-counter:0"], "does not fit"),
        (["to-record:1>slow-counter:0"], "to-record has no output state on partition 1"),
        (["to-record:0>slow-counter:3"], "slow-counter has no input state on gate 3"),
        (["to-record:0>slow-counter:0", "to-record:0>slow-counter:0"], "share an end"),
        (["slow-counter:0>slow-counter:0"], "from an operator to itself"),
    ],
)
def test_named_edges_must_be_ones_that_can_exist(edges: list[str], message: str) -> None:
    """Reversed, misnumbered or doubled edges used to be accepted with wrong totals."""
    union = any("to-record-b" in e for e in edges)
    metadata = read_metadata(
        real_checkpoint("union-keyed-p2-p3-p4" if union else "keyed-hash-p2-p4")
    )
    with pytest.raises(InvalidParameterError, match=message):
        logical_channels(metadata, [Edge.parse(e) for e in edges])


def test_state_no_named_edge_covers_is_a_warning() -> None:
    metadata = read_metadata(UNION)
    warnings = check_edges(metadata, [Edge.parse("to-record:0>slow-counter:0")])
    assert warnings == (
        "the input state of slow-counter gate 1 (7 channel(s), 51236 bytes) is on no --edge: "
        "left out of the logical channels",
        "the output state of to-record-b partition 0 (12 channel(s), 43284 bytes) is on no "
        "--edge: left out of the logical channels",
    )
