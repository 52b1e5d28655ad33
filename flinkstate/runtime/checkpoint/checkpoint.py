"""What a checkpoint persisted: keyed state per subtask and channel state per channel.

The names follow Flink's state handles: input channel state is keyed by
``InputChannelInfo(gate, channel)`` of the subtask that persisted it, output state by
``ResultSubpartitionInfo(partition, subpartition)``. Each persisted buffer keeps its record
fragments, so a record that spans the cut shows which part sits where.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.keygroups import KeyGroupRange
from flinkstate.runtime.buffer.records import Fragment, Record
from flinkstate.runtime.copying import NotState, StateKey
from flinkstate.runtime.jobgraph import JobGraph


@dataclass(frozen=True, slots=True, order=True)
class InputChannelInfo:
    """Which input channel a piece of input channel state is of: Flink's ``InputChannelInfo``
    (the gate's index in the subtask, the channel's index in the gate).

    Examples
    --------
    >>> sorted([InputChannelInfo(1, 0), InputChannelInfo(0, 2)])[0]
    InputChannelInfo(gate=0, channel=2)
    """

    gate: int
    channel: int


@dataclass(frozen=True, slots=True, order=True)
class ResultSubpartitionInfo:
    """Which subpartition a piece of output state is of: Flink's ``ResultSubpartitionInfo``
    (the partition's index in the subtask, the subpartition's index in the partition).

    Examples
    --------
    >>> ResultSubpartitionInfo(partition=0, subpartition=3)
    ResultSubpartitionInfo(partition=0, subpartition=3)
    """

    partition: int
    subpartition: int


@dataclass(frozen=True, slots=True)
class PersistedBuffer:
    """A copy of a buffer's bytes written to channel state (as record fragments).

    Examples
    --------
    A full 32 KiB buffer that ends with the head of a record spanning the cut:

    >>> buffer = PersistedBuffer((Fragment(1, 0, 32_704, 32_704), Fragment(2, 0, 64, 40_004)))
    >>> buffer.size
    32768
    """

    fragments: tuple[Fragment, ...]

    @property
    def size(self) -> int:
        return sum(f.length for f in self.fragments)


@dataclass(frozen=True)
class ChannelState:
    """The persisted buffers of one input channel or one result subpartition.

    Examples
    --------
    The input state of ``keyed[0]``'s channel from ``source[1]`` (its first gate's second
    channel): two buffers of 104-byte records:

    >>> one, two = Fragment(1, 0, 104, 104), Fragment(2, 0, 104, 104)
    >>> state = ChannelState(
    ...     "keyed[0]", "keyed[0]<source[1]", InputChannelInfo(0, 1), (PersistedBuffer((one,)),) * 2
    ... )
    >>> state.size, len(state.fragments)
    (208, 2)
    """

    owner: str
    channel: str
    info: InputChannelInfo | ResultSubpartitionInfo
    buffers: tuple[PersistedBuffer, ...]

    @property
    def size(self) -> int:
        return sum(b.size for b in self.buffers)

    @property
    def fragments(self) -> tuple[Fragment, ...]:
        return tuple(f for b in self.buffers for f in b.fragments)


@dataclass(frozen=True)
class SubtaskState:
    """One subtask's share of a checkpoint.

    Examples
    --------
    ``keyed[1]`` of 4 with 128 key groups owns groups 32 to 63 (Flink's
    ``KeyGroupRangeAssignment``); its snapshot at step 17 holds no record counts yet:

    >>> from flinkstate.keygroups import compute_key_group_range_for_operator_index
    >>> groups = compute_key_group_range_for_operator_index(128, 4, 1)
    >>> state = SubtaskState("keyed[1]", "keyed", 1, 17, groups, keyed_state=())
    >>> state.key_groups
    KeyGroupRange(start=32, end=63)
    """

    subtask: str
    operator: str
    index: int
    snapshot_step: int
    key_groups: KeyGroupRange | None
    keyed_state: tuple[tuple[int, int], ...]
    #: for a source: each split it reads (an original source subtask's sequence) and the seq
    #: of its next record
    source_splits: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Checkpoint:
    """A completed checkpoint of the simulated job.

    ``graph`` is the job it was taken of (operators with their parallelism and max
    parallelism, as Flink's checkpoint metadata records them); ``records`` holds every record
    with a fragment in channel state: its key, size and origin are what the persisted bytes
    would deserialize to.

    Examples
    --------
    An unaligned checkpoint that persisted a record twice, once as output state and once as
    input state, and that a restore would therefore process twice (FLIP-547's unfiltered case):

    >>> whole = PersistedBuffer((Fragment(7, 0, 104, 104),))
    >>> inputs = (ChannelState("keyed[0]", "keyed[0]<source[1]", InputChannelInfo(0, 1), (whole,)),)
    >>> outputs = (
    ...     ChannelState("source[1]", "source[1]>keyed[0]", ResultSubpartitionInfo(0, 0), (whole,)),
    ... )
    >>> checkpoint = Checkpoint(1, True, 10, 25, (), inputs, outputs)
    >>> checkpoint.in_flight_bytes, checkpoint.record_copies({7})[7], checkpoint.completed_at
    (208, 2, 26)
    """

    id: int
    unaligned: bool
    #: the index of the event that triggered it and of the one that completed it (the
    #: stepper and the summaries count that event as step index + 1)
    trigger_step: int
    completion_step: int
    subtasks: tuple[SubtaskState, ...]
    input_channel_state: tuple[ChannelState, ...]
    result_subpartition_state: tuple[ChannelState, ...]
    graph: JobGraph | None = None
    records: tuple[Record, ...] = ()
    #: uids of the live buffers whose bytes it persisted (to outline them on the canvas); not
    #: part of the checkpoint's value
    persisted_buffers: frozenset[int] = field(default=frozenset(), compare=False)
    #: subtasks (by key) it records as finished, with no state of their own: Flink's
    #: ``FinishedOperatorSubtaskState`` (``FullyFinishedOperatorState`` for a whole operator)
    finished_subtasks: tuple[str, ...] = ()

    @property
    def in_flight_bytes(self) -> int:
        return sum(s.size for s in (*self.input_channel_state, *self.result_subpartition_state))

    @property
    def triggered_at(self) -> int:
        """The step whose action triggered it, counted as the stepper counts (the n-th action
        makes step n; ``trigger_step`` is that event's index, n - 1)."""
        return self.trigger_step + 1

    @property
    def completed_at(self) -> int:
        """The step whose action completed it, counted as the stepper counts."""
        return self.completion_step + 1

    def record_copies(self, records: Collection[int]) -> Counter[int]:
        """How many times each of ``records`` starts in the channel state: more than once means
        the next restore processes it more than once (FLIP-547's unfiltered checkpoint)."""
        copies: Counter[int] = Counter()
        for state in (*self.input_channel_state, *self.result_subpartition_state):
            for fragment in state.fragments:
                if fragment.is_first and fragment.record in records:
                    copies[fragment.record] += 1
        return copies

    @functools.cached_property
    def persisted_records(self) -> frozenset[int]:
        """Records of which at least one fragment was persisted as channel state (watermarks
        and statuses, persisted between them, are not records)."""
        elements = self.persisted_elements
        return elements - self._not_records

    @functools.cached_property
    def persisted_watermarks(self) -> frozenset[int]:
        """Watermarks and watermark statuses persisted as channel state."""
        return self.persisted_elements & self._not_records

    @functools.cached_property
    def persisted_elements(self) -> frozenset[int]:
        return frozenset(
            f.record
            for state in (*self.input_channel_state, *self.result_subpartition_state)
            for f in state.fragments
        )

    @functools.cached_property
    def _not_records(self) -> frozenset[int]:
        return frozenset(r.id for r in self.records if not r.is_record)

    def subtask(self, name: str) -> SubtaskState:
        for state in self.subtasks:
            if state.subtask == name:
                return state
        raise KeyError(name)


@dataclass
class CheckpointInProgress:
    """The checkpoint the coordinator triggered and has not yet completed or aborted: the
    snapshots, channel state and acknowledgements gathered so far.

    Examples
    --------
    Until some subtask has finished, the plan waits for every task:

    >>> pending = CheckpointInProgress(id=1, unaligned=True, trigger_step=10)
    >>> pending.waits_for("sink[0]"), pending.cut()
    (True, {})
    >>> CheckpointInProgress(2, True, 30, waiting_for=frozenset({"keyed[0]"})).waits_for("sink[0]")
    False
    """

    id: int
    unaligned: bool
    trigger_step: int
    snapshots: dict[str, SubtaskState] = field(default_factory=dict)
    acknowledged: set[str] = field(default_factory=set)
    inputs: dict[str, list[PersistedBuffer]] = field(default_factory=dict)
    outputs: dict[str, list[PersistedBuffer]] = field(default_factory=dict)
    #: tasks that have their snapshot and all barriers, and their writes not yet done
    barriers_complete: set[str] = field(default_factory=set)
    pending_writes: dict[str, int] = field(default_factory=dict)
    #: uids of the buffers handed to the writers (what the canvas outlines as persisted)
    persisted_buffers: set[int] = field(default_factory=set)
    #: the plan's subtasks to wait for, by task name (None: every task of the job, the plan
    #: while no task has finished)
    waiting_for: frozenset[str] | None = None
    #: the plan's subtasks recorded as finished, by task key (``CheckpointPlan.finished``)
    finished: tuple[str, ...] = ()
    #: triggered by hand (REST), not by the periodic scheduler
    manual: bool = False
    #: steps from the trigger after which its aligned barriers time out (0: not timeoutable;
    #: ``CheckpointOptions.alignedWithTimeout``, the barrier's timestamp being the trigger's)
    alignment_timeout: int = 0
    #: the tasks whose aligned snapshot timed out into an unaligned one
    #: (``CheckpointBarrier.asUnaligned``; Flink reports the checkpoint unaligned if any did)
    timed_out: set[str] = field(default_factory=set)

    NOT_STATE: ClassVar[NotState] = {
        "persisted_buffers": "presentation: the buffers the canvas outlines as persisted",
    }

    def state_key(self) -> StateKey:
        # the dicts are looked up by task or channel (completion walks the job's own order)
        return (
            self.id,
            self.unaligned,
            self.trigger_step,
            frozenset(self.snapshots.items()),
            frozenset(self.acknowledged),
            frozenset([(n, tuple(b)) for n, b in self.inputs.items()]),
            frozenset([(n, tuple(b)) for n, b in self.outputs.items()]),
            frozenset(self.barriers_complete),
            frozenset(self.pending_writes.items()),
            self.waiting_for,
            self.finished,
            self.manual,
            self.alignment_timeout,
            frozenset(self.timed_out),
        )

    def cut(self) -> dict[str, int]:
        """The step of each snapshot taken so far, by task name: what the write and process
        steps of records are compared with when the checkpoint completes."""
        return {name: s.snapshot_step for name, s in self.snapshots.items()}

    def copy(self) -> CheckpointInProgress:
        return CheckpointInProgress(
            self.id,
            self.unaligned,
            self.trigger_step,
            dict(self.snapshots),
            set(self.acknowledged),
            {n: list(b) for n, b in self.inputs.items()},
            {n: list(b) for n, b in self.outputs.items()},
            set(self.barriers_complete),
            dict(self.pending_writes),
            set(self.persisted_buffers),
            self.waiting_for,
            self.finished,
            self.manual,
            self.alignment_timeout,
            set(self.timed_out),
        )

    def alignment_timed_out(self, step: int, *, strictly: bool = False) -> bool:
        """Whether its aligned barriers have timed out at ``step``: the timers' delay
        (``BarrierAlignmentUtil.getTimerDelay``) counts from the barrier's timestamp, the
        trigger's, and reaches 0 at the timeout; a barrier received is timed out
        (``SingleCheckpointBarrierHandler``'s ``isTimedOut``, ``strictly``) once more time
        than the timeout has passed.

        >>> pending = CheckpointInProgress(1, False, trigger_step=10, alignment_timeout=5)
        >>> pending.alignment_timed_out(14), pending.alignment_timed_out(15)
        (False, True)
        >>> pending.alignment_timed_out(15, strictly=True)
        False
        >>> CheckpointInProgress(1, False, 10).alignment_timed_out(1000)
        False
        """
        if self.alignment_timeout <= 0:
            return False
        passed = step - self.trigger_step
        return passed > self.alignment_timeout if strictly else passed >= self.alignment_timeout

    def waits_for(self, task: str) -> bool:
        """Whether the plan waits for the task named ``task``."""
        return self.waiting_for is None or task in self.waiting_for
