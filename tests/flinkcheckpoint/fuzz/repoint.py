"""Re-pointed chunk offsets: a channel handle's offsets in ``_metadata`` pointed at another
handle's chunk, at one of its own twice, inside a chunk (overlapping it) or outside the
stream; where a length can be read there, the handle's state size is kept consistent with
it, so that only the pointing is wrong. Flink writes each buffer once, for one channel."""

from __future__ import annotations

import dataclasses
import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import ChannelStateHandle, MergedChannelStateHandle
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, read_metadata
from tests.flinkcheckpoint.fuzz.damage import Mutation, metadata_written, rewritten
from tests.flinkcheckpoint.fuzz.fields import with_subtask

REPOINT_KINDS = ("shared", "shared-all", "repeated", "overlap", "out-of-file")
_SIDES = {"input": "input_channel_state", "output": "result_subpartition_state"}


@dataclass(frozen=True, slots=True)
class Place:
    """Where a channel handle is in ``_metadata``: its operator and subtask (indices in their
    tuples), its side, its handle among the side's, and its channel in a merged handle."""

    operator: int
    subtask: int
    side: str
    handle: int
    channel: int | None


def channel_places(m: CheckpointMetadata) -> Iterator[tuple[Place, str, ChannelStateHandle]]:
    """Every channel handle with its place and a name for it."""
    for o, op in enumerate(m.operators):
        for s, sub in enumerate(op.subtasks):
            for side, field in _SIDES.items():
                for h, handle in enumerate(getattr(sub, field)):
                    channels = (
                        list(enumerate(handle.channels))
                        if isinstance(handle, MergedChannelStateHandle)
                        else [(None, handle)]
                    )
                    for c, channel in channels:
                        name = (
                            f"{op.label}[{sub.index}] {side} "
                            f"{channel.gate_or_partition}/{channel.channel_or_subpartition}"
                        )
                        yield Place(o, s, side, h, c), name, channel


def replaced(m: CheckpointMetadata, place: Place, new: ChannelStateHandle) -> CheckpointMetadata:
    """``m`` with the channel handle at ``place`` replaced (a merged handle's state size
    kept the sum of its channels')."""
    field = _SIDES[place.side]

    def change(sub: object) -> object:
        handles = list(getattr(sub, field))
        if place.channel is None:
            handles[place.handle] = new
        else:
            merged = handles[place.handle]
            channels = list(merged.channels)
            channels[place.channel] = new
            handles[place.handle] = dataclasses.replace(
                merged, channels=tuple(channels), state_size=sum(c.state_size for c in channels)
            )
        return dataclasses.replace(sub, **{field: tuple(handles)})  # type: ignore[type-var]

    return with_subtask(m, place.operator, place.subtask, change)  # type: ignore[arg-type]


def _length(stream: memoryview, offset: int) -> int | None:
    """The chunk length at ``offset``, where one can be read and fits the stream."""
    if not 4 <= offset <= len(stream) - 4:
        return None
    (length,) = struct.unpack_from(">i", stream, offset)
    return length if 0 <= length <= len(stream) - offset - 4 else None


def _repointed(
    handle: ChannelStateHandle, index: int, offset: int, stream: memoryview
) -> ChannelStateHandle:
    """``handle`` with its ``index``-th offset (or a new one, at ``index == len``) at
    ``offset``, its state size following the lengths where they can be read."""
    offsets = list(handle.offsets)
    size = handle.state_size
    if index < len(offsets):
        old = _length(stream, offsets[index])
        offsets[index] = offset
    else:
        old = -4  # a chunk added: nothing of it counted yet
        offsets.append(offset)
    new = _length(stream, offset)
    if old is not None and new is not None:
        size += new - old
    return dataclasses.replace(handle, offsets=tuple(offsets), state_size=size)


def _choose(
    kind: str,
    rng: random.Random,
    handles: list[tuple[Place, str, ChannelStateHandle]],
    stream: memoryview,
) -> tuple[Place, ChannelStateHandle, str] | None:
    """The handle re-pointed, its new form and what was done, for one stream's handles."""
    place, name, handle = rng.choice(handles)
    index = rng.randrange(len(handle.offsets))
    old = handle.offsets[index]
    others = [h for h in handles if h[2] is not handle and h[2].offsets]
    if kind in ("shared", "shared-all"):
        if not others:
            return None
        _, other_name, other = rng.choice(others)
        if kind == "shared-all":
            new = dataclasses.replace(handle, offsets=other.offsets, state_size=other.state_size)
            return place, new, f"{name} names every chunk of {other_name}"
        target = rng.choice(other.offsets)
        what = f"{name}: offset {old} -> {target}, a chunk of {other_name}"
        return place, _repointed(handle, index, target, stream), what
    if kind == "repeated":
        at = rng.randrange(len(handle.offsets) + 1)
        new = _repointed(handle, len(handle.offsets), old, stream)
        offsets = list(handle.offsets)
        offsets.insert(at, old)
        what = f"{name}: its chunk at {old} named twice"
        return place, dataclasses.replace(new, offsets=tuple(offsets)), what
    if kind == "overlap":
        _, host_name, host = rng.choice(handles)
        start = rng.choice(host.offsets)
        length = _length(stream, start)
        if length is None or length < 1:
            return None
        target = start + rng.randint(1, length + 3)
        what = f"{name}: offset {old} -> {target}, inside the chunk at {start} of {host_name}"
        return place, _repointed(handle, index, target, stream), what
    end = len(stream)
    target = rng.choice([end, end - 3, end + 4096, 0, 2, 2**31 - 1, 2**40, -4])
    return place, _repointed(handle, index, target, stream), f"{name}: offset {old} -> {target}"


def repoint_mutation(chk: Path, rng: random.Random) -> Mutation | None:
    """One re-pointed chunk offset of ``chk``'s channel handles."""
    metadata = read_metadata(chk)
    by_stream: dict[object, list[tuple[Place, str, ChannelStateHandle]]] = {}
    for found in channel_places(metadata):
        if found[2].delegate is not None and found[2].offsets:
            by_stream.setdefault(found[2].delegate, []).append(found)
    if not by_stream:
        return None
    kind = rng.choice(REPOINT_KINDS)
    delegate = rng.choice(list(by_stream))
    with StateFiles(chk) as files:
        stream = files.stream(delegate)  # type: ignore[arg-type]
        chosen = _choose(kind, rng, by_stream[delegate], stream)
    if chosen is None:
        return None
    place, new, what = chosen
    try:
        data = rewritten(chk, lambda m: replaced(m, place, new))
    except (ValueError, struct.error):
        return None
    return Mutation(chk, "repoint", f"{kind}: {what}", metadata_written(chk, data))
