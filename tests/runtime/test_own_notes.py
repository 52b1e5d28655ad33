"""Every component notes its own changes: the task, the channel-state writer, reader and
drainer, and the network buffer pools each change through methods that note the change in the
``Changes`` they are given; no other module notes one of theirs by hand (the channel's and the
subpartition's are scanned with them, in ``test_input_gate``)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from flinkstate.runtime.buffer import pools
from flinkstate.runtime.checkpoint.channel import (
    channel_state_reader,
    channel_state_writer,
    fetched_channel_state,
)
from flinkstate.runtime.tasks import task
from tests.runtime.partition.consumer.test_input_gate import by_hand


@pytest.mark.parametrize(
    ("kind", "owner"),
    [
        ("task", task),
        ("writer", channel_state_writer),
        ("reader", channel_state_reader),
        ("drainer", fetched_channel_state),
        ("network_pool", pools),
    ],
)
def test_only_the_owner_notes_its_change(kind: str, owner: ModuleType) -> None:
    assert owner.__file__ is not None
    assert by_hand(kind, Path(owner.__file__)) == {}
