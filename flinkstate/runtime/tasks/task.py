"""A subtask: its mailbox thread's state, its inputs and outputs, and its recovery phase."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.runtime.buffer.buffer import Buffer
from flinkstate.runtime.buffer.ledger import Changes
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.checkpoint.state_assignment import RecoveredChunk
from flinkstate.runtime.copying import FIXED, NotState, StateKey, shallow_copier
from flinkstate.runtime.execution_state import ExecutionState
from flinkstate.runtime.jobgraph import OperatorKind
from flinkstate.runtime.options import RecoveryCheckpointTrigger
from flinkstate.runtime.partition.consumer.input_gate import Channel, Gate
from flinkstate.runtime.partition.record_writer import Output
from flinkstate.runtime.partition.result_partition import ResultPartition
from flinkstate.runtime.task_phase import TaskPhase


@dataclass(slots=True)
class Task:
    #: its actor's name (``task map[0]``), as traces and captions show it
    name: str
    #: its key in ``NetworkState.tasks`` (``map[0]``): what tables and restores name it by
    key: str
    operator: str
    kind: OperatorKind
    index: int
    task_manager: int
    gates: list[Gate]
    partitions: list[ResultPartition]
    key_groups: tuple[int, int] | None
    #: what holds the buffer its record deserializer reads
    deserializer: Owner
    pending: deque[Output] = field(default_factory=deque)
    busy: int = 0
    current: Channel | None = None
    current_buffer: Buffer | None = None
    ready: deque[int] = field(default_factory=deque)
    emitted: int = 0
    processed: int = 0
    finished: bool = False
    keyed_state: dict[int, int] = field(default_factory=dict)
    #: for sources: the checkpoint the coordinator asked to take
    trigger: int = 0
    #: restoring-output, recovering or running (``Task.restoreAndInvoke``)
    phase: TaskPhase = TaskPhase.RUNNING
    #: for sources: next seq of each split it reads, and whose turn it is
    splits: dict[str, int] = field(default_factory=dict)
    split_turn: int = 0
    #: output state still to be read into the result partitions, one buffer each
    output_state: deque[RecoveredChunk] = field(default_factory=deque)
    #: what a checkpoint finds at the task while it recovers (V2; NO_OP otherwise)
    recovery_trigger: RecoveryCheckpointTrigger = RecoveryCheckpointTrigger.NO_OP
    #: set by a failover only: FAILED, or CANCELING then CANCELED (None: phase and finished
    #: say the state)
    failover: ExecutionState | None = None
    #: the records it emits (a source) or processes before it fails on purpose (-1: never)
    fail_after: int = -1

    NOT_STATE: ClassVar[NotState] = {
        "name": FIXED,
        "key": FIXED,
        "operator": FIXED,
        "kind": FIXED,
        "index": FIXED,
        "task_manager": FIXED,
        "gates": "links: each gate is keyed in the world's gates",
        "key_groups": FIXED,
        "deserializer": FIXED,
        "fail_after": FIXED,
    }

    def state_key(self) -> StateKey:
        current = self.current
        buffer = self.current_buffer
        return (
            tuple([o.state_key() for o in self.pending]),
            self.busy,
            None if current is None else current.name,
            None if buffer is None else buffer.state_key(),
            tuple(self.ready),
            self.emitted,
            self.processed,
            self.finished,
            # counts by key, read by key and sorted when snapshotted: no order
            frozenset(self.keyed_state.items()),
            self.trigger,
            self.phase,
            # in the order the task takes turns between them
            tuple(self.splits.items()),
            self.split_turn,
            tuple(self.output_state),
            self.recovery_trigger,
            self.failover,
            # its result partitions belong to it alone (their subpartitions and pools are
            # keyed in the world's)
            tuple([p.state_key() for p in self.partitions]),
        )

    @property
    def execution_state(self) -> ExecutionState:
        """The state the JobMaster sees (``ExecutionState``): a failover's, else FINISHED once
        the task has ended its input, INITIALIZING while it restores, RUNNING after."""
        if self.failover is not None:
            return self.failover
        if self.finished:
            return ExecutionState.FINISHED
        if self.phase is TaskPhase.RUNNING:
            return ExecutionState.RUNNING
        return ExecutionState.INITIALIZING

    # -- what changes it from outside its own step: each notes the task in the stepping
    # world's ``changes``, so its actions are computed again (and a copy's into the copy's)

    def mark_failed(self, changes: Changes) -> None:
        """It failed (``Execution.markFailed``): FAILED, and its actions stop."""
        self.failover = ExecutionState.FAILED
        changes.task(self.name)

    def cancel(self, changes: Changes) -> None:
        """Its region fails over (``Execution.cancel``): CANCELING until it has stopped."""
        self.failover = ExecutionState.CANCELING
        changes.task(self.name)

    def complete_cancelling(self, changes: Changes) -> None:
        """It has stopped after a cancel (``Execution.completeCancelling``): CANCELED."""
        self.failover = ExecutionState.CANCELED
        changes.task(self.name)

    def trigger_checkpoint(self, checkpoint: int, changes: Changes) -> None:
        """The coordinator triggers a checkpoint at this source (``triggerCheckpointAsync``):
        it takes it at its next turn."""
        self.trigger = checkpoint
        changes.task(self.name)

    def set_recovery_trigger(self, trigger: RecoveryCheckpointTrigger, changes: Changes) -> None:
        """Another thread changes what a checkpoint finds at the task while it recovers (V2:
        the drain's future completing)."""
        self.recovery_trigger = trigger
        changes.task(self.name)

    def mail(self, changes: Changes) -> None:
        """Another thread puts a mail into its mailbox (``MailboxExecutor.execute``: a fetch
        done, no more splits): what its mailbox thread may do next changes."""
        changes.task(self.name)

    def abort_checkpoint(self, checkpoint: int) -> None:
        """A source forgets the trigger of an aborted checkpoint it has not taken yet
        (``notifyCheckpointAbortAsync``)."""
        if self.trigger == checkpoint:
            self.trigger = 0

    @property
    def handled(self) -> int:
        """The records it has emitted (a source) or processed (any other subtask)."""
        return self.emitted if self.kind is OperatorKind.SOURCE else self.processed

    def copy(
        self, gates: list[Gate], partitions: list[ResultPartition], current: Channel | None
    ) -> Task:
        """A copy wired to the given (already copied) gates, partitions and channel."""
        twin = self.relinked(gates, partitions, current)
        twin.pending = deque(
            Output(o.subpartition, o.record, o.written, o.total, o.watermark) for o in self.pending
        )
        twin.ready = deque(self.ready)
        twin.keyed_state = dict(self.keyed_state)
        twin.output_state = deque(self.output_state)
        twin.splits = dict(self.splits)
        return twin

    def relinked(
        self, gates: list[Gate], partitions: list[ResultPartition], current: Channel | None
    ) -> Task:
        """A task value wired to the given gates, partitions and channel, sharing its queues
        and counts with this one: for a copy of the world in which they do not change
        (``NetworkWorld.clone_within``)."""
        twin = _copy_task(self)
        twin.gates = gates
        twin.partitions = partitions
        twin.current = current
        return twin


_copy_task = shallow_copier(Task)
