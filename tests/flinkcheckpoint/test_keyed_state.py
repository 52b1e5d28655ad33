"""Keyed state of the hashmap backend: Flink's real snapshots, and hand-made ones in its layout."""

from __future__ import annotations

import re
import struct
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinkstate.errors import CheckpointFormatError
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import ByteStreamStateHandle, KeyGroupsStateHandle
from flinkstate.flinkcheckpoint.keyed_state import (
    COMPOSITE_MAGIC,
    NESTED_MAGIC,
    Entry,
    keyed_entries,
    read_keyed_state,
)
from flinkstate.flinkcheckpoint.metadata import read_metadata
from flinkstate.keygroups import assign_to_key_group
from tests.flinkcheckpoint.test_metadata import CHECKPOINTS
from tests.flinkcheckpoint.test_stream_element import string_value

KEYED = [c for c in CHECKPOINTS if "keyed" in c.parts[-3]]


@pytest.mark.parametrize("checkpoint", KEYED, ids=lambda p: p.parts[-3])
def test_flinks_snapshots_hold_every_key_once_in_its_key_group(checkpoint: Path) -> None:
    """The slow counter keeps a ``ValueState<Long>`` per key ``f0 % 1000``; by the checkpoint
    every key has been seen, so its subtasks together hold each of the 1,000 keys once, each in
    the key group Flink's hash gives it and inside its subtask's range."""
    metadata = read_metadata(checkpoint)
    operator = metadata.operator("slow-counter")
    keys: list[object] = []
    with StateFiles(checkpoint) as files:
        for subtask in operator.subtasks:
            handle = subtask.managed_keyed_state
            assert isinstance(handle, KeyGroupsStateHandle)
            snapshot = read_keyed_state(handle, files)
            assert snapshot.unreadable is None
            assert (snapshot.version, snapshot.compressed) == (6, False)
            assert snapshot.key_serializer.name == "Long"
            assert [(s.name, s.kind) for s in snapshot.states] == [
                ("count", "VALUE"),
                ("_timer_state/processing_user-timers", "TIMERS"),
                ("_timer_state/event_user-timers", "TIMERS"),
            ]
            assert [g.key_group for g in snapshot.key_groups] == list(
                range(handle.first_key_group, handle.last_key_group + 1)
            )
            entries = list(keyed_entries(handle, files))
            for entry in entries:
                assert entry.state == "count"
                assert entry.namespace is None
                assert isinstance(entry.value, int)
                assert entry.value >= 1
                assert entry.key_group == assign_to_key_group(
                    entry.key, operator.max_parallelism, "long"
                )
            per_group = Counter(e.key_group for e in entries)
            assert {g.key_group: g.entries for g in snapshot.key_groups} == {
                g: (per_group.get(g, 0), 0, 0)
                for g in range(handle.first_key_group, handle.last_key_group + 1)
            }
            assert snapshot.entries == len(entries)
            keys += [e.key for e in entries]
    assert sorted(keys) == list(range(1000))


# -- hand-made snapshots in the layout Flink writes


def utf(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">H", len(data)) + data


BASE = "org.apache.flink.api.common.typeutils.base."


def simple(name: str) -> bytes:
    return utf(f"{BASE}{name}Serializer${name}SerializerSnapshot") + struct.pack(">i", 3)


VOID = utf(
    "org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot"
) + struct.pack(">i", 3)


def composite(name: str, nested: list[bytes], outer: bytes = b"") -> bytes:
    return (
        utf(name)
        + struct.pack(">iii", 1, COMPOSITE_MAGIC, 1)
        + outer
        + struct.pack(">iii", NESTED_MAGIC, 1, len(nested))
        + b"".join(nested)
    )


def snapshot(serializer: bytes) -> bytes:
    """As ``TypeSerializerSnapshotSerializationUtil`` writes one: its format version first."""
    return struct.pack(">i", 2) + serializer


def state(name: str, backend: int, kind: str | None, serializers: dict[str, bytes]) -> bytes:
    options = {} if kind is None else {"KEYED_STATE_TYPE": kind}
    return (
        utf(name)
        + struct.pack(">ii", backend, len(options))
        + b"".join(utf(k) + utf(v) for k, v in options.items())
        + struct.pack(">i", len(serializers))
        + b"".join(utf(role) + snapshot(s) for role, s in serializers.items())
    )


TIMER = "org.apache.flink.streaming.api.operators.TimerSerializerSnapshot"
STATES = [
    state(
        "names",
        0,
        "MAP",
        {
            "NAMESPACE_SERIALIZER": VOID,
            "VALUE_SERIALIZER": composite(
                f"{BASE}MapSerializerSnapshot", [simple("String"), simple("Int")]
            ),
        },
    ),
    state(
        "history",
        0,
        "LIST",
        {
            "NAMESPACE_SERIALIZER": simple("Long"),  # a window's end, say
            "VALUE_SERIALIZER": composite(
                f"{BASE}ListSerializerSnapshot",
                [
                    composite(
                        "org.apache.flink.api.java.typeutils.runtime.TupleSerializerSnapshot",
                        [simple("Char"), simple("Double")],
                        outer=utf("org.apache.flink.api.java.tuple.Tuple2"),
                    )
                ],
            ),
        },
    ),
    state("timers", 3, None, {"VALUE_SERIALIZER": composite(TIMER, [simple("Long"), VOID])}),
]


def proxy(states: list[bytes] = STATES, compressed: bool = False, version: int = 6) -> bytes:
    return (
        struct.pack(">i?", version, compressed)
        + snapshot(simple("Long"))
        + struct.pack(">h", len(states))
        + b"".join(states)
    )


def map_entry(key: int, value: dict[str, int | None]) -> bytes:
    body = struct.pack(">i", len(value))
    for k, v in value.items():
        body += string_value(k) + (b"\x01" if v is None else b"\x00" + struct.pack(">i", v))
    return b"\x00" + struct.pack(">q", key) + body


def list_entry(key: int, window: int, values: list[tuple[str, float]]) -> bytes:
    body = struct.pack(">i", len(values))
    for char, number in values:
        body += struct.pack(">Hd", ord(char), number)
    return struct.pack(">qq", window, key) + body


def timer(key: int, timestamp: int) -> bytes:
    return struct.pack(">qq", timestamp ^ -(1 << 63), key) + b"\x00"


#: key groups 4 and 5 of a subtask, each with its entries per state (states in any order)
GROUPS: list[tuple[int, list[tuple[int, list[bytes]]]]] = [
    (
        4,
        [
            (2, [timer(7, 1_000), timer(7, -5)]),
            (0, [map_entry(7, {"a": 1, "b": None})]),
            (1, []),
        ],
    ),
    (
        5,
        [
            (0, []),
            (1, [list_entry(9, 60_000, [("x", 0.5), ("é", -1.0)]), list_entry(9, 0, [])]),
            (2, []),
        ],
    ),
]


def stream(header: bytes = b"") -> tuple[bytes, tuple[int, ...]]:
    data = header or proxy()
    offsets = []
    for group, states in GROUPS:
        offsets.append(len(data))
        data += struct.pack(">i", group)
        for index, entries in states:
            data += struct.pack(">hi", index, len(entries)) + b"".join(entries)
    return data, tuple(offsets)


def handle(data: bytes, offsets: tuple[int, ...], first: int = 4) -> KeyGroupsStateHandle:
    return KeyGroupsStateHandle(
        12, first, first + len(offsets) - 1, offsets, ByteStreamStateHandle("kg", data)
    )


def test_every_entry_of_lists_maps_tuples_and_timers(tmp_path: Path) -> None:
    data, offsets = stream()
    with StateFiles(tmp_path) as files:
        snapshot = read_keyed_state(handle(data, offsets), files)
        entries = list(keyed_entries(handle(data, offsets), files))
    assert snapshot.unreadable is None
    assert [(s.name, s.kind) for s in snapshot.states] == [
        ("names", "MAP"),
        ("history", "LIST"),
        ("timers", "TIMERS"),
    ]
    assert [s[1].name for s in snapshot.states[1].serializers] == [
        "Long",
        "List<Tuple<Char, Double>>",
    ]
    assert [(g.key_group, g.entries) for g in snapshot.key_groups] == [
        (4, (1, 0, 2)),
        (5, (0, 2, 0)),
    ]
    assert snapshot.entries == 5
    assert snapshot.state_entries() == {"names": 1, "history": 2, "timers": 2}
    assert entries == [
        Entry(4, "timers", 7, None, 1_000),
        Entry(4, "timers", 7, None, -5),
        Entry(4, "names", 7, None, {"a": 1, "b": None}),
        Entry(5, "history", 9, 60_000, [("x", 0.5), ("é", -1.0)]),
        Entry(5, "history", 9, 0, []),
    ]


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        (proxy(compressed=True), "compressed"),
        (
            proxy(
                [
                    state(
                        "v",
                        0,
                        "VALUE",
                        {
                            "NAMESPACE_SERIALIZER": VOID,
                            "VALUE_SERIALIZER": (
                                utf(
                                    "org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot"
                                )
                                + struct.pack(">i", 2)
                            ),
                        },
                    )
                ]
            ),
            "PojoSerializerSnapshot, whose layout is not known",
        ),
        (
            proxy([state("b", 2, None, {"VALUE_SERIALIZER": simple("Long")})]),
            "state 'b' is a BROADCAST state",
        ),
    ],
)
def test_what_cannot_be_counted_says_why(tmp_path: Path, header: bytes, reason: str) -> None:
    data, offsets = stream(header)
    with StateFiles(tmp_path) as files:
        snapshot = read_keyed_state(handle(data, offsets), files)
        assert list(keyed_entries(handle(data, offsets), files)) == []
    assert snapshot.unreadable is not None
    assert reason in snapshot.unreadable
    assert snapshot.entries is None
    assert snapshot.key_groups == ()


def test_a_rocksdb_full_snapshot_is_not_read_as_the_hashmap_layout(tmp_path: Path) -> None:
    """RocksDB starts a key group with a state's index and its key/value bytes, no id."""
    data = proxy()
    offsets = (len(data),)
    data += struct.pack(">h", 0) + struct.pack(">i", 9) + b"k" * 9
    with StateFiles(tmp_path) as files:
        snapshot = read_keyed_state(handle(data, offsets), files)
    assert snapshot.unreadable is not None
    assert "not a hashmap backend's snapshot" in snapshot.unreadable


@pytest.mark.parametrize(
    ("mangle", "expected"),
    [
        (lambda d, o: (struct.pack(">i", 9) + d[4:], o), "proxy of version 6, found 9"),
        (lambda d, o: (d, (o[0], o[1] - 3)), "its entries end at"),
        (
            lambda d, o: (d, (o[0], len(d) + 10)),
            "key group 5 at an offset from 1432 to 1593, the handle says 1603",
        ),
        (lambda d, o: (d[: o[1] + 4] + b"\x00\x07" + d[o[1] + 6 :], o), "a state index (0 to 2)"),
        (lambda d, o: (d[: o[1]] + struct.pack(">i", 6) + d[o[1] + 4 :], o), "key group 5's id"),
        (lambda d, o: (d[:-8], o), "an entry of 'history'"),
        (lambda d, o: (d[:-6], o), "every state in key group 5, 'timers' is missing"),
        (
            lambda d, o: (d[: o[1] + 4] + b"\x00\x00" + d[o[1] + 4 :], o),
            "each state once in key group 5, 'names' again",
        ),
    ],
)
def test_each_corruption_is_named(
    tmp_path: Path,
    mangle: object,
    expected: str,
) -> None:
    data, offsets = stream()
    data, offsets = mangle(data, offsets)  # type: ignore[operator]
    with (
        StateFiles(tmp_path) as files,
        pytest.raises(CheckpointFormatError, match=re.escape(expected)) as error,
    ):
        read_keyed_state(handle(data, offsets), files)
    assert error.value.file == "inline bytes 'kg' in _metadata"


@pytest.mark.slow
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=300)
@given(st.data())
def test_mutated_snapshots_fail_only_with_a_format_error(
    tmp_path: Path, data: st.DataObject
) -> None:
    """Cut, overwritten or grown anywhere, Flink's own snapshot (or the hand-made one) reads,
    reads as unreadable or fails with the package's format error; never anything else."""
    source = data.draw(st.sampled_from(["real", "made"]))
    if source == "real":
        metadata = read_metadata(KEYED[0])
        original = metadata.operator("slow-counter").subtasks[0].managed_keyed_state
        assert isinstance(original, KeyGroupsStateHandle)
        assert isinstance(original.delegate, ByteStreamStateHandle)
        raw, offsets = original.delegate.data, original.offsets
        first = original.first_key_group
    else:
        raw, offsets = stream()
        first = 4
    mutated = bytearray(raw)
    action = data.draw(st.sampled_from(["cut", "overwrite", "insert"]))
    at = data.draw(st.integers(0, len(raw) - 1))
    if action == "cut":
        del mutated[at:]
    elif action == "overwrite":
        chunk = data.draw(st.binary(min_size=1, max_size=8))
        mutated[at : at + len(chunk)] = chunk
    else:
        mutated[at:at] = data.draw(st.binary(min_size=1, max_size=8))
    failure = None
    with StateFiles(tmp_path) as files:
        try:
            list(keyed_entries(handle(bytes(mutated), offsets, first), files))
            read_keyed_state(handle(bytes(mutated), offsets, first), files)
        except CheckpointFormatError as error:
            failure = error
    if failure is not None:
        assert failure.file == "inline bytes 'kg' in _metadata"
        assert 0 <= failure.offset <= len(mutated)


def test_a_map_state_keyed_by_a_list_is_read() -> None:
    """Flink writes a ``MapState<List<Long>, Long>`` legally; its keys used to end in
    ``TypeError: unhashable type: 'list'``. A List key becomes a tuple of its elements."""
    list_of_long = composite(f"{BASE}ListSerializerSnapshot", [simple("Long")])
    states = [
        state(
            "by-path",
            0,
            "MAP",
            {
                "NAMESPACE_SERIALIZER": VOID,
                "VALUE_SERIALIZER": composite(
                    f"{BASE}MapSerializerSnapshot", [list_of_long, simple("Long")]
                ),
            },
        )
    ]
    key = struct.pack(">iqq", 2, 1, 2)  # [1, 2]
    value = struct.pack(">i", 1) + key + b"\x00" + struct.pack(">q", 42)
    entry = b"\x00" + struct.pack(">q", 7) + value
    data = proxy(states)
    offsets = (len(data),)
    data += struct.pack(">i", 4) + struct.pack(">hi", 0, 1) + entry
    with StateFiles(Path(".")) as files:
        entries = list(keyed_entries(handle(data, offsets), files))
    assert entries == [Entry(4, "by-path", 7, None, {(1, 2): 42})]


def test_serializer_snapshots_nested_too_deep_are_a_format_error() -> None:
    """A List of a List of ... 200 deep used to end in ``RecursionError``."""
    nested = simple("Long")
    for _ in range(200):
        nested = composite(f"{BASE}ListSerializerSnapshot", [nested])
    states = [state("deep", 0, "VALUE", {"NAMESPACE_SERIALIZER": VOID, "VALUE_SERIALIZER": nested})]
    data = proxy(states)
    offsets = (len(data),)
    data += struct.pack(">i", 4) + struct.pack(">hi", 0, 0)
    with (
        StateFiles(Path(".")) as files,
        pytest.raises(CheckpointFormatError, match="nested at most 64 deep"),
    ):
        read_keyed_state(handle(data, offsets), files)
