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

from flinkstate.flinkcheckpoint.metadata import read_metadata
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.flinkcheckpoint.summary import summarize
from tests.flinkcheckpoint.test_metadata import (
    COMMITTED,
    channel,
    delegate,
    keyed_handles,
    operator_state,
)

ROOT = Path(__file__).parents[2]
LOADER = ROOT / "tools" / "real-checkpoints" / "flink_loader.py"
GENERATED = ROOT / "data" / "generated-checkpoints"
FLINK_PYTHON = Path(os.environ.get("FLINKSTATE_FLINK_PYTHON", ROOT / ".venv-flink/bin/python"))
MADE = sorted(p.parent for p in GENERATED.glob("*/*/chk-*/_metadata"))
ALL = [*COMMITTED, *MADE]


def _ids(path: Path) -> str:
    return (
        f"{'made' if GENERATED in path.parents else 'committed'}:{path.parents[1].name}/{path.name}"
    )


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
    state counts every key the job has seen at most once."""
    summary = summarize(checkpoint, value=value_decoder("Tuple2<Long,String>"))
    assert summary["totals"]["unclean_channels"] == 0
    keyed = [k for k in summary["keyed_state"] if k["entries_unreadable"] is None]
    assert len(keyed) == len(summary["keyed_state"])
    assert sum(k["entries"] for k in keyed) <= 1000
