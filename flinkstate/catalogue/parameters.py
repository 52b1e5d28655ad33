"""The parameters a user may change in a topology, with their defaults, bounds and Flink's
keys: one definition that ``flinkstate run --set``, a notebook's sliders and a forecast all check
values against, so a value is refused the same way wherever it comes from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flinkstate.errors import InvalidParameterError
from flinkstate.rescale.reassignment import InputReassignment, MappingScope, StatelessAssignment
from flinkstate.runtime.capture_versions import (
    AlignedBarrierTracking,
    InflightDataLookup,
    LocalChannelPersistence,
    RecoveredChannelCheckpointStart,
    TimedOutAlignment,
)
from flinkstate.runtime.jobgraph import SubtaskId
from flinkstate.runtime.options import (
    ALIGNED_CHECKPOINT_TIMEOUT_KEY,
    CHECKPOINTING_DURING_RECOVERY_KEY,
    DEFAULT_MAX_SEGMENT_SIZE,
    DEFAULT_RESTART_DELAY,
    DEFAULT_SPILL_FILE_SIZE,
    MISNAMED_DURING_RECOVERY_KEY,
    TOLERABLE_FAILED_CHECKPOINTS_KEY,
    UNALIGNED_KEY,
    ConnectedMappingLookup,
    DuringRecoveryGate,
    GateConversion,
    NoOpTriggerAfter,
    RecoveredWatermarks,
    RecoveryAbort,
    RecoveryBarrierDecline,
    RecoveryGeneration,
    TaskFailure,
    TerminalTaskRule,
)
from flinkstate.runtime.restore_versions import (
    ConversionCheck,
    FailedDeliveryRecycle,
    RecoveredBufferOwnership,
    RestoreOrder,
    SpillCleanup,
)

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


def keyed_parameters(
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


def failover_options(values: Mapping[str, Any]) -> dict[str, Any]:
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


#: the restore's parameter for a job with a custom partitioner, the only kind of job where the
#: two versions of Flink's rule differ: when a consumer's input state is split anew
INPUT_REASSIGNMENT = Parameter(
    "input_reassignment",
    InputReassignment.FULL_MAPPER.value,
    "which Flink decides whether a restored consumer's input channel state is split anew: "
    "flink-1.19.1 (FLINK-35351, and every release since: also when an input has a custom "
    "partitioner and a producer's new parallelism differs from the consumer's old one) or "
    "flink-1.19.0 (and before: only when the consumer's own parallelism changed)",
    choices=tuple(c.value for c in InputReassignment),
)


#: the parameter of the job FLINK-17315 showed on, the only one that offers it: whether a local
#: input channel persists what it reads between the checkpoint's start and its barrier
LOCAL_CHANNEL_PERSISTENCE = Parameter(
    "local_channel_persistence",
    LocalChannelPersistence.PERSISTER.value,
    "what a local input channel persists once its task starts an unaligned checkpoint, until "
    "the channel's barrier: flink-1.11.0 (FLINK-17315, every release: the buffers it reads, as "
    "a remote channel does) or flink-1.11-snapshot (master in April 2020: nothing)",
    choices=tuple(c.value for c in LocalChannelPersistence),
)


#: the parameter of the alignment-timeout topology: the aligned checkpoint timeout, in steps
#: from the checkpoint's trigger (Flink's is a duration from the barrier's timestamp)
ALIGNED_CHECKPOINT_TIMEOUT = Parameter(
    "aligned_checkpoint_timeout",
    0,
    f"{ALIGNED_CHECKPOINT_TIMEOUT_KEY} in steps from the trigger (0: off, Flink's default): "
    "barriers start aligned, and a task still aligning once it elapses snapshots unaligned "
    "while its aligned barriers still queued upstream overtake as priority events",
    minimum=0,
    maximum=10_000_000,
    flink_key=ALIGNED_CHECKPOINT_TIMEOUT_KEY,
)


#: which barriers a local channel's persister notes (FLINK-19681)
ALIGNED_BARRIER_TRACKING = Parameter(
    "aligned_barrier_tracking",
    AlignedBarrierTracking.EVERY_BARRIER.value,
    "which barriers a local input channel notes as received, so that an unaligned snapshot "
    "its aligned checkpoint times out into leaves it alone: flink-1.12-snapshot (before "
    "FLINK-19681: priority barriers only) or flink-1.12.0 (every barrier, master)",
    choices=tuple(c.value for c in AlignedBarrierTracking),
)

#: what a timed-out alignment does with its blocked channels (FLINK-22638)
TIMED_OUT_ALIGNMENT = Parameter(
    "timed_out_alignment",
    TimedOutAlignment.KEEP_BLOCKED.value,
    "what a task whose alignment timed out does with the channels its aligned barriers "
    "blocked: flink-1.13.0 (before FLINK-22638: resumes them at once) or flink-1.13.1 (keeps "
    "them blocked until every barrier is in, master)",
    choices=tuple(c.value for c in TimedOutAlignment),
)


#: the parameter of the two-gate job, the only one where the channel index matters: which
#: channel the unaligned snapshot asks whether a channel's barrier is still to come
INFLIGHT_DATA_LOOKUP = Parameter(
    "inflight_data_lookup",
    InflightDataLookup.CHANNEL_INFO.value,
    "which channel a task's unaligned snapshot asks whether a channel's barrier is still to "
    "come: flink-1.11.0 (FLINK-18139, every release: the channel itself, by its gate and index) "
    "or flink-1.11-snapshot (master in June 2020: the channel of the same index in the first "
    "gate)",
    choices=tuple(c.value for c in InflightDataLookup),
)


#: the restore's parameter of the job FLINK-18989's pair runs: what a recovered channel's
#: conversion checks before it replaces the channel
CONVERSION_CHECK = Parameter(
    "conversion_check",
    ConversionCheck.STATE_CONSUMED.value,
    "what RecoveredInputChannel.toInputChannel checks before a recovered channel becomes a "
    "local or remote one: flink-1.12 (FLINK-18989, every release since: its recovered state "
    "consumed, else the task fails) or flink-1.11 (nothing: what it still queues is released "
    "unread)",
    choices=tuple(c.value for c in ConversionCheck),
)


#: the parameter of the two-gate job's restart, where one gate can still replay its recovered
#: state when the other's barrier comes (FLINK-20654): what a channel still recovering does
#: when its task starts an unaligned checkpoint
RECOVERED_CHANNEL_CHECKPOINT_START = Parameter(
    "recovered_channel_checkpoint_start",
    RecoveredChannelCheckpointStart.DECLINED.value,
    "what a channel still recovering (a RecoveredInputChannel) does when its task starts an "
    "unaligned checkpoint: flink-1.12.2 (FLINK-20654, every release since: declines it as "
    "not ready) or flink-1.12.0 (and 1.12.1: lets it pass, its recovered buffers in no "
    "snapshot)",
    choices=tuple(c.value for c in RecoveredChannelCheckpointStart),
)


#: the restore's parameter of the job FLINK-19907's pair runs: whether a restored task opens its
#: operator chain before or after it writes its recovered output
RESTORE_ORDER = Parameter(
    "restore_order",
    RestoreOrder.OUTPUT_FIRST.value,
    "what StreamTask.beforeInvoke does first on restore: flink-1.11.3 (FLINK-19907, every "
    "release since: the recovered output is written, then the chain opened) or flink-1.11.2 "
    "(the chain opened first: what it emits goes out ahead of the recovered output)",
    choices=tuple(c.value for c in RestoreOrder),
)


#: the restore's parameters of the job FLINK-22376's pair runs: an error in the classic
#: reader's hand-over of recovered input, and who recycles the buffer then
RECOVERY_ERROR = (
    Parameter(
        "fail_recovered_hand_over",
        False,
        "a test hook: the handler's recover of each restored task's last recovered input "
        "buffer throws after its channel took the buffer; the task fails",
    ),
    Parameter(
        "recovered_buffer_ownership",
        RecoveredBufferOwnership.HANDLER.value,
        "who recycles a recovered input buffer whose recover threw: flink-1.14 (FLINK-22376, "
        "every release since: the handler alone, which owns it) or flink-1.13 (the handler "
        "and the reader both: a double recycle)",
        choices=tuple(c.value for c in RecoveredBufferOwnership),
    ),
)


#: the restore's parameter for a job whose consumer has no state of its own: which Flink
#: assigns (and repartitions) state to such a vertex
STATELESS_ASSIGNMENT = Parameter(
    "stateless_assignment",
    StatelessAssignment.REPARTITIONED.value,
    "which Flink assigns state to a restored operator with no state of its own: flink-1.17.1 "
    "(FLINK-31963, 1.16.2 and every release since: repartitioned and assigned when an "
    "upstream has output state or a downstream input state), flink-1.17.0 (FLINK-27031, "
    "from 1.15.1: assigned when an upstream has output state, not repartitioned) or "
    "flink-1.15.0 (and before: nothing assigned)",
    choices=tuple(c.value for c in StatelessAssignment),
)


#: the restore's parameter for a job whose operator reads gates with different mappers: one
#: subtask mapping per vertex (before FLINK-22686) or per gate
MAPPING_SCOPE = Parameter(
    "mapping_scope",
    MappingScope.GATE.value,
    "which Flink keeps a restored operator's subtask mappings: flink-1.13.1 (FLINK-22686, and "
    "every release since: one per gate and per partition) or flink-1.13.0 (and before: one "
    "per operator, so gates whose mappers differ fail the restore)",
    choices=tuple(c.value for c in MappingScope),
)
