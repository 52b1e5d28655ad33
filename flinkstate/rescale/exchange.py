"""Rescaling the in-flight data of one exchange: who reads what after a parallelism change.

For an exchange ``upstream -> downstream`` whose operators go from old to new parallelism, this
derives, as Flink's ``StateAssignmentOperation`` and ``TaskStateAssignment`` do, for every new
subtask: which old subtasks' input and output channel state it recovers, the virtual channels
(old subtask, old channel) it must demultiplex because bytes of several old channels arrive on
one new channel (:mod:`flinkstate.rescale.virtual_channels`), and which of them need record
filtering. The recovery model and the Spark pipeline both read this plan rather than
re-deriving it.

The plan lists every virtual channel and state handle, which grows with the product of the
parallelisms (tens of millions at 5000 subtasks). :func:`summarise_exchange` answers the same
questions in ranges, at a cost that grows with the parallelisms alone: what shows or sizes a
large plan (the ``mapping`` command, the rescale explorer) reads that instead.
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
from flinkstate.rescale.mapper import UNSUPPORTED_MESSAGE, MapperRanges, SubtaskStateMapper
from flinkstate.rescale.mappings import RescaleMappings
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.rescale.reassignment import (
    ConsumerInputs,
    InputReassignment,
    input_state_redistributed,
    output_state_redistributed,
)
from flinkstate.rescale.virtual_channels import VirtualChannel, virtual_channels


@dataclass(frozen=True)
class DownstreamSubtaskRescale:
    """What new downstream subtask ``subtask`` recovers on its input gate.

    Examples
    --------
    New subtask 0 after a keyBy exchange went from 3 to 2 subtasks on both sides (Flink's
    ``StateAssignmentOperationTest``): it recovers the input state of old subtasks 0 and 1 and
    filters old subtask 1's records, which new subtask 1 reads too:

    >>> consumer = rescale_exchange("keyBy", (3, 2), (3, 2)).downstream[0]
    >>> consumer.input_state_from, consumer.demultiplexes, consumer.filters
    ((0, 1), True, True)

    Buffers of old channel 2 (old upstream subtask 2) arrive on new channel 0:

    >>> consumer.new_channel(2)
    0
    >>> consumer.filters_virtual_channel(0, 1, 2), consumer.filters_virtual_channel(0, 0, 2)
    (True, False)
    """

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
    """What new upstream subtask ``subtask`` recovers into its result partition.

    Examples
    --------
    New upstream subtask 0 after a keyBy exchange went from 3 to 2 subtasks on both sides: it
    recovers the output state of old subtasks 0 and 2, and a buffer of old subpartition 1 (for old
    downstream subtask 1, now shared by new subtasks 0 and 1) goes into both new subpartitions:

    >>> producer = rescale_exchange("keyBy", (3, 2), (3, 2)).upstream[0]
    >>> producer.output_state_from, producer.new_subpartitions(1)
    ((0, 2), (0, 1))
    """

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
    """The rescale of one exchange, with the answer for every new subtask on both sides.

    Examples
    --------
    >>> plan = rescale_exchange("keyBy", (3, 2), (3, 2))
    >>> plan.carries_channel_state, plan.filters
    (True, True)
    >>> print(plan.input_mapping, plan.output_mapping)
    [[0, 1], [1, 2]] [[0, 2], [1]]

    A rebalance never filters; a forward exchange carries nothing at all:

    >>> rescale_exchange("rebalance", (3, 2), (3, 2)).filters
    False
    >>> forward = rescale_exchange("forward", (2, 2), (2, 2))
    >>> forward.carries_channel_state, forward.note  # doctest: +ELLIPSIS
    (False, 'forward() is a pointwise exchange: Flink aligns its barriers, ...')
    """

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
    #: the partitioner of the other edge whose mappings the descriptors took for the other
    #: side's channels (before FLINK-40269, in a job connecting two operators twice); None
    #: when they are this exchange's own
    connected: Partitioner | None = None

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
    connected: Partitioner | str | None = None,
    consumer_inputs: ConsumerInputs | None = None,
    reassignment: InputReassignment | str = InputReassignment.FULL_MAPPER,
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
    ``connected``: the partitioner of the edge whose mappings each descriptor takes for the
    other side's channels (a gate's from the upstream's partition, a partition's from the
    downstream's gate). None: this exchange's own, as Flink finds them since FLINK-40269 (by
    the intermediate data set); before, Flink took the first edge between the two operators,
    another one's when a job connects them twice.
    ``consumer_inputs``: every input of the downstream operator, from which Flink decides
    once for all of them whether its input state is split anew (``reassignment``, the
    version of that rule: :func:`~flinkstate.rescale.reassignment.input_state_redistributed`);
    None: this exchange is its only input.

    Examples
    --------
    Flink's ``StateAssignmentOperationTest``, a keyBy exchange downscaled from 3 to 2 subtasks on
    both sides: new downstream subtask ``i`` reads the input state of the old subtasks whose key
    groups overlap its own, new upstream subtask ``i`` the output state of old subtasks ``i`` and
    ``i + 2``:

    >>> plan = rescale_exchange("keyBy", (3, 2), (3, 2))
    >>> [d.input_state_from for d in plan.downstream], [u.output_state_from for u in plan.upstream]
    ([(0, 1), (1, 2)], [(0, 2), (1,)])

    With ``recover-output-on-downstream``, the downstream subtasks read the upstream's output state
    themselves, as (old upstream subtask, old subpartition) pairs:

    >>> plan = rescale_exchange("keyBy", (3, 2), (3, 2), recover_output_on_downstream=True)
    >>> plan.downstream[1].upstream_output_state_from
    ((0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2))

    A pointwise exchange forced unaligned cannot be rescaled, as in Flink:

    >>> rescale_exchange("rescale", (2, 3), (2, 3), unaligned_forced=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.UnsupportedRescaleError: Cannot rescale the given pointwise partitioner.
    ...
    """
    kind, (up_old, up_new), (down_old, down_new) = _checked(partitioner, upstream, downstream)
    other = kind if connected is None else Partitioner.parse(connected)
    if _aligned(kind, (up_old, up_new), (down_old, down_new), unaligned_forced, aligned_by_graph):
        return _without_channel_state(
            kind,
            (up_old, up_new),
            (down_old, down_new),
            recover_output_on_downstream,
            unaligned_forced,
        )

    input_mapping = kind.downstream_mapper.new_to_old(down_old, down_new)
    output_mapping = kind.upstream_mapper.new_to_old(up_old, up_new)
    # the other side's mapping each descriptor carries: the gate's channels are the upstream's
    # subtasks, the partition's subpartitions the downstream's
    if other is kind:
        gate_channels, partition_channels = output_mapping, input_mapping
    else:
        gate_channels = other.upstream_mapper.new_to_old(up_old, up_new)
        partition_channels = other.downstream_mapper.new_to_old(down_old, down_new)
    input_redistributed, output_redistributed = _redistributed(
        kind, (up_old, up_new), (down_old, down_new), consumer_inputs, reassignment
    )
    plan = _Mappings(
        kind,
        (up_old, up_new),
        (down_old, down_new),
        input_mapping,
        output_mapping,
        gate_channels,
        partition_channels,
        input_redistributed,
        output_redistributed,
        recover_output_on_downstream,
    )
    upstream_plans = _upstream_plans(plan)
    return ExchangeRescale(
        partitioner=kind,
        upstream_parallelism=(up_old, up_new),
        downstream_parallelism=(down_old, down_new),
        recover_output_on_downstream=recover_output_on_downstream,
        carries_channel_state=True,
        note="" if plan.rescaled else UNCHANGED_NOTE,
        input_mapping=input_mapping,
        output_mapping=output_mapping,
        downstream=_downstream_plans(plan),
        upstream=upstream_plans,
        connected=None if other is kind else other,
    )


@dataclass(frozen=True)
class _Mappings:
    """What :func:`rescale_exchange` decided before planning each subtask: the mappings of
    both sides, the other side's each descriptor carries, and which side is redistributed."""

    kind: Partitioner
    upstream: tuple[int, int]
    downstream: tuple[int, int]
    input_mapping: RescaleMappings
    output_mapping: RescaleMappings
    gate_channels: RescaleMappings
    partition_channels: RescaleMappings
    input_redistributed: bool
    output_redistributed: bool
    recover_output_on_downstream: bool

    @property
    def rescaled(self) -> bool:
        return self.input_redistributed or self.output_redistributed


def _descriptor(
    rescaled: bool,
    own: RescaleMappings,
    mapper: SubtaskStateMapper,
    connected: RescaleMappings,
    index: int,
) -> GateOrPartitionRescalingDescriptor:
    """The rescaling descriptor of new gate or partition ``index``: none where nothing was
    rescaled, both mappings are identities or it reads no old state."""
    if not rescaled:
        return NO_RESCALE
    old = own.mapped_indexes(index)
    if (own.is_identity and connected.is_identity) or not old:
        return NO_RESCALE
    ambiguous = own.ambiguous_targets() if mapper.is_ambiguous else frozenset()
    return GateOrPartitionRescalingDescriptor(old, connected, ambiguous, MappingType.RESCALING)


def _upstream_plans(plan: _Mappings) -> tuple[UpstreamSubtaskRescale, ...]:
    """Each new upstream subtask's output state (none where the downstream recovers it) and
    its partition's descriptor."""
    kind, output_mapping = plan.kind, plan.output_mapping
    return tuple(
        UpstreamSubtaskRescale(
            subtask=index,
            output_state_from=(
                ()
                if plan.recover_output_on_downstream
                else (
                    output_mapping.mapped_indexes(index) if plan.output_redistributed else (index,)
                )
            ),
            descriptor=_descriptor(
                plan.rescaled, output_mapping, kind.upstream_mapper, plan.partition_channels, index
            ),
        )
        for index in range(plan.upstream[1])
    )


def _downstream_plans(plan: _Mappings) -> tuple[DownstreamSubtaskRescale, ...]:
    """Each new downstream subtask's input state, the upstream output state it recovers, its
    gate's descriptor and the virtual channels of each of its channels."""
    (up_old, up_new), (down_old, down_new) = plan.upstream, plan.downstream
    input_mapping = plan.input_mapping
    # Old subpartition s (= old downstream subtask s) goes to the new downstream subtasks that
    # read old downstream subtask s (the partition's channel mapping, inverted:
    # ``ResultSubpartitionDistributor``); identity when nothing rescaled.
    subpartition_readers = (
        plan.partition_channels.invert()
        if plan.rescaled
        else RescaleMappings.identity(down_old, down_new)
    )
    downstream_plans = []
    for index in range(down_new):
        gate = _descriptor(
            plan.rescaled, input_mapping, plan.kind.downstream_mapper, plan.gate_channels, index
        )
        input_from = input_mapping.mapped_indexes(index) if plan.input_redistributed else (index,)
        if gate is NO_RESCALE:
            # Channels map to themselves: new channel c reads old channel c, no demultiplexing
            # (virtual_channels gives none, as Flink's create does); the plan still names the
            # (old subtask, channel) pair of each channel's bytes.
            channels = tuple(
                tuple(VirtualChannel(old, channel) for old in input_from if channel < up_old)
                for channel in range(up_new)
            )
        else:
            channels = tuple(virtual_channels(gate, channel) for channel in range(up_new))
        upstream_output: tuple[tuple[int, int], ...] = ()
        if plan.recover_output_on_downstream:
            upstream_output = tuple(
                (old_upstream, old_subpartition)
                for old_upstream in range(up_old)
                for old_subpartition in range(down_old)
                if index in subpartition_readers.mapped_indexes(old_subpartition)
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
    return tuple(downstream_plans)


def _without_channel_state(
    kind: Partitioner,
    upstream: tuple[int, int],
    downstream: tuple[int, int],
    recover_output_on_downstream: bool,
    unaligned_forced: bool,
) -> ExchangeRescale:
    return ExchangeRescale(
        partitioner=kind,
        upstream_parallelism=upstream,
        downstream_parallelism=downstream,
        recover_output_on_downstream=recover_output_on_downstream,
        carries_channel_state=unaligned_forced,
        note=_aligned_note(kind, unaligned_forced),
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


#: the note of an exchange whose parallelism did not change on either side
UNCHANGED_NOTE = "parallelism unchanged: every subtask reads its own state"


def _checked(
    partitioner: Partitioner | str, upstream: tuple[int, int], downstream: tuple[int, int]
) -> tuple[Partitioner, tuple[int, int], tuple[int, int]]:
    """The partitioner and both sides' parallelisms, refused as Flink refuses them."""
    kind = Partitioner.parse(partitioner)
    up_old, up_new = (check_parallelism(p, "upstream parallelism") for p in upstream)
    down_old, down_new = (check_parallelism(p, "downstream parallelism") for p in downstream)
    if kind is Partitioner.FORWARD and (up_old != down_old or up_new != down_new):
        raise InvalidParameterError(
            "forward partitioning does not allow a change of parallelism between upstream "
            f"({up_old} -> {up_new}) and downstream ({down_old} -> {down_new}); use "
            "rebalance, shuffle, broadcast or global"
        )
    return kind, (up_old, up_new), (down_old, down_new)


def _aligned(
    kind: Partitioner,
    upstream: tuple[int, int],
    downstream: tuple[int, int],
    unaligned_forced: bool,
    aligned_by_graph: bool,
) -> bool:
    """True when the exchange's barriers are aligned, so it has no channel state to split
    (with ``unaligned_forced``, a rescale of it is refused as Flink refuses it)."""
    if kind.supports_unaligned_checkpoint and not (aligned_by_graph and not unaligned_forced):
        return False
    rescaled = upstream[0] != upstream[1] or downstream[0] != downstream[1]
    if unaligned_forced and rescaled:
        raise UnsupportedRescaleError(UNSUPPORTED_MESSAGE)
    return True


def _redistributed(
    kind: Partitioner,
    upstream: tuple[int, int],
    downstream: tuple[int, int],
    consumer_inputs: ConsumerInputs | None,
    reassignment: InputReassignment | str,
) -> tuple[bool, bool]:
    """Whether the input state and the output state are split anew, as Flink decides it for
    the consuming and the producing vertex (:mod:`flinkstate.rescale.reassignment`);
    without ``consumer_inputs`` this exchange is the consumer's only input."""
    inputs = consumer_inputs or ConsumerInputs.of([(kind, upstream[1])])
    return (
        input_state_redistributed(downstream, inputs, reassignment),
        output_state_redistributed(upstream),
    )


def _aligned_note(kind: Partitioner, unaligned_forced: bool) -> str:
    shape = "pointwise" if kind.is_pointwise else "broadcast"
    if unaligned_forced:
        return f"{kind.datastream_call} is {shape}; forced unaligned but not rescaled"
    if kind.supports_unaligned_checkpoint:
        return (
            f"{kind.datastream_call} feeds an operator that also reads a pointwise or broadcast "
            "exchange: Flink aligns all of its inputs, so nothing is persisted or recovered here"
        )
    return (
        f"{kind.datastream_call} is a {shape} exchange: Flink aligns its barriers, so "
        "unaligned checkpoints persist no in-flight data for it and nothing is recovered"
    )


# --- the same plan in ranges ----------------------------------------------------------------


@dataclass(frozen=True)
class VirtualChannelBlock:
    """The virtual channels (old subtask, old channel) of every old subtask in
    ``old_subtasks`` and every old channel in ``old_channels``, all filtered or none.

    A new subtask's virtual channels are always such a product (each old subtask it reads, by
    every old channel that reaches it), so a few blocks describe millions of them.

    Examples
    --------
    New subtask 0 after a keyBy exchange went from 3 to 2 subtasks on both sides demultiplexes
    the three old channels of old subtask 0 as they are, and those of old subtask 1 filtered:

    >>> for block in summarise_exchange("keyBy", (3, 2), (3, 2)).downstream[0].virtual_channels:
    ...     print(block, block.size)
    VirtualChannelBlock(old_subtasks=range(0, 1), old_channels=range(0, 3), filtered=False) 3
    VirtualChannelBlock(old_subtasks=range(1, 2), old_channels=range(0, 3), filtered=True) 3
    """

    old_subtasks: range
    old_channels: range
    filtered: bool

    @property
    def size(self) -> int:
        return len(self.old_subtasks) * len(self.old_channels)


@dataclass(frozen=True)
class DownstreamSubtaskSummary:
    """:class:`DownstreamSubtaskRescale` in ranges and counts.

    Examples
    --------
    A keyBy's downstream going from 5000 to 4000 subtasks (upstream 5000 on both sides): new
    subtask 1 reads two old subtasks, both shared with its neighbours, by all 5000 old channels:

    >>> summary = summarise_exchange("keyBy", (5000, 5000), (5000, 4000))
    >>> consumer = summary.downstream[1]
    >>> consumer.input_state_from, consumer.filters, consumer.number_of_virtual_channels
    (range(1, 3), True, 10000)
    """

    subtask: int
    input_state_from: range
    upstream_output_handles: int
    virtual_channels: tuple[VirtualChannelBlock, ...]
    #: records are read per virtual channel (the gate was rescaled)
    demultiplexes: bool

    @property
    def filters(self) -> bool:
        return any(block.filtered for block in self.virtual_channels)

    @property
    def number_of_virtual_channels(self) -> int:
        return sum(block.size for block in self.virtual_channels)


@dataclass(frozen=True)
class UpstreamSubtaskSummary:
    """:class:`UpstreamSubtaskRescale` in ranges.

    Examples
    --------
    A keyBy's upstream going from 5000 to 4000 subtasks: its ARBITRARY (round-robin) mapper gives
    new subtask 7 the output state of old subtasks 7 and 4007:

    >>> summary = summarise_exchange("keyBy", (5000, 4000), (5000, 5000))
    >>> summary.upstream[7].output_state_from
    range(7, 5000, 4000)
    >>> list(summary.upstream[7].output_state_from)
    [7, 4007]
    """

    subtask: int
    output_state_from: range


@dataclass(frozen=True)
class ExchangeSummary:
    """What :func:`rescale_exchange` answers, in ranges and counts, computed in time and
    memory proportional to the parallelisms: a plan at parallelism 5000 lists tens of millions
    of virtual channels and upstream output handles, this a few blocks per subtask.

    Examples
    --------
    The plan of a keyBy whose downstream goes from 5000 to 4000 subtasks lists 40 million virtual
    channels; its summary counts them without listing them:

    >>> summary = summarise_exchange("keyBy", (5000, 5000), (5000, 4000))
    >>> summary.virtual_channels, summary.plan_size, len(summary.ambiguous_old_subtasks)
    (40000000, 72026000, 3000)
    """

    partitioner: Partitioner
    upstream_parallelism: tuple[int, int]
    downstream_parallelism: tuple[int, int]
    recover_output_on_downstream: bool
    carries_channel_state: bool
    note: str
    #: the old downstream subtasks that several new ones read (their records are filtered)
    ambiguous_old_subtasks: frozenset[int]
    #: (new, old) pairs of the input and the output mapping
    mapping_pairs: int
    downstream: tuple[DownstreamSubtaskSummary, ...]
    upstream: tuple[UpstreamSubtaskSummary, ...]

    @property
    def virtual_channels(self) -> int:
        return sum(d.number_of_virtual_channels for d in self.downstream)

    @property
    def plan_size(self) -> int:
        """Roughly how many values the full plan holds (and a listing of it prints): state
        handles, channels and virtual channels of every subtask, the mappings' pairs and the
        ambiguous subtasks every rescaled gate names. Its cost grows with this."""
        channels = self.upstream_parallelism[1]
        downstream = sum(
            len(d.input_state_from)
            + d.upstream_output_handles
            + channels
            + d.number_of_virtual_channels
            + (len(self.ambiguous_old_subtasks) if d.demultiplexes else 0)
            for d in self.downstream
        )
        return (
            downstream + sum(len(u.output_state_from) for u in self.upstream) + self.mapping_pairs
        )


def summarise_exchange(
    partitioner: Partitioner | str,
    upstream: tuple[int, int],
    downstream: tuple[int, int],
    *,
    recover_output_on_downstream: bool = False,
    unaligned_forced: bool = False,
    aligned_by_graph: bool = False,
    consumer_inputs: ConsumerInputs | None = None,
    reassignment: InputReassignment | str = InputReassignment.FULL_MAPPER,
) -> ExchangeSummary:
    """:func:`rescale_exchange`'s answer in ranges: the same checks and the same decisions
    (which gates are rescaled, which old subtasks are filtered), cheap at any parallelism, so
    a plan too large to list can still be shown.

    Examples
    --------
    The answer of :func:`rescale_exchange` in ranges, for the same downscale from 3 to 2:

    >>> summary = summarise_exchange("keyBy", (3, 2), (3, 2))
    >>> [d.input_state_from for d in summary.downstream], sorted(summary.ambiguous_old_subtasks)
    ([range(0, 2), range(1, 3)], [1])
    >>> [u.output_state_from for u in summary.upstream]
    [range(0, 3, 2), range(1, 3, 2)]
    """
    kind, (up_old, up_new), (down_old, down_new) = _checked(partitioner, upstream, downstream)
    up, down = (up_old, up_new), (down_old, down_new)
    if _aligned(kind, up, down, unaligned_forced, aligned_by_graph):
        return _aligned_summary(kind, up, down, recover_output_on_downstream, unaligned_forced)
    inputs = kind.downstream_mapper.ranges(down_old, down_new)
    outputs = kind.upstream_mapper.ranges(up_old, up_new)
    input_redistributed, output_redistributed = _redistributed(
        kind, up, down, consumer_inputs, reassignment
    )
    rescaled = input_redistributed or output_redistributed
    upstream_summaries = tuple(
        UpstreamSubtaskSummary(
            index,
            range(0)
            if recover_output_on_downstream
            else (outputs.new_to_old[index] if output_redistributed else range(index, index + 1)),
        )
        for index in range(up_new)
    )
    return ExchangeSummary(
        partitioner=kind,
        upstream_parallelism=up,
        downstream_parallelism=down,
        recover_output_on_downstream=recover_output_on_downstream,
        carries_channel_state=True,
        note="" if rescaled else UNCHANGED_NOTE,
        ambiguous_old_subtasks=inputs.ambiguous,
        mapping_pairs=inputs.pairs + outputs.pairs,
        downstream=_downstream_summaries(
            inputs,
            up,
            down,
            rescaled,
            rescaled and not (inputs.is_identity and outputs.is_identity),
            input_redistributed,
            recover_output_on_downstream,
        ),
        upstream=upstream_summaries,
    )


def _aligned_summary(
    kind: Partitioner,
    up: tuple[int, int],
    down: tuple[int, int],
    recover_output_on_downstream: bool,
    unaligned_forced: bool,
) -> ExchangeSummary:
    """An exchange checkpointed aligned: no channel state (or, forced unaligned, each subtask
    its own, where rescaling it fails)."""
    return ExchangeSummary(
        partitioner=kind,
        upstream_parallelism=up,
        downstream_parallelism=down,
        recover_output_on_downstream=recover_output_on_downstream,
        carries_channel_state=unaligned_forced,
        note=_aligned_note(kind, unaligned_forced),
        ambiguous_old_subtasks=frozenset(),
        mapping_pairs=0,
        downstream=tuple(
            DownstreamSubtaskSummary(
                index,
                range(index, index + 1) if unaligned_forced else range(0),
                0,
                (),
                False,
            )
            for index in range(down[1])
        ),
        upstream=tuple(
            UpstreamSubtaskSummary(index, range(index, index + 1) if unaligned_forced else range(0))
            for index in range(up[1])
        ),
    )


def _downstream_summaries(
    inputs: MapperRanges,
    up: tuple[int, int],
    down: tuple[int, int],
    rescaled: bool,
    gates_rescale: bool,
    input_redistributed: bool,
    recover_output_on_downstream: bool,
) -> tuple[DownstreamSubtaskSummary, ...]:
    """Each new downstream subtask's input state, upstream output handles and virtual channels
    in blocks; ``gates_rescale``: a gate reading old state is rescaled (not both mappings
    identities)."""
    (up_old, up_new), (down_old, down_new) = up, down
    # Every mapper hands each old upstream subtask to some new one, so a rescaled gate's new
    # channels together carry every old channel.
    all_old_channels = range(up_old)
    unrescaled_channels = range(min(up_old, up_new))
    downstream_summaries = []
    for index in range(down_new):
        own = inputs.new_to_old[index]
        input_from = own if input_redistributed else range(index, index + 1)
        gate_rescaled = gates_rescale and len(own) > 0
        if gate_rescaled:
            blocks = tuple(
                VirtualChannelBlock(run, all_old_channels, filtered)
                for run, filtered in inputs.runs(index)
            )
        else:
            blocks = tuple(
                VirtualChannelBlock(range(old, old + 1), unrescaled_channels, False)
                for old in input_from
            )
        handles = 0
        if recover_output_on_downstream:
            # old subpartition s goes to the new subtasks reading old downstream subtask s
            read = len(own) if rescaled else int(index < down_old)
            handles = up_old * read
        downstream_summaries.append(
            DownstreamSubtaskSummary(
                index,
                input_from,
                handles,
                tuple(block for block in blocks if block.size),
                gate_rescaled,
            )
        )
    return tuple(downstream_summaries)
