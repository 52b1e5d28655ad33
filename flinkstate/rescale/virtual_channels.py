"""Virtual channels: the old connections that one new input channel carries after a rescale.

After a rescale, the recovered bytes arriving on one new input channel may come from several
old channels of several old subtasks. The reader keeps a record deserializer per (old subtask,
old channel) pair, so that a record spanning buffers is put together from the bytes of one old
channel only, and it filters the records of the old subtasks that other new subtasks read too.
Flink builds these pairs in ``DemultiplexingRecordDeserializer.create`` from the gate's
rescaling descriptor; :func:`virtual_channels` is that computation, written once for the
exchange plan (and through it the simulator's readers and routes) and the ``mapping`` command.
"""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError
from flinkstate.rescale.descriptor import GateOrPartitionRescalingDescriptor


@dataclass(frozen=True, order=True)
class VirtualChannel:
    """The bytes of one old channel: Flink's ``SubtaskConnectionDescriptor`` key.

    ``old_subtask`` is the old *downstream* subtask whose input state (or whose subpartition of
    the upstream's output state) held the bytes, ``old_channel`` the old upstream subtask.
    Records spanning buffers are reassembled per virtual channel, never across them.
    ``filtered``: the old subtask is ambiguous, so each record passes the record filter.

    Examples
    --------
    After a keyBy exchange went from 2 to 3 subtasks on both sides, new subtask 1 reads the input
    state of old subtasks 0 and 1, and both are shared, so each old channel's records are filtered:

    >>> from flinkstate.rescale.exchange import rescale_exchange
    >>> plan = rescale_exchange("keyBy", (2, 3), (2, 3))
    >>> for virtual in plan.downstream[1].virtual_channels[0]:
    ...     print(virtual)
    VirtualChannel(old_subtask=0, old_channel=0, filtered=True)
    VirtualChannel(old_subtask=1, old_channel=0, filtered=True)
    """

    old_subtask: int
    old_channel: int
    filtered: bool = False


def virtual_channels(
    descriptor: GateOrPartitionRescalingDescriptor, channel: int
) -> tuple[VirtualChannel, ...]:
    """The virtual channels new input channel ``channel`` of the described gate demultiplexes.

    Every old subtask of the descriptor by every old channel its channel mapping gives
    ``channel``, old subtask first; filtered where the old subtask is ambiguous. None when the
    descriptor names no old subtask (nothing was rescaled) or maps no old channel to
    ``channel``: Flink then reads the channel as it is, without demultiplexing.

    Examples
    --------
    New subtask 1 after a keyBy exchange went from 2 to 3 subtasks on both sides: each new input
    channel carries the old channel of the same upstream subtask from both old subtasks it reads;
    new channel 2 has no old upstream subtask behind it:

    >>> from flinkstate.rescale.exchange import rescale_exchange
    >>> gate = rescale_exchange("keyBy", (2, 3), (2, 3)).downstream[1].descriptor
    >>> [(vc.old_subtask, vc.old_channel) for vc in virtual_channels(gate, 1)]
    [(0, 1), (1, 1)]
    >>> virtual_channels(gate, 2)
    ()
    """
    mapping = descriptor.rescaled_channels_mapping
    if isinstance(channel, bool) or not isinstance(channel, int):
        raise InvalidParameterError(f"input channel must be a whole number, got {channel!r}")
    if not 0 <= channel < mapping.number_of_sources:
        if not mapping.number_of_sources:
            raise InvalidParameterError(
                f"input channel {channel} does not exist: the descriptor maps no new channel"
            )
        raise InvalidParameterError(
            f"input channel {channel} is out of range 0 to {mapping.number_of_sources - 1}"
        )
    old_channels = mapping.mapped_indexes(channel)
    return tuple(
        VirtualChannel(old_subtask, old_channel, descriptor.is_ambiguous(old_subtask))
        for old_subtask in descriptor.old_subtask_indexes
        for old_channel in old_channels
    )
