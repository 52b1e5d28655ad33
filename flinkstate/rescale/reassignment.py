"""Whether a restored operator's channel state stays with its subtask or is split anew.

Flink's JobManager decides this in ``StateAssignmentOperation``: for the output
(subpartition) state in ``reDistributeResultSubpartitionStates``, from the producer's own
parallelism alone; for the input channel state in ``reDistributeInputChannelStates``, once
per consuming job vertex over all of its inputs, not per exchange. Kept in place, each new
subtask restores its own old subtask's state as it is; split anew, each of its gates with
in-flight data is split by that gate's downstream mapper.

The input rule changed with FLINK-35351 (master's commit 691ce18e484, Flink 1.19.1): before, only a
change of the consumer's own parallelism split its input state. A custom partitioner's FULL
mapper copies every old subpartition to every new consumer once the producer is rescaled,
so a consumer kept at its parallelism then met the second half of records whose first half
stayed in another subtask's input state, and the restore failed. Since the fix, a vertex
with an input on the FULL mapper is split anew when some producer's new parallelism differs
from the consumer's *old* one: Flink compares those two numbers, not a producer's old and
new parallelism, so a producer rescaled to the consumer's parallelism does not split it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from flinkstate.choice import Choice
from flinkstate.errors import InvalidParameterError
from flinkstate.keygroups import check_parallelism
from flinkstate.rescale.mapper import SubtaskStateMapper
from flinkstate.rescale.mappings import RescaleMappings
from flinkstate.rescale.partitioner import Partitioner


class InputReassignment(Choice):
    """Which Flink code decides whether a consumer's input channel state is split anew.

    ``flink-1.19.0`` (and every release before it): only when the consumer's own
    parallelism changed. ``flink-1.19.1`` (FLINK-35351; 1.20, 2.x and master too, and the
    1.18 branch): also when an input of the consumer uses the FULL mapper (a custom
    partitioner) and some producer's new parallelism differs from the consumer's old one.

    Examples
    --------
    >>> InputReassignment.parse("flink-1.19.0") is InputReassignment.OWN_PARALLELISM
    True
    """

    OWN_PARALLELISM = "flink-1.19.0"
    FULL_MAPPER = "flink-1.19.1"


@dataclass(frozen=True)
class ConsumerInputs:
    """What Flink's input rule reads of the consuming job vertex: whether any of its inputs
    (aligned or not) uses the FULL mapper, and each input's producer's new parallelism.

    Examples
    --------
    A consumer fed by a custom partitioner from a producer now at 2 and by a rebalance from
    one now at 3:

    >>> ConsumerInputs.of([("partitionCustom", 2), ("rebalance", 3)])
    ConsumerInputs(full_mapper=True, producer_parallelisms=(2, 3))
    """

    full_mapper: bool
    producer_parallelisms: tuple[int, ...]

    @classmethod
    def of(cls, inputs: Iterable[tuple[Partitioner | str, int]]) -> ConsumerInputs:
        """From each input's partitioner and its producer's new parallelism."""
        pairs = [(Partitioner.parse(kind), check_parallelism(p, "producer")) for kind, p in inputs]
        return cls(
            any(kind.downstream_mapper is SubtaskStateMapper.FULL for kind, _ in pairs),
            tuple(p for _, p in pairs),
        )


def input_state_redistributed(
    consumer: tuple[int, int],
    inputs: ConsumerInputs,
    rule: InputReassignment | str = InputReassignment.FULL_MAPPER,
) -> bool:
    """Whether the consumer's input channel state is split anew rather than kept by each
    subtask: Flink's ``StateAssignmentOperation.reDistributeInputChannelStates``, decided
    once for the consuming vertex. ``consumer`` is its (old, new) parallelism.

    Examples
    --------
    ``StateAssignmentOperationTest#testChannelStateAssignmentTwoGatesPartiallyDownscaling``:
    the consumer stays at 3, its custom-partitioned producer goes to 2. Flink 1.19.0 keeps
    each subtask's input state; since FLINK-35351 it is split anew:

    >>> inputs = ConsumerInputs.of([("partitionCustom", 2), ("rebalance", 2)])
    >>> [input_state_redistributed((3, 3), inputs, rule) for rule in InputReassignment]
    [False, True]

    The producer's new parallelism is compared with the consumer's old one: a producer
    going from 3 to 2 into a consumer kept at 2 leaves its state in place, a producer kept
    at 2 feeding a consumer kept at 3 does not:

    >>> input_state_redistributed((2, 2), ConsumerInputs.of([("partitionCustom", 2)]))
    False
    >>> input_state_redistributed((3, 3), ConsumerInputs.of([("partitionCustom", 2)]))
    True
    """
    old, new = consumer
    if old != new:
        return True
    if InputReassignment.parse(rule) is InputReassignment.OWN_PARALLELISM:
        return False
    return inputs.full_mapper and any(p != old for p in inputs.producer_parallelisms)


def output_state_redistributed(producer: tuple[int, int]) -> bool:
    """Whether the producer's output (subpartition) state is split anew: Flink's
    ``reDistributeResultSubpartitionStates`` asks the producer's own parallelism only, in
    every version (FLINK-35351 left it as it was).

    Examples
    --------
    >>> output_state_redistributed((3, 2)), output_state_redistributed((2, 2))
    (True, False)
    """
    return producer[0] != producer[1]


class StatelessAssignment(Choice):
    """Which Flink code assigns state to a job vertex with no state of its own (Flink's
    ``StateAssignmentOperation.assignStates`` over each ``TaskStateAssignment``).

    ``flink-1.15.0`` (and before): such a vertex is neither repartitioned nor assigned
    anything, so its subtasks restore nothing, not even a rescaling descriptor.
    ``flink-1.17.0`` (FLINK-27031, in 1.15.1 up to 1.16.1 and 1.17.0): it is assigned (empty)
    state when an upstream vertex has output state, but still not repartitioned, so no
    channel mapping of its own is computed. ``flink-1.17.1`` (FLINK-31963, in 1.16.2, 1.17.1
    and every release since): it is repartitioned and assigned when an upstream vertex has
    output state or a downstream vertex has input state.

    Examples
    --------
    >>> [rule.value for rule in StatelessAssignment]
    ['flink-1.15.0', 'flink-1.17.0', 'flink-1.17.1']
    """

    NOT_ASSIGNED = "flink-1.15.0"
    ASSIGNED = "flink-1.17.0"
    REPARTITIONED = "flink-1.17.1"


@dataclass(frozen=True)
class VertexState:
    """What ``TaskStateAssignment`` knows of one job vertex's old state when it decides.

    ``own``: any state at all (Flink's ``hasNonFinishedState``: operator, keyed or channel
    state in some old subtask); ``input`` and ``output``: input channel state, result
    subpartition state; ``upstream_output``: some vertex it reads has output state
    (``hasUpstreamOutputStates``); ``downstream_input``: some vertex reading it has input
    state (``hasDownstreamInputStates``).

    Examples
    --------
    A sink with nothing of its own behind a source whose subpartitions held buffers:

    >>> VertexState.stateless(upstream_output=True).own
    False
    """

    own: bool
    input: bool
    output: bool
    upstream_output: bool
    downstream_input: bool

    @classmethod
    def stateless(
        cls, *, upstream_output: bool = False, downstream_input: bool = False
    ) -> VertexState:
        """A vertex with no state of its own, beside neighbours with channel state or not."""
        return cls(False, False, False, upstream_output, downstream_input)


def state_assigned(
    vertex: VertexState, rule: StatelessAssignment | str = StatelessAssignment.REPARTITIONED
) -> bool:
    """Whether the vertex's subtasks get a restore at all (Flink's
    ``assignTaskStateToExecutionJobVertices``); without one a subtask starts with no
    rescaling descriptor, as if nothing was rescaled.

    Examples
    --------
    ``StateAssignmentOperationTest#testOnlyUpstreamChannelStateAssignment``: a vertex without
    state whose upstream has output state gets a restore since FLINK-27031, not before:

    >>> sink = VertexState.stateless(upstream_output=True)
    >>> [state_assigned(sink, rule) for rule in StatelessAssignment]
    [False, True, True]
    """
    rule = StatelessAssignment.parse(rule)
    if vertex.own or (rule is not StatelessAssignment.NOT_ASSIGNED and vertex.upstream_output):
        return True
    return rule is StatelessAssignment.REPARTITIONED and vertex.downstream_input


def _repartitioned(vertex: VertexState, rule: StatelessAssignment) -> bool:
    """Whether ``assignAttemptState`` runs for the vertex (its state is split anew)."""
    if vertex.own:
        return True
    return rule is StatelessAssignment.REPARTITIONED and (
        vertex.upstream_output or vertex.downstream_input
    )


def input_mapping_computed(
    vertex: VertexState,
    redistributed: bool,
    rule: StatelessAssignment | str = StatelessAssignment.REPARTITIONED,
) -> bool:
    """Whether ``reDistributeInputChannelStates`` computes the vertex's gate mappings: it
    runs for a repartitioned vertex with input state (since FLINK-31963: or with upstream
    output state), and computes them only where the input state is split anew
    (``redistributed``, :func:`input_state_redistributed`).

    Examples
    --------
    ``testOnlyUpstreamChannelRescaleStateAssignment``: a stateless consumer downscaled 5 -> 3
    behind a producer with output state computes its mapping since FLINK-31963 only:

    >>> consumer = VertexState.stateless(upstream_output=True)
    >>> [input_mapping_computed(consumer, True, rule) for rule in StatelessAssignment]
    [False, False, True]
    """
    rule = StatelessAssignment.parse(rule)
    if not (redistributed and _repartitioned(vertex, rule)):
        return False
    return vertex.input or (rule is StatelessAssignment.REPARTITIONED and vertex.upstream_output)


def output_mapping_computed(
    vertex: VertexState,
    redistributed: bool,
    rule: StatelessAssignment | str = StatelessAssignment.REPARTITIONED,
) -> bool:
    """Whether ``reDistributeResultSubpartitionStates`` computes the vertex's partition
    mappings: for a repartitioned vertex with output state (since FLINK-31963: or with
    downstream input state) whose own parallelism changed (``redistributed``).

    Examples
    --------
    ``testOnlyDownstreamChannelRescaleStateAssignment``: a stateless producer downscaled
    5 -> 3 in front of a consumer with input state:

    >>> producer = VertexState.stateless(downstream_input=True)
    >>> [output_mapping_computed(producer, True, rule) for rule in StatelessAssignment]
    [False, False, True]
    """
    rule = StatelessAssignment.parse(rule)
    if not (redistributed and _repartitioned(vertex, rule)):
        return False
    return vertex.output or (rule is StatelessAssignment.REPARTITIONED and vertex.downstream_input)


class MappingScope(Choice):
    """Whether Flink keeps one subtask mapping per job vertex or one per gate and partition.

    ``flink-1.13.0`` (and before): ``TaskStateAssignment`` held a single input mapping for
    all of a vertex's gates and a single output mapping for all of its partitions, assuming
    the old subtasks are the same for every gate; a second gate whose mapper gave another
    mapping failed the restore. ``flink-1.13.1`` (FLINK-22686, 1.14 and every release
    since): one mapping per gate and per partition, each descriptor its own old subtasks.

    Examples
    --------
    >>> [scope.value for scope in MappingScope]
    ['flink-1.13.0', 'flink-1.13.1']
    """

    VERTEX = "flink-1.13.0"
    GATE = "flink-1.13.1"


def check_subtask_mappings(
    mappings: Sequence[RescaleMappings], scope: MappingScope | str = MappingScope.GATE
) -> None:
    """Refuse, as Flink before FLINK-22686 did, the mappings of one vertex's gates (or
    partitions) computed while splitting its channel state anew, when they differ: its one
    mapping per vertex took the first and compared every later one with it. Since the fix
    each gate keeps its own and nothing is compared.

    Examples
    --------
    ``StateAssignmentOperationTest#testChannelStateAssignmentDownscalingTwoDifferentGates``:
    a consumer going from 3 to 2 with a keyBy gate (RANGE) and a rebalance gate (ROUND_ROBIN):

    >>> gates = [SubtaskStateMapper.RANGE.new_to_old(3, 2),
    ...          SubtaskStateMapper.ROUND_ROBIN.new_to_old(3, 2)]
    >>> check_subtask_mappings(gates)
    >>> try:
    ...     check_subtask_mappings(gates, "flink-1.13.0")
    ... except InvalidParameterError as refused:
    ...     print(str(refused).split("?")[-1])
    Found [[0, 1], [1, 2]] and [[0, 2], [1]].
    """
    if MappingScope.parse(scope) is MappingScope.GATE:
        return
    first = next(iter(mappings), None)
    for mapping in mappings:
        if mapping != first:
            raise InvalidParameterError(
                "java.lang.IllegalStateException: Incompatible subtask mappings: are multiple "
                "operators ingesting/producing intermediate results with varying degrees of "
                f"parallelism?Found {first} and {mapping}."
            )
