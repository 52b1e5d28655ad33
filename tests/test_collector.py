"""The cyclic collector paused for a block, and the deferred pass a long block does itself."""

from __future__ import annotations

import gc
import weakref

import pytest

from flinkstate.collector import collector_paused


class _Cycle:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.mark.slow
def test_a_long_paused_block_does_the_deferred_collection_itself() -> None:
    gc.collect()
    with collector_paused(collect_after=float("inf")):
        short = weakref.ref(_Cycle())
    assert short() is not None  # a short block leaves the pass for later, as Python would
    with collector_paused(collect_after=0.0):
        long = weakref.ref(_Cycle())
    assert long() is None  # the pass is done before the block hands back
    assert gc.isenabled()
    gc.collect()
    assert short() is None


def test_a_paused_block_leaves_a_disabled_collector_alone() -> None:
    gc.disable()
    try:
        with collector_paused(collect_after=0.0):
            kept = weakref.ref(_Cycle())
        assert not gc.isenabled()
        assert kept() is not None
    finally:
        gc.enable()
        gc.collect()
