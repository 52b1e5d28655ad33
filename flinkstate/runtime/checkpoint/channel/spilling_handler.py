"""The fetch of V2 recovery: the channel-state reader writes recovered input into spill files.

With checkpointing during recovery on, current Flink (``StreamTask.fetchChannelState``) reads a
task's input channel state on its IO thread into local spill files instead of network buffers,
through one of two handlers (``RecoveredChannelStateHandler.java``):

* ``SpillingWithFilteringHandler`` where a gate was rescaled (it has virtual channels): each
  source buffer is read into the task's one reusable *heap* pre-filter segment (FLINK-39519),
  records are reassembled per virtual channel, and every record this subtask owns is appended
  whole to the segment of its new channel; the rest are dropped. No network buffer is touched.
* ``SpillingNoFilteringHandler`` otherwise: each source buffer is read into a buffer of the
  recovered channel (its exclusive ones, then the gate's floating ones), its bytes are appended
  verbatim, and the buffer is recycled at once.

The recovered channels stay empty. When the reader is done it seals the files
(``SpillWriter.close``); no files means no state, and the task then converts its gates without
recovery. The rest of V2 (request partitions, the drainer, checkpoints) lives in
``fetched_channel_state_drainer``.

The model decides per gate which handler applies (Flink picks one per task when any gate has
virtual channels; a gate without them then has nothing to filter either way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.buffer.ledger import Changes
from flinkstate.runtime.buffer.records import Fragment
from flinkstate.runtime.checkpoint.channel import channel_state_filtering
from flinkstate.runtime.checkpoint.channel.channel_state_filtering import (
    FilteringTask,
    FilteringWorld,
)
from flinkstate.runtime.checkpoint.channel.fetched_channel_state import SpillAccount, SpillWriter
from flinkstate.runtime.checkpoint.channel.happenings import (
    BytesSpilled,
    FetchDone,
    FetchFailed,
    NothingFetched,
    PrefilteredSpilled,
    SpillDirectoryDeleted,
)
from flinkstate.runtime.checkpoint.checkpoint import InputChannelInfo
from flinkstate.runtime.options import RecoveryAbort
from flinkstate.runtime.partition.consumer import recovered_channel
from flinkstate.runtime.restore_versions import SpillCleanup

if TYPE_CHECKING:
    from flinkstate.runtime.checkpoint.channel.channel_state_reader import ChannelStateReader
    from flinkstate.runtime.partition.consumer.input_gate import Gate


class SpillingTask(FilteringTask, Protocol):
    """A restored task as V2's spilling handler sees it, beside what V1's filtering does: a
    mail it is sent (the fetch done). The task (``Task``) is one; mypy checks it at every
    call."""

    def mail(self, changes: Changes) -> None: ...


class SpillingWorld(FilteringWorld, Protocol):
    """What V2's spilling handler reaches of the world, beside what V1's filtering (the
    no-filtering path shares it) does: the run's count of spilled bytes and files. The world
    (``NetworkState``) is one; mypy checks it at every call."""

    @property
    def spill(self) -> SpillAccount: ...
    def task_named(self, name: str) -> SpillingTask: ...


# The hot path's enum members, read once: a member read through its class costs about 45 ns on
# Python 3.11, and a step reads several.
_SPILL = ActionKind.SPILL
_FINISH_FETCH = ActionKind.FINISH_FETCH


def filters(gate: Gate) -> bool:
    """Whether the gate's state goes through the filtering handler (it has virtual channels)."""
    return gate.plan is not None and gate.plan.demultiplexes


def fetch_action(world: SpillingWorld, reader: ChannelStateReader) -> tuple[ActionKind, str] | None:
    """The reader's next step while fetching, or None while it waits for a buffer."""
    if not reader.chunks:
        return (_FINISH_FETCH, "")
    gate, channel = recovered_channel.reader_target(world, reader)
    if filters(gate):
        return (_SPILL, channel.name)  # the heap pre-filter segment never runs out
    return recovered_channel.buffer_step(world, gate, channel, _SPILL)


def _writer(world: SpillingWorld, reader: ChannelStateReader) -> SpillWriter:
    if reader.spill is None:
        reader.spill = SpillWriter(world.options.spill_file_size, world.options.spill_segment_size)
    return reader.spill


def spill_step(world: SpillingWorld, reader: ChannelStateReader) -> None:
    """Read one source buffer and append what survives to its channel's open segment."""
    gate, channel = recovered_channel.reader_target(world, reader)
    task = world.task_named(reader.task)
    chunk = reader.chunks.popleft()
    writer = _writer(world, reader)
    heap_before = writer.heap_bytes
    info = InputChannelInfo(chunk.index, channel.index)
    if filters(gate):
        if not reader.heap_segment_allocated:
            reader.heap_segment_allocated = True
            world.ledger.heap(world.config.segment_size)
        kept: list[Fragment] = []
        dropped = 0
        recovered_channel.check_virtual_channel(world, gate, (chunk.old_subtask, chunk.old_channel))
        virtual = (chunk.index, channel.index, chunk.old_subtask, chunk.old_channel)
        for fragment in chunk.fragments:
            if not channel_state_filtering.reassemble(world, reader, virtual, fragment, channel):
                continue
            record = fragment.record
            passed = channel_state_filtering.watermark_passed(world, channel, chunk, record)
            if passed is not None:
                if passed >= 0:
                    size = world.records[passed].serialized_length
                    kept.append(Fragment(passed, 0, size, size))
                continue
            if channel_state_filtering.keeps_record(
                world, task, gate, channel, (chunk.old_subtask, chunk.old_channel), record
            ):
                total = world.records[record].serialized_length
                kept.append(Fragment(record, 0, total, total))
                world.recovered_via[(record, task.name)] = (
                    f"{channel.name} from old {chunk.old_subtask}<{chunk.old_channel}"
                )
            else:
                dropped += 1
        writer.append(info, kept)
        world.journal.tell(
            PrefilteredSpilled(
                len(kept), chunk.old_subtask, chunk.old_channel, channel.name, dropped
            )
        )
    else:
        holder = channel.owners.spilling
        segment = recovered_channel.take_buffer(world, gate, channel, holder)
        writer.append(info, chunk.fragments)
        # the bytes are on their way to disk: the buffer is recycled at once
        recovered_channel.recycle(world, channel, segment, holder)
        used = sum(f.length for f in chunk.fragments)
        world.journal.tell(BytesSpilled(used, chunk.old_subtask, chunk.old_channel, channel.name))
    world.ledger.heap(writer.heap_bytes - heap_before)
    channel.on_recovered_state_spilled(world.journal.changes)


def finish_fetch(world: SpillingWorld, reader: ChannelStateReader) -> None:
    """Seal the files; hand the state (holding the fetch's reference) to the task's drainer."""
    task = world.task_named(reader.task)
    writer = _writer(world, reader)
    heap = writer.heap_bytes
    state = writer.close()
    world.ledger.heap(-heap)
    channel_state_filtering.free_prefilter_segment(world, reader)
    for virtual, (record, _) in reader.partials.items():
        world.journal.violate(
            "exactly-once",
            f"record {record} of virtual channel {virtual} is incomplete at the end of the fetch",
        )
    reader.partials.clear()
    if state is not None and world.options.abort_recovery is RecoveryAbort.FETCH:
        fail_fetch(world, reader, writer.bytes_written)
        return
    reader.finished = True
    drainer = world.drainers[task.name]
    drainer.state = state
    world.spill.sealed(state, writer.bytes_written)
    task.mail(world.journal.changes)  # its drainer-installing mail
    if state is None:
        world.journal.tell(NothingFetched())
    else:
        world.journal.tell(FetchDone(len(state.segments), len(state.files), state.size))


def fail_fetch(world: SpillingWorld, reader: ChannelStateReader, bytes_written: int) -> None:
    """The fetch fails after its handler sealed the spill files (``readInputData`` throws once
    ``stateHandler.close()`` built their state, which it then never returns): since
    FLINK-40520 its ``catch`` deletes the handler's spill directory; before, nothing does.
    The exception fails the task (the test hook ``abort_recovery=fetch``)."""
    task = world.task_named(reader.task)
    writer = _writer(world, reader)
    files = writer.file_count
    world.journal.tell(FetchFailed(files, bytes_written))
    if world.options.spill_cleanup is SpillCleanup.ON_ABORT:
        writer.delete_directory()
        world.journal.tell_also(SpillDirectoryDeleted())
    world.fail_externally(
        task.key, "its fetch failed before handing its spill files over (abort_recovery)"
    )
