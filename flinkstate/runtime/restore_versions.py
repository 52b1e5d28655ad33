"""Which Flink code a restored task's recovered input channels run: the versions that Flink's
restore bugs of 2020 ran, before and after each fix. The run options name them; the recovered
channel (``partition/consumer/recovered_channel``) and the classic reader follow them. The
default of each is what every release since and master do, so a run that names neither is
master's."""

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
