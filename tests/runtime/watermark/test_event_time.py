"""The event time a run keeps: empty and keyed as one value without watermarks, keyed by what
its maps hold with them."""

from __future__ import annotations

from flinkstate.runtime.watermark.event_time import EventTimeState
from flinkstate.runtime.watermark.status_watermark_valve import StatusWatermarkValve
from tests.runtime.runs import simulate, world


def test_a_job_without_watermarks_keys_its_event_time_as_one_value_throughout() -> None:
    """Nothing writes event time in a job without watermarks: every state's key holds the
    very same value for it, so a model checker numbers it by identity."""
    sim = simulate(records=12)
    first = world(sim).event_time.state_key()
    steps = 0
    while sim.step() is not None:
        assert world(sim).event_time.state_key() is first
        steps += 1
    assert steps > 50
    assert world(sim).event_time.state_key() == EventTimeState().state_key()


def test_event_time_with_watermarks_is_keyed_by_its_maps() -> None:
    """Any entry makes the key differ from the empty one; equal maps, equal keys."""
    empty = EventTimeState()
    idle = EventTimeState(idle={"task map[0]": False})
    assert idle.state_key() != empty.state_key()
    assert idle.state_key() == EventTimeState(idle={"task map[0]": False}).state_key()
    valve = EventTimeState(valves={"gate": StatusWatermarkValve(2)})
    assert valve.state_key() != empty.state_key()
    assert EventTimeState(late={(1, "task map[0]"): (3, 4)}).state_key() != empty.state_key()
    timed = simulate(records=12, watermark_interval=3)
    timed.run()
    assert world(timed).event_time.state_key() != empty.state_key()
