"""Filtering recovered records on the reader thread (Flink 2.3, checkpointing during recovery).

With both checkpointing-during-recovery flags on, a rescaled task does not demultiplex at
processing time: its channel-state reader filters while it reads (``ChannelStateFilteringHandler``
in ``release-2.3``). For each source buffer of a chunk the reader

1. takes a *pre-filter* buffer and fills it with the persisted bytes;
2. feeds them to the virtual channel (old subtask, old channel) they belong to; every record that
   completes and belongs to this subtask is re-serialized into *post-filter* buffers, requested
   one after another and kept by the reader until the whole source buffer is done;
3. queues the post-filter buffers in the recovered channel (the task consumes them meanwhile)
   and only then lets go of the pre-filter buffer.

Where the buffers come from is Flink's three answers (``PrefilterSource``): the channel's
network buffers only (before FLINK-38930: a reader holding its pre-filter buffer can wait for a
post-filter buffer forever, waiting on itself), the channel's exclusive buffers with an unbounded
heap fallback (Flink 2.3: no hang, the heap grows), or one reusable heap segment per task for the
pre-filter buffer (FLINK-39519, its one-buffer-at-a-time invariant checked) with post-filter
buffers as in 2.3. The hang happens exactly when ``1 + k > E + L``: k post-filter buffers for the
records completing in one source buffer, E exclusive buffers, L floating buffers of the gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.buffer.buffer import HEAP, Buffer, BufferFactory
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.buffer.records import Fragment, Record
from flinkstate.runtime.checkpoint.channel.happenings import (
    FilteredDeliveryFailed,
    PostFilterBufferWritten,
    PrefilterBufferRead,
)
from flinkstate.runtime.checkpoint.coordinator import CoordinatorWorld
from flinkstate.runtime.options import Fault, PrefilterSource, RecoveredWatermarks
from flinkstate.runtime.partition.consumer import deserializer, recovered_channel
from flinkstate.runtime.partition.consumer.deserializer import Framing
from flinkstate.runtime.partition.consumer.recovered_channel import RecoveringTask
from flinkstate.runtime.shuffle.config import NetworkConfig

if TYPE_CHECKING:
    from flinkstate.runtime.checkpoint.channel.channel_state_reader import ChannelStateReader
    from flinkstate.runtime.checkpoint.channel.fetched_channel_state import (
        FetchedChannelStateDrainer,
    )
    from flinkstate.runtime.checkpoint.state_assignment import RecoveredChunk
    from flinkstate.runtime.partition.consumer.input_gate import Channel, Gate


class FilteringTask(RecoveringTask, Protocol):
    """A restored task as V1's filtering sees it. The task (``Task``) is one; mypy checks it at
    every call."""

    @property
    def key(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def index(self) -> int: ...


class FilteringWorld(CoordinatorWorld, BufferFactory, Protocol):
    """What V1's filtering reaches of the world, beside what the coordinator does: a task's
    failure (a reader's, by the task's key), the records and what event time makes of a
    recovered watermark or status (the demultiplexer's virtual channels, which the world
    hands to ``watermarks.recovered_element``), the readers and drainers, the network
    configuration (its buffers' size), the subtask the partitioner selects for a record, and
    what the checks remember of the records it filtered and the channel each recovered record
    came through. The world (``NetworkState``) is one; mypy checks it at every call."""

    def fail_externally(self, task: str, cause: str) -> None: ...
    @property
    def records(self) -> dict[int, Record]: ...
    def recovered_watermark(
        self,
        channel: Channel,
        virtual_channel: tuple[int, int] | None,
        element: Record,
        aggregate: bool,
    ) -> int | None: ...
    def task_named(self, name: str) -> FilteringTask: ...
    @property
    def readers(self) -> dict[str, ChannelStateReader]: ...
    @property
    def drainers(self) -> dict[str, FetchedChannelStateDrainer]: ...
    @property
    def config(self) -> NetworkConfig: ...
    def selected_subtask(self, gate: Gate, record: int) -> int: ...
    @property
    def filtered(self) -> dict[tuple[int, str], int]: ...
    @property
    def recovered_via(self) -> dict[tuple[int, str], str]: ...


# The hot path's enum members, read once: a member read through its class costs about 45 ns on
# Python 3.11, and a step reads several.
_FINISH_INPUT = ActionKind.FINISH_INPUT
_FILTER = ActionKind.FILTER
_REWRITE = ActionKind.REWRITE
_NO_FILTER = Fault.NO_FILTER
_KEEP_PREFILTER_BUFFER = Fault.KEEP_PREFILTER_BUFFER

#: ``MemoryManager.DEFAULT_PAGE_SIZE``: the 2.3 heap fallback allocates this much whatever the
#: network segment size
HEAP_FALLBACK_SIZE = 32 * 1024
ONE_BUFFER_AT_A_TIME = (
    "Previous pre-filter buffer has not been recycled. This violates the one-buffer-at-a-time "
    "invariant of pre-filter buffers."
)


def reader_action(
    world: FilteringWorld, reader: ChannelStateReader
) -> tuple[ActionKind, str] | None:
    """The reader's next step in filter-on-read mode, or None while it is blocked."""
    network_only = world.options.prefilter_source is PrefilterSource.NETWORK
    if reader.pre is None and not reader.pending:
        if not reader.chunks:
            return (_FINISH_INPUT, "")
        gate, channel = recovered_channel.reader_target(world, reader)
        # the heap pre-filter segment needs no network buffer: the exclusive ones wait
        heap_segment = world.options.prefilter_source is PrefilterSource.HEAP_SEGMENT
        if not heap_segment and recovered_channel.needs_exclusive(gate, channel):
            return recovered_channel.exclusive_request(world, gate, channel)
        if network_only and not recovered_channel.has_buffer(world, gate, channel):
            return None
        return (_FILTER, channel.name)
    gate, channel = recovered_channel.reader_target(world, reader)
    if recovered_channel.needs_exclusive(gate, channel):  # heap-segment: first post-filter one
        return recovered_channel.exclusive_request(world, gate, channel)
    if network_only and not recovered_channel.has_buffer(world, gate, channel):
        return None
    return (_REWRITE, channel.name)


def _take(world: FilteringWorld, gate: Gate, channel: Channel, holder: Owner) -> tuple[int, str]:
    """A buffer for recovery: (segment or HEAP, where it returns to)."""
    if channel.recovery.exclusive or world.options.prefilter_source is PrefilterSource.NETWORK:
        origin = "exclusive" if channel.recovery.exclusive else "floating"
        return recovered_channel.take_buffer(world, gate, channel, holder), origin
    world.ledger.heap(HEAP_FALLBACK_SIZE)
    return HEAP, "heap"


def _give_back(
    world: FilteringWorld, gate: Gate, channel: Channel, segment: int, origin: str, holder: Owner
) -> None:
    if origin in ("exclusive", "floating"):
        recovered_channel.recycle(world, channel, segment, holder)
        return
    # the channel's change is noted by the delivery this is part of (``_deliver``)
    if origin == "heap":
        world.ledger.heap(-HEAP_FALLBACK_SIZE)
    # the heap pre-filter segment stays allocated for reuse; only its in-use flag clears


def free_prefilter_segment(world: FilteringWorld, reader: ChannelStateReader) -> None:
    """The reader's handler closes: its reusable heap pre-filter segment, if it took one, is
    freed (Flink's handlers free it in ``close()``), whichever generation read the state."""
    if reader.heap_segment_allocated:
        reader.heap_segment_allocated = False
        world.ledger.heap(-world.config.segment_size)


def filter_step(world: FilteringWorld, reader: ChannelStateReader) -> None:
    """Take a pre-filter buffer, fill it with one source buffer, filter what completes."""
    gate, channel = recovered_channel.reader_target(world, reader)
    task = world.task_named(reader.task)
    chunk = reader.chunks.popleft()
    holder = channel.owners.pre_filter
    if world.options.prefilter_source is PrefilterSource.HEAP_SEGMENT:
        if reader.heap_segment_in_use:
            world.journal.violate("one-buffer-at-a-time", ONE_BUFFER_AT_A_TIME)
        if not reader.heap_segment_allocated:
            reader.heap_segment_allocated = True
            world.ledger.heap(world.config.segment_size)
        reader.heap_segment_in_use = True
        segment, origin = HEAP, "heap-segment"
    else:
        segment, origin = _take(world, gate, channel, holder)
    reader.pre, reader.pre_origin, reader.pre_channel = segment, origin, channel.name
    kept = filtered = 0
    if gate.plan is not None and gate.plan.demultiplexes:  # the gate has a filtering handler
        recovered_channel.check_virtual_channel(world, gate, (chunk.old_subtask, chunk.old_channel))
    vc = (chunk.index, channel.index, chunk.old_subtask, chunk.old_channel)
    for fragment in chunk.fragments:
        if not reassemble(world, reader, vc, fragment, channel):
            continue
        passed = watermark_passed(world, channel, chunk, fragment.record)
        if passed is not None:
            if passed >= 0:
                reader.pending.append((passed, 0))
            continue
        if keeps_record(
            world, task, gate, channel, (chunk.old_subtask, chunk.old_channel), fragment.record
        ):
            reader.pending.append((fragment.record, 0))
            world.recovered_via[(fragment.record, task.name)] = (
                f"{channel.name} from old {chunk.old_subtask}<{chunk.old_channel}"
            )
            kept += 1
        else:
            filtered += 1
    world.journal.tell(PrefilterBufferRead(origin, channel.name, kept, filtered))
    if not reader.pending:
        _deliver(world, reader, task, gate, channel)


def reassemble(
    world: FilteringWorld,
    reader: ChannelStateReader,
    virtual: tuple[int, int, int, int],
    fragment: Fragment,
    channel: Channel,
) -> bool:
    """Feed one fragment to its virtual channel's record; True when it completes the record."""
    before = reader.partials.get(virtual)
    partial, framing = deserializer.reassemble(before, fragment)
    if framing is Framing.NOT_CONTINUED:
        world.journal.violate(
            "channel-order",
            f"fragment of record {fragment.record} does not continue the record being "
            f"filtered on {channel.name}",
        )
        return False
    if framing is Framing.CUT_OFF:
        assert before is not None
        world.journal.violate("exactly-once", f"record {before[0]} was cut off in {channel.name}")
    if partial is None:
        reader.partials.pop(virtual, None)
        return True
    reader.partials[virtual] = partial
    return False


def watermark_passed(
    world: FilteringWorld, channel: Channel, chunk: RecoveredChunk, element_id: int
) -> int | None:
    """For a watermark or status the handler read: the element it writes on (-1: none, held
    back); None for a record, which the record filter decides."""
    element = world.records[element_id]
    if element.is_record:
        return None
    aggregate = world.options.recovered_watermarks is RecoveredWatermarks.AGGREGATED
    passed = world.recovered_watermark(
        channel, (chunk.old_subtask, chunk.old_channel), element, aggregate
    )
    return -1 if passed is None else passed


def keeps_record(
    world: FilteringWorld,
    task: FilteringTask,
    gate: Gate,
    channel: Channel,
    virtual_channel: tuple[int, int],
    record: int,
) -> bool:
    """The record filter of a virtual channel (``PartitionerRecordFilter``): only where the old
    subtask is ambiguous, a record is kept iff the partitioner at the new parallelism selects
    this subtask for it. A dropped record is remembered with its step, for the accounting."""
    plan = gate.plan
    if plan is None:
        return True
    ambiguous = plan.filters_virtual_channel(channel.index, *virtual_channel)
    if not ambiguous or _NO_FILTER in world.options.faults:
        return True
    if world.selected_subtask(gate, record) == task.index:
        return True
    world.filtered[(record, task.name)] = world.journal.step
    return False


def rewrite_step(world: FilteringWorld, reader: ChannelStateReader) -> None:
    """Take one post-filter buffer and re-serialize pending records into it."""
    gate, channel = recovered_channel.reader_target(world, reader)
    task = world.task_named(reader.task)
    holder = channel.owners.post_filter
    segment, origin = _take(world, gate, channel, holder)
    capacity = HEAP_FALLBACK_SIZE if segment == HEAP else world.config.segment_size
    buffer = world.new_buffer(segment, capacity, recovered=True)
    while reader.pending and buffer.space:
        record, written = reader.pending[0]
        total = world.records[record].serialized_length
        length = min(buffer.space, total - written)
        buffer.fragments.append(Fragment(record, written, length, total))
        buffer.used += length
        if written + length == total:
            reader.pending.popleft()
        else:
            reader.pending[0] = (record, written + length)
    reader.posts.append(buffer)
    world.journal.tell(PostFilterBufferWritten(len(reader.posts), origin, channel.name))
    if not reader.pending:
        _deliver(world, reader, task, gate, channel)


def _deliver(
    world: FilteringWorld,
    reader: ChannelStateReader,
    task: FilteringTask,
    gate: Gate,
    channel: Channel,
) -> None:
    """Queue the rewritten buffers in the recovered channel, then recycle the pre-filter one.

    With the ``fail_filtered_delivery`` test hook, handing one of them over fails: the channel
    has taken that one (``onRecoveredStateBuffer`` takes a buffer over before it can fail), the
    reader recycles the rest as ``FailedDeliveryRecycle`` says, the pre-filter buffer is
    recycled as ever (Flink's ``finally``), and the exception fails the task."""
    posts = reader.posts
    failed = failed_delivery(world, len(posts))
    delivered = posts if failed is None else posts[: failed + 1]
    for buffer in delivered:
        if buffer.segment != HEAP:
            world.ledger.move(buffer.segment, channel.owners.post_filter, channel.owners.recovered)
    channel.on_recovered_state_buffers(delivered, world.journal.changes)
    reader.posts = []
    recycled = [] if failed is None else _recycle_undelivered(world, channel, posts, failed)
    assert reader.pre is not None
    if reader.pre_origin == "heap-segment":
        # the fault: the recycler never clears the in-use flag
        reader.heap_segment_in_use = _KEEP_PREFILTER_BUFFER in world.options.faults
    else:
        _give_back(world, gate, channel, reader.pre, reader.pre_origin, channel.owners.pre_filter)
    reader.pre, reader.pre_origin, reader.pre_channel = None, "", ""
    if failed is not None:
        world.journal.tell_also(
            FilteredDeliveryFailed(
                failed + 1,
                len(posts),
                channel.name,
                tuple(i + 1 for i in recycled),
                world.options.failed_delivery_recycle,
            )
        )
        world.fail_externally(
            task.key,
            f"its channel-state reader failed to hand filtered buffer {failed + 1} of "
            f"{len(posts)} to {channel.name} (fail_filtered_delivery)",
        )


def failed_delivery(world: FilteringWorld, count: int) -> int | None:
    """The index of the filtered buffer whose hand-over fails among ``count``, if the test hook
    ``fail_filtered_delivery`` picks one (the first source buffer of the run that yields that
    many; the task fails with it, so there is no second)."""
    n = world.options.fail_filtered_delivery
    return n - 1 if n and count >= n else None


def _recycle_undelivered(
    world: FilteringWorld, channel: Channel, posts: list[Buffer], failed: int
) -> list[int]:
    """``recoverWithFiltering``'s compensating loop: the filtered buffers it recycles, by
    index. One the channel took over is recycled from the channel's queue, which keeps it."""
    recycled = list(world.options.failed_delivery_recycle.recycled(failed, len(posts)))
    for index in recycled:
        buffer = posts[index]
        if buffer.segment == HEAP:
            world.ledger.heap(-buffer.capacity)
            continue
        holder = channel.owners.recovered if index <= failed else channel.owners.post_filter
        recovered_channel.recycle(world, channel, buffer.segment, holder)
    return recycled


def holds_buffers(world: FilteringWorld, reader: ChannelStateReader, channels: set[str]) -> bool:
    """Whether the reader owns a pre- or post-filter network buffer of one of ``channels``
    (for waits-for reports: a reader can wait on itself)."""
    channel = reader.pre_channel
    if channel not in channels:
        return False
    owner = world.owner
    owners = world.channels[channel].owners
    if reader.pre is not None and reader.pre != HEAP and owner[reader.pre] == owners.pre_filter:
        return True
    return any(b.segment != HEAP and owner[b.segment] == owners.post_filter for b in reader.posts)
