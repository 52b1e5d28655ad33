"""Mutations of ``_metadata``'s fields that still parse (indices, sizes, key groups, offsets,
parallelism) and of chunk lengths in channel-state files."""

from __future__ import annotations

import dataclasses
import random
import struct
from collections.abc import Callable
from pathlib import Path

from flinkstate.flinkcheckpoint.handles import (
    ByteStreamStateHandle,
    ChannelStateHandle,
    KeyGroupsStateHandle,
    MergedChannelStateHandle,
)
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, SubtaskState, read_metadata
from tests.flinkcheckpoint.fuzz.damage import (
    Mutation,
    metadata_written,
    overwrite,
    rewritten,
    variant_path,
)

Change = Callable[[CheckpointMetadata], CheckpointMetadata]
FIELD_KINDS = (
    "gate",
    "channel",
    "state-size",
    "offset",
    "subtask",
    "duplicate",
    "key-group",
    "parallelism",
)


def with_subtask(
    m: CheckpointMetadata, o: int, s: int, change: Callable[[SubtaskState], SubtaskState]
) -> CheckpointMetadata:
    """``m`` with subtask ``s`` of operator ``o`` changed."""
    ops = list(m.operators)
    subs = list(ops[o].subtasks)
    subs[s] = change(subs[s])
    ops[o] = dataclasses.replace(ops[o], subtasks=tuple(subs))
    return dataclasses.replace(m, operators=tuple(ops))


def _channels_changed(sub: SubtaskState, field: str, delta: int | None) -> SubtaskState:
    """The first channel handle of a subtask with one field changed."""
    inputs = list(sub.input_channel_state)
    side = "input_channel_state" if inputs else "result_subpartition_state"
    handles = list(getattr(sub, side))
    first = handles[0]
    channels = list(first.channels) if isinstance(first, MergedChannelStateHandle) else [first]
    channel = channels[0]
    if field == "state_size":
        channel = dataclasses.replace(channel, state_size=(1 << 63) - 1)
    elif field == "offsets":
        offsets = (channel.offsets[0] + (delta or 1), *channel.offsets[1:])
        channel = dataclasses.replace(channel, offsets=offsets if channel.offsets else (4,))
    elif field == "subtask":
        channel = dataclasses.replace(channel, subtask=channel.subtask + 1)
    else:
        channel = dataclasses.replace(channel, **{field: getattr(channel, field) + (delta or 1)})
    channels[0] = channel
    if isinstance(first, MergedChannelStateHandle):
        handles[0] = dataclasses.replace(first, channels=tuple(channels))
    else:
        handles[0] = channel
    if side == "input_channel_state":
        return dataclasses.replace(sub, input_channel_state=tuple(handles))
    return dataclasses.replace(sub, result_subpartition_state=tuple(handles))


def _parallelism(m: CheckpointMetadata, rng: random.Random) -> tuple[Change, str] | None:
    o = rng.randrange(len(m.operators))
    op = m.operators[o]
    low = max((s.index for s in op.subtasks), default=0) + 1
    value = rng.choice([low, op.parallelism + 1, op.max_parallelism])
    if value == op.parallelism:
        return None

    def change(m: CheckpointMetadata) -> CheckpointMetadata:
        ops = list(m.operators)
        ops[o] = dataclasses.replace(ops[o], parallelism=value)
        return dataclasses.replace(m, operators=tuple(ops))

    return change, f"parallelism of {op.label} {op.parallelism} -> {value}"


def _key_group(m: CheckpointMetadata, rng: random.Random) -> tuple[Change, str] | None:
    keyed = [
        (o, s)
        for o, op in enumerate(m.operators)
        for s, sub in enumerate(op.subtasks)
        if isinstance(sub.managed_keyed_state, KeyGroupsStateHandle)
    ]
    if not keyed:
        return None
    o, s = rng.choice(keyed)
    op = m.operators[o]
    handle = op.subtasks[s].managed_keyed_state
    assert isinstance(handle, KeyGroupsStateHandle)
    shift = rng.choice([op.max_parallelism, 1, -1 if handle.first_key_group else 1])
    moved = dataclasses.replace(handle, first_key_group=handle.first_key_group + shift)

    def change(m: CheckpointMetadata) -> CheckpointMetadata:
        return with_subtask(
            m, o, s, lambda sub: dataclasses.replace(sub, managed_keyed_state=moved)
        )

    return change, f"key groups of {op.label}[{op.subtasks[s].index}] shifted by {shift}"


def _channel_field(
    m: CheckpointMetadata, rng: random.Random, kind: str
) -> tuple[Change, str] | None:
    places = [
        (o, s)
        for o, op in enumerate(m.operators)
        for s, sub in enumerate(op.subtasks)
        if sub.input_channel_state or sub.result_subpartition_state
    ]
    if not places:
        return None
    o, s = rng.choice(places)
    op = m.operators[o]
    index = op.subtasks[s].index
    if kind == "subtask":
        # the handles say another subtask than the state they are in
        return (
            lambda m: with_subtask(m, o, s, lambda sub: _channels_changed(sub, "subtask", 1)),
            f"channel handles of {op.label}[{index}] name another subtask",
        )
    if kind == "duplicate":
        others = [x.index for x in op.subtasks if x.index != index]
        if not others:
            return None
        value = rng.choice(others)
        return (
            lambda m: with_subtask(m, o, s, lambda sub: dataclasses.replace(sub, index=value)),
            f"{op.label}: subtask {index} listed as {value} (twice)",
        )
    field = {
        "gate": "gate_or_partition",
        "channel": "channel_or_subpartition",
        "state-size": "state_size",
        "offset": "offsets",
    }[kind]
    delta = rng.choice([1, 2, op.parallelism, 1 << 20]) if kind != "state-size" else None
    return (
        lambda m: with_subtask(m, o, s, lambda sub: _channels_changed(sub, field, delta)),
        f"{field} of a channel of {op.label}[{index}] changed",
    )


def field_mutation(chk: Path, rng: random.Random) -> Mutation | None:
    """A field of ``_metadata`` changed to a value that still parses."""
    metadata = read_metadata(chk)
    kind = rng.choice(FIELD_KINDS)
    if kind == "parallelism":
        found = _parallelism(metadata, rng)
    elif kind == "key-group":
        found = _key_group(metadata, rng)
    else:
        found = _channel_field(metadata, rng, kind)
    if found is None:
        return None
    change, what = found
    try:
        data = rewritten(chk, change)
    except (ValueError, struct.error):
        return None
    return Mutation(chk, "field", what, metadata_written(chk, data))


def chunk_mutation(chk: Path, rng: random.Random) -> Mutation | None:
    """A chunk's 4-byte length in a channel-state file, shrunk or grown."""
    metadata = read_metadata(chk)
    handles: list[ChannelStateHandle] = [
        h
        for _, h in metadata.channel_handles()
        if h.offsets
        and h.delegate is not None
        and not isinstance(h.delegate, ByteStreamStateHandle)
    ]
    if not handles:
        return None
    handle = rng.choice(handles)
    offset = rng.choice(handle.offsets)
    path = getattr(handle.delegate, "relative_path", None)
    if path is None:
        return None
    length = struct.unpack(">i", (chk / path).read_bytes()[offset : offset + 4])[0]
    new = max(0, length + rng.choice([-1, -4, -length // 2, 1, 4]))
    return Mutation(
        chk,
        "chunk",
        f"chunk at byte {offset} of {path}: length {length} -> {new}",
        overwrite(variant_path(chk, Path(chk.name) / path), offset, struct.pack(">i", new)),
    )
