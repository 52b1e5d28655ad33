"""Buffer routes and sweep plans: the model's rescale plan, one row per receiving subtask."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.rescale.channel_selection import ChannelSelection
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.rescale.routes import (
    INPUT,
    MAX_SWEEP,
    OUTPUT,
    ExchangeShape,
    JobShape,
    OperatorShape,
    buffer_routes,
)

SHAPE = JobShape(
    (OperatorShape("source", 4, 128), OperatorShape("counter", 4, 128)),
    (ExchangeShape("source->counter", "source", "counter", Partitioner.HASH, True),),
)


def test_no_rescale_routes_every_channel_to_itself() -> None:
    plan = SHAPE.sweep({0: {}})
    routes = [route for _, route in plan.routes]
    inputs = [r for r in routes if r.side == INPUT]
    assert len(inputs) == 4 * 4  # every (old subtask, channel) once
    assert all(r.new_consumer == r.old_consumer == r.reader for r in inputs)
    assert all(r.new_channel == r.channel for r in inputs)
    # output state: subpartition s of producer u reaches consumer s on its channel u
    outputs = [r for r in routes if r.side == OUTPUT]
    assert all(r.new_consumer == r.channel and r.new_channel == r.subtask for r in outputs)
    assert not any(r.filtered for r in routes)


def test_keyed_downscale_routes_each_old_subtask_to_the_ranges_it_overlaps() -> None:
    plan = SHAPE.sweep({3: {"source": 3, "counter": 3}}).plans[3]["source->counter"]
    routes = buffer_routes(plan, "source->counter")
    readers = {
        old: sorted({r.new_consumer for r in routes if r.side == INPUT and r.subtask == old})
        for old in range(4)
    }
    assert readers == {0: [0], 1: [0, 1], 2: [1, 2], 3: [2]}  # RANGE 4 -> 3
    # old subtask 1 is shared by new 0 and 1: both filter it; old 0 goes to new 0 alone
    assert all(r.filtered for r in routes if r.side == INPUT and r.subtask == 1)
    assert not any(r.filtered for r in routes if r.side == INPUT and r.subtask == 0)
    # output state: read by a new producer, sent on to the consumers of its subpartition
    outputs = [r for r in routes if r.side == OUTPUT]
    assert {(r.old_consumer, r.new_consumer) for r in outputs} == {
        (old, new) for old, news in readers.items() for new in news
    }


def test_a_job_shape_knows_each_exchanges_channel_selection() -> None:
    assert SHAPE.channel_selections() == {"source->counter": (ChannelSelection.KEY_GROUP, 128)}


def test_sweeps_are_checked_before_any_data_is_read() -> None:
    with pytest.raises(InvalidParameterError, match="at least one"):
        SHAPE.sweep({})
    with pytest.raises(InvalidParameterError, match="narrow it"):
        SHAPE.sweep({p: {"counter": p} for p in range(1, MAX_SWEEP + 2)})
    with pytest.raises(InvalidParameterError, match="maximum parallelism"):
        SHAPE.sweep({1: {"counter": 129}})
    with pytest.raises(InvalidParameterError, match="unknown operator"):
        SHAPE.sweep({1: {"nope": 2}})
    with pytest.raises(InvalidParameterError, match="not among the checkpoint's operators"):
        JobShape(SHAPE.operators[:1], SHAPE.exchanges)
