"""The reader against Flink's own loader, through PyFlink's Java gateway.

Every checkpoint in ``data/real-checkpoints`` and every one ``make real-checkpoints`` made (in
``data/generated-checkpoints``) is loaded by ``Checkpoints.loadCheckpointMetadata`` in the flink
extra's environment (``tools/real-checkpoints/flink_loader.py``) and by flinkstate's reader;
they must agree on every operator, subtask and handle. Without that environment these tests
skip, unless ``FLINKSTATE_REQUIRE_FLINK=1`` (as in CI) makes that a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.inflight import Edge, infer_edges
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, read_metadata
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.flinkcheckpoint.summary import summarize
from tests.flinkcheckpoint.made import GENERATED, ROOT, record_type
from tests.flinkcheckpoint.test_metadata import (
    COMMITTED,
    channel,
    delegate,
    keyed_handles,
    operator_state,
)

#: one worker of make test's xdist runs the module, so Flink's loader (one JVM) runs once
pytestmark = pytest.mark.xdist_group("flink-loader")

LOADER = ROOT / "tools" / "real-checkpoints" / "flink_loader.py"
FLINK_PYTHON = Path(os.environ.get("FLINKSTATE_FLINK_PYTHON", ROOT / ".venv-flink/bin/python"))
#: with the checkpoints of a job restored from one of them (``<variant>/restored/<job>/chk-N``)
MADE = sorted(
    p.parent
    for pattern in ("*/*/chk-*/_metadata", "*/restored/*/chk-*/_metadata")
    for p in GENERATED.glob(pattern)
)
ALL = [*COMMITTED, *MADE]

#: the exchanges of each of ``CheckpointJob``'s topologies (a union's first input is gate 0)
JOB_EDGES = {
    "keyed": ("to-record:0>slow-counter:0",),
    "rebalance": ("to-record:0>relay:0", "relay:0>slow-relay:0"),
    "union": ("to-record:0>slow-counter:0", "to-record-b:0>slow-counter:1"),
}


def _job_edges(checkpoint: Path, metadata: CheckpointMetadata) -> tuple[tuple[Edge, ...], bool]:
    """The made job's exchanges that carried state on at least one side at this checkpoint,
    and whether every one of them had state on both (an early checkpoint may hold a partition's
    buffers before any reached the gate)."""
    config = (checkpoint.parents[1] / "job-config.txt").read_text()
    topology = next(line for line in config.splitlines() if line.startswith("topology="))
    kind = "union" if " UNION " in topology else "rebalance" if "REBALANCE" in topology else "keyed"
    ends = {
        (metadata.by_id(o.operator_id).label, h.gate_or_partition, h.input)
        for o, h in metadata.channel_handles()
    }
    sides = [
        (
            edge,
            (edge.upstream, edge.partition, False) in ends,
            (edge.downstream, edge.gate, True) in ends,
        )
        for edge in map(Edge.parse, JOB_EDGES[kind])
    ]
    carried = [(edge, up and down) for edge, up, down in sides if up or down]
    return tuple(edge for edge, _ in carried), all(both for _, both in carried)


def _ids(path: Path) -> str:
    if GENERATED in path.parents:
        return f"made:{path.relative_to(GENERATED).parent.parent}/{path.name}"
    return f"committed:{path.parents[1].name}/{path.name}"


@pytest.fixture(scope="module")
def flink() -> dict[str, Any]:
    """Flink's report of every checkpoint, from one JVM."""
    if not FLINK_PYTHON.exists():
        reason = f"the flink extra is not installed ({FLINK_PYTHON}): make real-checkpoints"
        if os.environ.get("FLINKSTATE_REQUIRE_FLINK") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    result = subprocess.run(
        [str(FLINK_PYTHON), str(LOADER), *map(str, ALL)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_made_checkpoints_hold_in_flight_data() -> None:
    """What ``make real-checkpoints`` made (when it ran) is what these tests are for: unaligned
    checkpoints with channel state."""
    if not MADE:
        if os.environ.get("FLINKSTATE_REQUIRE_FLINK") == "1":
            pytest.fail(f"no checkpoints in {GENERATED}: make real-checkpoints")
        pytest.skip(f"no checkpoints in {GENERATED}")
    with_data = [p for p in MADE if any(h.offsets for _, h in read_metadata(p).channel_handles())]
    assert with_data, "no made checkpoint has channel state"


@pytest.mark.parametrize("checkpoint", ALL, ids=_ids)
def test_operators_and_subtasks_as_flink_loads_them(
    checkpoint: Path, flink: dict[str, Any]
) -> None:
    ours, theirs = read_metadata(checkpoint), flink[str(checkpoint.resolve())]
    assert ours.checkpoint_id == theirs["checkpoint_id"]
    assert list(ours.master_states) == theirs["master_states"]
    assert sorted(o.operator_id for o in ours.operators) == sorted(
        o["operator_id"] for o in theirs["operators"]
    )
    by_id = {o["operator_id"]: o for o in theirs["operators"]}
    for operator in ours.operators:
        expected = by_id[operator.operator_id]
        assert (operator.name, operator.uid) == (expected["name"], expected["uid"])
        assert operator.parallelism == expected["parallelism"]
        assert operator.max_parallelism == expected["max_parallelism"]
        assert operator.fully_finished == expected["fully_finished"]
        assert delegate(operator.coordinator_state) == expected["coordinator_state"]
        assert sorted(s.index for s in operator.subtasks) == [
            s["subtask_index"] for s in expected["subtasks"]
        ]
        subtasks = {s["subtask_index"]: s for s in expected["subtasks"]}
        for subtask in operator.subtasks:
            flinks = subtasks[subtask.index]
            for ours_state, theirs_state in (
                (subtask.managed_operator_state, flinks["managed_operator_state"]),
                (subtask.raw_operator_state, flinks["raw_operator_state"]),
            ):
                assert ([] if ours_state is None else [operator_state(ours_state)]) == theirs_state
            assert subtask.raw_keyed_state is None
            assert flinks["raw_keyed_state"] == []


@pytest.mark.parametrize("checkpoint", ALL, ids=_ids)
def test_every_channel_handle_as_flink_unmerges_it(checkpoint: Path, flink: dict[str, Any]) -> None:
    ours = [channel(h, op.operator_id) for op, h in read_metadata(checkpoint).channel_handles()]
    theirs = flink[str(checkpoint.resolve())]["channel_state_handles"]

    def order(entry: dict[str, Any]) -> str:
        return json.dumps(entry, sort_keys=True)

    assert sorted(ours, key=order) == sorted(theirs, key=order)


@pytest.mark.parametrize("checkpoint", ALL, ids=_ids)
def test_every_keyed_state_handle_as_flink_loads_it(
    checkpoint: Path, flink: dict[str, Any]
) -> None:
    def order(entry: dict[str, Any]) -> tuple[str, int]:
        return entry["operator_id"], entry["subtask_index"]

    # which tag the handle had in _metadata is not something the loaded object says
    ours = [
        {k: v for k, v in h.items() if k != "metadata_tag"}
        for h in keyed_handles(read_metadata(checkpoint))
    ]
    ours.sort(key=order)
    theirs = sorted(flink[str(checkpoint.resolve())]["keyed_state_handles"], key=order)
    assert ours == theirs


@pytest.mark.parametrize("checkpoint", MADE, ids=_ids)
def test_made_checkpoints_read_whole(checkpoint: Path) -> None:
    """Every logical channel of a made checkpoint frames into whole records, and the keyed
    state counts every key the job has seen at most once. The edges are the job's own; where
    the state alone tells them, the reader's inference must name the same ones."""
    metadata = read_metadata(checkpoint)
    edges, both_sides = _job_edges(checkpoint, metadata)
    if both_sides:
        assert set(infer_edges(metadata)) == set(edges)
    else:  # the state alone cannot tell an exchange with an empty side: the user names it
        with pytest.raises(InvalidParameterError, match="has no channel state"):
            infer_edges(metadata)
    summary = summarize(checkpoint, edges=edges, value=value_decoder(record_type(checkpoint)))
    assert summary["totals"]["unclean_channels"] == 0
    keyed = [k for k in summary["keyed_state"] if k["entries_unreadable"] is None]
    assert len(keyed) == len(summary["keyed_state"])
    assert sum(k["entries"] for k in keyed) <= 1000
