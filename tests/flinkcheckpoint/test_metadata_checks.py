"""The cross-checks a reader of ``_metadata`` owes its users: each field that still parses
after a change, but says something Flink never writes, is refused with where and what."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from flinkstate.errors import CheckpointFormatError
from flinkstate.flinkcheckpoint import real_checkpoint
from flinkstate.flinkcheckpoint.handles import KeyGroupsStateHandle, MergedChannelStateHandle
from flinkstate.flinkcheckpoint.metadata import (
    CheckpointMetadata,
    OperatorState,
    SubtaskState,
    read_metadata,
)
from flinkstate.flinkcheckpoint.summary import summarize
from tests.flinkcheckpoint.fuzz import copy_checkpoint, rewrite_metadata


def operator(m: CheckpointMetadata, label: str, change: Callable[[OperatorState], OperatorState]):
    return dataclasses.replace(
        m, operators=tuple(change(o) if o.label == label else o for o in m.operators)
    )


def subtask(
    m: CheckpointMetadata, label: str, index: int, change: Callable[[SubtaskState], SubtaskState]
) -> CheckpointMetadata:
    return operator(
        m,
        label,
        lambda o: dataclasses.replace(
            o, subtasks=tuple(change(s) if s.index == index else s for s in o.subtasks)
        ),
    )


def first_merged_input(s: SubtaskState, change) -> SubtaskState:  # type: ignore[no-untyped-def]
    merged = s.input_channel_state[0]
    assert isinstance(merged, MergedChannelStateHandle)
    return dataclasses.replace(s, input_channel_state=(change(merged),))


def keyed_range(s: SubtaskState, first: int, last: int) -> SubtaskState:
    handle = s.managed_keyed_state
    assert isinstance(handle, KeyGroupsStateHandle)
    offsets = (handle.offsets * 2)[: last - first + 1]
    return dataclasses.replace(
        s,
        managed_keyed_state=dataclasses.replace(
            handle, first_key_group=first, last_key_group=last, offsets=offsets
        ),
    )


CASES: dict[str, tuple[Callable[[CheckpointMetadata], CheckpointMetadata], str]] = {
    "a subtask listed twice": (
        lambda m: operator(
            m,
            "slow-counter",
            lambda o: dataclasses.replace(o, subtasks=(o.subtasks[0], *o.subtasks)),
        ),
        "each subtask once, found subtask 0 again",
    ),
    "an operator listed twice": (
        lambda m: dataclasses.replace(m, operators=(*m.operators, m.operators[0])),
        "each operator once",
    ),
    "key groups beyond max parallelism": (
        lambda m: subtask(m, "slow-counter", 3, lambda s: keyed_range(s, 96, 130)),
        "the key groups its subtask owns, [96, 127], for managed keyed state; found [96, 130]",
    ),
    "key groups of another subtask": (
        lambda m: subtask(m, "slow-counter", 0, lambda s: keyed_range(s, 32, 63)),
        "owns, [0, 31]",
    ),
    "a max parallelism above Flink's bound": (
        lambda m: operator(m, "sink", lambda o: dataclasses.replace(o, max_parallelism=1 << 20)),
        "max parallelism <= 32768",
    ),
    "a channel handle of another subtask": (
        lambda m: subtask(
            m,
            "slow-counter",
            3,
            lambda s: first_merged_input(
                s,
                lambda h: dataclasses.replace(h, subtask=2),
            ),
        ),
        "the input channel state of subtask 3, found a handle of subtask 2",
    ),
    "a channel named twice": (
        lambda m: subtask(
            m,
            "slow-counter",
            3,
            lambda s: first_merged_input(
                s,
                lambda h: dataclasses.replace(
                    h,
                    channels=(h.channels[0], h.channels[0]),
                    state_size=2 * h.channels[0].state_size,
                ),
            ),
        ),
        "each input channel once, found 0/0 again",
    ),
    "a merged size that is not its channels' sum": (
        lambda m: subtask(
            m,
            "slow-counter",
            3,
            lambda s: first_merged_input(
                s, lambda h: dataclasses.replace(h, state_size=(1 << 63) - 1)
            ),
        ),
        "its channels' sum",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_field_flink_never_writes_is_refused(tmp_path: Path, case: str) -> None:
    change, message = CASES[case]
    chk = copy_checkpoint(real_checkpoint("keyed-hash-p2-p4"), tmp_path)
    rewrite_metadata(chk, change)
    with pytest.raises(CheckpointFormatError, match="_metadata: at byte") as raised:
        read_metadata(chk)
    assert message in str(raised.value)


@pytest.mark.parametrize("field", ["state_size", "offsets"])
def test_a_channel_handle_must_cover_its_declared_size(tmp_path: Path, field: str) -> None:
    """A state size of 2**63-1 used to be shown as a number; a shifted offset read garbage."""
    chk = copy_checkpoint(real_checkpoint("keyed-hash-p2-p4"), tmp_path)

    def change(h: MergedChannelStateHandle) -> MergedChannelStateHandle:
        first = h.channels[0]
        changed = (
            dataclasses.replace(first, state_size=(1 << 63) - 1)
            if field == "state_size"
            else dataclasses.replace(first, offsets=(first.offsets[0] + 1, *first.offsets[1:]))
        )
        size = h.state_size - first.state_size + changed.state_size
        return dataclasses.replace(h, channels=(changed, *h.channels[1:]), state_size=size)

    rewrite_metadata(
        chk, lambda m: subtask(m, "slow-counter", 3, lambda s: first_merged_input(s, change))
    )
    with pytest.raises(CheckpointFormatError):
        summarize(chk)
