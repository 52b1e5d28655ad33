"""Where every persisted buffer of a checkpoint goes when the job restarts at new parallelism.

A checkpoint's channel state is a few large tables; the plan that decides its fate is small: for
each exchange, :func:`~flinkstate.rescale.exchange.rescale_exchange` says which new subtask reads
which old subtask's files, which new channel the bytes arrive on, and which virtual channels
must filter records. This module turns that plan into one :class:`BufferRoute` per (persisted
channel, receiving new subtask), so a large checkpoint can be routed by a join instead of by
re-deriving Flink's rules per buffer. The routes are the same ones the model's own state
assignment (:mod:`flinkstate.runtime.checkpoint.state_assignment`) follows.

Direction words: the *consumer* of a buffer is the downstream subtask that deserializes it. For
input state that is the subtask that persisted it (old) and the new subtask reading the file
(new). Output state was persisted by an upstream subtask for subpartition ``s``, so its old
consumer is downstream subtask ``s``; a new upstream subtask reads it and sends it on to every
new consumer its subpartition maps to (or, with recover-output-on-downstream, the consumer reads
the file itself).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flinkstate.errors import InvalidParameterError, KeyTypeError
from flinkstate.javahash import VECTORISED_TYPES, JavaType
from flinkstate.keygroups import (
    check_parallelism,
    check_parallelism_against_max,
)
from flinkstate.rescale.channel_selection import ChannelSelection
from flinkstate.rescale.descriptor import NO_RESCALE
from flinkstate.rescale.exchange import ExchangeRescale, rescale_exchange
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.rescale.reassignment import ConsumerInputs

if TYPE_CHECKING:
    import pyarrow as pa

INPUT = "input"
OUTPUT = "output"

#: at most this many new parallelisms in one sweep (each one is a route set and a column of
#: selected subtasks)
MAX_SWEEP = 64


@dataclass(frozen=True)
class OperatorShape:
    """An operator as a checkpoint records it.

    Examples
    --------
    The keyed operator of the committed sample ``keyed`` (``data/keyed``):

    >>> from flinkstate.dataset import read_dataset
    >>> from flinkstate.samples import sample_path
    >>> tables = read_dataset(sample_path("keyed"), ["operators", "exchanges"]).tables
    >>> JobShape.of_tables(tables).operator("counter")
    OperatorShape(name='counter', parallelism=4, max_parallelism=128)
    """

    name: str
    parallelism: int
    max_parallelism: int


@dataclass(frozen=True)
class ExchangeShape:
    """An exchange as a checkpoint records it.

    Examples
    --------
    The two exchanges of the committed sample ``keyed``: a keyBy with ``Long`` keys, and a forward
    exchange, which is aligned:

    >>> from flinkstate.dataset import read_dataset
    >>> from flinkstate.samples import sample_path
    >>> tables = read_dataset(sample_path("keyed"), ["operators", "exchanges"]).tables
    >>> shape = JobShape.of_tables(tables)
    >>> for exchange in shape.exchanges:
    ...     print(exchange.name, exchange.partitioner.name, exchange.unaligned_supported)
    source->counter HASH True
    counter->sink FORWARD False
    >>> shape.exchange("source->counter").key_type
    <JavaType.LONG: 'long'>
    """

    name: str
    upstream: str
    downstream: str
    partitioner: Partitioner
    unaligned_supported: bool
    #: the Java type of the key its records are partitioned by (the dataset's ``key_type``; null
    #: there, and in a version-1 dataset, is a Long)
    key_type: JavaType = JavaType.LONG


def key_type_of(exchange: str, text: object) -> JavaType:
    """An exchange's ``key_type`` as a dataset gives it (None: a Long), refused in one line
    unless a type every consumer hashes a column at a time.

    Examples
    --------
    >>> key_type_of("source->counter", None), key_type_of("source->counter", "java.lang.String")
    (<JavaType.LONG: 'long'>, <JavaType.STRING: 'string'>)
    >>> key_type_of("source->counter", "Double")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: exchange source->counter has key_type 'Double': ...
    """
    if text is None:
        return JavaType.LONG
    try:
        kind = JavaType.parse(str(text))
    except KeyTypeError:
        kind = None
    if kind not in VECTORISED_TYPES:
        raise InvalidParameterError(
            f"exchange {exchange} has key_type {text!r}: a dataset's keys are "
            + ", ".join(t.java_name for t in VECTORISED_TYPES)
        )
    return kind


@dataclass(frozen=True)
class JobShape:
    """The operators and exchanges of a checkpointed job: all a rescale plan needs.

    Examples
    --------
    The job of the committed sample ``keyed`` (4 sources -keyBy-> 4 counters -forward-> 4 sinks)
    restored with the counters and sinks at 3:

    >>> from flinkstate.dataset import read_dataset
    >>> from flinkstate.samples import sample_path
    >>> tables = read_dataset(sample_path("keyed"), ["operators", "exchanges"]).tables
    >>> shape = JobShape.of_tables(tables)
    >>> new = shape.new_parallelism(3, ["counter", "sink"])
    >>> new
    {'source': 4, 'counter': 3, 'sink': 3}
    >>> plans = shape.plans(new)
    >>> [d.input_state_from for d in plans["source->counter"].downstream]
    [(0, 1), (1, 2), (2, 3)]
    >>> plans["counter->sink"].carries_channel_state
    False

    No more subtasks than key groups, as Flink refuses:

    >>> shape.new_parallelism(200, ["counter"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: The state for task counter can not be restored. ...
    """

    operators: tuple[OperatorShape, ...]
    exchanges: tuple[ExchangeShape, ...]

    def __post_init__(self) -> None:
        names = {op.name for op in self.operators}
        for exchange in self.exchanges:
            for end in (exchange.upstream, exchange.downstream):
                if end not in names:
                    raise InvalidParameterError(
                        f"exchange {exchange.name} connects {end!r}, which is not among the "
                        f"checkpoint's operators ({', '.join(sorted(names))})"
                    )

    @classmethod
    def of(
        cls, operators: Iterable[Mapping[str, object]], exchanges: Iterable[Mapping[str, object]]
    ) -> JobShape:
        """From rows of a dataset's ``operators`` and ``exchanges`` tables."""
        return cls(
            tuple(
                OperatorShape(
                    str(row["operator"]),
                    int(str(row["parallelism"])),
                    int(str(row["max_parallelism"])),
                )
                for row in operators
            ),
            tuple(
                ExchangeShape(
                    str(row["exchange"]),
                    str(row["upstream"]),
                    str(row["downstream"]),
                    Partitioner.parse(str(row["partitioner"])),
                    bool(row["unaligned_supported"]),
                    key_type_of(str(row["exchange"]), row.get("key_type")),
                )
                for row in exchanges
            ),
        )

    @classmethod
    def of_tables(cls, tables: Mapping[str, pa.Table]) -> JobShape:
        """From a dataset's ``operators`` and ``exchanges`` tables (Arrow, on the driver)."""
        return cls.of(tables["operators"].to_pylist(), tables["exchanges"].to_pylist())

    def operator(self, name: str) -> OperatorShape:
        for op in self.operators:
            if op.name == name:
                return op
        raise InvalidParameterError(
            f"no operator {name!r} in this checkpoint; it has "
            + ", ".join(op.name for op in self.operators)
        )

    def exchange(self, name: str) -> ExchangeShape:
        for exchange in self.exchanges:
            if exchange.name == name:
                return exchange
        raise InvalidParameterError(
            f"no exchange {name!r} in this checkpoint; it has "
            + (", ".join(e.name for e in self.exchanges) or "none")
        )

    def new_parallelism(self, to: int, operators: Iterable[str] | None = None) -> dict[str, int]:
        """Operator -> parallelism after rescaling ``operators`` (every one when None) to
        ``to``; the others keep theirs. Refuses what Flink refuses to restore."""
        check_parallelism(to, "new parallelism")
        chosen = [op.name for op in self.operators] if operators is None else list(operators)
        if not chosen:
            raise InvalidParameterError("name at least one operator to rescale")
        for name in chosen:
            self.operator(name)
        return self.checked(
            {op.name: to if op.name in chosen else op.parallelism for op in self.operators}
        )

    def checked(self, parallelism: Mapping[str, int]) -> dict[str, int]:
        """A complete operator -> new parallelism map, each within its max parallelism."""
        result = {}
        for op in self.operators:
            new = check_parallelism(
                parallelism.get(op.name, op.parallelism), f"{op.name} parallelism"
            )
            try:
                check_parallelism_against_max(new, op.max_parallelism)
            except InvalidParameterError:
                raise InvalidParameterError(
                    f"The state for task {op.name} can not be restored. The maximum parallelism "
                    f"({op.max_parallelism}) of the restored state is lower than the configured "
                    f"parallelism ({new}). Please reduce the parallelism of the task to be lower "
                    "or equal to the maximum parallelism."
                ) from None
            result[op.name] = new
        unknown = set(parallelism) - set(result)
        if unknown:
            raise InvalidParameterError(
                f"unknown operator(s) {sorted(unknown)}; the job has "
                + ", ".join(op.name for op in self.operators)
            )
        return result

    def key_types(self) -> dict[str, JavaType]:
        """Exchange -> the Java type of its keys (what their ``hashCode()`` is)."""
        return {e.name: e.key_type for e in self.exchanges}

    def channel_selections(self) -> dict[str, tuple[ChannelSelection, int]]:
        """Exchange -> (its partitioner's channel selection, the consumer's max parallelism)."""
        return {
            e.name: (
                ChannelSelection.of(e.partitioner),
                self.operator(e.downstream).max_parallelism,
            )
            for e in self.exchanges
        }

    def sweep(
        self,
        scenarios: Mapping[int, Mapping[str, int]],
        *,
        recover_output_on_downstream: bool = False,
    ) -> SweepPlan:
        """The plans and buffer routes of each scenario (label -> operator -> new parallelism;
        operators not named keep theirs), checked before any data is read."""
        if not scenarios:
            raise InvalidParameterError("name at least one new parallelism")
        if len(scenarios) > MAX_SWEEP:
            raise InvalidParameterError(
                f"a sweep of {len(scenarios)} parallelisms is more than {MAX_SWEEP}; narrow it"
            )
        targets = tuple(sorted(scenarios))
        parallelism = {t: self.checked(scenarios[t]) for t in targets}
        plans = {
            t: self.plans(p, recover_output_on_downstream=recover_output_on_downstream)
            for t, p in parallelism.items()
        }
        routes = tuple(
            (to, route)
            for to, by_exchange in plans.items()
            for name, plan in by_exchange.items()
            for route in buffer_routes(plan, name)
        )
        selections = self.channel_selections()
        for _, route in routes:
            if route.filtered and selections[route.exchange][0] is ChannelSelection.NONE:
                # the command line prints this text as it always has
                raise InvalidParameterError(
                    f"{route.exchange} would filter records on recovery, but its partitioner "
                    "gives no owner for a record"
                )
        return SweepPlan(targets, parallelism, plans, routes)

    def plans(
        self, parallelism: Mapping[str, int], *, recover_output_on_downstream: bool = False
    ) -> dict[str, ExchangeRescale]:
        """Every exchange's rescale plan for the new parallelism."""
        new = self.checked(parallelism)
        return {
            e.name: rescale_exchange(
                e.partitioner,
                (self.operator(e.upstream).parallelism, new[e.upstream]),
                (self.operator(e.downstream).parallelism, new[e.downstream]),
                recover_output_on_downstream=recover_output_on_downstream,
                aligned_by_graph=not e.unaligned_supported,
                consumer_inputs=ConsumerInputs.of(
                    (x.partitioner, new[x.upstream])
                    for x in self.exchanges
                    if x.downstream == e.downstream
                ),
            )
            for e in self.exchanges
        }


@dataclass(frozen=True)
class BufferRoute:
    """The buffers of one persisted channel, as received by one new consumer.

    ``subtask`` and ``channel`` locate the persisted channel (the dataset's ``subtask`` and
    ``channel_or_subpartition`` of ``side``); ``reader`` is the new subtask that reads the file
    (of the downstream operator for input state, of the upstream one for output state unless
    the consumer reads it); ``new_channel`` the consumer's input channel the bytes arrive on;
    ``virtual_channel`` the (old subtask, old channel) whose deserializer reassembles them;
    ``filtered`` whether the consumer drops the records the partitioner does not select it for.

    Examples
    --------
    The committed sample ``keyed`` with its counters at 3: the bytes old counter 1 holds from
    source 0 are read by new counter 0, which filters them (new counter 1 reads them too):

    >>> from flinkstate.dataset import read_dataset
    >>> from flinkstate.samples import sample_path
    >>> tables = read_dataset(sample_path("keyed"), ["operators", "exchanges"]).tables
    >>> shape = JobShape.of_tables(tables)
    >>> sweep = shape.sweep({3: shape.new_parallelism(3, ["counter", "sink"])})
    >>> route = next(r for _, r in sweep.routes if r.side == "input" and r.subtask == 1)
    >>> route.channel, route.reader, route.new_channel, route.virtual_channel, route.filtered
    (0, 0, 0, (1, 0), True)
    """

    exchange: str
    side: str
    subtask: int
    channel: int
    old_consumer: int
    reader: int
    new_consumer: int
    new_channel: int
    virtual_channel: tuple[int, int]
    filtered: bool


@dataclass(frozen=True)
class SweepPlan:
    """Everything a sweep decides before touching the data: per scenario label (``to``), the
    operators' new parallelism, each exchange's plan, and every buffer route.

    Examples
    --------
    The committed sample ``keyed`` with its counters and sinks at 3 and at 6: the routes of the
    keyBy's in-flight data (the forward exchange carries none), and what selects a record's
    subtask at each:

    >>> from flinkstate.dataset import read_dataset
    >>> from flinkstate.samples import sample_path
    >>> tables = read_dataset(sample_path("keyed"), ["operators", "exchanges"]).tables
    >>> shape = JobShape.of_tables(tables)
    >>> sweep = shape.sweep({p: shape.new_parallelism(p, ["counter", "sink"]) for p in (3, 6)})
    >>> sweep.targets, len(sweep.routes)
    ((3, 6), 112)
    >>> sweep.selections_of(shape)["source->counter"]
    (<ChannelSelection.KEY_GROUP: 1>, 128, (3, 6))
    """

    targets: tuple[int, ...]
    parallelism: Mapping[int, Mapping[str, int]]
    plans: Mapping[int, Mapping[str, ExchangeRescale]]
    routes: tuple[tuple[int, BufferRoute], ...]

    def selections_of(
        self, shape: JobShape
    ) -> dict[str, tuple[ChannelSelection, int, tuple[int, ...]]]:
        """Exchange -> (channel selection, max parallelism, the consumer's parallelism per
        target)."""
        selections = shape.channel_selections()
        return {
            e.name: (
                *selections[e.name],
                tuple(self.parallelism[t][e.downstream] for t in self.targets),
            )
            for e in shape.exchanges
        }


def buffer_routes(plan: ExchangeRescale, exchange: str) -> tuple[BufferRoute, ...]:
    """Every route of ``exchange``'s channel state under ``plan`` (none when it is aligned).

    Examples
    --------
    A keyBy exchange going from 4 to 3 subtasks on both sides: every (old subtask, channel) of the
    input state once per new subtask that reads it, and the output state likewise:

    >>> from flinkstate.rescale.exchange import rescale_exchange
    >>> routes = buffer_routes(rescale_exchange("keyBy", (4, 3), (4, 3)), "up->down")
    >>> len(routes), sum(r.filtered for r in routes)
    (48, 32)
    >>> sorted({(r.subtask, r.new_consumer) for r in routes if r.side == "input"})
    [(0, 0), (1, 0), (1, 1), (2, 1), (2, 2), (3, 2)]
    """
    if not plan.carries_channel_state:
        return ()
    up_old = plan.upstream_parallelism[0]
    down_old = plan.downstream_parallelism[0]
    routes: list[BufferRoute] = []
    for consumer in plan.downstream:
        channel_of = consumer.new_channel
        for old in consumer.input_state_from:
            for channel in range(up_old):
                target = channel_of(channel)
                routes.append(
                    BufferRoute(
                        exchange,
                        INPUT,
                        old,
                        channel,
                        old,
                        consumer.subtask,
                        consumer.subtask,
                        target,
                        (old, channel),
                        consumer.filters_virtual_channel(target, old, channel),
                    )
                )
        for old_upstream, subpartition in consumer.upstream_output_state_from:
            target = channel_of(old_upstream)
            routes.append(
                BufferRoute(
                    exchange,
                    OUTPUT,
                    old_upstream,
                    subpartition,
                    subpartition,
                    consumer.subtask,
                    consumer.subtask,
                    target,
                    (subpartition, old_upstream),
                    consumer.filters_virtual_channel(target, subpartition, old_upstream),
                )
            )
    for producer in plan.upstream:
        for old in producer.output_state_from:
            for subpartition in range(down_old):
                if producer.descriptor is NO_RESCALE:
                    consumers: tuple[int, ...] = (subpartition,)
                else:
                    consumers = producer.new_subpartitions(subpartition)
                for new_consumer in consumers:
                    routes.append(
                        BufferRoute(
                            exchange,
                            OUTPUT,
                            old,
                            subpartition,
                            subpartition,
                            producer.subtask,
                            new_consumer,
                            producer.subtask,
                            (subpartition, old),
                            plan.downstream[new_consumer].filters_virtual_channel(
                                producer.subtask, subpartition, old
                            ),
                        )
                    )
    return tuple(routes)
