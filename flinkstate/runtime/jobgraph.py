"""The job graph: operators with parallelism and cost, and the exchanges between them."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from enum import StrEnum

from flinkstate.errors import InvalidParameterError
from flinkstate.keygroups import (
    check_parallelism,
    check_parallelism_against_max,
    compute_default_max_parallelism,
)
from flinkstate.rescale.partitioner import Partitioner


class OperatorKind(StrEnum):
    """What an operator is to the job: a source, a map, a keyed operator or a sink.

    Examples
    --------
    A keyed operator is fed by keyBy exchanges; its kind reads as the text a scenario gives it:

    >>> OperatorKind("keyed") is OperatorKind.KEYED
    True
    >>> [str(kind) for kind in OperatorKind]
    ['source', 'map', 'keyed', 'sink']
    """

    SOURCE = "source"
    MAP = "map"
    KEYED = "keyed"
    SINK = "sink"


@dataclass(frozen=True)
class Operator:
    """One operator (a task chain in Flink terms) and its parallel subtasks.

    ``cost`` is the number of extra steps a subtask spends per record: where it is high,
    back-pressure builds upstream. Sources emit ``records_per_subtask`` records with keys drawn
    from ``key_space`` and payloads of ``record_size`` bytes (a range draws uniformly).

    ``sequential_inputs``: the operator reads selectively (Flink's ``InputSelectable``, as
    ``StreamTaskSelectiveReadingITCase.testSequentialReading``'s operator): input 0 only, until
    it has ended (``EndOfPartitionEvent`` on every channel of its gate), then input 1, and so
    on. The selection holds during recovery too: an unselected input's channels, recovered or
    not, are not polled at all. Only priority events (unaligned barriers) are still handled
    there, as Flink handles them outside the input selection.

    Examples
    --------
    Without a max parallelism, an operator of parallelism 4 gets Flink's default of 128 key
    groups (``KeyGroupRangeAssignment.computeDefaultMaxParallelism``):

    >>> keyed = Operator("keyed", 4, OperatorKind.KEYED)
    >>> keyed.effective_max_parallelism
    128
    >>> keyed.subtask_name(2)
    'keyed[2]'
    """

    name: str
    parallelism: int
    kind: OperatorKind = OperatorKind.MAP
    cost: int = 0
    max_parallelism: int | None = None
    records_per_subtask: int = 0
    key_space: int = 1000
    record_size: tuple[int, int] = (100, 100)
    sequential_inputs: bool = False
    #: a source's watermarks: one after every ``watermark_interval`` records it emits (0: the
    #: job has no event time), ``out_of_orderness`` behind the largest timestamp of each split
    #: (Flink's ``forBoundedOutOfOrderness``: largest timestamp - bound - 1)
    watermark_interval: int = 0
    out_of_orderness: int = 0
    #: the strategy declares idleness (``withIdleness``): a source subtask with no split to
    #: read marks its output idle instead of holding back the watermarks downstream
    source_idleness: bool = False

    def __post_init__(self) -> None:
        if not self.name or any(c in self.name for c in "[]<>:#"):
            raise InvalidParameterError(
                f"operator name {self.name!r} must be non-empty without [ ] < > : #"
            )
        check_parallelism(self.parallelism, f"parallelism of {self.name}")
        if self.max_parallelism is not None:
            check_parallelism_against_max(self.parallelism, self.max_parallelism)
        if self.cost < 0:
            raise InvalidParameterError(
                f"cost of {self.name} must not be negative, got {self.cost}"
            )
        low, high = self.record_size
        if not 0 <= low <= high:
            raise InvalidParameterError(
                f"record size range of {self.name} must satisfy 0 <= min <= max, got {low}..{high}"
            )
        if self.kind is OperatorKind.SOURCE and self.records_per_subtask < 0:
            raise InvalidParameterError(f"records per subtask of {self.name} must not be negative")
        if self.watermark_interval < 0 or self.out_of_orderness < 0:
            raise InvalidParameterError(
                f"watermark interval and out-of-orderness of {self.name} must not be negative"
            )
        if self.key_space < 1:
            raise InvalidParameterError(f"key space of {self.name} must be at least 1")

    @functools.cached_property
    def effective_max_parallelism(self) -> int:
        if self.max_parallelism is not None:
            return self.max_parallelism
        return compute_default_max_parallelism(self.parallelism)

    def subtask_name(self, index: int) -> str:
        return SubtaskId(self.name, index).name


@dataclass(frozen=True, slots=True, order=True)
class SubtaskId:
    """One parallel subtask of an operator, as a typed value: what a checkpoint plan, a pipelined
    region and an injected task failure name (Flink's ``ExecutionVertexID``: job vertex and
    subtask index).

    Examples
    --------
    >>> subtask = SubtaskId("keyed", 2)
    >>> str(subtask)
    'keyed[2]'
    >>> sorted([SubtaskId("keyed", 1), SubtaskId("keyed", 0)])[0].name
    'keyed[0]'
    """

    operator: str
    index: int

    @property
    def name(self) -> str:
        """Its text, ``operator[index]``: the key of its task in a world's ``tasks``."""
        return f"{self.operator}[{self.index}]"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, order=True)
class IntermediateDataSetId:
    """Which edge of the job an exchange is: Flink's ``IntermediateDataSetID``.

    A job may connect the same two operators more than once (a two-input task reading one
    upstream twice, ``UnalignedCheckpointRescaleSameUpstreamITCase``), so the two operators do
    not name an edge. Flink gives every data set a random id; the model's is the producer, the
    consumer and the edge's position among the edges between them (0 for the first).

    Examples
    --------
    A two-input task reading one upstream twice has two data sets between the same operators:

    >>> first, second = IntermediateDataSetId("source", "co-map"), IntermediateDataSetId(
    ...     "source", "co-map", edge=1
    ... )
    >>> first == second
    False
    """

    producer: str
    consumer: str
    edge: int = 0


@dataclass(frozen=True)
class Exchange:
    """One edge of the job: ``upstream``'s result partition read by ``downstream``'s gate.

    ``edge`` tells apart the edges between the same two operators (0: the first, and the only
    one in most jobs). The names of a later edge's exchange, partitions, gates and channels
    carry its number (``source->co-map#2``, ``co-map[0]<source[1]#2``); the first edge's are
    the plain ones. The names are for people; the model finds an edge by its ``data_set``.

    Examples
    --------
    The second keyBy edge from ``source`` to ``co-map``, and the names its channels carry:

    >>> exchange = Exchange("source", "co-map", Partitioner.HASH, edge=1)
    >>> exchange.name, exchange.gate_name("co-map[0]")
    ('source->co-map#2', 'co-map[0]<source#2')
    >>> exchange.channel_name("co-map[0]", "source[1]")
    'co-map[0]<source[1]#2'
    """

    upstream: str
    downstream: str
    partitioner: Partitioner
    edge: int = 0

    def __post_init__(self) -> None:
        if self.edge < 0:
            raise InvalidParameterError(
                f"edge of exchange {self.upstream}->{self.downstream} must not be negative, "
                f"got {self.edge}"
            )

    @property
    def data_set(self) -> IntermediateDataSetId:
        return IntermediateDataSetId(self.upstream, self.downstream, self.edge)

    @property
    def suffix(self) -> str:
        """What a later edge's names end with ("#2" for the second); "" for the first."""
        return f"#{self.edge + 1}" if self.edge else ""

    @property
    def name(self) -> str:
        return f"{self.upstream}->{self.downstream}{self.suffix}"

    def partition_name(self, producer: str) -> str:
        """The result partition of producer subtask ``producer`` (``source[1]``) on this edge."""
        return f"{producer}>{self.downstream}{self.suffix}"

    def subpartition_name(self, producer: str, consumer: str) -> str:
        """The subpartition of ``producer`` that ``consumer`` reads on this edge."""
        return f"{producer}>{consumer}{self.suffix}"

    def gate_name(self, consumer: str) -> str:
        """The input gate of consumer subtask ``consumer`` (``co-map[0]``) on this edge; also
        the path a record's delivery is counted on."""
        return f"{consumer}<{self.upstream}{self.suffix}"

    def channel_name(self, consumer: str, producer: str) -> str:
        """The input channel of ``consumer`` from ``producer`` on this edge."""
        return f"{consumer}<{producer}{self.suffix}"


def pointwise_producers(up: int, down: int, consumer: int) -> tuple[int, ...]:
    """Producers a consumer reads over a pointwise (forward/rescale) edge, as Flink connects
    them (``VertexInputInfoComputationUtils.computeVertexInputInfoForPointwise``).

    Examples
    --------
    Rescaling 4 producers onto 2 consumers, consumer 1 reads producers 2 and 3; 2 producers onto
    4 consumers, consumer 3 reads producer 1 only:

    >>> pointwise_producers(4, 2, consumer=1)
    (2, 3)
    >>> pointwise_producers(2, 4, consumer=3)
    (1,)
    """
    if up >= down:
        return tuple(range(consumer * up // down, (consumer + 1) * up // down))
    for producer in range(up):
        start = (producer * down + up - 1) // up
        end = ((producer + 1) * down + up - 1) // up
        if start <= consumer < end:
            return (producer,)
    raise AssertionError("every consumer has a producer")


@dataclass(frozen=True)
class JobGraph:
    """The operators of a job and the exchanges between them, checked as Flink checks them.

    Examples
    --------
    A source of parallelism 2 keyed by into 4 subtasks, then forwarded to a sink: every keyed
    subtask has a channel from each source subtask, and the barrier overtakes data on the
    keyBy exchange only (forward exchanges are aligned):

    >>> source = Operator("source", 2, OperatorKind.SOURCE)
    >>> keyed = Operator("keyed", 4, OperatorKind.KEYED)
    >>> sink = Operator("sink", 4, OperatorKind.SINK)
    >>> keyby = Exchange("source", "keyed", Partitioner.HASH)
    >>> forward = Exchange("keyed", "sink", Partitioner.FORWARD)
    >>> job = JobGraph((source, keyed, sink), (keyby, forward))
    >>> job.producers(keyby, consumer=3), job.producers(forward, consumer=3)
    ((0, 1), (3,))
    >>> job.checkpoints_unaligned(keyby), job.checkpoints_unaligned(forward)
    (True, False)
    """

    operators: tuple[Operator, ...]
    exchanges: tuple[Exchange, ...]
    _by_name: dict[str, Operator] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = [op.name for op in self.operators]
        if len(set(names)) != len(names):
            raise InvalidParameterError(f"operator names must be unique, got {names}")
        object.__setattr__(self, "_by_name", {op.name: op for op in self.operators})
        self._check_edges()
        for exchange in self.exchanges:
            for end in (exchange.upstream, exchange.downstream):
                if end not in self._by_name:
                    raise InvalidParameterError(
                        f"exchange {exchange.name} names unknown operator {end!r}"
                    )
            up, down = self._by_name[exchange.upstream], self._by_name[exchange.downstream]
            if up.kind is OperatorKind.SINK:
                raise InvalidParameterError(f"sink {up.name} cannot have outputs")
            if down.kind is OperatorKind.SOURCE:
                raise InvalidParameterError(f"source {down.name} cannot have inputs")
            if exchange.partitioner is Partitioner.FORWARD and up.parallelism != down.parallelism:
                raise InvalidParameterError(
                    f"forward partitioning does not allow a change of parallelism: {up.name} has "
                    f"{up.parallelism}, {down.name} has {down.parallelism}"
                )
        for op in self.operators:
            inputs = self.inputs_of(op.name)
            if op.kind is not OperatorKind.SOURCE and not inputs:
                raise InvalidParameterError(f"{op.kind} {op.name} has no input")
            keyed_inputs = [e for e in inputs if e.partitioner is not Partitioner.BROADCAST]
            if op.kind is OperatorKind.KEYED and (
                not keyed_inputs or any(e.partitioner is not Partitioner.HASH for e in keyed_inputs)
            ):
                # a keyed broadcast function also reads broadcast inputs, into broadcast state
                raise InvalidParameterError(
                    f"keyed operator {op.name} must be fed by keyBy exchanges (and may read "
                    "broadcast ones)"
                )
            if op.sequential_inputs and len(inputs) < 2:
                raise InvalidParameterError(
                    f"{op.name} reads its inputs sequentially (InputSelectable), so it needs at "
                    f"least two inputs, got {len(inputs)}"
                )
        self._check_acyclic()

    def _check_edges(self) -> None:
        """The edges between one pair of operators are numbered 0, 1, ... once each, so that
        every edge (and every name derived from it) is told apart from the others."""
        edges: dict[tuple[str, str], list[int]] = {}
        for exchange in self.exchanges:
            edges.setdefault((exchange.upstream, exchange.downstream), []).append(exchange.edge)
        for (up, down), numbers in edges.items():
            if sorted(numbers) != list(range(len(numbers))):
                raise InvalidParameterError(
                    f"the exchanges from {up} to {down} must be numbered as edges 0, 1, ... "
                    f"once each (Flink tells them apart by their intermediate data set), got "
                    f"edges {numbers}"
                )

    def _check_acyclic(self) -> None:
        order = self.topological_order()
        if len(order) != len(self.operators):
            raise InvalidParameterError("the job graph has a cycle; iterations are not modelled")

    def topological_order(self) -> tuple[str, ...]:
        indegree = {op.name: len(self.inputs_of(op.name)) for op in self.operators}
        ready = [op.name for op in self.operators if indegree[op.name] == 0]
        order: list[str] = []
        while ready:
            name = ready.pop(0)
            order.append(name)
            for exchange in self.outputs_of(name):
                indegree[exchange.downstream] -= 1
                if indegree[exchange.downstream] == 0:
                    ready.append(exchange.downstream)
        return tuple(order)

    def key_ordered(self) -> frozenset[str]:
        """Keyed operators reached from the sources over keyBy exchanges only: each key's
        records from one source subtask take one path there, so they arrive in order."""
        ordered: set[str] = set()
        for name in self.topological_order():
            op = self._by_name[name]
            inputs = self.inputs_of(name)
            if op.kind is OperatorKind.KEYED and all(
                e.partitioner is Partitioner.HASH
                and (self._by_name[e.upstream].kind is OperatorKind.SOURCE or e.upstream in ordered)
                for e in inputs
            ):
                ordered.add(name)
        return frozenset(ordered)

    @functools.cached_property
    def event_time(self) -> bool:
        """Whether any source emits watermarks."""
        return any(op.watermark_interval for op in self.operators)

    def operator(self, name: str) -> Operator:
        try:
            return self._by_name[name]
        except KeyError:
            raise InvalidParameterError(f"unknown operator {name!r}") from None

    def checkpoints_unaligned(self, exchange: Exchange) -> bool:
        """Whether an unaligned checkpoint's barrier overtakes data on this exchange.

        Not on pointwise or broadcast exchanges, and (as Flink's StreamGraphGenerator marks
        them) not on any input of an operator that has one of those: such an operator's inputs
        are all aligned, so it never persists input channel state.
        """
        return all(
            e.partitioner.supports_unaligned_checkpoint for e in self.inputs_of(exchange.downstream)
        )

    def inputs_of(self, name: str) -> tuple[Exchange, ...]:
        return tuple(e for e in self.exchanges if e.downstream == name)

    def outputs_of(self, name: str) -> tuple[Exchange, ...]:
        return tuple(e for e in self.exchanges if e.upstream == name)

    def gate_index(self, data_set: IntermediateDataSetId) -> int:
        """The input gate of ``data_set``'s consumer that reads it (``findInputGateIndex``)."""
        for index, exchange in enumerate(self.inputs_of(data_set.consumer)):
            if exchange.data_set == data_set:
                return index
        raise InvalidParameterError(f"no input gate of {data_set.consumer} reads {data_set}")

    def partition_index(self, data_set: IntermediateDataSetId) -> int:
        """The result partition of ``data_set``'s producer that writes it
        (``findResultPartitionIndex``)."""
        for index, exchange in enumerate(self.outputs_of(data_set.producer)):
            if exchange.data_set == data_set:
                return index
        raise InvalidParameterError(f"no result partition of {data_set.producer} writes {data_set}")

    def producers(self, exchange: Exchange, consumer: int) -> tuple[int, ...]:
        """Upstream subtasks a downstream subtask has an input channel from, in channel order."""
        up = self.operator(exchange.upstream).parallelism
        down = self.operator(exchange.downstream).parallelism
        if exchange.partitioner.is_pointwise:
            return pointwise_producers(up, down, consumer)
        return tuple(range(up))

    def consumers(self, exchange: Exchange, producer: int) -> tuple[int, ...]:
        """Downstream subtasks a producer has a subpartition for, in subpartition order."""
        down = self.operator(exchange.downstream).parallelism
        return tuple(c for c in range(down) if producer in self.producers(exchange, c))
