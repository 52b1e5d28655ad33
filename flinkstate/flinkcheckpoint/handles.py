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
    """Tag bytes of ``MetadataV2V3SerializerBase`` (stream, keyed and operator handles).

    Examples
    --------
    The keyed-state handles Flink 2.3 writes for the hashmap backend are tagged 12:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4"))
    >>> handle = metadata.operator("slow-counter").subtask(0).managed_keyed_state
    >>> StreamTag(handle.tag)
    <StreamTag.KEY_GROUPS_V2: 12>
    """

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
    """Type bytes of ``ChannelStateHandleSerializerV2`` (metadata version 6 and later).

    Examples
    --------
    Flink 2.3 writes a subtask's channels merged, one handle per side and file: an output side's
    handle is tagged 4:

    >>> ChannelTag.MERGED_RESULT_SUBPARTITION.value, ChannelTag(3).name
    (4, 'MERGED_INPUT_CHANNEL')
    """

    INPUT_CHANNEL = 1
    RESULT_SUBPARTITION = 2
    MERGED_INPUT_CHANNEL = 3
    MERGED_RESULT_SUBPARTITION = 4


# -- stream state handles: where bytes are


@dataclass(frozen=True, slots=True)
class ByteStreamStateHandle:
    """Bytes inlined into ``_metadata`` (state under the inline threshold). ``name`` is the
    file it would have been, a UUID for channel state, or an operator id.

    Examples
    --------
    State under the inline threshold (20 kb in this job) is kept in ``_metadata`` itself: here the
    keyed state of one subtask, named after the file it would have been:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4"))
    >>> inline = metadata.operator("slow-counter").subtask(0).managed_keyed_state.delegate
    >>> inline.size, inline.name.rsplit("/", 2)[-2:]
    (6351, ['chk-48', 'cf991efa-65f8-485a-861e-3a309216b25b'])
    """

    name: str
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass(frozen=True, slots=True)
class FileStateHandle:
    """A file by absolute path (as Flink stored it, e.g. ``file:/root/job/chk-7/abc``).

    Examples
    --------
    A file Flink stored by its absolute path; a checkpoint copied elsewhere finds it under its
    job's folder (``StateFiles.local_path``):

    >>> from flinkstate.flinkcheckpoint import REAL_CHECKPOINTS, real_checkpoint
    >>> from flinkstate.flinkcheckpoint.files import StateFiles
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> stored = "file:/flink-checkpoints/keyed-hash-p2-p4/" + "/".join(checkpoint.parts[-2:])
    >>> handle = FileStateHandle(stored + "/5f9f274d-7b0c-4d04-8390-709817c72ab4", 52422)
    >>> with StateFiles(checkpoint) as files:
    ...     print(files.local_path(handle.path).relative_to(REAL_CHECKPOINTS).as_posix())
    ...     print(len(files.stream(handle)))
    keyed-hash-p2-p4/5d009e04dbf8e413889bc15e43e79d49/chk-48/5f9f274d-7b0c-4d04-8390-709817c72ab4
    52422
    """

    path: str
    size: int


@dataclass(frozen=True, slots=True)
class RelativeFileStateHandle:
    """A file in the checkpoint's own directory; ``size`` is the whole file's.

    Examples
    --------
    The channel-state file of the keyed job's checkpoint, in its ``chk-48`` folder:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4"))
    >>> _, channel = next(metadata.channel_handles())
    >>> channel.delegate
    RelativeFileStateHandle(relative_path='5f9f274d-7b0c-4d04-8390-709817c72ab4', size=52422)
    """

    relative_path: str
    size: int


@dataclass(frozen=True, slots=True)
class SegmentFileStateHandle:
    """A segment of a file-merging physical file (FLIP-306): ``size`` bytes from
    ``start``; offsets inside it count from ``start``.

    Examples
    --------
    With file merging (FLIP-306) the state of several subtasks shares one physical file in the
    job's ``taskowned`` folder; a handle is a segment of it:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4-filemerging"))
    >>> source = metadata.operator("source").subtask(1).managed_operator_state.delegate
    >>> source.physical_path.split("/")[-3], source.start, source.size, source.scope
    ('taskowned', 5807, 265, 'EXCLUSIVE')
    """

    physical_path: str
    start: int
    size: int
    scope: str
    logical_file_id: str


@dataclass(frozen=True, slots=True)
class EmptySegmentFileStateHandle:
    """File merging's placeholder for no bytes at all.

    Examples
    --------
    With file merging, an operator without operator state still gets a handle, of no bytes:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4-filemerging"))
    >>> empty = metadata.operator("sink").subtask(0).managed_operator_state.delegate
    >>> empty, empty.size
    (EmptySegmentFileStateHandle(), 0)
    """

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
    each key group in the delegate stream. ``handle_id`` is absent for tags 3 and 7.

    Examples
    --------
    The keyed state of subtask 0 of 4 of the counter: its key groups (0 to 31 of 128, as
    ``KeyGroupRangeAssignment`` gives it) and where each begins in its stream:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4"))
    >>> keyed = metadata.operator("slow-counter").subtask(0).managed_keyed_state
    >>> keyed.first_key_group, keyed.last_key_group, keyed.offsets[:3], keyed.state_size
    (0, 31, (1040, 1147, 1390), 6351)
    """

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
    """A file of an incremental snapshot: its stream handle and its path in the backend's local
    directory (``HandleAndLocalPath``).

    Examples
    --------
    A file of an incremental (RocksDB) snapshot and the name it has in the backend's local
    directory:

    >>> sst = HandleAndLocalPath("000042.sst", RelativeFileStateHandle("a2b4c6d8", 67108864))
    >>> sst.local_path, sst.handle.size
    ('000042.sst', 67108864)
    """

    local_path: str
    handle: StreamStateHandle | None


@dataclass(frozen=True, slots=True)
class IncrementalRemoteKeyedStateHandle:
    """An incremental (RocksDB) snapshot: meta data, shared and private files.

    Examples
    --------
    An incremental (RocksDB) snapshot of key groups 0 to 31: its shared files are reused by later
    checkpoints, its private ones (the manifest, the options) are this checkpoint's own:

    >>> snapshot = IncrementalRemoteKeyedStateHandle(
    ...     StreamTag.INCREMENTAL_KEY_GROUPS_V2, 48, "backend-1", 0, 31, 1024,
    ...     RelativeFileStateHandle("meta", 512),
    ...     (HandleAndLocalPath("000042.sst", RelativeFileStateHandle("a2b4c6d8", 67108864)),),
    ...     (HandleAndLocalPath("MANIFEST-000001", RelativeFileStateHandle("c4d6e8fa", 300)),),
    ...     "handle-1",
    ... )
    >>> StreamTag(snapshot.tag).name, snapshot.last_key_group - snapshot.first_key_group + 1
    ('INCREMENTAL_KEY_GROUPS_V2', 32)
    >>> [file.local_path for file in snapshot.shared + snapshot.private]
    ['000042.sst', 'MANIFEST-000001']
    """

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
    """One named operator state: how it is redistributed and where its parts begin.

    Examples
    --------
    A FLIP-27 source's reader keeps its splits as operator state, redistributed split by split:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4"))
    >>> metadata.operator("source").subtask(0).managed_operator_state.states
    (OperatorStateEntry(name='SourceReaderState', mode='SPLIT_DISTRIBUTE', offsets=(234,)),)
    """

    name: str
    mode: str
    offsets: tuple[int, ...]


#: ``OperatorStateHandle.Mode`` by ordinal
OPERATOR_STATE_MODES = ("SPLIT_DISTRIBUTE", "UNION", "BROADCAST")


@dataclass(frozen=True, slots=True)
class OperatorStateHandle:
    """Operator (non-keyed) state; with file merging (tag 17) also its directories.

    Examples
    --------
    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4"))
    >>> handle = metadata.operator("source").subtask(0).managed_operator_state
    >>> StreamTag(handle.tag).name, [state.name for state in handle.states], handle.state_size
    ('PARTITIONABLE_OPERATOR_STATE', ['SourceReaderState'], 265)
    """

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
    ``delegate`` (each at a chunk's 4-byte length) and the bytes they take.

    Examples
    --------
    The output state of subtask 0 of ``to-record`` for subpartition 0 (downstream subtask 0): ten
    chunks of a file, each offset at a chunk's 4-byte length, as Flink's loader read them
    (``chk-48.groundtruth.json``):

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4"))
    >>> operator, handle = next(metadata.channel_handles())
    >>> operator.label, handle.kind, handle.subtask, handle.channel_or_subpartition
    ('to-record', 'output', 0, 0)
    >>> handle.offsets[:3], len(handle.offsets), handle.state_size
    ((4, 4104, 8204), 10, 24664)
    """

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
    """Flink 2.3's merged handle: one subtask's channels that share one delegate.

    Examples
    --------
    Subtask 0 of ``to-record`` wrote the output state of its four subpartitions into one file, under
    one merged handle:

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> metadata = read_metadata(real_checkpoint("keyed-hash-p2-p4"))
    >>> (merged,) = metadata.operator("to-record").subtask(0).result_subpartition_state
    >>> merged.state_size, [channel.state_size for channel in merged.channels]
    (34124, [24664, 3128, 3128, 3204])
    """

    input: bool
    subtask: int
    state_size: int
    delegate: StreamStateHandle | None
    channels: tuple[ChannelStateHandle, ...]
