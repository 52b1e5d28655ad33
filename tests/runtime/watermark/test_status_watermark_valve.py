"""The valve against the cases of Flink's ``StatusWatermarkValveTest`` (master): each case is
the test's inputs in order, with what the valve outputs after each one."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.watermark.status_watermark_valve import StatusWatermarkValve, ValveOutput

IDLE, ACTIVE = True, False


def W(ts: int) -> ValveOutput:
    return ValveOutput(watermark=ts)


def S(idle: bool) -> ValveOutput:
    return ValveOutput(idle=idle)


# (test method, channels, [(("w"|"s", channel, timestamp|idle), outputs), ...])
CASES = [
    ("testSingleInputIncreasingWatermarks", 1, [(("w", 0, 0), [W(0)]), (("w", 0, 25), [W(25)])]),
    (
        "testSingleInputDecreasingWatermarksYieldsNoOutput",
        1,
        [(("w", 0, 25), [W(25)]), (("w", 0, 18), []), (("w", 0, 42), [W(42)])],
    ),
    (
        "testSingleInputWatermarkStatusToggling",
        1,
        [
            (("s", 0, ACTIVE), []),
            (("s", 0, IDLE), [S(IDLE)]),
            (("s", 0, IDLE), []),
            (("s", 0, ACTIVE), [S(ACTIVE)]),
        ],
    ),
    (
        "testSingleInputWatermarksIntactDuringIdleness",
        1,
        [
            (("w", 0, 25), [W(25)]),
            (("s", 0, IDLE), [S(IDLE)]),
            (("w", 0, 50), []),
            (("s", 0, ACTIVE), [S(ACTIVE)]),
            (("w", 0, 50), [W(50)]),
        ],
    ),
    (
        "testMultipleInputYieldsWatermarkOnlyWhenAllChannelsReceivesWatermarks",
        3,
        [(("w", 0, 0), []), (("w", 1, 0), []), (("w", 2, 0), [W(0)])],
    ),
    (
        "testMultipleInputIncreasingWatermarks",
        3,
        [
            (("w", 0, 0), []),
            (("w", 1, 0), []),
            (("w", 2, 0), [W(0)]),
            (("w", 0, 12), []),
            (("w", 2, 8), []),
            (("w", 2, 10), []),
            (("w", 1, 15), [W(10)]),
            (("w", 2, 17), [W(12)]),
            (("w", 0, 20), [W(15)]),
        ],
    ),
    (
        "testMultipleInputDecreasingWatermarksYieldsNoOutput",
        3,
        [
            (("w", 0, 25), []),
            (("w", 1, 10), []),
            (("w", 2, 17), [W(10)]),
            (("w", 0, 12), []),
            (("w", 1, 8), []),
            (("w", 2, 15), []),
        ],
    ),
    (
        "testMultipleInputWatermarkStatusToggling",
        2,
        [
            (("s", 0, ACTIVE), []),
            (("s", 1, ACTIVE), []),
            (("s", 1, IDLE), []),
            (("s", 0, IDLE), [S(IDLE)]),
            (("s", 0, IDLE), []),
            (("s", 1, IDLE), []),
            (("s", 1, ACTIVE), [S(ACTIVE)]),
            (("s", 0, ACTIVE), []),
        ],
    ),
    (
        "testMultipleInputWatermarkAdvancingWithPartiallyIdleChannels",
        3,
        [
            (("w", 0, 15), []),
            (("w", 1, 10), []),
            (("s", 2, IDLE), [W(10)]),
            (("w", 1, 18), [W(15)]),
            (("w", 0, 20), [W(18)]),
        ],
    ),
    (
        "testMultipleInputWatermarkAdvancingAsChannelsIndividuallyBecomeIdle",
        3,
        [
            (("w", 0, 25), []),
            (("w", 1, 10), []),
            (("w", 2, 17), [W(10)]),
            (("s", 1, IDLE), [W(17)]),
            (("s", 2, IDLE), [W(25)]),
        ],
    ),
    (
        "testMultipleInputFlushMaxWatermarkAndWatermarkStatusOnceAllInputsBecomeIdle",
        3,
        [
            (("w", 0, 10), []),
            (("w", 1, 5), []),
            (("w", 2, 3), [W(3)]),
            (("s", 0, IDLE), []),
            (("s", 1, IDLE), []),
            (("s", 2, IDLE), [W(10), S(IDLE)]),
        ],
    ),
    (
        "testMultipleInputWatermarkRealignmentAfterResumeActive",
        3,
        [
            (("w", 0, 10), []),
            (("w", 1, 7), []),
            (("w", 2, 3), [W(3)]),
            (("s", 2, IDLE), [W(7)]),
            (("s", 2, ACTIVE), []),
            (("w", 2, 5), []),
            (("w", 2, 9), []),
        ],
    ),
]


@pytest.mark.parametrize(("case", "channels", "steps"), CASES, ids=[c[0] for c in CASES])
def test_the_valve_outputs_what_flinks_valve_outputs(
    case: str, channels: int, steps: list[tuple[tuple[str, int, int], list[ValveOutput]]]
) -> None:
    valve = StatusWatermarkValve(channels)
    for (what, channel, value), expected in steps:
        if what == "w":
            got = valve.input_watermark(channel, value)
        else:
            got = valve.input_status(channel, bool(value))
        assert got == expected, f"{case}: after {what} {value} on channel {channel}"


def test_an_idle_channel_keeps_its_watermark_and_rejoins_once_caught_up() -> None:
    """testSingleInputWatermarksIntactDuringIdleness and the realignment case's state checks."""
    valve = StatusWatermarkValve(3)
    for channel, ts in ((0, 10), (1, 7), (2, 3)):
        valve.input_watermark(channel, ts)
    valve.input_status(2, True)
    valve.input_status(2, False)
    assert not valve.aligned[2]
    valve.input_watermark(2, 5)
    assert valve.watermarks[2] == 5
    assert not valve.aligned[2]
    valve.input_watermark(2, 9)
    assert valve.aligned[2]


def test_a_copy_is_independent() -> None:
    valve = StatusWatermarkValve(2)
    twin = valve.copy()
    twin.input_watermark(0, 4)
    assert valve.watermarks[0] != 4


@pytest.mark.parametrize("channels", [0, -1])
def test_a_valve_needs_channels(channels: int) -> None:
    with pytest.raises(InvalidParameterError, match="at least one channel"):
        StatusWatermarkValve(channels)


def test_an_unknown_channel_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="channel 2 is not one"):
        StatusWatermarkValve(2).input_watermark(2, 1)
