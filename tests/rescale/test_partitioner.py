from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.rescale import Partitioner, SubtaskStateMapper

M = SubtaskStateMapper


@pytest.mark.parametrize(
    ("partitioner", "downstream", "upstream", "unaligned"),
    [
        (Partitioner.HASH, M.RANGE, M.ARBITRARY, True),
        (Partitioner.REBALANCE, M.ROUND_ROBIN, M.ARBITRARY, True),
        (Partitioner.SHUFFLE, M.ROUND_ROBIN, M.ARBITRARY, True),
        (Partitioner.GLOBAL, M.FIRST, M.ARBITRARY, True),
        (Partitioner.CUSTOM, M.FULL, M.ARBITRARY, True),
        (Partitioner.FORWARD, M.UNSUPPORTED, M.UNSUPPORTED, False),
        (Partitioner.RESCALE, M.UNSUPPORTED, M.UNSUPPORTED, False),
        (Partitioner.BROADCAST, M.UNSUPPORTED, M.UNSUPPORTED, False),
    ],
)
def test_flink_partitioner_table(
    partitioner: Partitioner, downstream: M, upstream: M, unaligned: bool
) -> None:
    assert partitioner.downstream_mapper is downstream
    assert partitioner.upstream_mapper is upstream
    assert partitioner.supports_unaligned_checkpoint is unaligned


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("keyBy", Partitioner.HASH),
        ("hash", Partitioner.HASH),
        ("KeyGroupStreamPartitioner", Partitioner.HASH),
        ("rebalance()", Partitioner.REBALANCE),
        ("partitionCustom", Partitioner.CUSTOM),
        ("FORWARD", Partitioner.FORWARD),
    ],
)
def test_parse_aliases(name: str, expected: Partitioner) -> None:
    assert Partitioner.parse(name) is expected


def test_unknown_partitioner() -> None:
    with pytest.raises(InvalidParameterError, match="known partitioners: forward"):
        Partitioner.parse("zigzag")
