"""What a task that stops without finishing lets go of, and the whole job failing over.

A task that fails or is cancelled runs Flink's teardown (``Task.releaseResources``, then
``StreamTask.cleanUp``). Two of its effects matter where a bug shows only then, so they are
modelled:

* a recovered input channel still in the task recycles the buffers it queues
  (``RecoveredInputChannel.releaseAllResources``). A buffer somebody recycled already while the
  channel held it is then recycled a second time, and the ledger names the double recycle
  (FLINK-40345);
* a V2 recovery's spill files go as ``SpillCleanup`` says: a drain that was started runs to its
  end and releases them; before it, only FLINK-40520's cleanup deletes them (the failing fetch
  its spill directory, the task's ``cleanUp`` the state it was handed), and without it they
  stay on disk, which the invariant "no spill file outlives its recovery" reports.

Checkpoint failures beyond ``execution.checkpointing.tolerable-failed-checkpoints`` fail the
whole job over (``fail_job``): every task stops and is cleaned up, and the run ends there with
the outcome ``job-failed``. A failing subtask's region fails over through
:mod:`~flinkstate.runtime.failover.failover`, which uses the same cleanup.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from flinkstate.runtime.checkpoint.channel.channel_state_reader import ChannelStateReader
from flinkstate.runtime.checkpoint.channel.fetched_channel_state import (
    FetchedChannelStateDrainer,
)
from flinkstate.runtime.checkpoint.coordinator import EnabledActions
from flinkstate.runtime.checkpoint.coordinator_state import CoordinatorState
from flinkstate.runtime.options import RunOptions
from flinkstate.runtime.partition.consumer import recovered_channel
from flinkstate.runtime.partition.consumer.recovered_channel import RecoveredChannelWorld
from flinkstate.runtime.restore_versions import SpillCleanup
from flinkstate.runtime.tasks.happenings import SpillFilesLeft, Teardown

if TYPE_CHECKING:
    from flinkstate.runtime.tasks.task import Task


class TaskCleanupWorld(RecoveredChannelWorld, Protocol):
    """What a teardown reaches of the world, beside what a recovered channel does: the
    coordinator's state (a failed job), the cache of enabled actions, the options (how spill
    files are cleaned up), V2's drainers and the readers' spill writers, whose files it closes.
    The world (``NetworkState``) is one; mypy checks it at every call."""

    @property
    def checkpoints(self) -> CoordinatorState: ...
    @property
    def actions(self) -> EnabledActions: ...
    @property
    def options(self) -> RunOptions: ...
    @property
    def drainers(self) -> dict[str, FetchedChannelStateDrainer]: ...
    @property
    def readers(self) -> dict[str, ChannelStateReader]: ...
    def task_named(self, name: str) -> Task: ...
    def close_spill(self, task: str) -> bool: ...


def fail_job(world: TaskCleanupWorld, why: str) -> SpillFilesLeft:
    """The whole job fails over for ``why``: no task acts any more, each task's spill files are
    cleaned up as far as Flink cleans them up, and the run ends."""
    world.checkpoints.job_failed = why
    world.actions.invalidate()
    return clean_up_spill_files(world, world.drainers)


def clean_up_task(world: TaskCleanupWorld, task: Task) -> Teardown:
    """A failed or cancelled task's teardown: its recovered channels release what they queue,
    its spill files are cleaned up. What it let go of, for the step's failover happening."""
    released = release_recovered_channels(world, task)
    return Teardown(released, clean_up_spill_files(world, [task.name]))


def clean_up_spill_files(world: TaskCleanupWorld, tasks: Iterable[str]) -> SpillFilesLeft:
    """The named tasks' spill files as their teardown leaves them (V2 only: other generations
    write none). A task whose drainer is installed has its drain submitted: the drain runs, ends
    and lets go of its references, and the aborted checkpoints' writer of theirs, so the files
    go whatever ``SpillCleanup`` says. Before that only ``on-abort`` deletes them: a fetch still
    under way fails in the teardown and deletes its spill directory, and a state handed over is
    closed by the task's cleanup."""
    on_abort = world.options.spill_cleanup is SpillCleanup.ON_ABORT
    deleted = left = 0
    for name in tasks:
        drainer = world.drainers.get(name)
        if drainer is None:
            continue
        state = drainer.state
        writer = world.readers[name].spill
        if state is not None:  # handed over to the drainer (the fetch finished)
            if state.deleted:
                continue
            if drainer.installed or on_abort:
                world.close_spill(name)
                deleted += len(state.files)
            else:
                left += len(state.files)
        elif writer is not None and not writer.deleted and writer.file_count:
            if on_abort:
                deleted += writer.delete_directory()
            else:
                left += writer.file_count
    return SpillFilesLeft(deleted, left)


def release_recovered_channels(world: TaskCleanupWorld, task: Task) -> int:
    """``RecoveredInputChannel.releaseAllResources`` for each of the task's channels that is
    still a recovered one: every buffer it queues is recycled (heap ones freed). The number of
    buffers released."""
    released = 0
    for gate in task.gates:
        for channel in gate.channels:
            if channel.recovered and channel.recovery.queue:
                released += recovered_channel.release_queued(world, channel)
    return released
