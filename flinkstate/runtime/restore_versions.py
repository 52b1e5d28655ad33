"""Which Flink code a restored task runs: the versions that Flink's restore bugs of 2020 ran,
before and after each fix. The run options name them; the recovered channel
(``partition/consumer/recovered_channel``), the classic reader and the task's mailbox
(``tasks/mailbox``) follow them. The default of each is what every release since and master do,
so a run that names none is master's."""

from __future__ import annotations

from flinkstate.choice import Choice
from flinkstate.errors import InvalidParameterError


class ConversionCheck(Choice):
    """What ``RecoveredInputChannel.toInputChannel`` checks before it turns a recovered channel
    into a local or remote one.

    ``flink-1.11`` (before FLINK-18989, commit de2ab7af3fa): nothing. The gate converts the
    channel whatever it still queues and then releases the recovered channel
    (``releaseAllResources``), which recycles the recovered buffers the task has not read: a
    conversion asked for too early loses recovered records without a word. ``flink-1.12``
    (FLINK-18989, and every release since): the channel's recovered state must be consumed, its
    ``EndOfChannelStateEvent`` taken (master: nothing queued any more), else an
    ``IllegalStateException`` fails the task (``recovered_channel.conversion_refusal``).

    Examples
    --------
    >>> ConversionCheck.parse("flink-1.11").checks, ConversionCheck.parse("flink-1.12").checks
    (False, True)
    """

    NONE = "flink-1.11"
    STATE_CONSUMED = "flink-1.12"

    @property
    def checks(self) -> bool:
        """Whether the conversion refuses a channel recovery is not done with."""
        return self is ConversionCheck.STATE_CONSUMED


class RestoreOrder(Choice):
    """What ``StreamTask.beforeInvoke`` does first on restore: open the operator chain or write
    the recovered output state into the result partitions.

    ``flink-1.11.2`` (before FLINK-19907, commit 3ab31a0473c, Flink 1.11.0 to 1.11.2 and 1.12's
    master until October 2020): ``initializeStateAndOpenOperators`` ran before
    ``readRecoveredChannelState``, so the chain was live while its old output was still unread:
    what it emitted (records, watermarks) went into the subpartitions ahead of the in-flight
    data of the checkpoint, and a watermark could overtake the older records it should follow.
    ``flink-1.11.3`` (the fix, in 1.11.3, 1.12.0 and every release since): the channel state is
    read first (output synchronously), and only then is the chain opened.

    Examples
    --------
    >>> [RestoreOrder.parse(v).chain_first for v in ("flink-1.11.2", "flink-1.11.3")]
    [True, False]
    """

    CHAIN_FIRST = "flink-1.11.2"
    OUTPUT_FIRST = "flink-1.11.3"

    @property
    def chain_first(self) -> bool:
        """Whether the operator chain is open (may emit) before the output state is restored."""
        return self is RestoreOrder.CHAIN_FIRST


class RecoveredBufferOwnership(Choice):
    """Who recycles a buffer the classic channel-state reader filled with input state when the
    handler's ``recover`` fails (``ChannelStateChunkReader.readChunk`` and
    ``InputChannelRecoveredStateHandler.recover``).

    ``flink-1.13`` (before FLINK-22376, commit 2293362f0a1): both. The handler hands each
    recovered channel a retained reference and lets go of its own in a ``finally``; the
    reader's ``catch`` around reading *and* ``recover`` recycles the buffer as well, so an
    exception in ``recover`` after the hand-over gives the buffer back once too often: it
    returns while the channel still queues it, and the channel's release recycles it again.
    ``flink-1.14`` (FLINK-22376, every release since): ``recover`` takes the buffer over and
    is alone in charge of it, on success and on failure; the reader recycles only what fails
    before it calls ``recover``.

    Examples
    --------
    >>> [RecoveredBufferOwnership.parse(v).reader_recycles_after_recover
    ...  for v in ("flink-1.13", "flink-1.14")]
    [True, False]
    """

    READER_AND_HANDLER = "flink-1.13"
    HANDLER = "flink-1.14"

    @property
    def reader_recycles_after_recover(self) -> bool:
        """Whether the reader recycles a buffer whose ``recover`` threw."""
        return self is RecoveredBufferOwnership.READER_AND_HANDLER


class FailedDeliveryRecycle(Choice):
    """Which filtered buffers V1's reader recycles when handing one of them to its recovered
    channel fails (the compensating loop of ``recoverWithFiltering``). The channel takes each
    buffer over before anything can fail (``RecoveredInputChannel.onRecoveredStateBuffer``
    queues it, or recycles it itself once released), so the buffer that failed is already the
    channel's.

    ``from-failed``: the loop starts at the buffer that failed (``release-2.3``; master before
    FLINK-40345): it is recycled while the channel still holds it, and again when the failed
    task releases the channel: a double recycle.
    ``after-failed``: the loop starts after it (FLINK-40345, PR #28936): only the buffers never
    handed over are recycled.


    Examples
    --------
    Handing over the second of 4 filtered buffers fails: before FLINK-40345 the loop recycles
    it too (the channel already holds it), after it only the two never handed over:

    >>> list(FailedDeliveryRecycle.FROM_FAILED.recycled(1, 4))
    [1, 2, 3]
    >>> list(FailedDeliveryRecycle.AFTER_FAILED.recycled(1, 4))
    [2, 3]
    """

    FROM_FAILED = "from-failed"
    AFTER_FAILED = "after-failed"

    def recycled(self, failed: int, count: int) -> range:
        """The indexes of ``count`` filtered buffers the loop recycles when handing over the
        one at index ``failed`` fails."""
        if not 0 <= failed < count:
            raise InvalidParameterError(
                f"the failed delivery must be one of the {count} filtered buffers, got {failed}"
            )
        return range(failed if self is FailedDeliveryRecycle.FROM_FAILED else failed + 1, count)


class SpillCleanup(Choice):
    """Who deletes a task's spill files (V2) when its recovery aborts before the drain.

    ``drain-only``: nothing but the drain releases them (master of 2026-08-22): a fetch that
    fails after writing files, a request-partitions or trigger-install mail that fails or is
    dropped, leave the files on disk until the TaskManager shuts down (FLINK-40520).
    ``on-abort``: PR #29065: a failing fetch deletes its handler's spill directory, and the
    task's cleanup (``resourceCloser``) closes the fetched state it was handed, whatever
    references are still held. A drain that was started ends and releases them either way.


    Examples
    --------
    >>> from flinkstate.runtime.options import RunOptions
    >>> RunOptions().spill_cleanup
    <SpillCleanup.ON_ABORT: 'on-abort'>
    """

    DRAIN_ONLY = "drain-only"
    ON_ABORT = "on-abort"
