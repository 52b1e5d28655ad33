"""One watermark from several partial ones: a source's splits, or a task's inputs.

Flink's ``CombinedWatermarkStatus`` (a source's per-split outputs) and the operator's combined
watermark over its inputs use one rule: the minimum over the active parts; when every part is
idle, the maximum over all of them (so the order in which parts went idle does not matter) and
the whole is idle. With no parts there is nothing to say.
"""

from __future__ import annotations

from collections.abc import Iterable

from flinkstate.runtime.buffer.records import MIN_WATERMARK


def combine(parts: Iterable[tuple[int, bool]]) -> tuple[int, bool]:
    """(watermark, idle) of parts given as (watermark, idle); (MIN_WATERMARK, False) for
    none.

    Examples
    --------
    The minimum over the active parts; an idle part holds nothing back; all idle, the maximum:

    >>> combine([(100, False), (70, False), (30, True)])
    (70, False)
    >>> combine([(100, True), (70, True)])
    (100, True)
    >>> combine([]) == (MIN_WATERMARK, False)
    True
    """
    active = []
    everything = []
    for watermark, idle in parts:
        everything.append(watermark)
        if not idle:
            active.append(watermark)
    if not everything:
        return MIN_WATERMARK, False
    if not active:
        return max(everything), True
    return min(active), False
