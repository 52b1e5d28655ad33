"""A real checkpoint as a checkpoint dataset: every persisted byte a buffer, every record's
pieces fragments, keys and key groups as Flink assigned them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flinkstate.dataset import check_dataset, read_dataset, write_dataset
from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.export import ExchangeSpec, to_dataset
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import KeyGroupsStateHandle
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.keyed_state import keyed_entries, read_keyed_state
from flinkstate.flinkcheckpoint.metadata import read_metadata
from flinkstate.flinkcheckpoint.stream_element import Row, value_decoder
from flinkstate.javahash import JavaType
from flinkstate.keygroups import (
    assign_to_key_group,
    assign_to_key_group_array,
    compute_key_group_range_for_operator_index,
)
from tests.flinkcheckpoint.made import STRING_KEYED, made_checkpoint, record_type
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


# -- keys of other types than Long


@pytest.mark.parametrize(
    ("spec", "record_type", "value", "key", "java_type"),
    [
        ("f0", "Tuple2<String,Long>", ("kéy-7", 7), "kéy-7", JavaType.STRING),
        ("f1", "Tuple2<Long,String>", (7, "a"), "a", JavaType.STRING),
        ("f1", "Row<Long,Integer>", Row("+I", (1, -5)), -5, JavaType.INT),
        ("f1%10", "Tuple2<String,Integer>", ("a", -17), -7, JavaType.INT),
        ("f0%1000", "Tuple2<Long,String>", (123456, "x"), 456, JavaType.LONG),
        ("f0%3000000000", "Tuple2<Integer,String>", (-5, "x"), -5, JavaType.LONG),
        ("value", "String", "\U0001f600", "\U0001f600", JavaType.STRING),
        ("value", "Integer", 3, 3, JavaType.INT),
    ],
)
def test_a_keys_java_type_is_its_fields(
    spec: str, record_type: str, value: object, key: object, java_type: JavaType
) -> None:
    """The key's Java type decides its ``hashCode()``: it is the field's in the record type
    (a remainder of an Integer by a divisor beyond ``int`` is a Long, as Java types it)."""
    selector = key_function(spec, record_type)
    assert selector(value) == key
    assert selector.java_type is java_type
    assert ExchangeSpec("hash", selector).java_type is java_type


@pytest.mark.parametrize(
    ("spec", "record_type", "message"),
    [
        ("f0%10", "Tuple2<String,Long>", "takes a remainder of a String: a String key is f0"),
        ("f1", "Tuple2<Long,Double>", "is a Double: an export keys by Long, Integer, String"),
        ("value", "Tuple2<Long,String>", "is the whole Tuple2<Long,String> value"),
        ("f0", "Long", "a Long record has no fields: key by value"),
        ("f2", "Tuple2<String,Long>", "the records have 2 field(s) (f0 to f1 of"),
    ],
)
def test_a_key_the_record_type_cannot_give_is_refused(
    spec: str, record_type: str, message: str
) -> None:
    with pytest.raises(InvalidParameterError, match=re.escape(message)):
        key_function(spec, record_type)


def test_a_null_or_mistyped_key_is_named() -> None:
    with pytest.raises(InvalidParameterError, match="is null: Flink cannot key by null"):
        key_function("f0", "Row<String,Long>")(Row("+I", (None, 1)))
    with pytest.raises(InvalidParameterError, match="give the record type"):
        key_function("f0")(("a string", 1))  # untyped: an integer key (a Long) was expected
    with pytest.raises(InvalidParameterError, match="keys by Long, Integer, String keys"):
        ExchangeSpec("hash", key=lambda v: v, key_type="double")


def test_a_string_key_puts_every_in_flight_record_in_its_subtasks_key_groups() -> None:
    """A real job keyed by a String: Flink routed each in-flight record to the subtask owning
    ``murmur(String.hashCode()) % 128``, so every record's key group (ours) must lie in the
    range of the subtask it was going to: input side the holder, output side the
    subpartition. A Long's hash of the same records would not (the wrong key is refused)."""
    checkpoint = made_checkpoint(STRING_KEYED)
    kind = record_type(checkpoint)
    assert kind == "Tuple2<String,Long>"
    spec = {"to-record->slow-counter": ExchangeSpec("hash", key_function("f0", kind))}
    dataset = to_dataset(checkpoint, spec, value=value_decoder(kind))
    (exchange,) = dataset.tables["exchanges"].to_pylist()
    assert exchange["key_type"] == "String"
    buffers = {b["buffer_id"]: b for b in dataset.tables["buffers"].to_pylist()}
    down = {o["operator"]: o for o in dataset.tables["operators"].to_pylist()}["slow-counter"]
    fragments = dataset.tables["fragments"].to_pylist()
    holders = set()
    for fragment in fragments:
        assert fragment["key"] is None
        key = fragment["key_string"]
        assert fragment["key_group"] == assign_to_key_group(key, 128, "string")
        buffer = buffers[fragment["buffer_id"]]
        owner = (
            buffer["subtask"] if buffer["side"] == "input" else buffer["channel_or_subpartition"]
        )
        owned = compute_key_group_range_for_operator_index(128, down["parallelism"], owner)
        assert fragment["key_group"] in owned
        holders.add(owner)
    keys = {f["key_string"] for f in fragments}
    # enough keys, of every kind the job makes, on every subtask: not a vacuous check
    assert len(keys) > 100
    assert holders == set(range(down["parallelism"]))
    assert {k.split("-")[0] for k in keys} == {"key", "clé", "\U0001f600"}
    wrong = {"to-record->slow-counter": ExchangeSpec("hash", key_function("f1", kind))}
    with pytest.raises(InvalidParameterError, match="not the one the job keyed by"):
        to_dataset(checkpoint, wrong, value=value_decoder(kind))


def test_string_keys_in_keyed_state_are_where_flink_put_them() -> None:
    """Flink's own values: the heap snapshot stores each String key in the key group Flink
    computed for it; ours (pure Python, numpy) is the same for every one of them."""
    checkpoint = made_checkpoint(STRING_KEYED)
    metadata = read_metadata(checkpoint)
    operator = metadata.operator("slow-counter")
    entries = []
    with StateFiles(checkpoint) as files:
        for subtask in operator.subtasks:
            handle = subtask.managed_keyed_state
            assert isinstance(handle, KeyGroupsStateHandle)
            assert read_keyed_state(handle, files).key_serializer.name == "String"
            entries += [e for e in keyed_entries(handle, files) if e.state == "count"]
    keys = [e.key for e in entries]
    flinks = [e.key_group for e in entries]
    assert len(set(keys)) == len(keys) > 100
    assert [assign_to_key_group(k, operator.max_parallelism, "string") for k in keys] == flinks
    numpy = assign_to_key_group_array(keys, operator.max_parallelism, "string")
    assert numpy.tolist() == flinks
