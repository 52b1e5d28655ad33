"""The captions of the recovery threads: the channel-state reader reading, filtering and
rewriting recovered input (classic and Flink 2.3), V2's fetch into spill files, and the drainer
that delivers them."""

from __future__ import annotations

from flinkstate.runtime.restore_versions import FailedDeliveryRecycle, SpillCleanup
from flinkstate.views.captions.step import (
    Step,
    byte_count,
    plural,
    sentence,
)


def recover_input(s: Step) -> str:
    added = [i for i in s.added("buffer") if i.get("recovered")]
    place = added[0]["of"] if added else "a recovered channel"
    descriptors = [i for i in s.added("event") if i.get("descriptor")]
    origin = (
        f" of old subtask {descriptors[0]['descriptor'][0]}, old channel "
        f"{descriptors[0]['descriptor'][1]}"
        if descriptors
        else ""
    )
    dropped = {p[0] for i in added for p in i["pieces"] if p[6] == "dropped"}
    filtered = (
        f"; {plural(len(dropped), 'record')} in it "
        f"{'belongs' if len(dropped) == 1 else 'belong'} to another subtask now and will be "
        "filtered out (struck through)"
        if dropped
        else ""
    )
    return (
        f"The channel-state reader of {s.task} read a chunk of input state{origin} "
        f"({byte_count(added)} bytes) into {place}{filtered} "
        "(SequentialChannelStateReaderImpl, RecoveredInputChannel)."
    )


def request_exclusive(s: Step) -> str:
    channel = s.world.channels[s.target]
    return (
        f"The channel-state reader of {s.task} took "
        f"{plural(len(channel.recovery.segments), 'exclusive buffer')} from the global pool "
        f"for recovered channel {channel.name} (RecoveredInputChannel.requestBufferBlocking)."
    )


def finish_input(s: Step) -> str:
    return (
        f"The channel-state reader of {s.task} has read all input state and put an "
        "EndOfInputChannelStateEvent on every channel."
    )


def filter_buffer(s: Step) -> str:
    dropped = sum(1 for step in s.world.filtered.values() if step == s.event.step)
    reader = s.world.readers[s.world.tasks[s.task].name]
    kept = len(reader.pending)
    what = (
        "no record ends in it (it is the middle of a record that spans buffers)"
        if not kept and not dropped
        else f"{plural(kept, 'record')} kept to re-serialize, "
        f"{plural(dropped, 'record')} filtered out"
    )
    return (
        f"The channel-state reader of {s.task} filtered a pre-filter buffer on its own thread: "
        f"{what} (ChannelStateFilteringHandler, Flink 2.3)."
    )


def rewrite(s: Step) -> str:
    reader = s.world.readers[s.world.tasks[s.task].name]
    if s.world.checkpoints.job_failed:
        return _failed_delivery(s)
    return (
        f"The channel-state reader of {s.task} re-serialized the kept records into a "
        f"post-filter buffer ({plural(len(reader.posts), 'buffer')} held so far)."
    )


def _failed_delivery(s: Step) -> str:
    """A rewrite whose hand-over to the recovered channel failed (``fail_filtered_delivery``)."""
    options = s.world.options
    recycled = (
        "Flink 2.3's compensating loop recycled that buffer too, though the channel already "
        "held it, and the failed task's release recycled it again (before FLINK-40345)"
        if options.failed_delivery_recycle is FailedDeliveryRecycle.FROM_FAILED
        else "the reader recycled only the buffers it had not handed over (FLINK-40345)"
    )
    return (
        f"The channel-state reader of {s.task} handed its filtered buffers to the recovered "
        f"channel, and handing over buffer {options.fail_filtered_delivery} failed (a test "
        f"hook): {recycled}. {sentence(s.world.checkpoints.job_failed)}"
    )


def spill(s: Step) -> str:
    reader = s.world.readers[s.world.tasks[s.task].name]
    spill = reader.spill
    written = 0 if spill is None else spill.bytes_written
    open_bytes = 0 if spill is None else spill.heap_bytes
    dropped = sum(1 for step in s.world.filtered.values() if step == s.event.step)
    filtered = f"; {plural(dropped, 'record')} filtered out first" if dropped else ""
    return (
        f"The channel-state reader of {s.task} fetched a chunk of recovered input towards the "
        f"spill files: {written:,} bytes written so far, {open_bytes:,} in the open segment "
        f"on the heap{filtered} (SpillingWithFilteringHandler, SpillingNoFilteringHandler)."
    )


def spill_files_on_abort(s: Step) -> str:
    """What the failover does to the spill files of drains that never started."""
    if s.world.options.spill_cleanup is SpillCleanup.ON_ABORT:
        return (
            "a failed fetch deletes its spill directory and the task's cleanup closes the "
            "fetched state, so every such spill file is deleted (FLINK-40520)"
        )
    return (
        "before FLINK-40520 only the drain deletes spill files, so those of every drain that "
        "never started stay on disk"
    )


def finish_fetch(s: Step) -> str:
    if s.world.checkpoints.job_failed:
        return (
            f"The channel-state reader of {s.task} sealed its spill files, and then its fetch "
            f"failed before handing them over (a test hook): {spill_files_on_abort(s)}. "
            f"{sentence(s.world.checkpoints.job_failed)}"
        )
    drainer = s.world.drainers[s.world.tasks[s.task].name]
    state = drainer.state
    what = (
        "nothing to recover"
        if state is None
        else f"{plural(len(state.files), 'spill file')} of {state.size:,} bytes"
    )
    return (
        f"The channel-state reader of {s.task} finished its fetch: {what}, handed to the "
        "drainer (FetchedChannelState)."
    )


def drain(s: Step) -> str:
    added = [i for i in s.added("buffer") if i.get("recovered")]
    place = added[0]["of"] if added else "a channel"
    return (
        f"The drainer of {s.task} copied {byte_count(added)} bytes from the spill files into a "
        f"buffer of {place} in recovery and committed its position "
        "(FetchedChannelStateDrainer)."
    )


def finish_drain(s: Step) -> str:
    return (
        f"The drainer of {s.task} has delivered everything: an EndOfFetchedChannelStateEvent "
        "ends each channel's recovery."
    )
