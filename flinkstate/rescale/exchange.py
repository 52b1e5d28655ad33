"""Rescaling the in-flight data of one exchange: who reads what after a parallelism change.

For an exchange ``upstream -> downstream`` whose operators go from old to new parallelism, this
derives, as Flink's ``StateAssignmentOperation`` and ``TaskStateAssignment`` do, for every new
subtask: which old subtasks' input and output channel state it recovers, the virtual channels
(old subtask, old channel) it must demultiplex because bytes of several old channels arrive on
one new channel, and which of them need record filtering. The recovery model and the Spark
pipeline both read this plan rather than re-deriving it.
"""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError, UnsupportedRescaleError
from flinkstate.keygroups import check_parallelism
from flinkstate.rescale.descriptor import (
    NO_RESCALE,
    GateOrPartitionRescalingDescriptor,
    MappingType,
)
from flinkstate.rescale.mapper import UNSUPPORTED_MESSAGE, SubtaskStateMapper
from flinkstate.rescale.mappings import RescaleMappings
from flinkstate.rescale.partitioner import Partitioner


@dataclass(frozen=True, order=True)
class VirtualChannel:
    """The bytes of one old channel: Flink's ``SubtaskConnectionDescriptor`` key.

    ``old_subtask`` is the old *downstream* subtask whose input state (or whose subpartition of
    the upstream's output state) held the bytes, ``old_channel`` the old upstream subtask.
    Records spanning buffers are reassembled per virtual channel, never across them.
    """

    old_subtask: int
    old_channel: int
    filtered: bool = False


@dataclass(frozen=True)
class DownstreamSubtaskRescale:
    """What new downstream subtask ``subtask`` recovers on its input gate."""

    subtask: int
    input_state_from: tuple[int, ...]
    upstream_output_state_from: tuple[tuple[int, int], ...]
    descriptor: GateOrPartitionRescalingDescriptor
    virtual_channels: tuple[tuple[VirtualChannel, ...], ...]

    @property
    def demultiplexes(self) -> bool:
        """True when records are read per virtual channel rather than per physical channel."""
        return self.descriptor.mapping_type is MappingType.RESCALING

    @property
    def filters(self) -> bool:
        return any(vc.filtered for channel in self.virtual_channels for vc in channel)

    @property
    def all_virtual_channels(self) -> tuple[VirtualChannel, ...]:
        return tuple(vc for channel in self.virtual_channels for vc in channel)

    def new_channel(self, old_channel: int) -> int:
        """The one new channel of this gate that buffers of ``old_channel`` arrive on (Flink's
        ``calculateMapping``: anything else is an error, a buffer is processed once)."""
        if self.descriptor is NO_RESCALE:
            return old_channel
        targets = self.descriptor.rescaled_channels_mapping.invert().mapped_indexes(old_channel)
        if len(targets) != 1:
            raise InvalidParameterError(
                "One buffer is only distributed to one target InputChannel since one buffer "
                f"is expected to be processed once by the same task (old channel {old_channel} "
                f"maps to new channels {list(targets)})"
            )
        return targets[0]

    def filters_virtual_channel(self, channel: int, old_subtask: int, old_channel: int) -> bool:
        """Whether records of virtual channel (``old_subtask``, ``old_channel``) arriving on
        ``channel`` pass the record filter (only where the old subtask is ambiguous)."""
        if not 0 <= channel < len(self.virtual_channels):
            return False
        return any(
            vc.filtered and (vc.old_subtask, vc.old_channel) == (old_subtask, old_channel)
            for vc in self.virtual_channels[channel]
        )


@dataclass(frozen=True)
class UpstreamSubtaskRescale:
    """What new upstream subtask ``subtask`` recovers into its result partition."""

    subtask: int
    output_state_from: tuple[int, ...]
    descriptor: GateOrPartitionRescalingDescriptor

    def new_subpartitions(self, old_subpartition: int) -> tuple[int, ...]:
        """New subpartitions a recovered buffer of ``old_subpartition`` is copied into."""
        mapping = self.descriptor.rescaled_channels_mapping
        targets = mapping.invert().mapped_indexes(old_subpartition)
        if not targets:
            raise InvalidParameterError(
                f"old subpartition {old_subpartition} has no mapping in {mapping}"
            )
        return targets


@dataclass(frozen=True)
class ExchangeRescale:
    """The rescale of one exchange, with the answer for every new subtask on both sides."""

    partitioner: Partitioner
    upstream_parallelism: tuple[int, int]
    downstream_parallelism: tuple[int, int]
    recover_output_on_downstream: bool
    carries_channel_state: bool
    note: str
    input_mapping: RescaleMappings | None
    output_mapping: RescaleMappings | None
    downstream: tuple[DownstreamSubtaskRescale, ...]
    upstream: tuple[UpstreamSubtaskRescale, ...]

    @property
    def filters(self) -> bool:
        return any(subtask.filters for subtask in self.downstream)


def rescale_exchange(
    partitioner: Partitioner | str,
    upstream: tuple[int, int],
    downstream: tuple[int, int],
    *,
    recover_output_on_downstream: bool = False,
    unaligned_forced: bool = False,
    aligned_by_graph: bool = False,
) -> ExchangeRescale:
    """Plan the recovery of one exchange's in-flight data.

    ``upstream`` and ``downstream`` are ``(old parallelism, new parallelism)``.
    ``recover_output_on_downstream`` is
    ``execution.checkpointing.unaligned.recover-output-on-downstream.enabled``: the upstream's
    output state is then read by the downstream subtasks. ``unaligned_forced`` is
    ``execution.checkpointing.unaligned.forced``, which checkpoints pointwise and broadcast
    exchanges unaligned too, so that rescaling them fails as it does in Flink.
    ``aligned_by_graph``: the exchange's consumer also reads a pointwise or broadcast
    exchange, so Flink aligns this one too and it carries no channel state either.
    """
    kind = Partitioner.parse(partitioner)
    up_old, up_new = (check_parallelism(p, "upstream parallelism") for p in upstream)
    down_old, down_new = (check_parallelism(p, "downstream parallelism") for p in downstream)
    if kind is Partitioner.FORWARD and (up_old != down_old or up_new != down_new):
        raise InvalidParameterError(
            "forward partitioning does not allow a change of parallelism between upstream "
            f"({up_old} -> {up_new}) and downstream ({down_old} -> {down_new}); use "
            "rebalance, shuffle, broadcast or global"
        )

    if not kind.supports_unaligned_checkpoint or (aligned_by_graph and not unaligned_forced):
        rescaled = up_old != up_new or down_old != down_new
        if unaligned_forced and rescaled:
            raise UnsupportedRescaleError(UNSUPPORTED_MESSAGE)
        return _without_channel_state(
            kind,
            (up_old, up_new),
            (down_old, down_new),
            recover_output_on_downstream,
            unaligned_forced,
        )

    input_mapping = kind.downstream_mapper.new_to_old(down_old, down_new)
    output_mapping = kind.upstream_mapper.new_to_old(up_old, up_new)
    full_and_upstream_changed = (
        kind.downstream_mapper is SubtaskStateMapper.FULL and up_old != up_new
    )
    input_redistributed = down_old != down_new or full_and_upstream_changed
    output_redistributed = up_old != up_new
    rescaled = input_redistributed or output_redistributed

    def descriptor(
        own: RescaleMappings, mapper: SubtaskStateMapper, connected: RescaleMappings, index: int
    ) -> GateOrPartitionRescalingDescriptor:
        if not rescaled:
            return NO_RESCALE
        old = own.mapped_indexes(index)
        if (own.is_identity and connected.is_identity) or not old:
            return NO_RESCALE
        ambiguous = own.ambiguous_targets() if mapper.is_ambiguous else frozenset()
        return GateOrPartitionRescalingDescriptor(old, connected, ambiguous, MappingType.RESCALING)

    upstream_plans = tuple(
        UpstreamSubtaskRescale(
            subtask=index,
            output_state_from=(
                ()
                if recover_output_on_downstream
                else (output_mapping.mapped_indexes(index) if output_redistributed else (index,))
            ),
            descriptor=descriptor(output_mapping, kind.upstream_mapper, input_mapping, index),
        )
        for index in range(up_new)
    )
    # Old subpartition s (= old downstream subtask s) goes to the new downstream subtasks that
    # read old downstream subtask s; identity when nothing rescaled.
    subpartition_owners = (
        input_mapping.invert() if rescaled else RescaleMappings.identity(down_old, down_new)
    )

    downstream_plans = []
    for index in range(down_new):
        gate = descriptor(input_mapping, kind.downstream_mapper, output_mapping, index)
        input_from = input_mapping.mapped_indexes(index) if input_redistributed else (index,)
        if gate is NO_RESCALE:
            # Channels map to themselves: new channel c reads old channel c, no demultiplexing.
            channels = tuple(
                tuple(VirtualChannel(old, channel) for old in input_from if channel < up_old)
                for channel in range(up_new)
            )
        else:
            channels = tuple(
                tuple(
                    VirtualChannel(old, old_channel, gate.is_ambiguous(old))
                    for old in gate.old_subtask_indexes
                    for old_channel in gate.rescaled_channels_mapping.mapped_indexes(channel)
                )
                for channel in range(up_new)
            )
        upstream_output: tuple[tuple[int, int], ...] = ()
        if recover_output_on_downstream:
            upstream_output = tuple(
                (old_upstream, old_subpartition)
                for old_upstream in range(up_old)
                for old_subpartition in range(down_old)
                if index in subpartition_owners.mapped_indexes(old_subpartition)
            )
        downstream_plans.append(
            DownstreamSubtaskRescale(
                subtask=index,
                input_state_from=input_from,
                upstream_output_state_from=upstream_output,
                descriptor=gate,
                virtual_channels=channels,
            )
        )

    note = "" if rescaled else "parallelism unchanged: every subtask reads its own state"
    return ExchangeRescale(
        partitioner=kind,
        upstream_parallelism=(up_old, up_new),
        downstream_parallelism=(down_old, down_new),
        recover_output_on_downstream=recover_output_on_downstream,
        carries_channel_state=True,
        note=note,
        input_mapping=input_mapping,
        output_mapping=output_mapping,
        downstream=tuple(downstream_plans),
        upstream=upstream_plans,
    )


def _without_channel_state(
    kind: Partitioner,
    upstream: tuple[int, int],
    downstream: tuple[int, int],
    recover_output_on_downstream: bool,
    unaligned_forced: bool,
) -> ExchangeRescale:
    shape = "pointwise" if kind.is_pointwise else "broadcast"
    if unaligned_forced:
        note = f"{kind.datastream_call} is {shape}; forced unaligned but not rescaled"
    elif kind.supports_unaligned_checkpoint:
        note = (
            f"{kind.datastream_call} feeds an operator that also reads a pointwise or broadcast "
            "exchange: Flink aligns all of its inputs, so nothing is persisted or recovered here"
        )
    else:
        note = (
            f"{kind.datastream_call} is a {shape} exchange: Flink aligns its barriers, so "
            "unaligned checkpoints persist no in-flight data for it and nothing is recovered"
        )
    return ExchangeRescale(
        partitioner=kind,
        upstream_parallelism=upstream,
        downstream_parallelism=downstream,
        recover_output_on_downstream=recover_output_on_downstream,
        carries_channel_state=unaligned_forced,
        note=note,
        input_mapping=None,
        output_mapping=None,
        downstream=tuple(
            DownstreamSubtaskRescale(
                index,
                (index,) if unaligned_forced else (),
                (),
                NO_RESCALE,
                tuple(() for _ in range(upstream[1])),
            )
            for index in range(downstream[1])
        ),
        upstream=tuple(
            UpstreamSubtaskRescale(index, (index,) if unaligned_forced else (), NO_RESCALE)
            for index in range(upstream[1])
        ),
    )
