"""Which Flink code a restored task runs: the versions that Flink's restore bugs of 2020 ran,
before and after each fix. The run options name them; the recovered channel
(``partition/consumer/recovered_channel``), the classic reader and the task's mailbox
(``tasks/mailbox``) follow them. The default of each is what every release since and master do,
so a run that names none is master's."""

from __future__ import annotations

from flinkstate.choice import Choice


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
