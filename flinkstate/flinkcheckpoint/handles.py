"""The state handles of a Flink checkpoint's metadata, as values.

Each class is one of Flink's handle types under the same name; ``tag`` is the byte that
announces it in ``_metadata`` (``MetadataV2V3SerializerBase`` for stream, keyed and operator
state; ``ChannelStateHandleSerializerV2`` for channel state, a separate numbering). A handle
names where its bytes are (``resolve`` in ``flinkcheckpoint.files`` turns that into a file and
a range); it never holds file contents, except the bytes Flink inlined into ``_metadata``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class StreamTag(IntEnum):
    """Tag bytes of ``MetadataV2V3SerializerBase`` (stream, keyed and operator handles)."""

    NULL = 0
    BYTE_STREAM = 1
    FILE_STREAM = 2
    KEY_GROUPS = 3
    PARTITIONABLE_OPERATOR_STATE = 4
    INCREMENTAL_KEY_GROUPS = 5
    RELATIVE_STREAM = 6
    SAVEPOINT_KEY_GROUPS = 7
    CHANGELOG = 8
    CHANGELOG_BYTE_INCREMENT = 9
    CHANGELOG_FILE_INCREMENT = 10
    INCREMENTAL_KEY_GROUPS_V2 = 11
    KEY_GROUPS_V2 = 12
    CHANGELOG_FILE_INCREMENT_V2 = 13
    CHANGELOG_V2 = 14
    SEGMENT_FILE = 15
    EMPTY_SEGMENT_FILE = 16
    SEGMENT_PARTITIONABLE_OPERATOR_STATE = 17


class ChannelTag(IntEnum):
    """Type bytes of ``ChannelStateHandleSerializerV2`` (metadata version 6 and later)."""

    INPUT_CHANNEL = 1
    RESULT_SUBPARTITION = 2
    MERGED_INPUT_CHANNEL = 3
    MERGED_RESULT_SUBPARTITION = 4


# -- stream state handles: where bytes are


@dataclass(frozen=True, slots=True)
class ByteStreamStateHandle:
    """Bytes inlined into ``_metadata`` (state under the inline threshold). ``name`` is the
    file it would have been, a UUID for channel state, or an operator id."""

    name: str
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass(frozen=True, slots=True)
class FileStateHandle:
    """A file by absolute path (as Flink stored it, e.g. ``file:/root/job/chk-7/abc``)."""

    path: str
    size: int


@dataclass(frozen=True, slots=True)
class RelativeFileStateHandle:
    """A file in the checkpoint's own directory; ``size`` is the whole file's."""

    relative_path: str
    size: int


@dataclass(frozen=True, slots=True)
class SegmentFileStateHandle:
    """A segment of a file-merging physical file (FLIP-306): ``size`` bytes from
    ``start``; offsets inside it count from ``start``."""

    physical_path: str
    start: int
    size: int
    scope: str
    logical_file_id: str


@dataclass(frozen=True, slots=True)
class EmptySegmentFileStateHandle:
    """File merging's placeholder for no bytes at all."""

    @property
    def size(self) -> int:
        return 0


StreamStateHandle = (
    ByteStreamStateHandle
    | FileStateHandle
    | RelativeFileStateHandle
    | SegmentFileStateHandle
    | EmptySegmentFileStateHandle
)


# -- keyed state


@dataclass(frozen=True, slots=True)
class KeyGroupsStateHandle:
    """Full keyed state of a key-group range (the hashmap backend's snapshots): the offset of
    each key group in the delegate stream. ``handle_id`` is absent for tags 3 and 7."""

    tag: int
    first_key_group: int
    last_key_group: int
    offsets: tuple[int, ...]
    delegate: StreamStateHandle | None
    handle_id: str | None = None

    @property
    def state_size(self) -> int:
        return 0 if self.delegate is None else self.delegate.size


@dataclass(frozen=True, slots=True)
class HandleAndLocalPath:
    local_path: str
    handle: StreamStateHandle | None


@dataclass(frozen=True, slots=True)
class IncrementalRemoteKeyedStateHandle:
    """An incremental (RocksDB) snapshot: meta data, shared and private files."""

    tag: int
    checkpoint_id: int
    backend_id: str
    first_key_group: int
    last_key_group: int
    checkpointed_size: int | None
    meta: StreamStateHandle | None
    shared: tuple[HandleAndLocalPath, ...]
    private: tuple[HandleAndLocalPath, ...]
    handle_id: str | None


KeyedStateHandle = KeyGroupsStateHandle | IncrementalRemoteKeyedStateHandle


# -- operator state


@dataclass(frozen=True, slots=True)
class OperatorStateEntry:
    """One named operator state: how it is redistributed and where its parts begin."""

    name: str
    mode: str
    offsets: tuple[int, ...]


#: ``OperatorStateHandle.Mode`` by ordinal
OPERATOR_STATE_MODES = ("SPLIT_DISTRIBUTE", "UNION", "BROADCAST")


@dataclass(frozen=True, slots=True)
class OperatorStateHandle:
    """Operator (non-keyed) state; with file merging (tag 17) also its directories."""

    tag: int
    states: tuple[OperatorStateEntry, ...]
    delegate: StreamStateHandle | None
    task_owned_dir: str | None = None
    shared_dir: str | None = None
    empty: bool = False

    @property
    def state_size(self) -> int:
        return 0 if self.delegate is None else self.delegate.size


# -- channel state


@dataclass(frozen=True, slots=True)
class ChannelStateHandle:
    """In-flight data of one channel of one subtask: an input channel (``gate``, ``channel``)
    or a result subpartition (``partition``, ``subpartition``), as chunk offsets into
    ``delegate`` (each at a chunk's 4-byte length) and the bytes they take."""

    input: bool
    subtask: int
    gate_or_partition: int
    channel_or_subpartition: int
    offsets: tuple[int, ...]
    state_size: int
    delegate: StreamStateHandle | None

    @property
    def kind(self) -> str:
        return "input" if self.input else "output"


@dataclass(frozen=True, slots=True)
class MergedChannelStateHandle:
    """Flink 2.3's merged handle: one subtask's channels that share one delegate."""

    input: bool
    subtask: int
    state_size: int
    delegate: StreamStateHandle | None
    channels: tuple[ChannelStateHandle, ...]
