"""The job graphs of the catalogue's topologies, each built from a topology's resolved
parameter values: the plain keyed job and its variants, and the shapes of the Flink ITCases the
scenarios reproduce (``UnalignedCheckpointRescaleITCase``'s topologies, the selective reader,
the same upstream read twice, pipelined regions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flinkstate.rescale.partitioner import Partitioner
from flinkstate.runtime.jobgraph import Exchange, JobGraph, Operator, OperatorKind


def _source(values: Mapping[str, Any], parallelism: int, name: str = "source") -> Operator:
    size = values["record_size"]
    return Operator(
        name,
        parallelism,
        OperatorKind.SOURCE,
        records_per_subtask=values["records"],
        key_space=values["keys"],
        record_size=(size, size),
        watermark_interval=values["watermark_interval"],
        out_of_orderness=values["out_of_orderness"],
        source_idleness=values["source_idleness"],
    )


def keyed_job(values: Mapping[str, Any]) -> JobGraph:
    return JobGraph(
        (
            _source(values, values["source_parallelism"]),
            Operator(
                "counter",
                values["parallelism"],
                OperatorKind.KEYED,
                cost=values["cost"],
                max_parallelism=values["max_parallelism"],
            ),
            Operator("sink", values["parallelism"], OperatorKind.SINK),
        ),
        (
            Exchange("source", "counter", Partitioner.HASH),
            Exchange("counter", "sink", Partitioner.FORWARD),
        ),
    )


def two_input_job(values: Mapping[str, Any]) -> JobGraph:
    p = values["parallelism"]
    return JobGraph(
        (
            _source(values, p, "left"),
            _source(values, p, "right"),
            Operator(
                "join",
                p,
                OperatorKind.KEYED,
                cost=values["cost"],
                max_parallelism=values["max_parallelism"],
            ),
            Operator("sink", p, OperatorKind.SINK),
        ),
        (
            Exchange("left", "join", Partitioner.HASH),
            Exchange("right", "join", Partitioner.HASH),
            Exchange("join", "sink", Partitioner.REBALANCE),
        ),
    )


#: how the sequential-reading job's sources feed its operator
SEQUENTIAL_EXCHANGES = {"keyBy": Partitioner.HASH, "rebalance": Partitioner.REBALANCE}


def _connected_job(
    values: Mapping[str, Any],
    sources: tuple[Operator, ...],
    inputs: tuple[Exchange, ...],
    operator: Operator,
) -> JobGraph:
    """Sources connected into a two-input ``operator`` (DataStream ``connect``), which
    forwards to a sink at its parallelism unless it is a sink itself: the shape of the
    sequential reader and of the task reading one upstream twice."""
    if operator.kind is OperatorKind.SINK:
        return JobGraph((*sources, operator), inputs)
    return JobGraph(
        (*sources, operator, Operator("sink", operator.parallelism, OperatorKind.SINK)),
        (*inputs, Exchange(operator.name, "sink", Partitioner.FORWARD)),
    )


def sequential_reading_job(values: Mapping[str, Any]) -> JobGraph:
    """StreamTaskSelectiveReadingITCase.testSequentialReading's shape: two sources connected
    into a two-input operator that reads the first to its end, then the second; keyBy or
    rebalance exchanges, so both inputs are checkpointed unaligned and carry channel state."""
    partitioner = SEQUENTIAL_EXCHANGES[values["exchange"]]
    return _connected_job(
        values,
        (
            _source(values, values["source_parallelism"], "first"),
            _source(values, values["source_parallelism"], "second"),
        ),
        (
            Exchange("first", "sequential", partitioner),
            Exchange("second", "sequential", partitioner),
        ),
        Operator(
            "sequential",
            values["parallelism"],
            OperatorKind.KEYED if partitioner is Partitioner.HASH else OperatorKind.MAP,
            cost=values["cost"],
            max_parallelism=values["max_parallelism"],
            sequential_inputs=True,
        ),
    )


def same_upstream_job(values: Mapping[str, Any]) -> JobGraph:
    """UnalignedCheckpointRescaleSameUpstreamITCase's CONNECT: one source read twice by a
    two-input map, rebalanced into its first input and keyed into its second (two edges
    between the same two operators, told apart by their intermediate data set); both at the
    job's parallelism.

    The ITCase's co-map forwards into a discarding sink. A forward edge is aligned, so it
    carries no channel state; and the co-map gets every record twice (once per edge), whose
    two outputs the model, which follows each record by its id, could not tell apart. So here
    the co-map ends the job: it is the sink."""
    p = values["parallelism"]
    return _connected_job(
        values,
        (_source(values, p),),
        (
            Exchange("source", "co-map", Partitioner.REBALANCE),
            Exchange("source", "co-map", Partitioner.HASH, edge=1),
        ),
        Operator(
            "co-map",
            p,
            OperatorKind.SINK,
            cost=values["cost"],
            max_parallelism=values["max_parallelism"],
        ),
    )


def pipeline_job(values: Mapping[str, Any]) -> JobGraph:
    p = values["parallelism"]
    return JobGraph(
        (
            _source(values, p),
            Operator("map", p, OperatorKind.MAP),
            Operator(
                "slow",
                p,
                OperatorKind.KEYED,
                cost=values["cost"],
                max_parallelism=values["max_parallelism"],
            ),
            Operator("sink", 1, OperatorKind.SINK),
        ),
        (
            Exchange("source", "map", Partitioner.REBALANCE),
            Exchange("map", "slow", Partitioner.HASH),
            Exchange("slow", "sink", Partitioner.REBALANCE),
        ),
    )


def keyed_chain_job(values: Mapping[str, Any]) -> JobGraph:
    p = values["parallelism"]
    max_p = values["max_parallelism"]
    return JobGraph(
        (
            _source(values, values["source_parallelism"]),
            Operator("first", p, OperatorKind.KEYED, max_parallelism=max_p),
            Operator("second", p, OperatorKind.KEYED, cost=values["cost"], max_parallelism=max_p),
            Operator("sink", p, OperatorKind.SINK),
        ),
        (
            Exchange("source", "first", Partitioner.HASH),
            Exchange("first", "second", Partitioner.HASH),
            Exchange("second", "sink", Partitioner.FORWARD),
        ),
    )


def pipelined_regions_job(values: Mapping[str, Any]) -> JobGraph:
    """Two independent pipelines over forward exchanges only, so that each subtask index of
    each is a pipelined region of its own: a bounded one (one subtask, few records) that
    finishes early, and ``source -> sink`` at parallelism p."""
    size = values["record_size"]
    bounded = Operator(
        "bounded",
        1,
        OperatorKind.SOURCE,
        records_per_subtask=values["bounded_records"],
        key_space=values["keys"],
        record_size=(size, size),
    )
    p = values["parallelism"]
    return JobGraph(
        (
            bounded,
            Operator("bounded-sink", 1, OperatorKind.SINK),
            _source(values, p),
            Operator("sink", p, OperatorKind.SINK),
        ),
        (
            Exchange("bounded", "bounded-sink", Partitioner.FORWARD),
            Exchange("source", "sink", Partitioner.FORWARD),
        ),
    )


#: the operators of ``pipelined-regions``, which its failure may name
REGIONS_OPERATORS = ("bounded", "bounded-sink", "source", "sink")


#: ``UnalignedCheckpointTestBase.NUM_SOURCES``: the UNION and MULTI_INPUT topologies combine
#: this many source pipelines
ITCASE_SOURCES = 3


def _itcase_source_pipeline(
    values: Mapping[str, Any], p: int, suffix: str = ""
) -> tuple[list[Operator], list[Exchange], str]:
    """``UnalignedCheckpointRescaleITCase.createSourcePipeline`` at parallelism p (its filter
    and counter are chained into the source): the operators, the exchanges between them, and
    the name of the last operator. ``suffix`` is the ITCase's input index."""
    maps = [
        ("global", p, Partitioner.GLOBAL),
        ("rebalance", p + 1, Partitioner.REBALANCE),
        ("upscale", 2 * p, Partitioner.SHUFFLE),
        ("downscale", p + 1, Partitioner.SHUFFLE),
    ]
    operators = [_source(values, p, "source" + suffix)]
    exchanges = []
    upstream = "source" + suffix
    for name, parallelism, partitioner in maps:
        operators.append(Operator(name + suffix, parallelism, OperatorKind.MAP))
        exchanges.append(Exchange(upstream, name + suffix, partitioner))
        upstream = name + suffix
    operators += [
        Operator(
            "keyby" + suffix,
            p,
            OperatorKind.KEYED,
            cost=values["cost"],
            max_parallelism=values["max_parallelism"],
        ),
        Operator("rescale" + suffix, max(p + 1, p * 3 // 2), OperatorKind.MAP),
    ]
    exchanges += [
        Exchange(upstream, "keyby" + suffix, Partitioner.HASH),
        Exchange("keyby" + suffix, "rescale" + suffix, Partitioner.RESCALE),
    ]
    return operators, exchanges, "rescale" + suffix


def _itcase_failing_sink(
    operators: list[Operator], exchanges: list[Exchange], upstreams: list[str], p: int
) -> JobGraph:
    """``addFailingSink``: shuffle into the failing map (p), shuffle into one verifying sink;
    several upstreams are a union (one gate each)."""
    operators += [
        Operator("failing-map", p, OperatorKind.MAP),
        Operator("sink", 1, OperatorKind.SINK),
    ]
    exchanges += [Exchange(upstream, "failing-map", Partitioner.SHUFFLE) for upstream in upstreams]
    exchanges.append(Exchange("failing-map", "sink", Partitioner.SHUFFLE))
    return JobGraph(tuple(operators), tuple(exchanges))


def _default_partitioner(upstream: int, downstream: int) -> Partitioner:
    """What Flink's StreamGraph puts on an edge the program did not partition: forward between
    equal parallelisms, rebalance otherwise."""
    return Partitioner.FORWARD if upstream == downstream else Partitioner.REBALANCE


def itcase_pipeline_job(values: Mapping[str, Any]) -> JobGraph:
    """``UnalignedCheckpointRescaleITCase``'s PIPELINE: ``createSourcePipeline`` followed by
    ``addFailingSink``; parallelisms are the ITCase's functions of the job parallelism p."""
    p = values["parallelism"]
    operators, exchanges, last = _itcase_source_pipeline(values, p)
    return _itcase_failing_sink(operators, exchanges, [last], p)


def itcase_union_job(values: Mapping[str, Any]) -> JobGraph:
    """UNION: three source pipelines unioned into the failing map (one input, three gates)."""
    p = values["parallelism"]
    operators: list[Operator] = []
    exchanges: list[Exchange] = []
    lasts = []
    for index in range(ITCASE_SOURCES):
        ops, edges, last = _itcase_source_pipeline(values, p, str(index))
        operators += ops
        exchanges += edges
        lasts.append(last)
    return _itcase_failing_sink(operators, exchanges, lasts, p)


def itcase_multi_input_job(values: Mapping[str, Any]) -> JobGraph:
    """MULTI_INPUT: three source pipelines combined by two-input maps ``min1`` and ``min2``
    (``connect``, no partitioner: rebalance from the pipelines' last operators, forward
    between the maps)."""
    p = values["parallelism"]
    operators: list[Operator] = []
    exchanges: list[Exchange] = []
    combined = ""
    for index in range(ITCASE_SOURCES):
        ops, edges, last = _itcase_source_pipeline(values, p, str(index))
        operators += ops
        exchanges += edges
        if not combined:
            combined = last
            continue
        name = f"min{index}"
        operators.append(Operator(name, p, OperatorKind.MAP))
        parallelism = {op.name: op.parallelism for op in operators}
        for upstream in (combined, last):
            partitioner = _default_partitioner(parallelism[upstream], p)
            exchanges.append(Exchange(upstream, name, partitioner))
        combined = name
    return _itcase_failing_sink(operators, exchanges, [combined], p)


def itcase_keyed_different_parallelism_job(values: Mapping[str, Any]) -> JobGraph:
    """KEYED_DIFFERENT_PARALLELISM: pipelines at p/2 and p/3, both keyed into a keyed
    co-process function at p."""
    p = values["parallelism"]
    operators: list[Operator] = []
    exchanges: list[Exchange] = []
    for index, share in enumerate((p // 2, p // 3)):
        ops, edges, last = _itcase_source_pipeline(values, share, str(index))
        operators += ops
        exchanges += edges
        exchanges.append(Exchange(last, "co-process", Partitioner.HASH))
    operators.append(
        Operator(
            "co-process",
            p,
            OperatorKind.KEYED,
            cost=values["cost"],
            max_parallelism=values["max_parallelism"],
        )
    )
    return _itcase_failing_sink(operators, exchanges, ["co-process"], p)


def itcase_broadcast_job(values: Mapping[str, Any]) -> JobGraph:
    """BROADCAST: a source pipeline and a map (p) connected with a broadcast source (p) into a
    broadcast process function at 2p, whose broadcast side emits nothing."""
    p = values["parallelism"]
    operators, exchanges, last = _itcase_source_pipeline(values, p, "0")
    to_map = _default_partitioner(operators[-1].parallelism, p)
    operators += [
        _source(values, p, "source"),
        Operator("map", p, OperatorKind.MAP),
        Operator("process", 2 * p, OperatorKind.MAP),
    ]
    exchanges += [
        Exchange(last, "map", to_map),
        Exchange("map", "process", _default_partitioner(p, 2 * p)),
        Exchange("source", "process", Partitioner.BROADCAST),
    ]
    return _itcase_failing_sink(operators, exchanges, ["process"], p)


def itcase_keyed_broadcast_job(values: Mapping[str, Any]) -> JobGraph:
    """KEYED_BROADCAST: a source pipeline and a map (p), keyed, connected with the union of
    three single-subtask broadcast sources into a keyed broadcast process function at p + 2."""
    p = values["parallelism"]
    operators, exchanges, last = _itcase_source_pipeline(values, p, "0")
    to_map = _default_partitioner(operators[-1].parallelism, p)
    operators += [
        Operator("map", p, OperatorKind.MAP),
        Operator(
            "process",
            p + 2,
            OperatorKind.KEYED,
            cost=values["cost"],
            max_parallelism=values["max_parallelism"],
        ),
    ]
    exchanges += [
        Exchange(last, "map", to_map),
        Exchange("map", "process", Partitioner.HASH),
    ]
    for index in range(1, ITCASE_SOURCES + 1):
        operators.append(_source(values, 1, f"source-{index}"))
        exchanges.append(Exchange(f"source-{index}", "process", Partitioner.BROADCAST))
    return _itcase_failing_sink(operators, exchanges, ["process"], p)


def itcase_custom_partitioner_job(values: Mapping[str, Any]) -> JobGraph:
    """CUSTOM_PARTITIONER (FLINK-35351): a source at the job's parallelism partitioned with a
    custom partitioner (the model's: a record's key modulo the parallelism) into a slow sink
    whose parallelism the ITCase fixes at 3, so that a restart at another job parallelism
    rescales the producer alone."""
    return JobGraph(
        (
            _source(values, values["parallelism"]),
            Operator(
                "sink",
                values["sink_parallelism"],
                OperatorKind.SINK,
                cost=values["cost"],
                max_parallelism=values["max_parallelism"],
            ),
        ),
        (Exchange("source", "sink", Partitioner.CUSTOM),),
    )


def itcase_unaligned_job(values: Mapping[str, Any]) -> JobGraph:
    """``UnalignedCheckpointITCase`` as FLINK-17315 found it (2020): a source, a map and a
    counting sink, all at the job's parallelism, shuffled in between. With three slots per
    TaskManager, as the ITCase has, a parallelism of 2 keeps every channel local (its
    ``shouldPerformUnalignedCheckpointOnLocalChannelsOnly``) and one of 10 makes most remote.
    The sources' parallelism is a parameter of its own, so that the explorer can take the
    smallest job that shows a bug: two sources into one map."""
    p = values["parallelism"]
    return JobGraph(
        (
            _source(values, values["source_parallelism"]),
            Operator("map", p, OperatorKind.MAP),
            Operator("sink", p, OperatorKind.SINK),
        ),
        (
            Exchange("source", "map", Partitioner.SHUFFLE),
            Exchange("map", "sink", Partitioner.SHUFFLE),
        ),
    )


def keyed_sink_job(values: Mapping[str, Any]) -> JobGraph:
    """A source keyed straight into a sink that keeps no state of its own (FLINK-27031,
    FLINK-31963): the sink's only state is the channel state of its input, and a checkpoint
    taken while it keeps up leaves it none, while the source's subpartitions hold buffers."""
    return JobGraph(
        (
            _source(values, values["source_parallelism"]),
            Operator(
                "sink",
                values["parallelism"],
                OperatorKind.SINK,
                cost=values["cost"],
                max_parallelism=values["max_parallelism"],
            ),
        ),
        (Exchange("source", "sink", Partitioner.HASH),),
    )


def co_map_two_gates_job(values: Mapping[str, Any]) -> JobGraph:
    """A task of two input gates, as FLINK-18139 needs (its test,
    ``StreamTaskNetworkInputTest.testSnapshotWithTwoInputGates``, has one channel per gate):
    two sources connected into a two-input map, each by a shuffle, so both of its inputs are
    checkpointed unaligned; the map forwards to a sink."""
    return _connected_job(
        values,
        (
            _source(values, values["source_parallelism"], "left"),
            _source(values, values["source_parallelism"], "right"),
        ),
        (
            Exchange("left", "co-map", Partitioner.SHUFFLE),
            Exchange("right", "co-map", Partitioner.SHUFFLE),
        ),
        Operator("co-map", values["parallelism"], OperatorKind.MAP),
    )


def two_gates_job(values: Mapping[str, Any]) -> JobGraph:
    """Two sources into one slow operator, one keyed (RANGE mapping on restore) and one
    rebalanced (ROUND_ROBIN): the job of ``StateAssignmentOperationTest``'s
    ``testChannelStateAssignmentDownscalingTwoDifferentGates`` (FLINK-22686), a non-keyed
    co-process function reading a keyed and a rebalanced stream."""
    p = values["parallelism"]
    return JobGraph(
        (
            _source(values, values["source_parallelism"], "keyed-source"),
            _source(values, values["source_parallelism"], "rebalanced-source"),
            Operator(
                "process",
                p,
                OperatorKind.MAP,
                cost=values["cost"],
                max_parallelism=values["max_parallelism"],
            ),
            Operator("sink", p, OperatorKind.SINK),
        ),
        (
            Exchange("keyed-source", "process", Partitioner.HASH),
            Exchange("rebalanced-source", "process", Partitioner.REBALANCE),
            Exchange("process", "sink", Partitioner.FORWARD),
        ),
    )
