"""A subpartition turning a timed-out aligned barrier into a priority event
(``PipelinedSubpartition.alignedBarrierTimeout``)."""

from __future__ import annotations

from flinkstate.runtime.buffer.buffer import HEAP, Buffer
from flinkstate.runtime.buffer.ledger import Changes
from flinkstate.runtime.buffer.owners import SubpartitionOwners
from flinkstate.runtime.events import BARRIER
from flinkstate.runtime.partition.result_partition import Subpartition


def _subpartition() -> tuple[Subpartition, Changes]:
    sub = Subpartition("s", "p", "a[0]", "b[0]", "c", 0, SubpartitionOwners.of("s"))
    return sub, Changes(subpartitions={"s": (0,)}, channel_of={"s": "c"})


def _time_out(sub: Subpartition, changes: Changes, buffers: int, checkpoint: int) -> None:
    """PipelinedSubpartitionTest.testTimeoutWithNDataBuffers: ``buffers`` data buffers of
    4096 bytes and the timeoutable barrier of ``checkpoint``; on the timeout the output state
    is those buffers, and the queue polls the priority barrier first, then the buffers."""
    data = [Buffer(10 + i, 4096, 4096) for i in range(buffers)]
    for buffer in data:
        sub.add(buffer, changes)
    sub.add(Buffer(HEAP, 0, event=BARRIER, checkpoint=checkpoint), changes)
    assert len(sub.queue) == buffers + 1
    overtaken = sub.time_out_barrier(checkpoint, changes)
    assert overtaken == data
    sub.add_priority(Buffer(HEAP, 0, event=BARRIER, checkpoint=checkpoint, priority=True), changes)
    assert len(sub.queue) == buffers + 1
    head = sub.poll_buffer(changes)
    assert (head.event, head.checkpoint, head.priority) == (BARRIER, checkpoint, True)
    assert [sub.poll_buffer(changes) for _ in range(buffers)] == data
    assert not sub.queue


def test_timeout_aligned_to_unaligned_barrier() -> None:
    """PipelinedSubpartitionTest#testTimeoutAlignedToUnalignedBarrier: without a data buffer
    (checkpoint 7), then with one (checkpoint 8), in the same subpartition."""
    sub, changes = _subpartition()
    _time_out(sub, changes, 0, 7)
    _time_out(sub, changes, 1, 8)


def test_a_barrier_that_has_left_is_not_found() -> None:
    """``alignedBarrierTimeout`` of a checkpoint whose barrier the consumer already took (or
    of an aborted one) does nothing; a priority event at the head is passed over."""
    sub, changes = _subpartition()
    sub.add(Buffer(1, 4096, 4096), changes)
    assert sub.time_out_barrier(3, changes) is None
    sub.add_priority(Buffer(HEAP, 0, event=BARRIER, checkpoint=2, priority=True), changes)
    sub.add(Buffer(HEAP, 0, event=BARRIER, checkpoint=3), changes)
    assert sub.time_out_barrier(3, changes) == [Buffer(1, 4096, 4096)]
    assert [b.checkpoint for b in sub.queue] == [2, -1]
