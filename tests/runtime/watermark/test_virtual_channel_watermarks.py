"""The merged channel's watermark, against ``DemultiplexingRecordDeserializerTest.testWatermarks``
(master) and the status rule of ``DemultiplexingRecordDeserializer.getNextRecord``."""

from __future__ import annotations

import itertools

import pytest

from flinkstate.runtime.buffer.records import MIN_WATERMARK
from flinkstate.runtime.watermark.combined_watermark_status import combine
from flinkstate.runtime.watermark.virtual_channel_watermarks import VirtualChannelWatermarks

#: the test's descriptor: old subtasks 0 and 1, new channel 0 reading old channels 0 and 1
VIRTUAL_CHANNELS = [(s, c) for s in (0, 1) for c in (0, 1)]


@pytest.mark.parametrize("order", list(itertools.permutations(VIRTUAL_CHANNELS)))
def test_the_minimum_is_passed_on_only_once_every_virtual_channel_has_a_watermark(
    order: tuple[tuple[int, int], ...],
) -> None:
    """Each virtual channel sends 42 + old subtask + old channel; only the last one read lets
    a watermark through, and it is the minimum, 42, whatever the order."""
    merged = VirtualChannelWatermarks.of(VIRTUAL_CHANNELS)
    passed = [merged.on_watermark(vc, 42 + vc[0] + vc[1]) for vc in order]
    assert passed[:-1] == [None, None, None]
    assert passed[-1] == 42


def test_a_later_watermark_passes_the_new_minimum() -> None:
    merged = VirtualChannelWatermarks.of([(0, 0), (1, 0)])
    assert merged.on_watermark((0, 0), 100) is None
    assert merged.on_watermark((1, 0), 10) == 10
    assert merged.on_watermark((0, 0), 200) == 10  # the other old channel still holds it
    assert merged.on_watermark((1, 0), 50) == 50


def test_the_channel_is_idle_only_when_every_virtual_channel_is() -> None:
    merged = VirtualChannelWatermarks.of([(0, 0), (1, 0)])
    assert merged.on_status((0, 0), True) is False  # passed on as ACTIVE
    assert merged.on_status((1, 0), True) is True
    assert merged.on_status((0, 0), False) is False


def test_copies_are_independent() -> None:
    merged = VirtualChannelWatermarks.of([(0, 0)])
    twin = merged.copy()
    twin.on_watermark((0, 0), 5)
    assert merged.watermarks[(0, 0)] == MIN_WATERMARK


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        ([], (MIN_WATERMARK, False)),
        ([(5, False), (4, False)], (4, False)),
        ([(5, True), (4, False)], (4, False)),
        # FLINK-38454's example: split 1 emits 5 and idles, split 2 emits 4 and idles: 5
        ([(5, True), (4, True)], (5, True)),
        ([(4, True), (5, True)], (5, True)),
    ],
)
def test_combined_watermark_status(
    parts: list[tuple[int, bool]], expected: tuple[int, bool]
) -> None:
    """``CombinedWatermarkStatus.updateCombinedWatermark``: min over active parts, the max
    once every part is idle."""
    assert combine(parts) == expected
