"""V2's fetch: recovered input goes to spill files, filtered on the heap where a gate was
rescaled, copied through the channel's own buffers where it was not."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.buffer.owners import OwnerKind
from flinkstate.runtime.options import RecoveryGeneration
from flinkstate.sim import Simulation
from tests.runtime.checkpoint.channel.test_classic_recovery import finished, restored, world

V2 = {"generation": "v2", "checkpointing_during_recovery": True}


def v2(name: str, seed: int, new: int | None, **overrides: object) -> Simulation:
    return restored(name, seed, new, downstream=True, **{**V2, **overrides})


@pytest.mark.slow
def test_rescaled_fetch_filters_on_the_heap_and_never_touches_the_pool() -> None:
    """``InputChannelRecoveredStateHandlerTest.testFilterOnAccumulatorBuffersComeFromHeapNotPool``:
    with a filtering handler the fetch takes no network buffer."""
    sim = v2("keyed", 1, 3)
    finished(sim.run())
    spills = [e for e in sim.events if e.action.kind == "spill"]
    assert spills
    assert all(not e.moves for e in spills)
    model = world(sim)
    assert model.effective_generation is RecoveryGeneration.V2
    assert model.filtered  # an ambiguous upscale drops records of other subtasks at the fetch
    assert model.heap_peak >= model.config.segment_size  # the one pre-filter segment
    assert model.heap_bytes == 0


@pytest.mark.slow
def test_unrescaled_fetch_copies_through_a_channel_buffer_recycled_at_once() -> None:
    sim = v2("keyed", 1, None)
    finished(sim.run())
    spills = [e for e in sim.events if e.action.kind == "spill"]
    assert spills
    for event in spills:
        assert [m.target.kind for m in event.moves][-2:] in (
            [OwnerKind.SPILLING, OwnerKind.RECOVERED_EXCLUSIVE],
            [OwnerKind.SPILLING, OwnerKind.POOL],
        )
    assert not world(sim).filtered


def test_every_spilled_byte_is_drained_once_and_the_files_are_deleted() -> None:
    sim = v2("keyed-chain", 2, 3, spill_segment_size=3000, spill_file_size=10_000)
    model = world(sim)
    drained: dict[str, int] = {}
    while (event := sim.step()) is not None:
        if event.action.kind == "drain":
            channel = model.channels[event.action.target]
            drained[channel.task] = drained.get(channel.task, 0) + channel.recovery.queue[-1].used
    finished(sim.run())
    states = {t: d.state for t, d in model.drainers.items() if d.state is not None}
    assert states
    assert any(len(s.files) > 1 for s in states.values())  # 10 kB files rotate
    for task, state in states.items():
        assert drained[task] == sum(s.body_length for s in state.segments)
        assert state.deleted
        assert state.references == 0
        assert state.deletions == 1
        for segment in state.segments:
            # sealed once past the bound: at most one source buffer beyond it
            assert segment.size <= 3000 + model.config.segment_size + 12


@pytest.mark.slow
@pytest.mark.parametrize("name", ["keyed", "two-input", "backpressure"])
@pytest.mark.parametrize("new", [None, 2, 3])
def test_v2_recovery_loses_and_duplicates_nothing(name: str, new: int | None) -> None:
    for seed in range(3):
        finished(v2(name, seed, new).run())


def test_classic_generation_refuses_checkpointing_during_recovery() -> None:
    with pytest.raises(InvalidParameterError, match="does not exist in the classic generation"):
        topology("keyed").build({"generation": "classic", "checkpointing_during_recovery": True})


@pytest.mark.parametrize("cleanup", ["on-abort", "drain-only"])
def test_a_fetch_failing_after_its_files_deletes_them_since_flink_40520(cleanup: str) -> None:
    """The fetch fails once its handler sealed the files: since FLINK-40520 its catch deletes
    the spill directory; before, the files outlive the recovery and the invariant says so."""
    sim = v2("keyed", 1, 3, abort_recovery="fetch", spill_cleanup=cleanup)
    result = sim.run()
    model = world(sim)
    assert model.checkpoints.job_failed.startswith("counter[")
    assert "its fetch failed before handing its spill files over" in model.checkpoints.job_failed
    assert model.failover is not None
    failed = sim.events[model.failover.step - 1]
    assert failed.action.kind == "finish-fetch"
    assert failed.note.startswith("fetch failed after writing 1 spill file(s)")
    task = model.task_named(f"task {model.actor(failed.action.actor).task}")
    writer = model.readers[task.name].spill
    assert writer is not None
    assert model.drainers[task.name].state is None  # never handed over
    leaks = [v for v in result.violations if v.invariant == "spill-file-leak"]
    if cleanup == "on-abort":
        assert writer.deleted
        assert not result.violations
    else:
        assert not writer.deleted
        assert any(
            f"of {task.name} outlive its recovery: its fetch never" in v.message for v in leaks
        )
