"""A checkpoint in Flink's own format at any size: ``_metadata`` and channel-state files of an
unaligned checkpoint of a keyBy exchange, for benchmarks of the readers at production size.

The job: ``upstream`` (P subtasks) -> keyBy -> ``downstream`` (P subtasks), max parallelism
Flink's default for P, records ``Tuple2<Long,String>`` keyed by ``f0`` (a 16-character ASCII
``f1``), each a ``StreamElement`` with a timestamp (``Long.MIN_VALUE``) and its 4-byte length.
Every logical channel (upstream u, downstream d) holds about the same bytes of whole records,
every key in the key groups of d (Flink keeps them so); the barrier cuts the channel anywhere,
inside a record too: the first part is d's input state, the rest u's output state. Each side
is cut into chunks of the segment size, as buffers are persisted, and written as Flink 2.3
writes them: a file per five subtasks (``max-subtasks-per-channel-state-file``), a version
header, then length-prefixed chunks; a merged handle per subtask (``_metadata`` version 6).

Memory stays bounded by one channel's bytes and the handles' offsets: a channel's records are
made from its own seed, once for the input side's file and again for the output side's.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.handles import (
    ChannelStateHandle,
    MergedChannelStateHandle,
    RelativeFileStateHandle,
)
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, OperatorState, SubtaskState
from flinkstate.flinkcheckpoint.metadata_writer import write_metadata
from flinkstate.keygroups import (
    assign_to_key_group_array,
    compute_default_max_parallelism,
    compute_operator_index_for_key_group_array,
)

#: ``CheckpointProperties`` of a retained checkpoint, Java-serialized as Flink 2.3 writes it
#: after the metadata body (taken from a checkpoint Flink wrote)
PROPERTIES = bytes.fromhex(
    "aced0005737200386f72672e6170616368652e666c696e6b2e72756e74696d652e636865636b706f696e"
    "742e436865636b706f696e7450726f7065727469657300000000000000020200085a0010646973636172"
    "6443616e63656c6c65645a000d646973636172644661696c65645a000f6469736361726446696e697368"
    "65645a000f6469736361726453756273756d65645a00106469736361726453757370656e6465645a0006"
    "666f726365645a0009756e636c61696d65644c000e636865636b706f696e745479706574003"
    "24c6f72672f6170616368652f666c696e6b2f72756e74696d652f636865636b706f696e742f536e617073"
    "686f74547970653b787000000101000000737200326f72672e6170616368652e666c696e6b2e72756e74"
    "696d652e636865636b706f696e742e436865636b706f696e7454797065d6de4f0305ae1d3a0200024c00"
    "046e616d657400124c6a6176612f6c616e672f537472696e673b4c001473686172696e6746696c657353"
    "747261746567797400474c6f72672f6170616368652f666c696e6b2f72756e74696d652f636865636b70"
    "6f696e742f536e617073686f74547970652453686172696e6746696c65735374726174656779"
    "3b787074000a436865636b706f696e747e7200456f72672e6170616368652e666c696e6b2e72756e7469"
    "6d652e636865636b706f696e742e536e617073686f74547970652453686172696e6746696c6573537472"
    "617465677900000000000000001200007872000e6a6176612e6c616e672e456e756d0000000000000000"
    "1200007870740010464f52574152445f4241434b57415244"
)
RECORD_TYPE = "Tuple2<Long,String>"
KEY = "f0"
UPSTREAM, DOWNSTREAM = "upstream", "downstream"
_IDS = {UPSTREAM: "0a" * 16, DOWNSTREAM: "0b" * 16}
#: a record: length 34, tag 0, timestamp Long.MIN_VALUE, f0, f1's length + 1 and 16 characters
_RECORD = struct.Struct(">iBqqB16s")
#: subtasks whose channel state shares one file (Flink's default)
SUBTASKS_PER_FILE = 5
_KEYS_PER_SUBTASK = 64


@dataclass(frozen=True)
class WrittenCheckpoint:
    """A checkpoint :func:`write_checkpoint` wrote: its ``chk-N`` folder, the job's parallelism
    and max parallelism, and how many records and payload bytes are in flight.

    Examples
    --------
    A job of 4 subtasks on each side (Flink's default max parallelism for it, 128), its channel
    state in one file per side:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = write_checkpoint(folder, payload_bytes=64 * 1024, parallelism=4)
    ...     print(written.directory.name, written.max_parallelism, written.records)
    ...     print(sorted(path.name for path in written.directory.iterdir()))
    chk-1 128 1712
    ['_metadata', 'input-00000', 'output-00000']
    """

    directory: Path
    parallelism: int
    max_parallelism: int
    records: int
    #: bytes of in-flight data (the chunks' payloads)
    payload_bytes: int


def write_checkpoint(
    directory: str | Path,
    payload_bytes: int,
    parallelism: int = 256,
    segment_size: int = 4096,
    checkpoint_id: int = 1,
    seed: int = 0,
) -> WrittenCheckpoint:
    """A ``chk-N`` folder in ``directory`` (made, it must not exist) with about
    ``payload_bytes`` of in-flight data over ``parallelism`` x ``parallelism`` channels.

    Examples
    --------
    A small one, read back by the reader as Flink's own would be:

    >>> import tempfile
    >>> from flinkstate.flinkcheckpoint.summary import summarize
    >>> from flinkstate.flinkcheckpoint.stream_element import value_decoder
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = write_checkpoint(folder, payload_bytes=64 * 1024, parallelism=4)
    ...     summary = summarize(written.directory, value=value_decoder(RECORD_TYPE))
    >>> totals = summary["totals"]
    >>> totals["records"] == written.records, totals["split_records"] > 0
    (True, True)
    >>> totals["input_bytes"] + totals["output_bytes"] == written.payload_bytes
    True
    """
    if parallelism < 1 or payload_bytes < 0 or segment_size < 64:
        raise InvalidParameterError(
            "a checkpoint needs a parallelism of at least 1, a size of at least 0 and a "
            "segment size of at least 64 bytes"
        )
    folder = Path(directory) / f"chk-{checkpoint_id}"
    try:
        folder.mkdir(parents=True)
    except FileExistsError:
        raise InvalidParameterError(f"{folder} exists: a checkpoint is written new") from None
    max_p = compute_default_max_parallelism(parallelism)
    keys = _keys_by_subtask(parallelism, max_p, seed)
    per_channel = max(1, payload_bytes // (parallelism * parallelism) // _RECORD.size)
    inputs: dict[int, list[ChannelStateHandle]] = {}
    outputs: dict[int, list[ChannelStateHandle]] = {}
    files: dict[tuple[str, int], RelativeFileStateHandle] = {}
    written = 0
    for side, owners in (("input", inputs), ("output", outputs)):
        for first in range(0, parallelism, SUBTASKS_PER_FILE):
            name = f"{side}-{first // SUBTASKS_PER_FILE:05d}"
            with (folder / name).open("wb") as out:
                out.write(struct.pack(">i", 0))
                position = 4
                for subtask in range(first, min(first + SUBTASKS_PER_FILE, parallelism)):
                    for other in range(parallelism):
                        up, down = (other, subtask) if side == "input" else (subtask, other)
                        data, cut = _channel(up, down, per_channel, keys[down], seed)
                        part = data[:cut] if side == "input" else data[cut:]
                        offsets = []
                        for start in range(0, len(part), segment_size):
                            chunk = part[start : start + segment_size]
                            offsets.append(position)
                            out.write(struct.pack(">i", len(chunk)) + chunk)
                            position += 4 + len(chunk)
                        written += len(part)
                        if offsets:
                            owners.setdefault(subtask, []).append(
                                ChannelStateHandle(
                                    side == "input",
                                    subtask,
                                    0,
                                    other,
                                    tuple(offsets),
                                    4 * len(offsets) + len(part),
                                    None,
                                )
                            )
            files[(side, first // SUBTASKS_PER_FILE)] = RelativeFileStateHandle(name, position)
    metadata = CheckpointMetadata(
        str(folder / "_metadata"),
        6,
        checkpoint_id,
        (),
        (
            _operator(UPSTREAM, parallelism, max_p, {}, outputs, files),
            _operator(DOWNSTREAM, parallelism, max_p, inputs, {}, files),
        ),
        0,
        0,
    )
    (folder / "_metadata").write_bytes(write_metadata(metadata, 6, PROPERTIES))
    return WrittenCheckpoint(
        folder, parallelism, max_p, per_channel * parallelism * parallelism, written
    )


def _keys_by_subtask(parallelism: int, max_p: int, seed: int) -> list[npt.NDArray[np.int64]]:
    """Per downstream subtask, keys (Longs) in its key groups."""
    rng = np.random.default_rng(seed)
    candidates = rng.integers(0, 2**62, size=max(4096, 4 * _KEYS_PER_SUBTASK * parallelism))
    owners = compute_operator_index_for_key_group_array(
        max_p, parallelism, assign_to_key_group_array(candidates, max_p, "long")
    )
    keys = [candidates[owners == d][:_KEYS_PER_SUBTASK] for d in range(parallelism)]
    if any(len(k) == 0 for k in keys):
        raise InvalidParameterError("no key found for a subtask: raise the candidates")
    return keys


def _channel(
    up: int, down: int, records: int, keys: npt.NDArray[np.int64], seed: int
) -> tuple[bytes, int]:
    """A logical channel's records end to end, and where the barrier cut them."""
    rng = np.random.default_rng([seed, up, down])
    chosen = keys[rng.integers(0, len(keys), size=records)]
    body = np.zeros(records, dtype=[("head", "S13"), ("key", ">i8"), ("text", "S17")])
    body["head"] = _RECORD.pack(34, 0, -(2**63), 0, 0, b"")[:13]
    body["key"] = chosen
    body["text"] = b"\x11" + b"payload-%08d" % (up * 7919 + down)
    data = body.tobytes()
    return data, int(rng.integers(0, len(data) + 1))


def _operator(
    name: str,
    parallelism: int,
    max_p: int,
    inputs: dict[int, list[ChannelStateHandle]],
    outputs: dict[int, list[ChannelStateHandle]],
    files: dict[tuple[str, int], RelativeFileStateHandle],
) -> OperatorState:
    def merged(
        side: str, handles: dict[int, list[ChannelStateHandle]], subtask: int
    ) -> tuple[MergedChannelStateHandle, ...]:
        if subtask not in handles:
            return ()
        delegate = files[(side, subtask // SUBTASKS_PER_FILE)]
        channels = tuple(
            ChannelStateHandle(
                h.input,
                h.subtask,
                h.gate_or_partition,
                h.channel_or_subpartition,
                h.offsets,
                h.state_size,
                delegate,
            )
            for h in handles[subtask]
        )
        size = sum(c.state_size for c in channels)
        return (MergedChannelStateHandle(side == "input", subtask, size, delegate, channels),)

    subtasks = tuple(
        SubtaskState(
            index,
            None,
            None,
            None,
            None,
            merged("input", inputs, index),
            merged("output", outputs, index),
        )
        for index in range(parallelism)
    )
    return OperatorState(_IDS[name], name, name, parallelism, max_p, None, subtasks, (), False)
