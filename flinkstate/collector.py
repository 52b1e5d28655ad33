"""Python's cyclic garbage collector paused for a block that makes many objects without cycles.

The simulator frees a model's garbage by reference counting, and a Spark executor building a
batch of rows makes many small objects none of which refer back to each other; what the cyclic
collector would do during either is re-walk every object alive (a simulation's snapshots, an
executor's parsed ``_metadata``), again and again, for nothing. ``timeit`` pauses it while it
times for the same reason. One mechanism for both.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager

#: a paused block that ran this long (seconds) does the collector's deferred pass itself
COLLECT_AFTER_SECONDS = 1.0


@contextmanager
def collector_paused(collect_after: float = COLLECT_AFTER_SECONDS) -> Iterator[None]:
    """Pause the cyclic garbage collector for the block; its state is restored afterwards,
    also when the block raises.

    Pausing defers the collector's work, it does not remove it: what a long block kept (a
    simulation's snapshots, a big world's copies) makes its next full pass due, and the next
    caller would pay it (a click in the stepper taking most of a second at P = 64 instead of
    milliseconds). A block that ran ``collect_after`` seconds or more therefore does that pass
    itself before it hands back, where it is a fraction of what the block took; ``math.inf``
    never does (an executor whose objects die with its batch)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    started = time.perf_counter()
    try:
        yield
    finally:
        if time.perf_counter() - started >= collect_after:
            gc.collect()
        gc.enable()
