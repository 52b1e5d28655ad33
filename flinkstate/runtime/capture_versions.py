"""Which Flink code captures a consumer's in-flight data when its task starts an unaligned
snapshot (also one that an aligned checkpoint's timeout starts): the versions that Flink's
capture bugs of 2020 and 2021 ran, before and after each fix. The
run options name them; the barrier handler follows them. The default of each is what every
release and master do, so a run that names neither is master's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from flinkstate.choice import Choice

_Channel = TypeVar("_Channel")


class LocalChannelPersistence(Choice):
    """What a ``LocalInputChannel`` persists once its task starts an unaligned checkpoint, until
    that channel's barrier: nothing before FLINK-17315 (``flink-1.11-snapshot``, master in April
    2020, where ``spillInflightBuffers`` kept ``InputChannel``'s empty body), what it reads since
    (``flink-1.11.0``, commit 1eda8340228, and every release; master's ``ChannelStatePersister``).

    Examples
    --------
    >>> old = LocalChannelPersistence.parse("flink-1.11-snapshot")
    >>> old.starts_persisting(remote=False), old.starts_persisting(remote=True)
    (False, True)
    """

    NONE = "flink-1.11-snapshot"
    PERSISTER = "flink-1.11.0"

    def starts_persisting(self, *, remote: bool) -> bool:
        """Whether a channel whose barrier is still to come persists what it receives."""
        return remote or self is LocalChannelPersistence.PERSISTER


class InflightDataLookup(Choice):
    """Which channel a task's unaligned snapshot asks whether the barrier is still to come, for
    each of its channels (``CheckpointBarrierUnaligner.hasInflightData``, which kept one flag
    per channel of the task, gates flattened in order).

    ``flink-1.11-snapshot`` (master in June 2020, before FLINK-18139): each gate asked with its
    channel's index within the gate, so every gate read the flags of the first channels of the
    task, gate 0's. ``flink-1.11.0`` (FLINK-18139, commit d25609d07f5, and every release): by
    the channel's ``InputChannelInfo``, turned into its flattened index; master asks each
    channel itself (``checkpointStarted``).

    Examples
    --------
    Two gates of one channel each, ``a`` and ``b``: gate 1's channel 0 is asked about gate 0's
    before the fix:

    >>> flat = ["a", "b"]
    >>> InflightDataLookup.CHANNEL_INDEX.asked(flat, gate_offset=1, index=0)
    'a'
    >>> InflightDataLookup.CHANNEL_INFO.asked(flat, gate_offset=1, index=0)
    'b'
    """

    CHANNEL_INDEX = "flink-1.11-snapshot"
    CHANNEL_INFO = "flink-1.11.0"

    def asked(self, flat: Sequence[_Channel], *, gate_offset: int, index: int) -> _Channel:
        """The channel asked about channel ``index`` of the gate whose first channel is
        ``gate_offset`` in the task's flattened ``flat``."""
        if self is InflightDataLookup.CHANNEL_INDEX:
            return flat[index]
        return flat[gate_offset + index]


class RecoveredChannelCheckpointStart(Choice):
    """What a channel still recovering (a ``RecoveredInputChannel``, not yet converted into a
    local or remote one) does when its task starts an unaligned checkpoint
    (``InputChannel.checkpointStarted``).

    ``flink-1.12.0`` (and 1.12.1): it kept ``InputChannel``'s empty body, so the snapshot went
    on without it: the recovered buffers it still queued for the task were in no snapshot, and
    once converted the channel persisted nothing before its barrier (FLINK-20654). In 1.12 a
    task was RUNNING while it replayed its channel state, so a barrier could reach one gate
    while another still replayed. ``flink-1.12.2`` (commit c6786ab9cf7, and every release
    since; master too): it throws ``CheckpointException(CHECKPOINT_DECLINED_TASK_NOT_READY)``,
    and the checkpoint is declined until every channel is converted. Master's checkpointing
    during recovery (V2) keeps that rule: its channels in recovery are converted ones, which
    cut their recovered queues at a recovery barrier instead.

    Examples
    --------
    >>> RecoveredChannelCheckpointStart.parse("flink-1.12.0").declines
    False
    >>> RecoveredChannelCheckpointStart.DECLINED.declines
    True
    """

    IGNORED = "flink-1.12.0"
    DECLINED = "flink-1.12.2"

    @property
    def declines(self) -> bool:
        """Whether a recovered channel declines the checkpoint instead of letting it pass."""
        return self is RecoveredChannelCheckpointStart.DECLINED


class AlignedBarrierTracking(Choice):
    """Which barriers a ``LocalInputChannel``'s ``ChannelStatePersister`` notes as received,
    so that an unaligned snapshot started later does not persist the channel.

    ``flink-1.12-snapshot`` (master in November 2020, before FLINK-19681): only priority
    (unaligned) barriers, ``checkForBarrier`` parsing priority events alone; a local channel
    gets no announcements either, so once an aligned barrier timed out into an unaligned
    checkpoint, the channel that had already delivered its aligned barrier started persisting
    at the switch and the buffers it read after its barrier went into the checkpoint.
    ``flink-1.12.0`` (commit b49ad6731c9, every release and master): every barrier.

    Examples
    --------
    >>> old = AlignedBarrierTracking.parse("flink-1.12-snapshot")
    >>> old.notes(remote=False, priority=False), old.notes(remote=False, priority=True)
    (False, True)
    >>> AlignedBarrierTracking.EVERY_BARRIER.notes(remote=False, priority=False)
    True
    """

    PRIORITY_ONLY = "flink-1.12-snapshot"
    EVERY_BARRIER = "flink-1.12.0"

    def notes(self, *, remote: bool, priority: bool) -> bool:
        """Whether a channel's persister notes a barrier it delivered as received (a remote
        channel's also learns of an aligned one by its announcement)."""
        return remote or priority or self is AlignedBarrierTracking.EVERY_BARRIER


class TimedOutAlignment(Choice):
    """What a task does with the channels an aligned barrier blocked when its alignment times
    out into an unaligned snapshot.

    ``flink-1.13.0`` (1.12 and 1.13.0, before FLINK-22638): they resume at once
    (``AlternatingController.switchToUnaligned`` calls ``resumeConsumption``), so the task
    reads data sent after those barriers before its snapshot's other barriers are in.
    ``flink-1.13.1`` (commit e70fe71f48e, master): they stay blocked until every barrier is in
    (``AlternatingCollectingBarriersUnaligned``).

    Examples
    --------
    >>> TimedOutAlignment.parse("flink-1.13.0").resumes_blocked
    True
    >>> TimedOutAlignment.KEEP_BLOCKED.resumes_blocked
    False
    """

    RESUME = "flink-1.13.0"
    KEEP_BLOCKED = "flink-1.13.1"

    @property
    def resumes_blocked(self) -> bool:
        return self is TimedOutAlignment.RESUME
