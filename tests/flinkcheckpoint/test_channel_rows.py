"""A logical channel's dataset rows computed with numpy (``channel_rows``) are the rows the
single-process export writes, on every committed real checkpoint."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.flinkcheckpoint.channel_rows import (
    ChannelKeying,
    ChannelName,
    ChannelSide,
    buffer_rows,
    fragment_rows,
)
from flinkstate.flinkcheckpoint.channel_state_file import read_channel
from flinkstate.flinkcheckpoint.export import ExchangeSpec, to_dataset
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.inflight import exchange_name, logical_channels
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.metadata import read_metadata
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.keygroups import compute_key_group_range_for_operator_index
from tests.flinkcheckpoint.test_metadata import CHECKPOINTS

TYPE = "Tuple2<Long,String>"


def _key(checkpoint: Path) -> str | None:
    return None if "rebalance" in checkpoint.parents[1].name else "f0%1000"


def rows_by_channel(checkpoint: Path, key: str | None) -> tuple[pa.Table, pa.Table]:
    """Every logical channel's rows by ``channel_rows``, ids numbered as the export does."""
    metadata = read_metadata(checkpoint)
    buffers, fragments = [], []
    next_buffer = next_record = 0
    with StateFiles(checkpoint) as files:
        for channel in logical_channels(metadata):
            edge = channel.edge
            sides = [
                ChannelSide(side, operator, read_channel(handle, files))
                for side, operator, handle in (
                    ("input", edge.downstream, channel.input),
                    ("output", edge.upstream, channel.output),
                )
                if handle is not None
            ]
            down = metadata.operator(edge.downstream)
            keying = (
                None
                if key is None
                else ChannelKeying(
                    TYPE,
                    key_function(key, TYPE),
                    down.max_parallelism,
                    compute_key_group_range_for_operator_index(
                        down.max_parallelism, down.parallelism, channel.downstream_subtask
                    ),
                )
            )
            name = ChannelName(
                str(edge), edge.downstream, channel.upstream_subtask, channel.downstream_subtask
            )
            buffers.append(buffer_rows(sides, exchange_name(edge), next_buffer))
            table = fragment_rows(sides, name, next_buffer, next_record, keying)
            fragments.append(table)
            next_buffer += buffers[-1].num_rows
            if table.num_rows:
                next_record = max(table.column("record").to_pylist()) + 1
    return pa.concat_tables(buffers), pa.concat_tables(fragments)


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_rows_are_the_exports(checkpoint: Path) -> None:
    key = _key(checkpoint)
    exchange = "to-record->relay" if key is None else "to-record->slow-counter"
    spec = (
        ExchangeSpec("rebalance") if key is None else ExchangeSpec("hash", key_function(key, TYPE))
    )
    exported = to_dataset(checkpoint, {exchange: spec}, value=value_decoder(TYPE))
    buffers, fragments = rows_by_channel(checkpoint, key)
    assert buffers.equals(exported.tables["buffers"])
    assert fragments.equals(exported.tables["fragments"])
    assert fragments.num_rows > 0


def test_a_key_the_job_did_not_key_by_is_refused_as_the_export_refuses_it() -> None:
    checkpoint = next(p for p in CHECKPOINTS if _key(p) is not None)
    spec = ExchangeSpec("hash", key_function("f0", TYPE))
    with pytest.raises(InvalidParameterError) as exported:
        to_dataset(checkpoint, {"to-record->slow-counter": spec}, value=value_decoder(TYPE))
    with pytest.raises(InvalidParameterError) as ours:
        rows_by_channel(checkpoint, "f0")
    assert str(ours.value) == str(exported.value)
