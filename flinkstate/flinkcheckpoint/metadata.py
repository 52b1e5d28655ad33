"""The ``_metadata`` file of a Flink checkpoint: versions 5, 6 and 7.

Layout (``Checkpoints.storeCheckpointMetadata`` and the ``MetadataV*Serializer`` chain): a magic
number, the version, then the body of ``MetadataV2V3SerializerBase``: checkpoint id, master
states, operator states. Version 5 added each operator's name and uid; version 6 (Flink 2.3)
writes channel-state handles with a type byte and, in practice, always merged per subtask and
file; version 7 (after 2.3) ends each subtask state with an optional reference checkpoint id.
From version 4 on, a Java-serialized ``CheckpointProperties`` follows the body: it is never
deserialized here, only recognised by its stream header and skipped.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from flinkstate.errors import CheckpointFormatError
from flinkstate.flinkcheckpoint.datainput import DataInput
from flinkstate.flinkcheckpoint.files import map_file, open_regular
from flinkstate.flinkcheckpoint.handles import (
    OPERATOR_STATE_MODES,
    ByteStreamStateHandle,
    ChannelStateHandle,
    ChannelTag,
    EmptySegmentFileStateHandle,
    FileStateHandle,
    HandleAndLocalPath,
    IncrementalRemoteKeyedStateHandle,
    KeyedStateHandle,
    KeyGroupsStateHandle,
    MergedChannelStateHandle,
    OperatorStateEntry,
    OperatorStateHandle,
    RelativeFileStateHandle,
    SegmentFileStateHandle,
    StreamStateHandle,
    StreamTag,
)
from flinkstate.flinkcheckpoint.javaserial import skip_java_object
from flinkstate.keygroups import (
    UPPER_BOUND_MAX_PARALLELISM,
    KeyGroupRange,
    compute_key_group_range_for_operator_index,
)

#: ``Checkpoints.HEADER_MAGIC_NUMBER``
MAGIC = 0x4960672D
#: ``MetadataV2V3SerializerBase.MASTER_STATE_MAGIC_NUMBER``
MASTER_STATE_MAGIC = 0xC96B1696
#: what this reader understands: 5 (Flink 1.15 - 2.2), 6 (Flink 2.3), 7 (after 2.3)
SUPPORTED_VERSIONS = (5, 6, 7)
#: the smallest encodings, to bound counts read from the file before allocating
_MIN_OPERATOR = 2 + 2 + 16 + 4 + 4 + 1 + 4
_MIN_SUBTASK = 4
_MIN_CHANNEL_HANDLE = 1 + 4 + 8 + 1


#: a subtask's channel-state handle as stored: one channel's, or Flink 2.3's merged one
ChannelHandle = MergedChannelStateHandle | ChannelStateHandle


def _unmerged(handle: ChannelHandle) -> tuple[ChannelStateHandle, ...]:
    return handle.channels if isinstance(handle, MergedChannelStateHandle) else (handle,)


@dataclass(frozen=True, slots=True)
class MasterState:
    """A master hook's state (``MasterState``): its name, version and bytes, as the checkpoint
    coordinator stored them.

    Examples
    --------
    The committed checkpoints have none; one written into a copy of a ``_metadata`` file is read
    back as it went in:

    >>> import dataclasses
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata_writer import write_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> metadata = read_metadata(checkpoint)
    >>> metadata.master_states
    ()
    >>> trailer = (checkpoint / "_metadata").read_bytes()[metadata.trailer_offset :]
    >>> hooked = dataclasses.replace(metadata, master_states=(MasterState("hook", 1, b"ok"),))
    >>> parse_metadata(write_metadata(hooked, 6, trailer)).master_states
    (MasterState(name='hook', version=1, data=b'ok'),)
    """

    name: str
    version: int
    data: bytes


@dataclass(frozen=True, slots=True)
class SubtaskState:
    """``OperatorSubtaskState``: at most one handle of each kind of operator and keyed
    state, and the channel-state handles (merged ones as Flink 2.3 writes them).

    Examples
    --------
    Subtask 3 of the keyed counter: its keyed state (key groups 96 to 127) and the in-flight data
    of its two input channels, both inlined in ``_metadata``:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4"))
    >>> subtask = metadata.operator("slow-counter").subtask(3)
    >>> keyed = subtask.managed_keyed_state
    >>> keyed.first_key_group, keyed.last_key_group
    (96, 127)
    >>> for handle in subtask.channel_handles():
    ...     print(handle.kind, handle.channel_or_subpartition, handle.state_size,
    ...           type(handle.delegate).__name__)
    input 0 4104 ByteStreamStateHandle
    input 1 7358 ByteStreamStateHandle
    """

    index: int
    managed_operator_state: OperatorStateHandle | None
    raw_operator_state: OperatorStateHandle | None
    managed_keyed_state: KeyedStateHandle | None
    raw_keyed_state: KeyedStateHandle | None
    input_channel_state: tuple[ChannelHandle, ...]
    result_subpartition_state: tuple[ChannelHandle, ...]
    #: version 7: the checkpoint whose state this subtask reuses, if any
    ref_checkpoint_id: int | None = None

    def channel_handles(self) -> Iterator[ChannelStateHandle]:
        """Every channel's handle, merged ones unpacked, input side first."""
        for handle in (*self.input_channel_state, *self.result_subpartition_state):
            yield from _unmerged(handle)


@dataclass(frozen=True, slots=True)
class OperatorState:
    """One operator of the job (every operator of every chain is listed).

    Examples
    --------
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4"))
    >>> counter = metadata.operator("slow-counter")
    >>> counter.operator_id, counter.parallelism, counter.max_parallelism
    ('85a8382f15be92fc24347a7bf1206c53', 4, 128)
    >>> len(counter.subtasks), counter.finished_subtasks, counter.fully_finished
    (4, (), False)

    An operator without a uid goes by its name:

    >>> [operator.label for operator in metadata.operators]
    ['to-record', 'source', 'slow-counter', 'sink']
    >>> metadata.operator("source").name
    'Source: source'
    """

    operator_id: str
    name: str
    uid: str
    parallelism: int
    max_parallelism: int
    coordinator_state: ByteStreamStateHandle | None
    subtasks: tuple[SubtaskState, ...]
    finished_subtasks: tuple[int, ...]
    fully_finished: bool

    def subtask(self, index: int) -> SubtaskState | None:
        return next((s for s in self.subtasks if s.index == index), None)

    @property
    def label(self) -> str:
        return self.uid or self.name or self.operator_id


@dataclass(frozen=True, slots=True)
class CheckpointMetadata:
    """What ``Checkpoints.loadCheckpointMetadata`` reads, as values; ``directory`` is where
    the ``_metadata`` file is (relative handles resolve there).

    Examples
    --------
    What Flink's own loader read from this file too (``chk-48.groundtruth.json``): version 6,
    checkpoint 48, four operators, 41112 bytes of which the last 604 are the Java-serialized
    ``CheckpointProperties``:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4"))
    >>> metadata.version, metadata.checkpoint_id, len(metadata.operators)
    (6, 48, 4)
    >>> metadata.size, metadata.size - metadata.trailer_offset
    (41112, 604)
    >>> sum(1 for _ in metadata.channel_handles())
    12
    >>> metadata.operator("no-such-operator")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    KeyError: "no operator 'no-such-operator' in checkpoint 48; known: to-record, source, ..."
    """

    source: str
    version: int
    checkpoint_id: int
    master_states: tuple[MasterState, ...]
    operators: tuple[OperatorState, ...]
    #: where the body ends and the (skipped) Java-serialized properties begin
    trailer_offset: int
    size: int

    def operator(self, key: str) -> OperatorState:
        """An operator by uid, name or id hex."""
        for operator in self.operators:
            if key in (operator.uid, operator.name, operator.operator_id):
                return operator
        known = ", ".join(o.label for o in self.operators)
        raise KeyError(f"no operator {key!r} in checkpoint {self.checkpoint_id}; known: {known}")

    def by_id(self, operator_id: str) -> OperatorState:
        """An operator by its id hex, which the reader itself found in the file."""
        return next(o for o in self.operators if o.operator_id == operator_id)

    def channel_handles(self) -> Iterator[tuple[OperatorState, ChannelStateHandle]]:
        for operator in self.operators:
            for subtask in operator.subtasks:
                for handle in subtask.channel_handles():
                    yield operator, handle


def read_metadata(path: str | Path) -> CheckpointMetadata:
    """Read a ``_metadata`` file, or the one in a ``chk-N`` directory.

    The file is mapped, not read: a huge or sparse file costs only the bytes the parser
    really reads, and every count in it is checked against what remains before it is used.

    Examples
    --------
    A checkpoint written with file merging (FLIP-306): its state is in segments of files in the
    job's ``taskowned`` folder:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4-filemerging"))
    >>> metadata.checkpoint_id
    36
    >>> {type(handle.delegate).__name__ for _, handle in metadata.channel_handles()}
    {'SegmentFileStateHandle'}
    """
    target = Path(path)
    if target.is_dir():
        target = target / "_metadata"
    try:
        file = open_regular(target, "a checkpoint _metadata file")
    except FileNotFoundError:
        raise CheckpointFormatError(str(target), 0, "a checkpoint _metadata file") from None
    with file:
        if os.fstat(file.fileno()).st_size == 0:
            return parse_metadata(b"", str(target))
        with map_file(file, target, "a checkpoint _metadata file") as data:
            return parse_metadata(data, str(target))


def parse_metadata(data: bytes | mmap.mmap, source: str = "_metadata") -> CheckpointMetadata:
    """The checkpoint metadata in ``data`` (a ``_metadata`` file's bytes; ``source`` names it in
    errors), every count and length checked against what remains.

    Examples
    --------
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> data = (real_checkpoint("rebalance-forward-p2-p3") / "_metadata").read_bytes()
    >>> metadata = parse_metadata(data)
    >>> metadata.checkpoint_id, [(o.label, o.parallelism) for o in metadata.operators]
    (7, [('to-record', 2), ('source', 2), ('slow-relay', 3), ('sink', 3), ('relay', 3)])

    A file cut short is refused where it ends, naming what was expected:

    >>> from flinkstate.errors import CheckpointFormatError
    >>> try:
    ...     parse_metadata(data[:100])
    ... except CheckpointFormatError as error:
    ...     print(error)  # doctest: +NORMALIZE_WHITESPACE
    _metadata: at byte 20: expected 5 operator states of at least 33 bytes each, but only 76
    bytes remain
    """
    reader = DataInput(data, source)
    magic = reader.i32("the magic number") & 0xFFFFFFFF
    if magic != MAGIC:
        reader.fail(f"the checkpoint metadata magic number 0x{MAGIC:08X}, found 0x{magic:08X}", 0)
    version = reader.i32("the metadata version")
    if version not in SUPPORTED_VERSIONS:
        reader.fail(
            f"metadata version {', '.join(map(str, SUPPORTED_VERSIONS))}, found {version} "
            "(this reader knows Flink's versions 5 to 7)",
            4,
        )
    body = _Body(reader, version)
    checkpoint_id = reader.i64("the checkpoint id")
    masters = tuple(body.master_state() for _ in range(reader.count("master states", 8)))
    operators: list[OperatorState] = []
    for _ in range(reader.count("operator states", _MIN_OPERATOR)):
        at = reader.pos
        operator = body.operator_state()
        if any(o.operator_id == operator.operator_id for o in operators):
            reader.fail(f"each operator once, found operator id {operator.operator_id} again", at)
        operators.append(operator)
    trailer = reader.pos
    skip_java_object(reader, "the Java-serialized CheckpointProperties after the last operator")
    if reader.remaining:
        reader.fail(
            f"the end of the file after CheckpointProperties, {reader.remaining} bytes remain"
        )
    return CheckpointMetadata(
        source, version, checkpoint_id, masters, tuple(operators), trailer, len(data)
    )


class _Body:
    """The handle and state decoders of one file's version."""

    def __init__(self, reader: DataInput, version: int) -> None:
        self.r = reader
        self.version = version

    def master_state(self) -> MasterState:
        r = self.r
        at = r.pos
        magic = r.i32("the master state magic number") & 0xFFFFFFFF
        if magic != MASTER_STATE_MAGIC:
            r.fail(f"master state magic 0x{MASTER_STATE_MAGIC:08X}, found 0x{magic:08X}", at)
        length = r.count("master state bytes", 1)
        end = r.pos + length
        version = r.i32("the master state version")
        name = r.utf("the master state name")
        data = r.raw(r.count("master state data bytes", 1), "the master state data")
        if r.pos != end:
            r.fail(f"a master state of {length} bytes to end at byte {end}")
        return MasterState(name, version, data)

    def operator_state(self) -> OperatorState:
        r = self.r
        name = r.utf("the operator name")
        uid = r.utf("the operator uid")
        operator_id = r.raw(16, "the operator id").hex()
        parallelism = r.i32("the operator parallelism")
        max_parallelism = r.i32("the operator max parallelism")
        if not 1 <= parallelism <= max_parallelism <= UPPER_BOUND_MAX_PARALLELISM:
            r.fail(
                f"1 <= parallelism <= max parallelism <= {UPPER_BOUND_MAX_PARALLELISM}, found "
                f"{parallelism} and {max_parallelism}",
                r.pos - 8,
            )
        at = r.pos
        coordinator = self.stream_handle("the coordinator state")
        if coordinator is not None and not isinstance(coordinator, ByteStreamStateHandle):
            r.fail("an inline (tag 1) coordinator state", at)
        at = r.pos
        count = r.i32("the number of subtask states")
        if count == -1:  # FullyFinishedOperatorState
            return OperatorState(
                operator_id, name, uid, parallelism, max_parallelism, coordinator, (), (), True
            )
        if count < 0 or count * _MIN_SUBTASK > r.remaining:
            r.fail(f"a number of subtask states (or -1), found {count}", at)
        subtasks: list[SubtaskState] = []
        finished: list[int] = []
        seen: set[int] = set()
        for _ in range(count):
            at = r.pos
            index = r.i32("a subtask index")
            subtask = -index - 1 if index < 0 else index
            if subtask >= parallelism:
                r.fail(f"a subtask index below the parallelism {parallelism}, found {subtask}", at)
            if subtask in seen:
                r.fail(f"each subtask once, found subtask {subtask} again", at)
            seen.add(subtask)
            if index < 0:
                finished.append(subtask)
                continue
            subtasks.append(self.subtask_state(index, parallelism, max_parallelism))
        return OperatorState(
            operator_id,
            name,
            uid,
            parallelism,
            max_parallelism,
            coordinator,
            tuple(subtasks),
            tuple(finished),
            False,
        )

    def subtask_state(self, index: int, parallelism: int, max_parallelism: int) -> SubtaskState:
        r = self.r
        managed_op = self.operator_handle("managed operator state") if self._flag() else None
        raw_op = self.operator_handle("raw operator state") if self._flag() else None
        owned = compute_key_group_range_for_operator_index(max_parallelism, parallelism, index)
        managed_keyed = self.keyed_handle("managed keyed state", owned)
        raw_keyed = self.keyed_handle("raw keyed state", owned)
        at = r.pos
        inputs = tuple(
            self.channel_handle(True)
            for _ in range(r.count("input channel state handles", _MIN_CHANNEL_HANDLE))
        )
        self._check_channels(inputs, index, at)
        at = r.pos
        outputs = tuple(
            self.channel_handle(False)
            for _ in range(r.count("result subpartition state handles", _MIN_CHANNEL_HANDLE))
        )
        self._check_channels(outputs, index, at)
        ref = None
        if self.version >= 7 and r.boolean("the reference checkpoint marker"):
            ref = r.i64("the reference checkpoint id")
        return SubtaskState(
            index, managed_op, raw_op, managed_keyed, raw_keyed, inputs, outputs, ref
        )

    def _check_channels(self, handles: tuple[ChannelHandle, ...], index: int, at: int) -> None:
        """A subtask's channel handles are its own, and name each channel once."""
        seen: set[tuple[int, int]] = set()
        for handle in handles:
            channels = _unmerged(handle)
            side = "input channel" if handle.input else "result subpartition"
            if isinstance(handle, MergedChannelStateHandle):
                total = sum(c.state_size for c in channels)
                if handle.state_size != total:
                    self.r.fail(
                        f"a merged {side} handle's state size to be its channels' sum {total}, "
                        f"found {handle.state_size}",
                        at,
                    )
            for channel in channels:
                if channel.subtask != index:
                    self.r.fail(
                        f"the {side} state of subtask {index}, found a handle of subtask "
                        f"{channel.subtask}",
                        at,
                    )
                key = (channel.gate_or_partition, channel.channel_or_subpartition)
                if key in seen:
                    self.r.fail(f"each {side} once, found {key[0]}/{key[1]} again", at)
                seen.add(key)

    def _flag(self) -> bool:
        at = self.r.pos
        value = self.r.i32("a has-state flag")
        if value not in (0, 1):
            self.r.fail(f"a has-state flag (0 or 1), found {value}", at)
        return value == 1

    # -- stream handles

    def stream_handle(self, what: str) -> StreamStateHandle | None:
        r = self.r
        at = r.pos
        tag = r.u8(f"the handle type of {what}")
        if tag == StreamTag.NULL:
            return None
        if tag == StreamTag.BYTE_STREAM:
            name = r.utf(f"the name of {what}")
            return ByteStreamStateHandle(name, r.raw(r.count(f"bytes of {what}", 1), what))
        if tag == StreamTag.FILE_STREAM:
            size = self._size(what)
            return FileStateHandle(r.utf(f"the path of {what}"), size)
        if tag == StreamTag.RELATIVE_STREAM:
            path = r.utf(f"the relative path of {what}")
            return RelativeFileStateHandle(path, self._size(what))
        if tag == StreamTag.SEGMENT_FILE:
            start = self._size(f"the start of {what}")
            size = self._size(what)
            scope_at = r.pos
            scope = r.i32(f"the scope of {what}")
            if scope not in (0, 1):
                r.fail(f"a segment scope (0 exclusive, 1 shared), found {scope}", scope_at)
            path = r.utf(f"the physical file of {what}")
            logical = r.utf(f"the logical file id of {what}")
            return SegmentFileStateHandle(
                path, start, size, ("EXCLUSIVE", "SHARED")[scope], logical
            )
        if tag == StreamTag.EMPTY_SEGMENT_FILE:
            return EmptySegmentFileStateHandle()
        r.fail(f"a stream state handle type (0, 1, 2, 6, 15 or 16) for {what}, found {tag}", at)

    def _size(self, what: str) -> int:
        at = self.r.pos
        value = self.r.i64(f"the size of {what}")
        if value < 0:
            self.r.fail(f"a non-negative size of {what}, found {value}", at)
        return value

    # -- keyed handles

    def keyed_handle(self, what: str, owned: KeyGroupRange) -> KeyedStateHandle | None:
        r = self.r
        at = r.pos
        tag = r.u8(f"the handle type of {what}")
        if tag == StreamTag.NULL:
            return None
        if tag in (StreamTag.KEY_GROUPS, StreamTag.KEY_GROUPS_V2, StreamTag.SAVEPOINT_KEY_GROUPS):
            first, last = self._key_group_range(what, owned)
            offsets = tuple(r.i64(f"a key-group offset of {what}") for _ in range(last - first + 1))
            delegate = self.stream_handle(f"the stream of {what}")
            handle_id = (
                r.utf(f"the handle id of {what}") if tag == StreamTag.KEY_GROUPS_V2 else None
            )
            return KeyGroupsStateHandle(tag, first, last, offsets, delegate, handle_id)
        if tag in (StreamTag.INCREMENTAL_KEY_GROUPS, StreamTag.INCREMENTAL_KEY_GROUPS_V2):
            v2 = tag == StreamTag.INCREMENTAL_KEY_GROUPS_V2
            checkpoint_id = r.i64(f"the checkpoint id of {what}")
            backend = r.utf(f"the backend id of {what}")
            first, last = self._key_group_range(what, owned)
            size = self._size(what) if v2 else None
            meta = self.stream_handle(f"the meta data of {what}")
            shared = self._local_paths(f"shared files of {what}")
            private = self._local_paths(f"private files of {what}")
            handle_id = r.utf(f"the handle id of {what}") if v2 else None
            return IncrementalRemoteKeyedStateHandle(
                tag, checkpoint_id, backend, first, last, size, meta, shared, private, handle_id
            )
        if tag in (
            StreamTag.CHANGELOG,
            StreamTag.CHANGELOG_V2,
            StreamTag.CHANGELOG_BYTE_INCREMENT,
            StreamTag.CHANGELOG_FILE_INCREMENT,
            StreamTag.CHANGELOG_FILE_INCREMENT_V2,
        ):
            r.fail(
                f"a keyed state handle this reader knows for {what}; tag {tag} is the changelog "
                "state backend's, which is not supported",
                at,
            )
        r.fail(f"a keyed state handle type (0, 3, 5, 7, 11 or 12) for {what}, found {tag}", at)

    def _key_group_range(self, what: str, owned: KeyGroupRange) -> tuple[int, int]:
        """A handle's key groups: those its subtask owns (``KeyGroupRangeAssignment``), as a
        snapshot covers its backend's range and nothing else."""
        r = self.r
        at = r.pos
        first = r.i32(f"the first key group of {what}")
        count = r.i32(f"the number of key groups of {what}")
        if first < 0 or count < 0 or count * 8 > r.remaining:
            r.fail(f"a key-group range of {what}, found start {first} and {count} groups", at)
        last = first + count - 1
        if (first, last) != (owned.start, owned.end):
            r.fail(
                f"the key groups its subtask owns, [{owned.start}, {owned.end}], for {what}; "
                f"found [{first}, {last}]",
                at,
            )
        return first, last

    def _local_paths(self, what: str) -> tuple[HandleAndLocalPath, ...]:
        r = self.r
        return tuple(
            HandleAndLocalPath(r.utf(f"a local path of {what}"), self.stream_handle(what))
            for _ in range(r.count(what, 3))
        )

    # -- operator handles

    def operator_handle(self, what: str) -> OperatorStateHandle | None:
        r = self.r
        at = r.pos
        tag = r.u8(f"the handle type of {what}")
        if tag == StreamTag.NULL:
            return None
        if tag not in (
            StreamTag.PARTITIONABLE_OPERATOR_STATE,
            StreamTag.SEGMENT_PARTITIONABLE_OPERATOR_STATE,
        ):
            r.fail(f"an operator state handle type (0, 4 or 17) for {what}, found {tag}", at)
        states = []
        for _ in range(r.count(f"named states of {what}", 7)):
            name = r.utf(f"a state name of {what}")
            mode_at = r.pos
            mode = r.u8(f"the distribution mode of {name}")
            if mode >= len(OPERATOR_STATE_MODES):
                r.fail(f"a distribution mode (0 to 2) of {name}, found {mode}", mode_at)
            offsets = tuple(
                r.i64(f"an offset of {name}") for _ in range(r.count(f"offsets of {name}", 8))
            )
            states.append(OperatorStateEntry(name, OPERATOR_STATE_MODES[mode], offsets))
        task_owned = shared = None
        empty = False
        if tag == StreamTag.SEGMENT_PARTITIONABLE_OPERATOR_STATE:
            task_owned = r.utf(f"the task-owned directory of {what}")
            shared = r.utf(f"the shared directory of {what}")
            empty = r.boolean(f"whether {what} is empty")
        delegate = self.stream_handle(f"the stream of {what}")
        return OperatorStateHandle(tag, tuple(states), delegate, task_owned, shared, empty)

    # -- channel handles

    def channel_handle(self, input: bool) -> ChannelHandle:
        r = self.r
        side = "input channel" if input else "result subpartition"
        if self.version < 6:  # ChannelStateHandleSerializerV1: unmerged, no type byte
            return self._unmerged(input, side)
        at = r.pos
        tag = r.u8(f"the type of a {side} state handle")
        plain = ChannelTag.INPUT_CHANNEL if input else ChannelTag.RESULT_SUBPARTITION
        merged = ChannelTag.MERGED_INPUT_CHANNEL if input else ChannelTag.MERGED_RESULT_SUBPARTITION
        if tag == plain:
            return self._unmerged(input, side)
        if tag != merged:
            r.fail(f"a {side} state handle type ({plain} or {merged}), found {tag}", at)
        subtask = self._index(f"the subtask of a merged {side} handle")
        state_size = self._size(f"a merged {side} handle")
        delegate = self.stream_handle(f"the stream of a merged {side} handle")
        blob = r.raw(
            r.count(f"bytes of the channel offsets of a merged {side} handle", 1),
            f"the channel offsets of a merged {side} handle",
        )
        inner = DataInput(blob, f"{r.source} (channel offsets at byte {r.pos - len(blob)})")
        channels = []
        for _ in range(inner.count(f"{side}s", 20)):
            first = self._index(f"the gate or partition of a {side}", inner)
            second = self._index(f"the channel or subpartition of a {side}", inner)
            size_at = inner.pos
            size = inner.i64(f"the state size of a {side}")
            if size < 0:
                inner.fail(f"a non-negative state size, found {size}", size_at)
            offsets = tuple(
                inner.i64(f"a chunk offset of a {side}")
                for _ in range(inner.count(f"chunk offsets of a {side}", 8))
            )
            channels.append(
                ChannelStateHandle(input, subtask, first, second, offsets, size, delegate)
            )
        if inner.remaining:
            inner.fail(f"the end of the channel offsets, {inner.remaining} bytes are left")
        return MergedChannelStateHandle(input, subtask, state_size, delegate, tuple(channels))

    def _unmerged(self, input: bool, side: str) -> ChannelStateHandle:
        r = self.r
        subtask = self._index(f"the subtask of a {side} handle")
        first = self._index(f"the gate or partition of a {side} handle")
        second = self._index(f"the channel or subpartition of a {side} handle")
        offsets = tuple(
            r.i64(f"a chunk offset of a {side} handle")
            for _ in range(r.count(f"chunk offsets of a {side} handle", 8))
        )
        size = self._size(f"a {side} handle")
        delegate = self.stream_handle(f"the stream of a {side} handle")
        return ChannelStateHandle(input, subtask, first, second, offsets, size, delegate)

    def _index(self, what: str, reader: DataInput | None = None) -> int:
        r = reader or self.r
        at = r.pos
        value = r.i32(what)
        if value < 0:
            r.fail(f"a non-negative {what}, found {value}", at)
        return value
