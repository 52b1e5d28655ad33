"""A catalogue of named topologies, shared by the CLI and the notebooks.

Each topology (:class:`~flinkstate.catalogue.topology.Topology`) names the parameters a user may
change (:mod:`~flinkstate.catalogue.parameters`, with defaults and bounds) and builds a fresh
:class:`~flinkstate.runtime.world.world.NetworkWorld` of its job
(:mod:`~flinkstate.catalogue.jobs`) from them, so ``flinkstate run NAME --set key=value`` and a
notebook slider go through the same validation.
"""

from __future__ import annotations

from flinkstate.catalogue.jobs import (
    REGIONS_OPERATORS,
    SEQUENTIAL_EXCHANGES,
    co_map_two_gates_job,
    itcase_broadcast_job,
    itcase_custom_partitioner_job,
    itcase_keyed_broadcast_job,
    itcase_keyed_different_parallelism_job,
    itcase_multi_input_job,
    itcase_pipeline_job,
    itcase_unaligned_job,
    itcase_union_job,
    keyed_chain_job,
    keyed_job,
    keyed_sink_job,
    pipeline_job,
    pipelined_regions_job,
    same_upstream_job,
    sequential_reading_job,
    two_gates_job,
    two_input_job,
)
from flinkstate.catalogue.parameters import (
    ALIGNED_BARRIER_TRACKING,
    ALIGNED_CHECKPOINT_TIMEOUT,
    COMMON,
    CONNECTED_MAPPING_LOOKUP,
    CONVERSION_CHECK,
    INFLIGHT_DATA_LOOKUP,
    INPUT_REASSIGNMENT,
    LOCAL_CHANNEL_PERSISTENCE,
    MAPPING_SCOPE,
    MAX_JOB_PARALLELISM,
    RECOVERED_CHANNEL_CHECKPOINT_START,
    RECOVERY_ERROR,
    RESTORE_ORDER,
    STATELESS_ASSIGNMENT,
    TIMED_OUT_ALIGNMENT,
    Parameter,
    failover_parameters,
    keyed_parameters,
)
from flinkstate.catalogue.topology import Topology
from flinkstate.errors import InvalidParameterError

_ITCASE_PARALLELISM = (
    "job parallelism p of UnalignedCheckpointRescaleITCase; each operator's is a function of it"
)
_ITCASE_PARAMS = keyed_parameters(2, None, _ITCASE_PARALLELISM)
#: UnalignedCheckpointITCase's parallelisms (source(p) -shuffle-> map(p) -shuffle-> sink(p)), in
#: each of its topologies
_ITCASE_UNALIGNED_PARAMS = (
    Parameter(
        "parallelism",
        2,
        "parallelism of the map and the sink (the ITCase: 1, 2, 10 and 20)",
        minimum=1,
        maximum=MAX_JOB_PARALLELISM,
    ),
    Parameter(
        "source_parallelism",
        2,
        "parallelism of the source (the ITCase: the same as the others)",
        minimum=1,
        maximum=MAX_JOB_PARALLELISM,
    ),
)

CATALOGUE: dict[str, Topology] = {
    t.name: t
    for t in (
        Topology(
            "keyed",
            "source -keyBy-> counter -forward-> sink: the plain keyed job",
            (*COMMON, *keyed_parameters(source_parallelism=4)),
            keyed_job,
        ),
        Topology(
            "keyed-restore-order",
            "the plain keyed job (source -keyBy-> counter -forward-> sink) restored with the "
            "order of StreamTask.beforeInvoke a parameter, as FLINK-19907 found it: the operator "
            "chain opened before or after the recovered output is written",
            (*COMMON, *keyed_parameters(source_parallelism=4), RESTORE_ORDER),
            keyed_job,
        ),
        Topology(
            "keyed-recovery-error",
            "the plain keyed job (source -keyBy-> counter -forward-> sink) restored with an "
            "error in the channel-state reader's hand-over of recovered input, as FLINK-22376 "
            "found it: who recycles the buffer then a parameter",
            (*COMMON, *keyed_parameters(source_parallelism=4), *RECOVERY_ERROR),
            keyed_job,
        ),
        Topology(
            "keyed-chain",
            "source -keyBy-> first -keyBy-> second -forward-> sink: every key keeps one path, "
            "so its records stay in order across recovery",
            (*COMMON, *keyed_parameters(cost=3, source_parallelism=2)),
            keyed_chain_job,
        ),
        Topology(
            "itcase-pipeline",
            "UnalignedCheckpointRescaleITCase PIPELINE: source(p) -global-> map(p) -rebalance-> "
            "map(p+1) -shuffle-> map(2p) -shuffle-> map(p+1) -keyBy-> keyed(p) -rescale-> "
            "map(max(p+1, 3p/2)) -shuffle-> map(p) -shuffle-> sink(1)",
            (*COMMON, *_ITCASE_PARAMS),
            itcase_pipeline_job,
        ),
        Topology(
            "itcase-union",
            "UnalignedCheckpointRescaleITCase UNION: three itcase-pipeline source pipelines "
            "(source(p) ... map(max(p+1, 3p/2))) unioned -shuffle-> map(p) -shuffle-> sink(1)",
            (*COMMON, *_ITCASE_PARAMS),
            itcase_union_job,
        ),
        Topology(
            "itcase-multi-input",
            "UnalignedCheckpointRescaleITCase MULTI_INPUT: three source pipelines combined by "
            "two-input maps min1(p) and min2(p) -shuffle-> map(p) -shuffle-> sink(1)",
            (*COMMON, *_ITCASE_PARAMS),
            itcase_multi_input_job,
        ),
        Topology(
            "itcase-keyed-different-parallelism",
            "UnalignedCheckpointRescaleITCase KEYED_DIFFERENT_PARALLELISM: source pipelines at "
            "p/2 and p/3 -keyBy-> keyed co-process(p) -shuffle-> map(p) -shuffle-> sink(1)",
            (
                *COMMON,
                *keyed_parameters(
                    2,
                    None,
                    _ITCASE_PARALLELISM + " (at least 3: the second pipeline runs at p/3)",
                    minimum_parallelism=3,
                ),
            ),
            itcase_keyed_different_parallelism_job,
        ),
        Topology(
            "itcase-broadcast",
            "UnalignedCheckpointRescaleITCase BROADCAST: source pipeline -> map(p) -rebalance-> "
            "process(2p) <-broadcast- source(p); process -shuffle-> map(p) -shuffle-> sink(1)",
            (*COMMON, *_ITCASE_PARAMS),
            itcase_broadcast_job,
        ),
        Topology(
            "itcase-keyed-broadcast",
            "UnalignedCheckpointRescaleITCase KEYED_BROADCAST: source pipeline -> map(p) "
            "-keyBy-> keyed process(p+2) <-broadcast- three sources(1); process -shuffle-> "
            "map(p) -shuffle-> sink(1)",
            (*COMMON, *_ITCASE_PARAMS),
            itcase_keyed_broadcast_job,
        ),
        Topology(
            "itcase-custom-partitioner",
            "UnalignedCheckpointRescaleITCase CUSTOM_PARTITIONER (FLINK-35351): source(p) "
            "-partitionCustom-> sink(3), the sink slow",
            (
                *COMMON,
                *keyed_parameters(
                    cost=8, parallelism="parallelism of the source (the ITCase's p; 3, then 2)"
                ),
                Parameter(
                    "sink_parallelism",
                    3,
                    "parallelism of the sink, which a new job parallelism leaves as it is",
                    minimum=1,
                    maximum=MAX_JOB_PARALLELISM,
                ),
                INPUT_REASSIGNMENT,
            ),
            itcase_custom_partitioner_job,
        ),
        Topology(
            "itcase-unaligned",
            "UnalignedCheckpointITCase of 2020 (FLINK-17315): source(p) -shuffle-> map(p) "
            "-shuffle-> sink(p); with three slots per TaskManager its channels at p=2 are all "
            "local",
            (
                *COMMON,
                *_ITCASE_UNALIGNED_PARAMS,
                LOCAL_CHANNEL_PERSISTENCE,
            ),
            itcase_unaligned_job,
        ),
        Topology(
            "itcase-unaligned-restore",
            "UnalignedCheckpointITCase of 2020 restored, as FLINK-18989 found it: source(p) "
            "-shuffle-> map(p) -shuffle-> sink(p), each restored channel a recovered one until "
            "its gate is converted",
            (
                *COMMON,
                *_ITCASE_UNALIGNED_PARAMS,
                CONVERSION_CHECK,
            ),
            itcase_unaligned_job,
        ),
        Topology(
            "itcase-alignment-timeout",
            "UnalignedCheckpointITCase with an aligned checkpoint timeout (its runs with "
            "alignmentTimeout 1 and 5 ms): source(p) -shuffle-> map(p) -shuffle-> sink(p), "
            "checkpoints aligned until the timeout, then unaligned",
            (
                *COMMON,
                *_ITCASE_UNALIGNED_PARAMS,
                ALIGNED_CHECKPOINT_TIMEOUT,
                ALIGNED_BARRIER_TRACKING,
                TIMED_OUT_ALIGNMENT,
            ),
            itcase_unaligned_job,
        ),
        Topology(
            "keyed-sink",
            "source -keyBy-> sink: a sink with no state of its own beside an exchange with "
            "channel state (FLINK-27031, FLINK-31963)",
            (
                *COMMON,
                *keyed_parameters(
                    source_parallelism=3, parallelism="parallelism of the sink (stateless)"
                ),
                STATELESS_ASSIGNMENT,
            ),
            keyed_sink_job,
        ),
        Topology(
            "two-gates",
            "keyed-source -keyBy-> process <-rebalance- rebalanced-source; process -forward-> "
            "sink: one operator's gates with different mappers (FLINK-22686)",
            (
                *COMMON,
                *keyed_parameters(
                    cost=8,
                    source_parallelism=3,
                    parallelism="parallelism of the process operator and the sink",
                ),
                MAPPING_SCOPE,
            ),
            two_gates_job,
        ),
        Topology(
            "two-input",
            "left and right sources -keyBy-> join -rebalance-> sink: a two-input task",
            (*COMMON, *keyed_parameters()),
            two_input_job,
        ),
        Topology(
            "co-map-two-gates",
            "left and right sources -shuffle-> co-map -forward-> sink: a task of two input "
            "gates, each checkpointed unaligned (FLINK-18139)",
            (
                *COMMON,
                Parameter(
                    "parallelism",
                    2,
                    "parallelism of the co-map and the sink",
                    minimum=1,
                    maximum=MAX_JOB_PARALLELISM,
                ),
                Parameter(
                    "source_parallelism",
                    2,
                    "parallelism of each source",
                    minimum=1,
                    maximum=MAX_JOB_PARALLELISM,
                ),
                INFLIGHT_DATA_LOOKUP,
            ),
            co_map_two_gates_job,
        ),
        Topology(
            "co-map-replaying-gate",
            "left and right sources -shuffle-> co-map -forward-> sink, restarted while "
            "Flink 1.12 let checkpoints reach a task whose other gate still replays its "
            "recovered state (FLINK-20654; UnalignedCheckpointITCase's parallel cogroup)",
            (
                *COMMON,
                Parameter(
                    "parallelism",
                    2,
                    "parallelism of the co-map and the sink",
                    minimum=1,
                    maximum=MAX_JOB_PARALLELISM,
                ),
                Parameter(
                    "source_parallelism",
                    2,
                    "parallelism of each source",
                    minimum=1,
                    maximum=MAX_JOB_PARALLELISM,
                ),
                RECOVERED_CHANNEL_CHECKPOINT_START,
            ),
            co_map_two_gates_job,
        ),
        Topology(
            "sequential-reading",
            "first and second sources -keyBy/rebalance-> sequential -forward-> sink: a "
            "two-input operator that reads the first input to its end, then the second "
            "(InputSelectable, StreamTaskSelectiveReadingITCase)",
            (
                *COMMON,
                *keyed_parameters(
                    source_parallelism=2,
                    parallelism="parallelism of the sequential operator and the sink",
                ),
                Parameter(
                    "exchange",
                    "keyBy",
                    "how each source feeds the sequential operator",
                    choices=tuple(SEQUENTIAL_EXCHANGES),
                ),
            ),
            sequential_reading_job,
        ),
        Topology(
            "same-upstream",
            "source -rebalance-> co-map <-keyBy- source: a two-input task reading one upstream "
            "twice, two edges between the same operators "
            "(UnalignedCheckpointRescaleSameUpstreamITCase)",
            (
                *COMMON,
                *keyed_parameters(
                    cost=4, parallelism="parallelism of every operator (the ITCase: 2, then 4)"
                ),
                CONNECTED_MAPPING_LOOKUP,
            ),
            same_upstream_job,
        ),
        Topology(
            "pipelined-regions",
            "bounded(1) -forward-> bounded-sink(1) beside source(p) -forward-> sink(p): no "
            "exchange joins two subtask indices, so each pipeline's subtask i is a pipelined "
            "region of its own; the bounded pipeline finishes first; one subtask may fail",
            (
                *COMMON,
                Parameter(
                    "parallelism",
                    2,
                    "parallelism of source and sink: one pipelined region per subtask index",
                    minimum=1,
                    maximum=MAX_JOB_PARALLELISM,
                ),
                Parameter(
                    "bounded_records",
                    10,
                    "records the bounded pipeline's source emits (it and its sink then FINISH)",
                    minimum=0,
                    maximum=10_000_000,
                ),
                *failover_parameters(REGIONS_OPERATORS),
            ),
            pipelined_regions_job,
        ),
        Topology(
            "backpressure",
            "source -rebalance-> map -keyBy-> slow -rebalance-> sink(1): back-pressure builds "
            "behind the slow keyed operator",
            (*COMMON, *keyed_parameters(cost=5)),
            pipeline_job,
        ),
    )
}


def topology(name: str) -> Topology:
    try:
        return CATALOGUE[name]
    except KeyError:
        raise InvalidParameterError(
            f"unknown topology {name!r}; known: {', '.join(sorted(CATALOGUE))}"
        ) from None
