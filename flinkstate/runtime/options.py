"""Recovery options as Flink names them, the generation of Flink's recovery code, and how a
failed checkpoint counts.

Flink has shipped three generations of the code that recovers in-flight data
(docs/concepts/checkpointing-during-recovery.md#generations):

* ``classic``: every release; also master with checkpointing during recovery off. Recovered
  buffers sit in ``RecoveredInputChannel``s; no checkpoint until the task has consumed them all.
* ``v1``: Flink 2.3's first checkpointing during recovery. The reader filters records into
  network buffers (falling back to the heap when the pool is empty); the buffers migrate into the
  physical channels at conversion, which snapshot them on a checkpoint.
* ``v2``: current master. The reader filters into local spill files; a drainer copies them into
  the physical channels; a checkpoint takes the channels' queued recovered buffers up to a
  recovery barrier plus the spill files' undrained rest.

Which one runs is decided by ``CheckpointingOptions.isCheckpointingDuringRecoveryEnabled``:
the two options below together, and since FLINK-40518 unaligned checkpoints as well
(``DuringRecoveryGate``); with any of them off, every generation recovers the classic way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from flinkstate.choice import Choice
from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.capture_versions import (
    AlignedBarrierTracking,
    InflightDataLookup,
    LocalChannelPersistence,
    RecoveredChannelCheckpointStart,
    TimedOutAlignment,
)
from flinkstate.runtime.jobgraph import SubtaskId
from flinkstate.runtime.restore_versions import (
    ConversionCheck,
    FailedDeliveryRecycle,
    RecoveredBufferOwnership,
    RestoreOrder,
    SpillCleanup,
)

#: ``AbstractSpillingHandler.DEFAULT_SPILL_FILE_SIZE_BYTES``: soft size bound of one file
DEFAULT_SPILL_FILE_SIZE = 64 * 1024 * 1024
#: ``AbstractSpillingHandler.DEFAULT_MAX_SEGMENT_SIZE_BYTES``: soft size bound of one segment
DEFAULT_MAX_SEGMENT_SIZE = 1024 * 1024

RECOVER_OUTPUT_ON_DOWNSTREAM_KEY = (
    "execution.checkpointing.unaligned.recover-output-on-downstream.enabled"
)
#: the key in code since FLINK-38541; Flink 2.3's release notes print the older
#: ``MISNAMED_DURING_RECOVERY_KEY``
CHECKPOINTING_DURING_RECOVERY_KEY = "execution.checkpointing.during-recovery.enabled"
#: the key of FLINK-35761's release note: no Flink release reads it (no deprecated key either),
#: so a job that sets it runs without checkpointing during recovery
MISNAMED_DURING_RECOVERY_KEY = "execution.checkpointing.unaligned.during-recovery.enabled"
UNALIGNED_KEY = "execution.checkpointing.unaligned.enabled"
ALIGNED_CHECKPOINT_TIMEOUT_KEY = "execution.checkpointing.aligned-checkpoint-timeout"
TOLERABLE_FAILED_CHECKPOINTS_KEY = "execution.checkpointing.tolerable-failed-checkpoints"


class RecoveryGeneration(Choice):
    """Which Flink's recovery code runs when checkpointing during recovery is enabled.

    Examples
    --------
    >>> [(generation.value, generation.flink) for generation in RecoveryGeneration]
    [('classic', 'Flink <= 2.2'), ('v1', 'Flink 2.3'), ('v2', 'Flink master')]
    """

    CLASSIC = "classic"
    V1 = "v1"
    V2 = "v2"

    @property
    def flink(self) -> str:
        return {"classic": "Flink <= 2.2", "v1": "Flink 2.3", "v2": "Flink master"}[self.value]


class DuringRecoveryGate(Choice):
    """Which settings turn checkpointing during recovery on
    (``CheckpointingOptions.isCheckpointingDuringRecoveryEnabled``).

    ``two-options``: recover-output-on-downstream and during-recovery alone (Flink 2.3, and
    master until FLINK-40518). A job restored with aligned checkpoints then recovers with the
    new code, but its barrier handler is the aligned one, which has no recovery trigger: a
    checkpoint during recovery is neither cut nor declined as not ready; it waits for every
    channel's recovered data, and expires when the drain outlasts the timeout.
    ``requires-unaligned``: FLINK-40518 (PR #29055) adds unaligned checkpoints to the rule, so
    such a job recovers the classic way.


    Examples
    --------
    After FLINK-40518, a job restored with aligned checkpoints recovers the classic way even
    with both options on; before it, it did not:

    >>> [
    ...     checkpointing_during_recovery_enabled(True, True, unaligned=False, gate=gate)
    ...     for gate in DuringRecoveryGate
    ... ]
    [True, False]
    """

    TWO_OPTIONS = "two-options"
    REQUIRES_UNALIGNED = "requires-unaligned"


def checkpointing_during_recovery_enabled(
    recover_output_on_downstream: bool,
    checkpointing_during_recovery: bool,
    unaligned: bool = True,
    gate: DuringRecoveryGate = DuringRecoveryGate.REQUIRES_UNALIGNED,
) -> bool:
    """Flink's rule: both options together, and (since FLINK-40518) unaligned checkpoints.

    Examples
    --------
    Recover-output-on-downstream and during-recovery on, with unaligned checkpoints: on; the
    during-recovery option alone: off:

    >>> checkpointing_during_recovery_enabled(True, True, unaligned=True)
    True
    >>> checkpointing_during_recovery_enabled(False, True, unaligned=True)
    False
    """
    if gate is DuringRecoveryGate.REQUIRES_UNALIGNED and not unaligned:
        return False
    return recover_output_on_downstream and checkpointing_during_recovery


@dataclass(frozen=True, slots=True)
class RecoveryOptions:
    """The recovery settings of one run, checked once where they enter.

    Examples
    --------
    Flink 2.3's code runs only with both options on; with the during-recovery option alone,
    Flink ignores it and recovers the classic way:

    >>> both = RecoveryOptions("v1", True, checkpointing_during_recovery=True)
    >>> both.effective_generation
    <RecoveryGeneration.V1: 'v1'>
    >>> alone = RecoveryOptions("v1", checkpointing_during_recovery=True)
    >>> alone.effective_generation
    <RecoveryGeneration.CLASSIC: 'classic'>
    """

    generation: RecoveryGeneration = RecoveryGeneration.V2
    recover_output_on_downstream: bool = False
    checkpointing_during_recovery: bool = False
    #: the restored job's checkpoints (a job may restore an unaligned checkpoint with aligned
    #: ones: ``CHECKPOINTING_DURING_RECOVERY_ENABLED``'s description in Flink 2.3)
    unaligned: bool = True
    gate: DuringRecoveryGate = DuringRecoveryGate.REQUIRES_UNALIGNED
    #: ``effective_generation``, worked out once: the steps of a restore ask it many times
    _effective: RecoveryGeneration = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "generation", RecoveryGeneration.parse(self.generation))
        object.__setattr__(self, "gate", DuringRecoveryGate.parse(self.gate))
        if self.checkpointing_during_recovery and self.generation is RecoveryGeneration.CLASSIC:
            raise InvalidParameterError(
                f"{CHECKPOINTING_DURING_RECOVERY_KEY} does not exist in the classic generation "
                "(Flink <= 2.2); choose generation v1 (Flink 2.3) or v2 (master)"
            )
        effective = (
            self.generation
            if self.checkpointing_during_recovery_enabled
            else RecoveryGeneration.CLASSIC
        )
        object.__setattr__(self, "_effective", effective)

    @property
    def checkpointing_during_recovery_enabled(self) -> bool:
        return checkpointing_during_recovery_enabled(
            self.recover_output_on_downstream,
            self.checkpointing_during_recovery,
            self.unaligned,
            self.gate,
        )

    @property
    def effective_generation(self) -> RecoveryGeneration:
        """The code path that runs: the classic one unless both options are on."""
        return self._effective

    @property
    def note(self) -> str:
        """Why the run recovers the way it does, for a user whose settings do not say it
        alone: one option only, or aligned checkpoints ("" when the options say it all)."""
        if not self.checkpointing_during_recovery:
            return ""
        if not self.recover_output_on_downstream:
            return (
                f"{CHECKPOINTING_DURING_RECOVERY_KEY} is ignored without "
                f"{RECOVER_OUTPUT_ON_DOWNSTREAM_KEY}: recovery runs the classic way"
            )
        if self.unaligned:
            return ""
        if self.gate is DuringRecoveryGate.REQUIRES_UNALIGNED:
            return (
                f"{CHECKPOINTING_DURING_RECOVERY_KEY} is off with aligned checkpoints "
                f"({UNALIGNED_KEY}=false; FLINK-40518): recovery runs the classic way"
            )
        return (
            "checkpointing during recovery with aligned checkpoints (before FLINK-40518): the "
            "aligned barrier handler has no recovery trigger, so a checkpoint during recovery "
            "waits for every channel's recovered data"
        )


class CheckpointFailureReason(StrEnum):
    """The reasons a checkpoint fails that recovery or a failover can cause
    (``CheckpointFailureReason``), with Flink's message; ``counted`` says whether
    ``CheckpointFailureManager`` counts it towards
    ``execution.checkpointing.tolerable-failed-checkpoints``.

    Examples
    --------
    An expired checkpoint counts towards the tolerable failures; one refused because not all
    tasks run does not:

    >>> CheckpointFailureReason.CHECKPOINT_EXPIRED.counted
    True
    >>> reason = CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING
    >>> reason.value, reason.counted
    ('Not all required tasks are currently running.', False)
    """

    NOT_ALL_REQUIRED_TASKS_RUNNING = "Not all required tasks are currently running."
    CHECKPOINT_DECLINED_TASK_NOT_READY = "Checkpoint was declined (tasks not ready)"
    CHECKPOINT_DECLINED = "Checkpoint was declined."
    CHECKPOINT_EXPIRED = "Checkpoint expired before completing."
    #: the periodic scheduler stopped (a task left RUNNING): pending checkpoints are aborted
    CHECKPOINT_COORDINATOR_SUSPEND = "Checkpoint Coordinator is suspending."
    #: a failover restores its region: pending checkpoints are aborted first
    JOB_FAILOVER_REGION = "FailoverRegion is restarting."
    #: the trigger failed after the plan, e.g. a plan that waits for no task
    TRIGGER_CHECKPOINT_FAILURE = "Trigger checkpoint failure."

    @property
    def counted(self) -> bool:
        return self in (
            CheckpointFailureReason.CHECKPOINT_DECLINED,
            CheckpointFailureReason.CHECKPOINT_EXPIRED,
        )


class RecoveryBarrierDecline(Choice):
    """How a channel in recovery that finds no ``RecoveryCheckpointBarrier`` of the checkpoint
    declines it: ``master`` throws an ``IOException``, a ``CHECKPOINT_DECLINED`` that counts;
    ``seed`` is PR #28554's proposal, ``CHECKPOINT_DECLINED_TASK_NOT_READY``, retried and not
    counted (rejected in review as hiding bugs).

    Examples
    --------
    >>> RecoveryBarrierDecline.MASTER.reason.counted, RecoveryBarrierDecline.SEED.reason.counted
    (True, False)
    """

    MASTER = "master"
    SEED = "seed"

    @property
    def reason(self) -> CheckpointFailureReason:
        if self is RecoveryBarrierDecline.SEED:
            return CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY
        return CheckpointFailureReason.CHECKPOINT_DECLINED


class NoOpTriggerAfter(Choice):
    """When a V2 task's recovery checkpoint trigger goes from the drainer back to NO_OP:
    ``state-consumed`` (master, since the review of PR #28554) once no channel of any gate is
    still in recovery, that is once the task has polled every channel's
    ``EndOfFetchedChannelStateEvent``; ``drain-done`` (PR #28554 before that review) as soon
    as the drain has queued those events. In between, channels still in recovery get no
    ``RecoveryCheckpointBarrier`` from a NO_OP trigger, so a checkpoint that reaches the task
    then is declined for the missing barrier.

    Examples
    --------
    >>> NoOpTriggerAfter.parse("state-consumed") is NoOpTriggerAfter.STATE_CONSUMED
    True
    """

    STATE_CONSUMED = "state-consumed"
    DRAIN_DONE = "drain-done"


@dataclass(frozen=True, slots=True)
class CheckpointFailure:
    """One failed checkpoint: its id (0 for a plan refused before an id was drawn, as Flink
    refuses it before ``checkpointIdCounter`` is asked), why, who said so, and at which step
    (counted as the stepper counts: the action that failed it is the ``step``-th).

    Examples
    --------
    >>> CheckpointFailure(3, CheckpointFailureReason.CHECKPOINT_EXPIRED, step=120).describe()
    'checkpoint 3 failed at step 120 (CHECKPOINT_EXPIRED, counted)'
    """

    checkpoint: int
    reason: CheckpointFailureReason
    step: int
    task: str = ""
    detail: str = ""

    def describe(self) -> str:
        who = f" by {self.task}" if self.task else ""
        extra = f": {self.detail}" if self.detail else ""
        counted = "counted" if self.reason.counted else "not counted"
        # a plan refused before an id was drawn (Flink's pre-flight failures) has id 0
        what = f"checkpoint {self.checkpoint}" if self.checkpoint else "a checkpoint (no id yet)"
        return f"{what} failed{who} at step {self.step} ({self.reason.name}, {counted}){extra}"


def job_fails(failures: list[CheckpointFailure], tolerable: int) -> bool:
    """``CheckpointFailureManager``: the job fails once more consecutive counted failures than
    tolerated have happened since the last completed checkpoint (callers pass only those);
    a checkpoint declined by several tasks counts once.

    Examples
    --------
    With Flink's default of 0 tolerable failed checkpoints, one expired checkpoint fails the
    job; a checkpoint declined by two tasks counts once:

    >>> expired = CheckpointFailure(3, CheckpointFailureReason.CHECKPOINT_EXPIRED, 120)
    >>> job_fails([expired], tolerable=0)
    True
    >>> declined = CheckpointFailureReason.CHECKPOINT_DECLINED
    >>> by_two = [CheckpointFailure(4, declined, 9, task) for task in ("map[0]", "map[1]")]
    >>> job_fails(by_two, tolerable=1)
    False
    """
    if tolerable < 0:
        raise InvalidParameterError(
            f"{TOLERABLE_FAILED_CHECKPOINTS_KEY} must not be negative, got {tolerable}"
        )
    return len({f.checkpoint for f in failures if f.reason.counted}) > tolerable


class BlockedPriority(Choice):
    """How a priority event (an unaligned barrier) meets a blocked subpartition.

    ``held``: not handed out until the consumer resumes (before FLINK-39018).
    ``master``: handed out, except to a remote reader that holds credit, whose availability
    check still hides it (Flink 2.3 and the master snapshot; FLINK-40519).
    ``fixed``: always handed out (FLINK-40519's fix).


    Examples
    --------
    >>> BlockedPriority.parse("master"), RunOptions().blocked_priority
    (<BlockedPriority.MASTER: 'master'>, <BlockedPriority.MASTER: 'master'>)
    """

    HELD = "held"
    MASTER = "master"
    FIXED = "fixed"


class GateConversion(Choice):
    """When a recovered gate is converted and requests its partitions
    (``inputGate.requestPartitions(false)`` in ``StreamTask.recoverChannelsWithoutCheckpointing``).

    ``per-gate``: each gate as soon as its own recovered state is consumed (master since
    FLINK-39522; the last commit of PR #28554). Only the end of restore waits for every gate.
    ``all-gates``: no gate before every gate's state is consumed (the intermediate rewrite of
    PR #28554). An operator that reads its inputs selectively never consumes an unselected
    gate's state while it waits for the selected input to end, which needs live data, which
    needs conversion: it deadlocks (docs/concepts/hazards.md#selective-reading).


    Examples
    --------
    Master converts each gate on its own (FLINK-39522), as a run does by default:

    >>> RunOptions().gate_conversion
    <GateConversion.PER_GATE: 'per-gate'>
    """

    PER_GATE = "per-gate"
    ALL_GATES = "all-gates"


class ConnectedMappingLookup(Choice):
    """How the state assignment finds, for a gate or a partition, the mapping of the other side
    of its edge (``TaskStateAssignment``), which the rescaling descriptor carries as its channel
    mapping.

    ``first-edge``: by the connected job vertex alone (before FLINK-40269). With two edges
    between the same two operators both take the first edge's mapping, so a partition of the
    second edge sends its output state where the first edge's mapper says.
    ``data-set``: by the ``IntermediateDataSetID`` of the gate's or partition's own edge
    (FLINK-40269, PR #28856).


    Examples
    --------
    >>> [lookup.value for lookup in ConnectedMappingLookup]
    ['first-edge', 'data-set']
    """

    FIRST_EDGE = "first-edge"
    DATA_SET = "data-set"


class PrefilterSource(Choice):
    """Where the V1 reader's pre-filter buffers come from (``channel_state_filtering``):
    the channel's network buffers only (before FLINK-38930), network buffers with an
    unbounded heap fallback (Flink 2.3), or one reusable heap segment per task (FLINK-39519).

    Examples
    --------
    A run takes Flink 2.3's by default:

    >>> RunOptions().prefilter_source
    <PrefilterSource.HEAP_FALLBACK: 'heap-fallback'>
    """

    NETWORK = "network"
    HEAP_FALLBACK = "heap-fallback"
    HEAP_SEGMENT = "heap-segment"


class RecoveryAbort(Choice):
    """A test hook: where the first task's V2 recovery with spill files fails, between the
    files being written and the drain (the abort paths PR #29065 lists): ``fetch`` (the fetch
    fails after sealing its files, before handing them over), ``request-partitions`` or
    ``install-drainer`` (that mail fails), or ``none``.

    Examples
    --------
    >>> RunOptions(abort_recovery="fetch").abort_recovery
    <RecoveryAbort.FETCH: 'fetch'>
    """

    NONE = "none"
    FETCH = "fetch"
    REQUEST_PARTITIONS = "request-partitions"
    INSTALL_DRAINER = "install-drainer"


class RecoveryCheckpointTrigger(Choice):
    """What a checkpoint finds at a task (``RecoveryCheckpointTrigger``): NOT_READY declines it,
    the drainer cuts the recovered state, NO_OP has nothing to cut.

    Examples
    --------
    >>> [trigger.value for trigger in RecoveryCheckpointTrigger]
    ['not-ready', 'drainer', 'no-op']
    """

    NOT_READY = "not-ready"
    DRAINER = "drainer"
    NO_OP = "no-op"


class RecoveredWatermarks(Choice):
    """What the filtering handler of checkpointing during recovery (V1 and V2) does with the
    watermarks and statuses of old channels that merge into one new channel.

    ``passed-through``: each as it comes (before FLINK-40517): one old channel's watermark
    advances the merged channel past records another old channel still holds, and one idle
    old channel idles it. ``aggregated``: as the classic path's demultiplexer does, the minimum
    over the old channels, held while any has none yet, and active while any is (PR #29064).


    Examples
    --------
    >>> RunOptions().recovered_watermarks
    <RecoveredWatermarks.AGGREGATED: 'aggregated'>
    """

    PASSED_THROUGH = "passed-through"
    AGGREGATED = "aggregated"


class TerminalTaskRule(Choice):
    """How the coordinator's plan treats a subtask that is FAILED or CANCELED
    (``DefaultCheckpointPlanCalculator``), which it can meet during a failover.

    ``as-finished``: before FLINK-40482 every terminal subtask counted as finished
    (``Execution.isFinished`` was ``state.isTerminal()``): where some subtask had really
    FINISHED, the plan left the failed and canceled ones out of the subtasks to wait for and
    recorded them as finished, so the checkpoint could complete without their state.
    ``abort``: FLINK-40482 (PR #29031): a FAILED or CANCELED subtask aborts the plan; only a
    FINISHED one counts as finished.


    Examples
    --------
    >>> TerminalTaskRule.parse("as-finished"), RunOptions().terminal_tasks
    (<TerminalTaskRule.AS_FINISHED: 'as-finished'>, <TerminalTaskRule.ABORT: 'abort'>)
    """

    AS_FINISHED = "as-finished"
    ABORT = "abort"


@dataclass(frozen=True, slots=True)
class TaskFailure:
    """A subtask that fails on purpose, at a point fixed by the records it has handled, so that
    every seed fails it at the same place in its input: a source after emitting
    ``after_records`` records, any other subtask after processing that many (in this run: a
    restored subtask counts from its restore). A subtask that finishes first never fails.

    Examples
    --------
    >>> failure = TaskFailure(SubtaskId("keyed", 1), after_records=5)
    >>> str(failure.subtask), RunOptions(task_failure=failure).restart_delay
    ('keyed[1]', 500)
    """

    subtask: SubtaskId
    after_records: int

    def __post_init__(self) -> None:
        if self.after_records < 0:
            raise InvalidParameterError(
                f"a task fails after a number of records, not {self.after_records}"
            )


#: steps from a task failure to its region's restart when nothing else holds it back (Flink's
#: default restart strategy with checkpointing, exponential-delay, waits 1 s first:
#: ``restart-strategy.exponential-delay.initial-backoff``; a step of the model is far shorter)
DEFAULT_RESTART_DELAY = 500


class Fault(Choice):
    """A bug put back on purpose (a test hook), to show the invariant or check that catches it:
    each member says what goes wrong; ``lab/reproducers`` has a configuration where exploring
    finds each one.

    Examples
    --------
    Faults named by text are parsed once; an unknown one is refused with the known ones:

    >>> Fault.parse_all(["no-filter"])
    frozenset({<Fault.NO_FILTER: 'no-filter'>})
    >>> Fault.parse_all(["no-filters"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: unknown fault(s) ['no-filters']; known: ...
    """

    DOUBLE_RECYCLE = "double-recycle"
    """A buffer a task has read is recycled twice (``recycling.release_current``)."""
    LEAK_BUFFER = "leak-buffer"
    """A buffer a task has read is never recycled (``recycling.recycle_consumed``)."""
    LOSE_RECORD = "lose-record"
    """The deserializer drops the last record of each buffer once the job has made over three."""
    DUPLICATE_RECORD = "duplicate-record"
    """Record 1 is processed twice the first time a task processes it (``do_process``)."""
    REORDER_BUFFERS = "reorder-buffers"
    """A finished buffer swaps places with the data buffer queued before it in its subpartition."""
    WRONG_KEY_GROUP = "wrong-key-group"
    """A keyBy exchange routes every record to the subpartition after its owner's."""
    PERSIST_TWICE = "persist-twice"
    """A buffer read before its channel's barrier is persisted twice (FLINK-40016's path)."""
    FORGET_IN_FLIGHT = "forget-in-flight"
    """A remote channel's received, unread buffers are left out of the task's snapshot."""
    NO_FILTER = "no-filter"
    """Recovered records another subtask owns are kept, not filtered (``keeps_record``)."""
    DROP_RECOVERED = "drop-recovered"
    """The first recovered record vanishes in the deserializer (``classic_recovery.keeps``)."""
    NO_UPSTREAM_BLOCK = "no-upstream-block"
    """A subpartition that handed out its EndOfOutputChannelStateEvent is not blocked."""
    KEEP_PREFILTER_BUFFER = "keep-prefilter-buffer"
    """FLINK-39519's heap pre-filter segment is never marked returned after its source buffer."""
    IGNORE_INPUT_SELECTION = "ignore-input-selection"
    """A task polls any input with data, not only the one its operator selects."""
    MISSING_RECOVERY_BARRIER = "missing-recovery-barrier"
    """V2: a checkpoint puts no recovery barrier into the channels still in recovery."""
    FORGET_SPILL_SLICE = "forget-spill-slice"
    """V2: a checkpoint cut during the drain leaves out the spill files' undrained rest."""
    PERSIST_MIGRATED = "persist-migrated"
    """V1: a migrated buffer the checkpoint's start persisted is persisted again when consumed
    before its channel's barrier (FLINK-40016)."""
    CONVERT_BEFORE_CONSUMED = "convert-before-consumed"
    """A gate converts once the reader is done, while recovered buffers still queue in it."""

    @classmethod
    def parse_all(cls, names: Iterable[str]) -> frozenset[Fault]:
        """The faults ``names`` names (text from a command line, a trace or a widget, or
        members), refusing any unknown name in one line that lists the valid ones."""
        given = set(names)
        unknown = sorted(given - FAULTS)
        if unknown:
            raise InvalidParameterError(
                f"unknown fault(s) {unknown}; known: {', '.join(sorted(FAULTS))}"
            )
        return frozenset(cls(name) for name in given)


#: every fault a run can put back
FAULTS: frozenset[Fault] = frozenset(Fault)


@dataclass(frozen=True, slots=True)
class RunOptions:
    """Every choice a run is set up with, fixed before it starts and checked once here: the
    schedule's seed, checkpointing, the recovery code and its what-ifs, and the test hooks.
    The state of a run holds one and never changes it, so copies of a run share it.

    Examples
    --------
    V2's spill files and segments are bounded as Flink's ``AbstractSpillingHandler`` bounds
    them (64 MiB and 1 MiB); checkpointing during recovery needs generation v1 or v2:

    >>> options = RunOptions(checkpoint_interval=50, faults={"no-filter"})
    >>> options.spill_file_size == 64 * 2**20, options.spill_segment_size == 2**20
    (True, True)
    >>> RunOptions(generation="classic", checkpointing_during_recovery=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: ... does not exist in the classic generation ...
    """

    seed: int = 0
    flush_every_record: bool = False
    #: bugs re-introduced on purpose (``Fault``), to show the invariant that catches each
    faults: frozenset[Fault] = frozenset()
    #: every how many steps the whole world is checked (0: only at the end); a big world is
    #: checked less often in proportion to its size (``invariants.audit_interval``) unless
    #: ``scale_audits`` is false (tests that want every ``full_check_every`` steps at any size)
    full_check_every: int = 64
    scale_audits: bool = True
    #: compare the incremental enabled actions with a full scan at every step (tests)
    check_actions: bool = False
    unaligned: bool = True
    #: steps from the end of one checkpoint to the trigger of the next (0: no checkpoints)
    checkpoint_interval: int = 0
    checkpoints: int = 1
    #: steps after which a checkpoint still in progress expires (0: never)
    checkpoint_timeout: int = 0
    #: ``ALIGNED_CHECKPOINT_TIMEOUT_KEY`` in steps from the trigger (0: off, Flink's default):
    #: with unaligned checkpoints on, barriers start aligned and a task still aligning when it
    #: elapses switches to an unaligned snapshot (``CheckpointOptions.alignedWithTimeout``)
    aligned_checkpoint_timeout: int = 0
    #: which barriers a local channel's persister notes (FLINK-19681), and what a timed-out
    #: alignment does with its blocked channels (FLINK-22638)
    aligned_barrier_tracking: AlignedBarrierTracking = AlignedBarrierTracking.EVERY_BARRIER
    timed_out_alignment: TimedOutAlignment = TimedOutAlignment.KEEP_BLOCKED
    #: counted failures tolerated before the job fails (``TOLERABLE_FAILED_CHECKPOINTS_KEY``)
    tolerable_failed_checkpoints: int = 0
    #: how a channel in recovery declines a checkpoint whose recovery barrier it lacks
    recovery_barrier_decline: RecoveryBarrierDecline = RecoveryBarrierDecline.MASTER
    #: when a V2 task's recovery checkpoint trigger goes back to NO_OP (PR #28554's review)
    no_op_trigger_after: NoOpTriggerAfter = NoOpTriggerAfter.STATE_CONSUMED
    #: the coordinator plans a checkpoint only once every task is RUNNING (Flink's
    #: ``DefaultCheckpointPlanCalculator``); false: a what-if where recovering tasks meet it
    coordinator_waits_for_running: bool = True
    blocked_priority: BlockedPriority = BlockedPriority.MASTER
    gate_conversion: GateConversion = GateConversion.PER_GATE
    #: the recovery code a restored run uses if checkpointing during recovery is on (with
    #: recover-output-on-downstream, from the restore)
    generation: RecoveryGeneration = RecoveryGeneration.V2
    checkpointing_during_recovery: bool = False
    #: whether that also needs unaligned checkpoints (FLINK-40518) or not (before it)
    during_recovery_gate: DuringRecoveryGate = DuringRecoveryGate.REQUIRES_UNALIGNED
    #: V2's spill file and segment bounds (Flink: 64 MiB and 1 MiB)
    spill_file_size: int = DEFAULT_SPILL_FILE_SIZE
    spill_segment_size: int = DEFAULT_MAX_SEGMENT_SIZE
    prefilter_source: PrefilterSource = PrefilterSource.HEAP_FALLBACK
    recovered_watermarks: RecoveredWatermarks = RecoveredWatermarks.AGGREGATED
    #: a subtask made to fail (None: none), failing over its pipelined region
    task_failure: TaskFailure | None = None
    #: how the coordinator's plan treats FAILED and CANCELED subtasks (FLINK-40482)
    terminal_tasks: TerminalTaskRule = TerminalTaskRule.ABORT
    #: what a local channel persists between the checkpoint's start and its barrier (FLINK-17315)
    local_channel_persistence: LocalChannelPersistence = LocalChannelPersistence.PERSISTER
    #: which channel the unaligned snapshot asks whether its barrier is still to come (FLINK-18139)
    inflight_data_lookup: InflightDataLookup = InflightDataLookup.CHANNEL_INFO
    #: what a recovered channel's conversion checks first (FLINK-18989)
    conversion_check: ConversionCheck = ConversionCheck.STATE_CONSUMED
    #: what a channel still recovering does at a checkpoint's start (FLINK-20654)
    recovered_channel_checkpoint_start: RecoveredChannelCheckpointStart = (
        RecoveredChannelCheckpointStart.DECLINED
    )
    #: whether a restored task opens its operator chain or restores its output first (FLINK-19907)
    restore_order: RestoreOrder = RestoreOrder.OUTPUT_FIRST
    #: trigger one checkpoint by hand (REST ``POST /jobs/:jobid/checkpoints``) while the failed
    #: region is down: its subtasks FAILED or CANCELED, its restart not yet begun
    checkpoint_during_failover: bool = False
    #: steps from the failure to the region's restart (it also waits for every cancel)
    restart_delay: int = DEFAULT_RESTART_DELAY
    #: a test hook (v1): handing the n-th filtered buffer of a source buffer to its recovered
    #: channel fails, in the first source buffer that yields that many (0: none); what
    #: ``InputChannelRecoveredStateHandlerTest``'s failing channel does
    fail_filtered_delivery: int = 0
    #: what the reader recycles when that happens (FLINK-40345: ``after-failed``)
    failed_delivery_recycle: FailedDeliveryRecycle = FailedDeliveryRecycle.AFTER_FAILED
    #: a test hook (classic): ``recover`` of a task's last recovered input buffer throws after
    #: handing it to its channel (FLINK-22376's error on recovery)
    fail_recovered_hand_over: bool = False
    #: who recycles that buffer then (FLINK-22376: ``flink-1.14``, the handler alone)
    recovered_buffer_ownership: RecoveredBufferOwnership = RecoveredBufferOwnership.HANDLER
    #: a test hook (v2): where the first recovery with spill files fails before its drain
    abort_recovery: RecoveryAbort = RecoveryAbort.NONE
    #: who deletes the spill files of a recovery that aborts (FLINK-40520: ``on-abort``)
    spill_cleanup: SpillCleanup = SpillCleanup.ON_ABORT

    def __post_init__(self) -> None:
        parse = object.__setattr__
        parse(self, "faults", Fault.parse_all(self.faults))
        if self.tolerable_failed_checkpoints < 0:
            raise InvalidParameterError(
                "tolerable_failed_checkpoints must not be negative, got "
                f"{self.tolerable_failed_checkpoints}"
            )
        if self.aligned_checkpoint_timeout < 0:
            raise InvalidParameterError(
                "aligned_checkpoint_timeout must not be negative (0: off), got "
                f"{self.aligned_checkpoint_timeout}"
            )
        if self.fail_filtered_delivery < 0:
            raise InvalidParameterError(
                "fail_filtered_delivery must not be negative (0: no failure), got "
                f"{self.fail_filtered_delivery}"
            )
        parse(self, "blocked_priority", BlockedPriority.parse(self.blocked_priority))
        parse(self, "gate_conversion", GateConversion.parse(self.gate_conversion))
        parse(
            self,
            "recovery_barrier_decline",
            RecoveryBarrierDecline.parse(self.recovery_barrier_decline),
        )
        parse(self, "no_op_trigger_after", NoOpTriggerAfter.parse(self.no_op_trigger_after))
        parse(self, "prefilter_source", PrefilterSource.parse(self.prefilter_source))
        parse(self, "during_recovery_gate", DuringRecoveryGate.parse(self.during_recovery_gate))
        parse(self, "recovered_watermarks", RecoveredWatermarks.parse(self.recovered_watermarks))
        parse(self, "terminal_tasks", TerminalTaskRule.parse(self.terminal_tasks))
        parse(
            self,
            "local_channel_persistence",
            LocalChannelPersistence.parse(self.local_channel_persistence),
        )
        parse(self, "inflight_data_lookup", InflightDataLookup.parse(self.inflight_data_lookup))
        parse(self, "conversion_check", ConversionCheck.parse(self.conversion_check))
        parse(
            self,
            "recovered_channel_checkpoint_start",
            RecoveredChannelCheckpointStart.parse(self.recovered_channel_checkpoint_start),
        )
        parse(self, "restore_order", RestoreOrder.parse(self.restore_order))
        parse(
            self,
            "recovered_buffer_ownership",
            RecoveredBufferOwnership.parse(self.recovered_buffer_ownership),
        )
        tracking = AlignedBarrierTracking.parse(self.aligned_barrier_tracking)
        parse(self, "aligned_barrier_tracking", tracking)
        parse(self, "timed_out_alignment", TimedOutAlignment.parse(self.timed_out_alignment))
        if self.restart_delay < 0:
            raise InvalidParameterError(
                f"restart_delay must not be negative, got {self.restart_delay}"
            )
        parse(
            self,
            "failed_delivery_recycle",
            FailedDeliveryRecycle.parse(self.failed_delivery_recycle),
        )
        parse(self, "abort_recovery", RecoveryAbort.parse(self.abort_recovery))
        parse(self, "spill_cleanup", SpillCleanup.parse(self.spill_cleanup))
        # checked here too, so that a job that is never restored still refuses it
        recovery = RecoveryOptions(self.generation, False, self.checkpointing_during_recovery)
        parse(self, "generation", recovery.generation)
