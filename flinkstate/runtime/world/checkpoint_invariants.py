"""The invariants a completed checkpoint keeps, checked as the barrier handler completes it.

Every completed checkpoint is a consistent cut (``check_checkpoint``): each record sent before
its producer's snapshot is processed before its consumer's snapshot or whole in channel state,
never both, never in part, and a recovered record is persisted only by the subtask that owns it
(FLIP-547); and it holds the state of every subtask that has not finished
(``check_checkpoint_completeness``, FLINK-40482). The world runs them
(``NetworkState.check_completed``), so the barrier handler below it needs no more than that.
"""

from __future__ import annotations

from typing import Protocol

from flinkstate.runtime.buffer.ledger import StepJournal
from flinkstate.runtime.buffer.records import Record
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint, CheckpointInProgress
from flinkstate.runtime.execution_state import ExecutionState
from flinkstate.runtime.partition.consumer.input_gate import Channel, Gate
from flinkstate.runtime.partition.record_writer import IN_FLIGHT, EmissionLog
from flinkstate.runtime.partition.result_partition import Subpartition
from flinkstate.runtime.tasks.task import Task


class CheckpointCheckWorld(Protocol):
    """What the checks of a completed checkpoint read: where each record was emitted and
    processed, the channels, subpartitions and gates it went through, the records, the
    recovered ones, the tasks, and the journal they report to. A behaviour that completes a
    checkpoint hands over its own protocol's world, which has these."""

    @property
    def channels(self) -> dict[str, Channel]: ...
    @property
    def subpartitions(self) -> dict[str, Subpartition]: ...
    @property
    def gates(self) -> dict[str, Gate]: ...
    @property
    def order(self) -> EmissionLog: ...
    @property
    def deliveries(self) -> dict[tuple[int, str], int]: ...
    @property
    def records(self) -> dict[int, Record]: ...
    @property
    def recovered_records(self) -> frozenset[int]: ...
    @property
    def tasks(self) -> dict[str, Task]: ...
    @property
    def journal(self) -> StepJournal: ...


def check_checkpoint(
    state: CheckpointCheckWorld, checkpoint: Checkpoint, progress: CheckpointInProgress
) -> None:
    """Every record is in exactly one place at the cut: processed before the consumer's
    snapshot, or whole in channel state, or sent after the producer's snapshot."""
    persisted: dict[tuple[int, str], int] = {}
    for persisted_state in checkpoint.input_channel_state:
        gate = state.channels[persisted_state.channel].gate
        for f in persisted_state.fragments:
            persisted[(f.record, gate)] = persisted.get((f.record, gate), 0) + f.length
    for persisted_state in checkpoint.result_subpartition_state:
        gate = state.channels[state.subpartitions[persisted_state.channel].channel].gate
        for f in persisted_state.fragments:
            persisted[(f.record, gate)] = persisted.get((f.record, gate), 0) + f.length
    snapshot_step = {name: s.snapshot_step for name, s in progress.snapshots.items()}
    for key, (emitted, producer) in state.order.emitted_at.items():
        record, gate = key
        consumer = state.gates[gate].task
        if producer not in snapshot_step or consumer not in snapshot_step:
            continue  # a subtask the plan did not wait for: check_checkpoint_completeness
        before_cut = emitted < snapshot_step[producer]
        processed = state.deliveries.get(key, IN_FLIGHT)
        in_state = processed != IN_FLIGHT and processed < snapshot_step[consumer]
        stored = persisted.get(key, 0)
        problem = ""
        if before_cut:
            problem = _placement_problem(in_state, stored, state.records[record].serialized_length)
        elif in_state or stored:
            problem = "sent after the producer's snapshot but captured by the checkpoint"
        if problem:
            state.journal.violate(
                "checkpoint-consistency",
                f"checkpoint {checkpoint.id}: record {record} towards {gate}: {problem}",
            )
    _check_recovered_records(state, checkpoint, persisted, snapshot_step)


def _check_recovered_records(
    state: CheckpointCheckWorld,
    checkpoint: Checkpoint,
    persisted: dict[tuple[int, str], int],
    snapshot_step: dict[str, int],
) -> None:
    """A checkpoint taken while recovered data is still on its way: each recovered record
    is, at the subtask that owns it, processed before the snapshot or whole in channel
    state, never both; a subtask that does not own it must not persist it (FLIP-547: an
    unfiltered checkpoint hands every new subtask all of the old state)."""
    recovered = state.recovered_records
    if not recovered:
        return
    for key, processed in state.deliveries.items():
        record, gate = key
        if record not in recovered or key in state.order.emitted_at:
            continue  # sent again after the restore: checked as live data
        consumer = state.gates[gate].task
        if consumer not in snapshot_step:
            continue  # not waited for: check_checkpoint_completeness
        in_state = processed != IN_FLIGHT and processed < snapshot_step[consumer]
        problem = _placement_problem(
            in_state, persisted.get(key, 0), state.records[record].serialized_length
        )
        if problem:
            state.journal.violate(
                "checkpoint-consistency",
                f"checkpoint {checkpoint.id}: recovered record {record} at {gate}: {problem}",
            )
    for record, gate in persisted:
        if record in recovered and (record, gate) not in state.deliveries:
            state.journal.violate(
                "checkpoint-consistency",
                f"checkpoint {checkpoint.id}: recovered record {record} persisted at {gate}, "
                "which does not own it: the next restore would process it twice",
            )


def check_checkpoint_completeness(
    state: CheckpointCheckWorld, checkpoint: Checkpoint, progress: CheckpointInProgress
) -> None:
    """A completed checkpoint holds the state of every subtask that has not FINISHED: only a
    subtask that reached the end of its input may be recorded as finished. Flink restores a
    subtask recorded as finished without state (``FinishedOperatorSubtaskState``) or, where
    its whole operator is, as finished on restore; a FAILED or CANCELED one in that record
    loses what it had not yet done (FLINK-40482)."""
    missing = [
        f"{task.key} ({task.execution_state.value})"
        for task in state.tasks.values()
        if task.name not in progress.acknowledged
        and task.execution_state is not ExecutionState.FINISHED
    ]
    if missing:
        state.journal.violate(
            "checkpoint-completeness",
            f"checkpoint {checkpoint.id} completed without the state of "
            f"{', '.join(missing)}: they are recorded as finished, so a restore from it "
            "would start them without their state",
        )


def _placement_problem(in_state: bool, stored: int, total: int) -> str:
    """What is wrong with a record sent before the cut: it must be processed before the
    consumer's snapshot or whole in channel state, exactly one of the two."""
    if 0 < stored < total:
        return f"only {stored} of {total} bytes were persisted"
    if stored > total:
        return f"{stored} bytes of its {total} were persisted: some more than once"
    if in_state and stored:
        return "both processed before the snapshot and persisted"
    if not in_state and not stored:
        return "neither processed before the snapshot nor persisted"
    return ""
