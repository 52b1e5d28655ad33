"""A real checkpoint as a checkpoint dataset: every persisted byte a buffer, every record's
pieces fragments, keys and key groups as Flink assigned them."""

from __future__ import annotations

from pathlib import Path

import pytest

from flinkstate.dataset import check_dataset, read_dataset, write_dataset
from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.export import (
    ExchangeSpec,
    key_function,
    to_dataset,
)
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.keygroups import compute_key_group_range_for_operator_index
from tests.flinkcheckpoint.test_metadata import CHECKPOINTS, ground_truth

TUPLE = value_decoder("Tuple2<Long,String>")
KEYED = {"to-record->slow-counter": ExchangeSpec("hash", key=lambda v: v[0] % 1000)}  # type: ignore[index]
REBALANCE = {"to-record->relay": ExchangeSpec("rebalance")}
SIDES = ("input", "output")


def _specs(checkpoint: Path) -> dict[str, ExchangeSpec]:
    return REBALANCE if "rebalance" in checkpoint.parents[1].name else KEYED


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_every_byte_and_record_is_in_the_dataset(checkpoint: Path, tmp_path: Path) -> None:
    dataset = to_dataset(checkpoint, _specs(checkpoint), value=TUPLE)
    truth = ground_truth(checkpoint)
    buffers = dataset.tables["buffers"].to_pylist()
    fragments = dataset.tables["fragments"].to_pylist()
    summary = truth["summary"]
    assert len(buffers) == summary["num_chunks_total"]
    assert sum(b["size"] for b in buffers) == summary["inflight_payload_bytes_total"]
    per_buffer: dict[int, int] = {}
    for f in fragments:
        per_buffer[f["buffer_id"]] = per_buffer.get(f["buffer_id"], 0) + f["fragment_bytes"]
    assert all(per_buffer.get(b["buffer_id"], 0) == b["size"] for b in buffers)
    records = {f["record"] for f in fragments}
    assert len(records) == sum(
        c["decode"]["num_complete_elements"] for c in truth["stitched_channels"]
    )
    write_dataset(dataset, tmp_path / "ds")
    assert check_dataset(tmp_path / "ds")["checkpoint_id"] == truth["checkpoint_id"]
    assert read_dataset(tmp_path / "ds").tables["buffers"].num_rows == len(buffers)


@pytest.mark.parametrize(
    "checkpoint",
    [p for p in CHECKPOINTS if "rebalance" not in str(p)],
    ids=lambda p: p.parents[1].name,
)
def test_keyed_records_sit_in_their_owners_key_groups(checkpoint: Path) -> None:
    """The property Flink's report checks: every record of a keyed channel belongs to the
    subtask the channel leads to (input side: the holder; output side: the subpartition)."""
    dataset = to_dataset(checkpoint, KEYED, value=TUPLE)
    buffers = {b["buffer_id"]: b for b in dataset.tables["buffers"].to_pylist()}
    operators = {o["operator"]: o for o in dataset.tables["operators"].to_pylist()}
    down = operators["slow-counter"]
    checked = 0
    for fragment in dataset.tables["fragments"].to_pylist():
        buffer = buffers[fragment["buffer_id"]]
        owner = (
            buffer["subtask"] if buffer["side"] == "input" else buffer["channel_or_subpartition"]
        )
        owned = compute_key_group_range_for_operator_index(
            down["max_parallelism"], down["parallelism"], owner
        )
        assert owned.start <= fragment["key_group"] <= owned.end
        checked += 1
    assert checked


@pytest.mark.parametrize(
    "checkpoint",
    [p for p in CHECKPOINTS if "rebalance" not in str(p)],
    ids=lambda p: p.parents[1].name,
)
def test_keyed_state_is_a_row_per_key_group_with_its_entries(checkpoint: Path) -> None:
    """Every key group of the slow counter's subtasks, inside its subtask's range, with the
    keys Flink stored there: the 1,000 keys ``f0 % 1000`` once each."""
    rows = to_dataset(checkpoint, KEYED, value=TUPLE).tables["keyed_state"].to_pylist()
    assert [r["key_group"] for r in rows] == list(range(128))
    for row in rows:
        assert row["operator"] == "slow-counter"
        expected = compute_key_group_range_for_operator_index(
            128, 4 if "p4" in str(checkpoint) else 3, row["subtask"]
        )
        assert (row["key_group_start"], row["key_group_end"]) == (expected.start, expected.end)
        assert row["key_group_start"] <= row["key_group"] <= row["key_group_end"]
    assert sum(r["entries"] for r in rows) == 1000


def test_what_the_checkpoint_does_not_say_must_be_given() -> None:
    checkpoint = next(p for p in CHECKPOINTS if p.parents[1].name == "keyed-hash-p2-p4")
    with pytest.raises(InvalidParameterError, match="say how exchange to-record:0>slow-counter:0"):
        to_dataset(checkpoint, {}, value=TUPLE)
    with pytest.raises(InvalidParameterError, match="needs key="):
        ExchangeSpec("hash")
    with pytest.raises(InvalidParameterError, match="decoding its records needs value="):
        to_dataset(checkpoint, KEYED)


@pytest.mark.parametrize(
    ("spec", "value", "key"),
    [
        ("f0%1000", (123456, "x"), 456),
        ("f0 % 1000", (-123456, "x"), -456),  # Java's remainder keeps the dividend's sign
        ("f1", (1, 7), 7),
        ("value", 42, 42),
        ("value%7", 2**62 + 5, (2**62 + 5) % 7),
    ],
)
def test_key_notation(spec: str, value: object, key: int) -> None:
    assert key_function(spec)(value) == key


@pytest.mark.parametrize("spec", ["f0%0", "len(f1)", "__import__('os')", "f"])
def test_a_key_notation_that_is_not_one_is_refused(spec: str) -> None:
    with pytest.raises(InvalidParameterError, match="a key is f<N>"):
        key_function(spec)


def test_a_key_field_the_records_do_not_have_is_named() -> None:
    """``f5`` on a 2-field record used to end in ``IndexError``."""
    with pytest.raises(InvalidParameterError, match="reads field 5, but the records have 2"):
        key_function("f5%1000")((1, "x"))


def test_an_exchange_the_checkpoint_does_not_have_is_refused() -> None:
    """An ``--exchange`` for an edge without state used to be ignored."""
    checkpoint = next(p for p in CHECKPOINTS if p.parents[1].name == "keyed-hash-p2-p4")
    with pytest.raises(InvalidParameterError, match=r"no exchange 'a->b' .* to-record->slow"):
        to_dataset(checkpoint, {**KEYED, "a->b": ExchangeSpec("rebalance")}, value=TUPLE)


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_the_segment_size_is_the_jobs_not_a_chunks(checkpoint: Path) -> None:
    """The jobs ran with 4 KiB segments, which the checkpoint does not say and its chunks do
    not tell: an input chunk can be larger (a record's parts put back together), inlined
    output state too, and the last buffer of a channel is seldom full."""
    given = to_dataset(checkpoint, _specs(checkpoint), value=TUPLE, segment_size=4096)
    assert given.manifest["segment_size"] == 4096
    buffers = given.tables["buffers"].to_pylist()
    largest = {side: max(b["size"] for b in buffers if b["side"] == side) for side in SIDES}
    if "bigrecord" in str(checkpoint):
        assert largest["input"] > 4096
    if "allinline" in str(checkpoint):
        assert largest["output"] > 4096
    default = to_dataset(checkpoint, _specs(checkpoint), value=TUPLE)
    assert default.manifest["segment_size"] == 32 * 1024  # Flink's default
    with pytest.raises(InvalidParameterError, match="must be a power of 2"):
        to_dataset(checkpoint, _specs(checkpoint), value=TUPLE, segment_size=5000)


@pytest.mark.parametrize(
    "checkpoint",
    [p for p in CHECKPOINTS if "rebalance" not in str(p)],
    ids=lambda p: p.parents[1].name,
)
def test_a_key_that_is_not_the_jobs_is_refused(checkpoint: Path) -> None:
    """The jobs keyed by f0 % 1000; f0 alone would put records outside their subtask's key
    groups, and rescaling would then count them as filtered."""
    wrong = {"to-record->slow-counter": ExchangeSpec("hash", key=lambda v: v[0])}  # type: ignore[index]
    with pytest.raises(InvalidParameterError, match="the key given is not the one the job keyed"):
        to_dataset(checkpoint, wrong, value=TUPLE)
