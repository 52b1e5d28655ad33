"""A catalogue of named topologies and parameter sets, shared by the CLI and the notebooks.

Each topology names the parameters a user may change (with defaults and bounds) and builds a
fresh :class:`~flinkstate.runtime.world.world.NetworkWorld` from them, so ``flinkstate run NAME
--set key=value`` and a notebook slider go through the same validation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from flinkstate.errors import InvalidParameterError
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.runtime.checkpoint.state_assignment import StateAssignment
from flinkstate.runtime.jobgraph import Exchange, JobGraph, Operator, OperatorKind, SubtaskId
from flinkstate.runtime.options import (
    CHECKPOINTING_DURING_RECOVERY_KEY,
    DEFAULT_MAX_SEGMENT_SIZE,
    DEFAULT_RESTART_DELAY,
    DEFAULT_SPILL_FILE_SIZE,
    MISNAMED_DURING_RECOVERY_KEY,
    TOLERABLE_FAILED_CHECKPOINTS_KEY,
    UNALIGNED_KEY,
    ConnectedMappingLookup,
    DuringRecoveryGate,
    FailedDeliveryRecycle,
    Fault,
    GateConversion,
    NoOpTriggerAfter,
    RecoveredWatermarks,
    RecoveryAbort,
    RecoveryBarrierDecline,
    RecoveryGeneration,
    RunOptions,
    SpillCleanup,
    TaskFailure,
    TerminalTaskRule,
)
from flinkstate.runtime.shuffle.config import NetworkConfig
from flinkstate.runtime.world.world import NetworkWorld

#: the largest parallelism an operator may be given: a production job's (a reviewer asks
#: about 200 -> 120); an all-to-all exchange has P x P channels, 262,144 at this bound
MAX_JOB_PARALLELISM = 512


@dataclass(frozen=True)
class Parameter:
    name: str
    default: int | bool | str
    help: str
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    #: Flink's configuration key for the same setting, which ``--set`` and a notebook's
    #: overrides accept in place of the name ("" where Flink has no option for it)
    flink_key: str = ""

    def parse(self, raw: object) -> int | bool | str:
        """Convert and check a user's value; the error names the parameter and the bounds."""
        if isinstance(self.default, bool):
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("true", "1", "yes", "on"):
                return True
            if text in ("false", "0", "no", "off"):
                return False
            raise InvalidParameterError(f"{self.name} must be true or false, got {raw!r}")
        if isinstance(self.default, int):
            try:
                value = int(str(raw).strip()) if not isinstance(raw, int) else raw
            except ValueError:
                raise InvalidParameterError(
                    f"{self.name} must be a whole number, got {raw!r}"
                ) from None
            if self.minimum is not None and value < self.minimum:
                raise InvalidParameterError(
                    f"{self.name} = {value} is below its minimum {self.minimum}"
                )
            if self.maximum is not None and value > self.maximum:
                raise InvalidParameterError(
                    f"{self.name} = {value} is above its maximum {self.maximum}"
                )
            return value
        text = str(raw)
        if self.choices and text not in self.choices:
            raise InvalidParameterError(
                f"{self.name} must be one of {', '.join(self.choices)}, got {raw!r}"
            )
        return text


#: keys users copy from somewhere that Flink does not read, with the key it does read
MISNAMED_KEYS = {MISNAMED_DURING_RECOVERY_KEY: CHECKPOINTING_DURING_RECOVERY_KEY}


def by_name(overrides: Mapping[str, object], parameters: Iterable[Parameter]) -> dict[str, object]:
    """``overrides`` with every Flink key given in place of a parameter's name renamed to the
    name; a key Flink does not read (``MISNAMED_KEYS``) or a setting given twice is refused,
    since a silently ignored option is what makes a job recover differently than its owner
    thinks."""
    keyed = [p for p in parameters if p.flink_key]
    names = {p.flink_key: p.name for p in keyed}
    keys = {p.name: p.flink_key for p in keyed}
    renamed: dict[str, object] = {}
    for key, value in overrides.items():
        if key in MISNAMED_KEYS:
            right = MISNAMED_KEYS[key]
            raise InvalidParameterError(
                f"{key} is not a Flink option (Flink 2.3's release notes print it, but Flink "
                f"reads {right}; a job that sets it recovers without checkpointing during "
                f"recovery): set {right} or {names.get(right, right)}"
            )
        name = names.get(key, key)
        if name in renamed:
            raise InvalidParameterError(
                f"{name} is given twice (by its name and by its Flink key {keys[name]}); "
                "give it once"
            )
        renamed[name] = value
    return renamed


COMMON = (
    Parameter(
        "segment_size",
        4096,
        "memory segment (network buffer) size in bytes; Flink: a power of two from 4096 to "
        "2^30 (it must fit a Java int)",
        minimum=1,
    ),
    Parameter(
        "buffers_per_channel",
        2,
        "exclusive buffers per remote input channel",
        minimum=0,
        maximum=64,
    ),
    Parameter(
        "floating_buffers",
        8,
        "floating buffers per input gate (at least 1: Flink's gate always requires one "
        "floating buffer beyond its channels' exclusive ones)",
        minimum=1,
        maximum=1024,
    ),
    Parameter(
        "max_buffers_per_channel",
        10,
        "buffers one subpartition may hold before its producer is back-pressured",
        minimum=1,
        maximum=1024,
    ),
    Parameter(
        "network_buffers", 2048, "network buffers per TaskManager", minimum=1, maximum=1_000_000
    ),
    Parameter(
        "slots_per_tm",
        1,
        "slots per TaskManager (subtask i runs in slot i)",
        minimum=1,
        maximum=1024,
    ),
    Parameter("records", 50, "records each source subtask emits", minimum=0, maximum=10_000_000),
    Parameter("record_size", 300, "payload bytes per record", minimum=0, maximum=64 * 1024 * 1024),
    Parameter("keys", 1000, "distinct keys", minimum=1, maximum=2**31 - 1),
    Parameter(
        "flush_every_record",
        False,
        "flush output buffers after every record (buffer timeout 0) instead of when full",
    ),
    Parameter(
        "checkpoint_interval",
        300,
        "steps before the first checkpoint and between checkpoints (0: none)",
        minimum=0,
        maximum=10_000_000,
    ),
    Parameter("checkpoints", 1, "how many checkpoints to take", minimum=0, maximum=1000),
    Parameter(
        "checkpoint_timeout",
        0,
        "steps after which a checkpoint in progress expires (0: never; Flink: 10 minutes)",
        minimum=0,
        maximum=10_000_000,
    ),
    Parameter(
        "unaligned",
        True,
        f"{UNALIGNED_KEY}: unaligned checkpoints (false: aligned, for comparison)",
        flink_key=UNALIGNED_KEY,
    ),
    Parameter(
        "blocked_priority",
        "master",
        "how a barrier meets a subpartition blocked after recovery: held (before FLINK-39018), "
        "master (Flink 2.3: hidden from a credited remote reader, FLINK-40519), fixed",
        choices=("held", "master", "fixed"),
    ),
    Parameter(
        "gate_conversion",
        "per-gate",
        "when a recovered input gate is converted and requests its partitions: per-gate (as "
        "soon as its own state is consumed, FLINK-39522) or all-gates (once every gate's is, "
        "the rewrite that deadlocked selective readers)",
        choices=tuple(c.value for c in GateConversion),
    ),
    Parameter(
        "checkpointing_during_recovery",
        False,
        f"{CHECKPOINTING_DURING_RECOVERY_KEY}: on only together with "
        "recover_output_on_downstream (and, since FLINK-40518, unaligned checkpoints); then "
        "the generation below recovers",
        flink_key=CHECKPOINTING_DURING_RECOVERY_KEY,
    ),
    Parameter(
        "during_recovery_gate",
        DuringRecoveryGate.REQUIRES_UNALIGNED.value,
        "what turns checkpointing during recovery on: requires-unaligned (FLINK-40518: both "
        "options and unaligned checkpoints) or two-options (Flink 2.3 and master before it: "
        "the aligned barrier handler then meets recovery without a recovery trigger)",
        choices=tuple(c.value for c in DuringRecoveryGate),
    ),
    Parameter(
        "generation",
        "v2",
        "the recovery code that runs with checkpointing during recovery: v1 (Flink 2.3: the "
        "reader filters into network buffers) or v2 (master: into spill files, drained into "
        "the channels); classic rejects the option",
        choices=tuple(g.value for g in RecoveryGeneration),
    ),
    Parameter(
        "coordinator_waits_for_running",
        True,
        "the coordinator triggers only once every task is RUNNING, as Flink does (false: a "
        "what-if where checkpoints meet restoring tasks, which decline them as not ready)",
    ),
    Parameter(
        "tolerable_failed_checkpoints",
        0,
        f"{TOLERABLE_FAILED_CHECKPOINTS_KEY}: counted checkpoint failures in a row the job "
        "survives",
        minimum=0,
        maximum=1_000_000,
        flink_key=TOLERABLE_FAILED_CHECKPOINTS_KEY,
    ),
    Parameter(
        "recovery_barrier_decline",
        "master",
        "v2: a channel in recovery without the checkpoint's recovery barrier declines it as "
        "master does (CHECKPOINT_DECLINED, counted) or as PR #28554 proposed (seed: "
        "CHECKPOINT_DECLINED_TASK_NOT_READY, retried)",
        choices=tuple(c.value for c in RecoveryBarrierDecline),
    ),
    Parameter(
        "no_op_trigger_after",
        NoOpTriggerAfter.STATE_CONSUMED.value,
        "v2: when a task's recovery checkpoint trigger goes back to NO_OP: once every channel's "
        "recovered state is consumed (master) or as soon as the drain is done (PR #28554 "
        "before its review: channels still in recovery then get no recovery barrier)",
        choices=tuple(c.value for c in NoOpTriggerAfter),
    ),
    Parameter(
        "watermark_interval",
        0,
        "event time: each source subtask emits a watermark after every this many records, "
        "and one at the end of its input (0: no watermarks)",
        minimum=0,
        maximum=10_000_000,
    ),
    Parameter(
        "out_of_orderness",
        0,
        "how far a source's watermark stays behind the largest timestamp of each split it reads "
        "(a record's timestamp is its position in its split)",
        minimum=0,
        maximum=10_000_000,
    ),
    Parameter(
        "source_idleness",
        False,
        "the watermark strategy declares idleness: a source subtask with no split to read (more "
        "source subtasks than splits after a restart) marks itself idle instead of holding back "
        "every watermark downstream until it ends",
    ),
    Parameter(
        "recovered_watermarks",
        RecoveredWatermarks.AGGREGATED.value,
        "checkpointing during recovery: what the filtering handler does with the watermarks of "
        "old channels merged into one new channel: aggregated (FLINK-40517: the minimum, held "
        "until each has one) or passed-through (before it)",
        choices=tuple(c.value for c in RecoveredWatermarks),
    ),
    Parameter(
        "prefilter_source",
        "heap-fallback",
        "v1's filtering buffers: network (before FLINK-38930), heap-fallback (Flink 2.3), "
        "heap-segment (FLINK-39519)",
        choices=("network", "heap-fallback", "heap-segment"),
    ),
    Parameter(
        "spill_file_size",
        DEFAULT_SPILL_FILE_SIZE,
        "v2: bytes after which a spill file is closed and the next begins (Flink: 64 MiB)",
        minimum=1,
        maximum=2**40,
    ),
    Parameter(
        "spill_segment_size",
        DEFAULT_MAX_SEGMENT_SIZE,
        "v2: bytes after which a channel's spill segment is sealed (Flink: 1 MiB)",
        minimum=1,
        maximum=2**31 - 1,
    ),
    Parameter(
        "fail_filtered_delivery",
        0,
        "v1, a test hook: handing the n-th filtered buffer of a source buffer to its recovered "
        "channel fails, in the first source buffer that yields that many, and the task fails "
        "(0: none; InputChannelRecoveredStateHandlerTest fails the first)",
        minimum=0,
        maximum=1_000_000,
    ),
    Parameter(
        "failed_delivery_recycle",
        FailedDeliveryRecycle.AFTER_FAILED.value,
        "v1: what the reader recycles when handing a filtered buffer over fails: after-failed "
        "(FLINK-40345: the buffers not handed over) or from-failed (Flink 2.3: the failed one "
        "too, which the channel already holds)",
        choices=tuple(c.value for c in FailedDeliveryRecycle),
    ),
    Parameter(
        "abort_recovery",
        RecoveryAbort.NONE.value,
        "v2, a test hook: the first recovery with spill files fails before its drain: in its "
        "fetch once the files are written (fetch), or in its request-partitions or "
        "install-drainer mail (none: no failure)",
        choices=tuple(c.value for c in RecoveryAbort),
    ),
    Parameter(
        "spill_cleanup",
        SpillCleanup.ON_ABORT.value,
        "v2: who deletes the spill files of a recovery that aborts before its drain: on-abort "
        "(FLINK-40520: the failed fetch, or the task's cleanup) or drain-only (master before "
        "it: nobody, they stay on disk)",
        choices=tuple(c.value for c in SpillCleanup),
    ),
    Parameter(
        "subtasks_per_state_file",
        5,
        "subtasks of a TaskManager sharing one channel-state writer thread and file",
        minimum=1,
        maximum=1024,
    ),
)


@dataclass(frozen=True)
class Topology:
    name: str
    description: str
    parameters: tuple[Parameter, ...]
    _build: Callable[[Mapping[str, Any]], JobGraph]

    def resolve(self, overrides: Mapping[str, object] | None = None) -> dict[str, Any]:
        """Defaults with the user's overrides applied and checked."""
        known = {p.name: p for p in self.parameters}
        values: dict[str, Any] = {p.name: p.default for p in self.parameters}
        for name, raw in by_name(overrides or {}, self.parameters).items():
            if name not in known:
                raise InvalidParameterError(
                    f"unknown parameter {name!r} for topology {self.name}; known: "
                    + ", ".join(sorted(known))
                )
            values[name] = known[name].parse(raw)
        return values

    def graph(self, overrides: Mapping[str, object] | None = None) -> JobGraph:
        """The job's graph with ``overrides``: its operators and edges, no network built."""
        return self._build(self.resolve(overrides))

    def build(
        self,
        overrides: Mapping[str, object] | None = None,
        *,
        seed: int = 0,
        faults: frozenset[Fault] = frozenset(),
        full_check_every: int = 64,
        scale_audits: bool = True,
        check_actions: bool = False,
        restore: StateAssignment | None = None,
    ) -> NetworkWorld:
        """A fresh run of the job, or (``restore``) the job restarted from a checkpoint, its
        operators at the assignment's parallelism and its network configured by ``overrides``
        (so "what if the restored job had fewer buffers" is one call)."""
        values = self.resolve(overrides)
        # each setting is one name: the parameter's, the field's of NetworkConfig or RunOptions
        config = NetworkConfig(**{f.name: values[f.name] for f in fields(NetworkConfig)})
        options = RunOptions(  # parses and checks the choices itself
            seed=seed,
            faults=faults,
            full_check_every=full_check_every,
            scale_audits=scale_audits,
            check_actions=check_actions,
            **{
                **{f.name: values[f.name] for f in fields(RunOptions) if f.name in values},
                **_failover_options(values),
            },
        )
        graph = self._build(values) if restore is None else restore.graph
        return NetworkWorld(graph, config, options, restore=restore)


#: ``fail_operator`` when no subtask fails
NO_FAILURE = "none"


def failover_parameters(operators: tuple[str, ...]) -> tuple[Parameter, ...]:
    """The parameters of a task failure and its failover, for a topology of ``operators``."""
    return (
        Parameter(
            "fail_operator",
            NO_FAILURE,
            "operator of the subtask that fails on purpose (none: no failure); its pipelined "
            "region fails over and the run ends at the region's restart",
            choices=(NO_FAILURE, *operators),
        ),
        Parameter("fail_subtask", 0, "index of the subtask that fails", minimum=0, maximum=127),
        Parameter(
            "fail_after_records",
            0,
            "records the failing subtask emits (a source) or processes before it fails",
            minimum=0,
            maximum=10_000_000,
        ),
        Parameter(
            "checkpoint_during_failover",
            False,
            "trigger one checkpoint by hand (REST POST /jobs/:jobid/checkpoints) once the failed "
            "region's subtasks are FAILED or CANCELED, before its restart",
        ),
        Parameter(
            "terminal_tasks",
            TerminalTaskRule.ABORT.value,
            "how the checkpoint plan treats FAILED and CANCELED subtasks: abort (FLINK-40482) or "
            "as-finished (before it: left out of the plan and recorded as finished)",
            choices=tuple(r.value for r in TerminalTaskRule),
        ),
        Parameter(
            "restart_delay",
            DEFAULT_RESTART_DELAY,
            "steps from the failure to the region's restart, which also waits for every cancel "
            "(Flink: the restart strategy's backoff, 1 s by default)",
            minimum=0,
            maximum=10_000_000,
        ),
    )


def _failover_options(values: Mapping[str, Any]) -> dict[str, Any]:
    """The failover choices of a topology that has ``failover_parameters`` (none otherwise)."""
    if "fail_operator" not in values:
        return {}
    failure = None
    if values["fail_operator"] != NO_FAILURE:
        subtask = SubtaskId(values["fail_operator"], values["fail_subtask"])
        failure = TaskFailure(subtask, values["fail_after_records"])
    return {
        "task_failure": failure,
        "terminal_tasks": values["terminal_tasks"],
        "checkpoint_during_failover": values["checkpoint_during_failover"],
        "restart_delay": values["restart_delay"],
    }


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


def _keyed_job(values: Mapping[str, Any]) -> JobGraph:
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


def _two_input_job(values: Mapping[str, Any]) -> JobGraph:
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


def _sequential_reading_job(values: Mapping[str, Any]) -> JobGraph:
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


#: the restore's parameter for a job that connects two operators twice, the only kind of job
#: where it matters: how each descriptor finds the other side's channel mapping
CONNECTED_MAPPING_LOOKUP = Parameter(
    "connected_mapping_lookup",
    ConnectedMappingLookup.DATA_SET.value,
    "how the restore's state assignment finds each gate's and partition's channel mapping: "
    "data-set (by the edge's intermediate data set, FLINK-40269) or first-edge (by the "
    "connected operator alone, before: the first edge's mapping for both edges)",
    choices=tuple(c.value for c in ConnectedMappingLookup),
)


def _same_upstream_job(values: Mapping[str, Any]) -> JobGraph:
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


def _pipeline_job(values: Mapping[str, Any]) -> JobGraph:
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


def _keyed_chain_job(values: Mapping[str, Any]) -> JobGraph:
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


def _pipelined_regions_job(values: Mapping[str, Any]) -> JobGraph:
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
_REGIONS_OPERATORS = ("bounded", "bounded-sink", "source", "sink")


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


def _itcase_pipeline_job(values: Mapping[str, Any]) -> JobGraph:
    """``UnalignedCheckpointRescaleITCase``'s PIPELINE: ``createSourcePipeline`` followed by
    ``addFailingSink``; parallelisms are the ITCase's functions of the job parallelism p."""
    p = values["parallelism"]
    operators, exchanges, last = _itcase_source_pipeline(values, p)
    return _itcase_failing_sink(operators, exchanges, [last], p)


def _itcase_union_job(values: Mapping[str, Any]) -> JobGraph:
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


def _itcase_multi_input_job(values: Mapping[str, Any]) -> JobGraph:
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


def _itcase_keyed_different_parallelism_job(values: Mapping[str, Any]) -> JobGraph:
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


def _itcase_broadcast_job(values: Mapping[str, Any]) -> JobGraph:
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


def _itcase_keyed_broadcast_job(values: Mapping[str, Any]) -> JobGraph:
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


def _keyed_params(
    cost: int = 0,
    source_parallelism: int | None = None,
    parallelism: str = "parallelism of the keyed operator and the sink",
    minimum_parallelism: int = 1,
) -> tuple[Parameter, ...]:
    """The parameters of a job with a keyed operator (its default processing cost given)."""
    params = (
        Parameter(
            "parallelism",
            4,
            parallelism,
            minimum=minimum_parallelism,
            maximum=MAX_JOB_PARALLELISM,
        ),
        Parameter(
            "max_parallelism", 128, "key groups of the keyed operator", minimum=1, maximum=32768
        ),
        Parameter(
            "cost",
            cost,
            "extra steps the keyed operator spends per record",
            minimum=0,
            maximum=10_000,
        ),
    )
    if source_parallelism is None:
        return params
    return (
        *params,
        Parameter(
            "source_parallelism",
            source_parallelism,
            "parallelism of the source",
            minimum=1,
            maximum=MAX_JOB_PARALLELISM,
        ),
    )


_ITCASE_PARALLELISM = (
    "job parallelism p of UnalignedCheckpointRescaleITCase; each operator's is a function of it"
)
_ITCASE_PARAMS = _keyed_params(2, None, _ITCASE_PARALLELISM)

CATALOGUE: dict[str, Topology] = {
    t.name: t
    for t in (
        Topology(
            "keyed",
            "source -keyBy-> counter -forward-> sink: the plain keyed job",
            (*COMMON, *_keyed_params(source_parallelism=4)),
            _keyed_job,
        ),
        Topology(
            "keyed-chain",
            "source -keyBy-> first -keyBy-> second -forward-> sink: every key keeps one path, "
            "so its records stay in order across recovery",
            (*COMMON, *_keyed_params(cost=3, source_parallelism=2)),
            _keyed_chain_job,
        ),
        Topology(
            "itcase-pipeline",
            "UnalignedCheckpointRescaleITCase PIPELINE: source(p) -global-> map(p) -rebalance-> "
            "map(p+1) -shuffle-> map(2p) -shuffle-> map(p+1) -keyBy-> keyed(p) -rescale-> "
            "map(max(p+1, 3p/2)) -shuffle-> map(p) -shuffle-> sink(1)",
            (*COMMON, *_ITCASE_PARAMS),
            _itcase_pipeline_job,
        ),
        Topology(
            "itcase-union",
            "UnalignedCheckpointRescaleITCase UNION: three itcase-pipeline source pipelines "
            "(source(p) ... map(max(p+1, 3p/2))) unioned -shuffle-> map(p) -shuffle-> sink(1)",
            (*COMMON, *_ITCASE_PARAMS),
            _itcase_union_job,
        ),
        Topology(
            "itcase-multi-input",
            "UnalignedCheckpointRescaleITCase MULTI_INPUT: three source pipelines combined by "
            "two-input maps min1(p) and min2(p) -shuffle-> map(p) -shuffle-> sink(1)",
            (*COMMON, *_ITCASE_PARAMS),
            _itcase_multi_input_job,
        ),
        Topology(
            "itcase-keyed-different-parallelism",
            "UnalignedCheckpointRescaleITCase KEYED_DIFFERENT_PARALLELISM: source pipelines at "
            "p/2 and p/3 -keyBy-> keyed co-process(p) -shuffle-> map(p) -shuffle-> sink(1)",
            (
                *COMMON,
                *_keyed_params(
                    2,
                    None,
                    _ITCASE_PARALLELISM + " (at least 3: the second pipeline runs at p/3)",
                    minimum_parallelism=3,
                ),
            ),
            _itcase_keyed_different_parallelism_job,
        ),
        Topology(
            "itcase-broadcast",
            "UnalignedCheckpointRescaleITCase BROADCAST: source pipeline -> map(p) -rebalance-> "
            "process(2p) <-broadcast- source(p); process -shuffle-> map(p) -shuffle-> sink(1)",
            (*COMMON, *_ITCASE_PARAMS),
            _itcase_broadcast_job,
        ),
        Topology(
            "itcase-keyed-broadcast",
            "UnalignedCheckpointRescaleITCase KEYED_BROADCAST: source pipeline -> map(p) "
            "-keyBy-> keyed process(p+2) <-broadcast- three sources(1); process -shuffle-> "
            "map(p) -shuffle-> sink(1)",
            (*COMMON, *_ITCASE_PARAMS),
            _itcase_keyed_broadcast_job,
        ),
        Topology(
            "two-input",
            "left and right sources -keyBy-> join -rebalance-> sink: a two-input task",
            (*COMMON, *_keyed_params()),
            _two_input_job,
        ),
        Topology(
            "sequential-reading",
            "first and second sources -keyBy/rebalance-> sequential -forward-> sink: a "
            "two-input operator that reads the first input to its end, then the second "
            "(InputSelectable, StreamTaskSelectiveReadingITCase)",
            (
                *COMMON,
                *_keyed_params(
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
            _sequential_reading_job,
        ),
        Topology(
            "same-upstream",
            "source -rebalance-> co-map <-keyBy- source: a two-input task reading one upstream "
            "twice, two edges between the same operators "
            "(UnalignedCheckpointRescaleSameUpstreamITCase)",
            (
                *COMMON,
                *_keyed_params(
                    cost=4, parallelism="parallelism of every operator (the ITCase: 2, then 4)"
                ),
                CONNECTED_MAPPING_LOOKUP,
            ),
            _same_upstream_job,
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
                *failover_parameters(_REGIONS_OPERATORS),
            ),
            _pipelined_regions_job,
        ),
        Topology(
            "backpressure",
            "source -rebalance-> map -keyBy-> slow -rebalance-> sink(1): back-pressure builds "
            "behind the slow keyed operator",
            (*COMMON, *_keyed_params(cost=5)),
            _pipeline_job,
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
