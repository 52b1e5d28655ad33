"""Keyed state in a hashmap backend's full snapshot: its states and their entries per key group.

A ``KeyGroupsStateHandle``'s stream starts with the backend's serialization proxy (version,
whether key groups are compressed, the key serializer's snapshot, then each state's name, kind,
options and serializer snapshots); the handle's offsets point at the key groups that follow.
The hashmap backend writes each key group as its id and, per state, the state's index in the
proxy, a count and that many entries: namespace, key and value for a value, list or map state,
a timer (timestamp, key, namespace) for a timer queue (``HeapSnapshotStrategy``,
``CopyOnWriteStateMapSnapshot``, ``KeyGroupPartitioner``, ``KeyedBackendSerializationProxy``,
``StateMetaInfoSnapshotReadersWriters``).

Entries have no length prefix, so walking past one needs its serializers. The proxy names them
by their snapshot classes: the ones whose layout is fixed (Flink's basic types, ``String``,
``VoidNamespace``, tuples, lists, maps and timers of them) are read here; a state with any other
serializer, Snappy-compressed key groups or a RocksDB snapshot leave the entries uncounted and
say why (``unreadable``), never guessed. Nothing in a snapshot is instantiated or run.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from flinkstate.errors import CheckpointFormatError
from flinkstate.flinkcheckpoint.datainput import MAX_NESTING, DataInput
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import KeyGroupsStateHandle
from flinkstate.flinkcheckpoint.stream_element import ValueDecoder, tuple_decoder, value_decoder

#: the proxy versions whose layout is read here (what Flink 2.x writes)
PROXY_VERSIONS = (6,)
#: ``TypeSerializerSnapshotSerializationUtil``'s own format version
SNAPSHOT_PROXY_VERSION = 2
COMPOSITE_MAGIC = 911108
NESTED_MAGIC = 1333245
#: ``StateMetaInfoSnapshot.BackendStateType`` by ordinal
BACKEND_STATE_TYPES = ("KEY_VALUE", "OPERATOR", "BROADCAST", "PRIORITY_QUEUE", "KEY_VALUE_V2")

_BASE = "org.apache.flink.api.common.typeutils.base."
#: simple serializer snapshots (no body of their own) and the value type each reads
_SIMPLE = {
    f"{_BASE}{name}Serializer${name}SerializerSnapshot": name
    for name in ("Long", "Int", "Short", "Byte", "Boolean", "Double", "Float", "Char", "String")
}
_TYPE_NAMES = {"Int": "Integer"}
#: bytes per value of the simple serializers that write a fixed number
_FIXED = {"Long": 8, "Int": 4, "Short": 2, "Byte": 1, "Boolean": 1, "Double": 8, "Float": 4}
_VOID_NAMESPACE = (
    "org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot"
)
#: composite snapshots (magic, outer version, outer part, nested snapshots) by what they hold
_TIMER = "org.apache.flink.streaming.api.operators.TimerSerializerSnapshot"
_LIST = f"{_BASE}ListSerializerSnapshot"
_MAP = f"{_BASE}MapSerializerSnapshot"
_TUPLE = "org.apache.flink.api.java.typeutils.runtime.TupleSerializerSnapshot"

_I16 = struct.Struct(">h")


@dataclass(frozen=True, slots=True)
class Serializer:
    """A serializer as its snapshot names it; ``read`` is None where its layout is unknown.

    Examples
    --------
    The serializers of the keyed counter's state, named by their snapshots:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> handle = read_metadata(checkpoint).operator("slow-counter").subtask(0).managed_keyed_state
    >>> with StateFiles(checkpoint) as files:
    ...     snapshot = read_keyed_state(handle, files)
    >>> snapshot.key_serializer.name, snapshot.key_serializer.fixed
    ('Long', 8)
    >>> timers = snapshot.states[1].serializer("VALUE_SERIALIZER")
    >>> timers.name, timers.snapshot_class.rsplit(".", 1)[-1]
    ('Timer<Long, VoidNamespace>', 'TimerSerializerSnapshot')
    """

    snapshot_class: str
    nested: tuple[Serializer, ...] = ()
    read: ValueDecoder | None = None
    #: bytes per value where every value takes the same, so counting can step over them
    fixed: int | None = None

    @property
    def name(self) -> str:
        short = self.snapshot_class.rsplit(".", 1)[-1].split("$")[-1]
        short = short.removesuffix("SerializerSnapshot").removesuffix("Snapshot")
        if not self.nested:
            return short
        return f"{short}<{', '.join(n.name for n in self.nested)}>"


@dataclass(frozen=True, slots=True)
class StateInfo:
    """One registered keyed state: its name, backend type, options and serializers.

    Examples
    --------
    The counter's ``ValueState<Long>`` and the two timer queues every keyed operator registers:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> handle = read_metadata(checkpoint).operator("slow-counter").subtask(0).managed_keyed_state
    >>> with StateFiles(checkpoint) as files:
    ...     snapshot = read_keyed_state(handle, files)
    >>> for state in snapshot.states:
    ...     print(state.name, state.kind, state.serializer("VALUE_SERIALIZER").name)
    count VALUE Long
    _timer_state/processing_user-timers TIMERS Timer<Long, VoidNamespace>
    _timer_state/event_user-timers TIMERS Timer<Long, VoidNamespace>
    """

    name: str
    backend_type: str
    options: tuple[tuple[str, str], ...]
    serializers: tuple[tuple[str, Serializer], ...]

    @property
    def kind(self) -> str:
        """``VALUE``, ``LIST``, ``MAP``, ... for key/value states, ``TIMERS`` for a queue."""
        if self.backend_type == "PRIORITY_QUEUE":
            return "TIMERS"
        return dict(self.options).get("KEYED_STATE_TYPE", self.backend_type)

    def serializer(self, key: str) -> Serializer | None:
        return dict(self.serializers).get(key)


@dataclass(frozen=True, slots=True)
class KeyGroupEntries:
    """The entries of each state (in the proxy's order) in one key group.

    Examples
    --------
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> handle = read_metadata(checkpoint).operator("slow-counter").subtask(0).managed_keyed_state
    >>> with StateFiles(checkpoint) as files:
    ...     first = read_keyed_state(handle, files).key_groups[0]
    >>> first, first.total
    (KeyGroupEntries(key_group=0, entries=(5, 0, 0)), 5)
    """

    key_group: int
    entries: tuple[int, ...]

    @property
    def total(self) -> int:
        return sum(self.entries)


@dataclass(frozen=True, slots=True)
class KeyedStateSnapshot:
    """A keyed-state handle read: the proxy's version, compression, key serializer and states, and
    the entries of each key group (none where ``unreadable`` says why).

    Examples
    --------
    Subtask 0 of the counter holds the counts of 271 keys in its 32 key groups, and no timers:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> handle = read_metadata(checkpoint).operator("slow-counter").subtask(0).managed_keyed_state
    >>> with StateFiles(checkpoint) as files:
    ...     snapshot = read_keyed_state(handle, files)
    >>> snapshot.version, snapshot.compressed, len(snapshot.key_groups), snapshot.entries
    (6, False, 32, 271)
    >>> snapshot.state_entries()["count"], snapshot.unreadable
    (271, None)
    """

    version: int
    compressed: bool
    key_serializer: Serializer
    states: tuple[StateInfo, ...]
    #: per key group of the handle's range; empty where ``unreadable`` says why
    key_groups: tuple[KeyGroupEntries, ...]
    unreadable: str | None = None

    @property
    def entries(self) -> int | None:
        if self.unreadable is not None:
            return None
        return sum(g.total for g in self.key_groups)

    def state_entries(self) -> dict[str, int | None]:
        """Entries per state over all key groups (None each where unreadable)."""
        return {
            state.name: None
            if self.unreadable is not None
            else sum(g.entries[index] for g in self.key_groups)
            for index, state in enumerate(self.states)
        }


@dataclass(frozen=True, slots=True)
class Entry:
    """A decoded entry: a value, list or map state's (namespace, key, value), or a timer's
    (namespace, key, timestamp).

    Examples
    --------
    The first entry of subtask 0 of the counter: key 817 (``f0 % 1000``, a ``Long``) has been
    counted 43 times, and is in key group 0, as Flink's ``KeyGroupRangeAssignment`` puts it:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> from flinkstate.keygroups import assign_to_key_group
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> handle = read_metadata(checkpoint).operator("slow-counter").subtask(0).managed_keyed_state
    >>> with StateFiles(checkpoint) as files:
    ...     entry = next(keyed_entries(handle, files))
    >>> entry
    Entry(key_group=0, state='count', key=817, namespace=None, value=43)
    >>> assign_to_key_group(entry.key, 128, "long")
    0
    """

    key_group: int
    state: str
    key: object
    namespace: object
    value: object


# -- the serialization proxy


def read_proxy(data: DataInput) -> tuple[int, bool, Serializer, tuple[StateInfo, ...]]:
    """The proxy at the stream's start, or None-able parts where a serializer is unknown.

    Examples
    --------
    The serialization proxy at the start of a keyed-state stream:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.datainput import DataInput
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> handle = read_metadata(checkpoint).operator("slow-counter").subtask(0).managed_keyed_state
    >>> reader = DataInput(handle.delegate.data, "keyed state")
    >>> version, compressed, key, states = read_proxy(reader)
    >>> version, compressed, key.name, [state.name for state in states][:1]
    (6, False, 'Long', ['count'])

    The key groups start where the proxy ends, at the handle's first offset:

    >>> reader.pos, handle.offsets[0]
    (1040, 1040)
    """
    at = data.pos
    version = data.i32("the keyed backend serialization proxy's version")
    if version not in PROXY_VERSIONS:
        data.fail(
            "a keyed backend serialization proxy of version "
            f"{' or '.join(map(str, PROXY_VERSIONS))}, found {version}",
            at,
        )
    compressed = data.boolean("whether key groups are compressed")
    key = _serializer_snapshot(data, "the key serializer")
    at = data.pos
    count = _i16(data, "the number of keyed states")
    if count < 0:
        data.fail(f"a non-negative number of keyed states, found {count}", at)
    states = []
    for index in range(count):
        name = data.utf(f"the name of keyed state {index}")
        at = data.pos
        ordinal = data.i32(f"the backend state type of {name!r}")
        if not 0 <= ordinal < len(BACKEND_STATE_TYPES):
            data.fail(f"a backend state type (0 to 4) for {name!r}, found {ordinal}", at)
        options = tuple(
            (data.utf(f"an option name of {name!r}"), data.utf(f"an option value of {name!r}"))
            for _ in range(data.count(f"options of {name!r}", 4))
        )
        serializers = tuple(
            (
                (role := data.utf(f"a serializer role of {name!r}")),
                _serializer_snapshot(data, f"{name!r}'s {role}"),
            )
            for _ in range(data.count(f"serializers of {name!r}", 6))
        )
        states.append(StateInfo(name, BACKEND_STATE_TYPES[ordinal], options, serializers))
    return version, compressed, key, tuple(states)


def _i16(data: DataInput, what: str) -> int:
    raw = data.raw(2, what)
    return int(_I16.unpack(raw)[0])


def _serializer_snapshot(data: DataInput, what: str) -> Serializer:
    at = data.pos
    version = data.i32(f"the snapshot format version of {what}")
    if version != SNAPSHOT_PROXY_VERSION:
        data.fail(
            f"serializer snapshot format version {SNAPSHOT_PROXY_VERSION} of {what}, "
            f"found {version}",
            at,
        )
    return _versioned_snapshot(data, what)


class _UnknownLayout(Exception):
    """A snapshot whose body cannot be stepped over: the rest of the proxy is unreadable."""


def _versioned_snapshot(data: DataInput, what: str, depth: int = 0) -> Serializer:
    if depth > MAX_NESTING:
        data.fail(f"serializer snapshots nested at most {MAX_NESTING} deep ({what})")
    name = data.utf(f"the snapshot class of {what}")
    data.i32(f"the snapshot version of {what}")
    if name in _SIMPLE:
        simple = _SIMPLE[name]
        if simple == "Char":
            return Serializer(name, (), _char, 2)
        return Serializer(
            name, (), value_decoder(_TYPE_NAMES.get(simple, simple)), _FIXED.get(simple)
        )
    if name == _VOID_NAMESPACE:
        return Serializer(name, (), _void, 1)
    if name not in (_TIMER, _LIST, _MAP, _TUPLE):
        raise _UnknownLayout(f"{what} is serialized by {name}, whose layout is not known here")
    at = data.pos
    if data.i32(f"the composite snapshot magic number of {what}") != COMPOSITE_MAGIC:
        data.fail(f"the composite snapshot magic number {COMPOSITE_MAGIC} of {what}", at)
    data.i32(f"the outer snapshot version of {what}")
    if name == _TUPLE:
        data.utf(f"the tuple class of {what}")
    at = data.pos
    if data.i32(f"the nested snapshots' magic number of {what}") != NESTED_MAGIC:
        data.fail(f"the nested snapshots' magic number {NESTED_MAGIC} of {what}", at)
    data.i32(f"the nested snapshots' version of {what}")
    nested = tuple(
        _versioned_snapshot(data, f"{what}'s nested serializer {i}", depth + 1)
        for i in range(data.count(f"nested serializers of {what}", 6))
    )
    expected = {_TIMER: 2, _LIST: 1, _MAP: 2}.get(name)
    if expected is not None and len(nested) != expected:
        data.fail(f"{expected} nested serializers of {what}, found {len(nested)}", at)
    reads = [n.read for n in nested]
    if any(r is None for r in reads):
        return Serializer(name, nested)
    readers: list[ValueDecoder] = [r for r in reads if r is not None]
    sizes = [n.fixed for n in nested]
    fixed = None if None in sizes else sum(s for s in sizes if s is not None)
    if name == _TIMER:
        return Serializer(
            name, nested, _timer(readers[0], readers[1]), None if fixed is None else 8 + fixed
        )
    if name == _LIST:
        return Serializer(name, nested, _list(readers[0]))
    if name == _MAP:
        return Serializer(name, nested, _map(readers[0], readers[1]))
    return Serializer(name, nested, tuple_decoder(readers), fixed)


def _void(data: bytes, at: int) -> tuple[object, int]:
    """One byte, whatever it holds, as ``VoidNamespaceSerializer`` writes."""
    if at >= len(data):
        raise IndexError(at)
    return None, at + 1


def _char(data: bytes, at: int) -> tuple[object, int]:
    (unit,) = struct.unpack_from(">H", data, at)
    return chr(unit), at + 2


def _count(data: bytes, at: int) -> tuple[int, int]:
    (size,) = struct.unpack_from(">i", data, at)
    if size < 0 or size > len(data) - at:
        raise ValueError(f"a collection of {size} elements")
    return size, at + 4


def _list(element: ValueDecoder) -> ValueDecoder:
    def read(data: bytes, at: int) -> tuple[object, int]:
        size, at = _count(data, at)
        values = []
        for _ in range(size):
            value, at = element(data, at)
            values.append(value)
        return values, at

    return read


def _map(key: ValueDecoder, value: ValueDecoder) -> ValueDecoder:
    def read(data: bytes, at: int) -> tuple[object, int]:
        size, at = _count(data, at)
        entries: dict[object, object] = {}
        for _ in range(size):
            k, at = key(data, at)
            k = _frozen(k)
            null = data[at]
            if null > 1:
                raise ValueError(f"a null flag (0 or 1), found {null}")
            at += 1
            if null:
                entries[k] = None
            else:
                entries[k], at = value(data, at)
        return entries, at

    return read


def _frozen(key: object) -> object:
    """A map key as a dictionary key: Flink's maps may be keyed by a ``List`` or a ``Map``
    (compared by ``equals``, element by element), which become a tuple of their elements or
    of their (key, value) pairs."""
    if isinstance(key, list):
        return tuple(_frozen(k) for k in key)
    if isinstance(key, dict):
        return tuple((k, _frozen(v)) for k, v in key.items())
    return key


def _timer(key: ValueDecoder, namespace: ValueDecoder) -> ValueDecoder:
    """(timestamp, key, namespace); the timestamp is stored with its sign bit flipped."""

    def read(data: bytes, at: int) -> tuple[object, int]:
        (flipped,) = struct.unpack_from(">q", data, at)
        timestamp = flipped ^ -(1 << 63)
        k, at = key(data, at + 8)
        n, at = namespace(data, at)
        return (timestamp, k, n), at

    return read


# -- key groups


def read_keyed_state(handle: KeyGroupsStateHandle, files: StateFiles) -> KeyedStateSnapshot:
    """The states of a keyed-state handle and their entries per key group.

    Examples
    --------
    Every subtask of the counter: its key groups and its entries:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> with StateFiles(checkpoint) as files:
    ...     for subtask in read_metadata(checkpoint).operator("slow-counter").subtasks:
    ...         keyed = subtask.managed_keyed_state
    ...         entries = read_keyed_state(keyed, files).entries
    ...         print(subtask.index, keyed.first_key_group, keyed.last_key_group, entries)
    0 0 31 271
    1 32 63 239
    2 64 95 238
    3 96 127 252
    """
    return _walk(handle, files, None)


def keyed_entries(handle: KeyGroupsStateHandle, files: StateFiles) -> Iterator[Entry]:
    """Every entry decoded, key group by key group (none where the snapshot is unreadable).

    Examples
    --------
    The keys subtask 0 of the counter holds are ``f0 % 1000`` values, each in the key group Flink's
    ``KeyGroupRangeAssignment`` gives it:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> handle = read_metadata(checkpoint).operator("slow-counter").subtask(0).managed_keyed_state
    >>> with StateFiles(checkpoint) as files:
    ...     entries = list(keyed_entries(handle, files))
    >>> len(entries), min(e.key for e in entries), max(e.key for e in entries)
    (271, 4, 991)
    >>> from flinkstate.keygroups import assign_to_key_group
    >>> all(assign_to_key_group(e.key, 128, "long") == e.key_group for e in entries)
    True
    """
    found: list[Entry] = []
    _walk(handle, files, found.append)
    yield from found


def _walk(
    handle: KeyGroupsStateHandle,
    files: StateFiles,
    emit: Callable[[Entry], None] | None,
) -> KeyedStateSnapshot:
    if handle.delegate is None:
        raise CheckpointFormatError("_metadata", 0, "a keyed-state handle with a stream")
    source = files.describe(handle.delegate)
    raw = bytes(files.stream(handle.delegate))
    data = DataInput(raw, source)
    try:
        version, compressed, key, states = read_proxy(data)
    except _UnknownLayout as unknown:
        return KeyedStateSnapshot(0, False, Serializer("?"), (), (), str(unknown))
    header = KeyedStateSnapshot(version, compressed, key, states, ())
    reason = _why_unreadable(header)
    if reason is not None:
        return KeyedStateSnapshot(version, compressed, key, states, (), reason)
    previous = data.pos
    for position, start in enumerate(handle.offsets):
        if not previous <= start <= len(raw):
            data.fail(
                f"key group {handle.first_key_group + position} at an offset from {previous} to "
                f"{len(raw)}, the handle says {start}",
                min(start, len(raw)),
            )
        previous = start
    bounds = [*handle.offsets, len(raw)]
    groups = []
    for position, start in enumerate(handle.offsets):
        group = handle.first_key_group + position
        end = bounds[position + 1]
        data.pos = start
        at = data.pos
        found = data.i32(f"the id of key group {group}")
        if found != group:
            if position == 0:  # not the hashmap backend's layout
                why = (
                    f"key group {group} does not start with its id (found {found}): not a "
                    "hashmap backend's snapshot (RocksDB writes full snapshots differently)"
                )
                return KeyedStateSnapshot(version, compressed, key, states, (), why)
            data.fail(f"key group {group}'s id, found {found}", at)
        counts = [0] * len(states)
        seen: set[int] = set()
        while data.pos < end:
            at = data.pos
            index = _i16(data, f"a state index in key group {group}")
            if not 0 <= index < len(states):
                data.fail(f"a state index (0 to {len(states) - 1}), found {index}", at)
            state = states[index]
            if index in seen:
                data.fail(f"each state once in key group {group}, {state.name!r} again", at)
            seen.add(index)
            size = data.count(f"entries of {state.name!r} in key group {group}", 1)
            counts[index] = size
            data.pos = _entries(raw, data, state, key, size, group, emit)
        if data.pos != end:
            data.fail(f"key group {group} to end at {end}, its entries end at {data.pos}")
        if len(seen) != len(states):
            missing = next(s.name for i, s in enumerate(states) if i not in seen)
            data.fail(f"every state in key group {group}, {missing!r} is missing", start)
        groups.append(KeyGroupEntries(group, tuple(counts)))
    return KeyedStateSnapshot(version, compressed, key, states, tuple(groups))


def _why_unreadable(snapshot: KeyedStateSnapshot) -> str | None:
    if snapshot.compressed:
        return "key groups are compressed (Snappy): entries are not counted"
    for state in snapshot.states:
        if state.backend_type not in ("KEY_VALUE", "PRIORITY_QUEUE"):
            return f"state {state.name!r} is a {state.backend_type} state"
        roles = ["VALUE_SERIALIZER"]
        if state.backend_type == "KEY_VALUE":
            roles.append("NAMESPACE_SERIALIZER")
        for role in roles:
            serializer = state.serializer(role)
            if serializer is None:
                return f"state {state.name!r} has no {role}"
            if serializer.read is None:
                return f"state {state.name!r}'s {role} {serializer.name} has no known layout"
    if snapshot.key_serializer.read is None:
        return f"the key serializer {snapshot.key_serializer.name} has no known layout"
    return None


def _entries(
    raw: bytes,
    data: DataInput,
    state: StateInfo,
    key: Serializer,
    size: int,
    group: int,
    emit: Callable[[Entry], None] | None,
) -> int:
    """Steps over (or decodes) ``size`` entries of ``state``; the position after them."""
    value = state.serializer("VALUE_SERIALIZER")
    assert value is not None
    assert value.read is not None
    assert key.read is not None
    read_value, read_key = value.read, key.read
    timers = state.backend_type == "PRIORITY_QUEUE"
    namespace = state.serializer("NAMESPACE_SERIALIZER")
    read_namespace = None if timers or namespace is None else namespace.read
    at = start = data.pos
    sizes = [value.fixed] if timers else [value.fixed, key.fixed, getattr(namespace, "fixed", None)]
    if emit is None and None not in sizes:  # counting only: step over them all at once
        width = sum(s for s in sizes if s is not None)
        if width * size > len(raw) - at:
            data.fail(f"{size} entries of {width} bytes of {state.name!r} in key group {group}")
        return at + width * size
    try:
        for _ in range(size):
            start = at
            if timers:
                timer, at = read_value(raw, at)
                assert isinstance(timer, tuple)
                item = Entry(group, state.name, timer[1], timer[2], timer[0])
            else:
                assert read_namespace is not None
                n, at = read_namespace(raw, at)
                k, at = read_key(raw, at)
                v, at = read_value(raw, at)
                item = Entry(group, state.name, k, n, v)
            if at > len(raw):
                raise IndexError(at)
            if emit is not None:
                emit(item)
    except (IndexError, struct.error, UnicodeDecodeError, ValueError) as bad:
        data.fail(
            f"an entry of {state.name!r} in key group {group} ({type(bad).__name__}: {bad})",
            start,
        )
    return at
