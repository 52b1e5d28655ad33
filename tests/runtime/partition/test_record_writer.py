"""A task's output: records routed by the partitioner, serialized across buffers, and a
saturated subpartition back-pressuring its producer."""

from __future__ import annotations

from flinkstate.catalogue.topologies import topology
from flinkstate.rescale.channel_selection import ChannelSelection
from flinkstate.runtime.buffer.records import Record
from flinkstate.runtime.partition.record_writer import hash_text, select
from flinkstate.sim import RunStatus
from tests.runtime.runs import saturated_backpressure, simulate, world


def test_records_larger_than_a_segment_span_buffers() -> None:
    sim = simulate(records=5, record_size=10_000, parallelism=2, source_parallelism=1)
    result = sim.run()
    assert result.status is RunStatus.FINISHED
    writes = [e for e in sim.events if e.action.kind == "write"]
    # 10,004 serialized bytes into 4,096-byte buffers: every record touches three buffers.
    assert len(writes) >= 5 * 3
    polls = [e for e in sim.events if e.action.kind == "poll" and "0 complete" in e.note]
    assert polls, "a buffer holding only the middle of a record completes nothing"


def test_full_subpartition_blocks_the_producer() -> None:
    sim = saturated_backpressure()
    w = world(sim)
    blocked = [
        t
        for t in w.tasks.values()
        if t.pending and not any(a.actor == t.name for a in sim.enabled_actions())
    ]
    assert blocked, "some producer should wait for a buffer of its saturated pool"
    waits = w.waits()
    assert any("a buffer of pool" in wait.resource for wait in waits)
    assert sim.run().status is RunStatus.FINISHED


def test_keyby_sends_each_key_to_the_subtask_owning_its_key_group() -> None:
    w = topology("keyed").build({})
    source = w.tasks["source[0]"]
    partition = source.partitions[0]
    down = w.graph.operator(partition.exchange.downstream)
    for key in range(50):
        record = Record(id=key, key=key, size=10, source=source.name, seq=key)
        (sub,) = select(w, partition, record)
        selected = ChannelSelection.KEY_GROUP.select(
            key, down.effective_max_parallelism, down.parallelism
        )
        assert sub is partition.subpartitions[selected]


def test_the_seeding_hash_is_fixed_for_every_recorded_trace_depends_on_it() -> None:
    # value * 131 + byte, kept to 48 bits: not Python's per-process salted hash()
    assert hash_text("") == 0
    assert hash_text("a") == 97
    assert hash_text("ab") == 97 * 131 + 98
    assert hash_text("x" * 40) < 2**48
