"""The invariants the model checks, beyond each move's own check in the ledger.

Every segment sits in exactly the container its owner names and in each of its sharers'
(``check_consistency``, every ``audit_interval`` steps and at the end); at the end nothing is
lost and nothing is leaked (``check_end``); and every completed checkpoint is a consistent cut
(``check_checkpoint``): each record sent before its producer's snapshot is processed before its
consumer's snapshot or whole in channel state, never both, never in part, and a recovered record
is persisted only by the subtask that owns it (FLIP-547), and it holds the state of every
subtask that has not finished (``check_checkpoint_completeness``, FLINK-40482); and when the
job ends or fails over, no spill file of a V2 recovery is left (``check_spill_files``,
FLINK-40520).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Protocol

from flinkstate.runtime.buffer.ledger import StepJournal
from flinkstate.runtime.buffer.owners import Owner, OwnerKind
from flinkstate.runtime.buffer.records import Record
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint, CheckpointInProgress
from flinkstate.runtime.execution_state import ExecutionState
from flinkstate.runtime.partition.consumer.input_gate import Channel, Gate
from flinkstate.runtime.partition.record_writer import IN_FLIGHT, EmissionLog
from flinkstate.runtime.partition.result_partition import Subpartition
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.world.holdings import held_segments, holdings
from flinkstate.runtime.world.state import NetworkState

#: how many components (tasks, subpartitions, channels, gates) a world may have and still be
#: audited every ``full_check_every`` steps; a bigger world is audited that many times less
#: often per multiple of it, so that the audit, which reads every container, costs a step the
#: same at any size: at most one component a step at the default 64, as the 4 x 4 keyed job's
#: (60 components); 256 let a P = 64 job's audit read four a step, a sixth of its step time
AUDIT_UNIT = 32


def audit_interval(full_check_every: int, components: int, *, scale: bool = True) -> int:
    """Every how many steps a world of ``components`` is audited (0: only at the end).

    Each move is checked against the ledger as it is made, in constant time; the audit is
    the backstop for a container changed behind the ledger's back, and it reads them all.
    Run every ``full_check_every`` steps at any size it would make each step of a P = 64
    job cost about twenty times a small one's. Scaled, such a change is found as surely, some
    thousands of steps later in a job of that size, named by its segment as ever; the full
    audit at every ``full_check_every`` steps stays a test's choice (``scale=False``).
    """
    if not scale or full_check_every <= 0:
        return full_check_every
    return full_check_every * max(1, components // AUDIT_UNIT)


def _holdings(state: NetworkState, network_pools: bool = True) -> list[tuple[Owner, Sequence[int]]]:
    """Every container holding segments, with its segments (empty ones left out); the
    network pools' free lists too unless ``network_pools`` is false."""
    held = []
    for holding in holdings(state, network_pools=network_pools):
        segments = held_segments(holding)
        if segments:
            held.append((holding[1], segments))
    return held


def check_consistency(state: NetworkState, *, idle_pools: bool = True) -> None:
    """Every segment is held by its owner's container and by each of its sharers, and by
    nobody else.

    ``idle_pools=False`` only counts the segments free in the network pools: they are most
    of the segments, and they change only one request or recycle at a time, each checked
    by :meth:`_move`. Anything that does not add up gets the full audit, which names the
    segment.
    """
    owner = state.owner
    shares = state.shares
    holdings = _holdings(state, idle_pools)
    total = 0 if idle_pools else sum(len(nbp.free) for nbp in state.network_pools.values())
    consistent = True
    for name, segments in holdings:
        total += len(segments)
        if not segments:
            continue
        if len(segments) == 1:
            held = owner[segments[0]] == name
        else:
            held = operator.itemgetter(*segments)(owner).count(name) == len(segments)
        if not held and not (
            shares and all(owner[s] == name or name in shares.get(s, ()) for s in segments)
        ):
            consistent = False
            break
    if consistent and total == len(owner) + sum(map(len, shares.values())):
        return  # every holder is a rightful one and none is missing or doubled
    if not idle_pools:
        holdings = _holdings(state)
    holders: dict[int, list[Owner]] = {}
    for name, segments in holdings:
        for segment in segments:
            holders.setdefault(segment, []).append(name)
    for segment, expected in enumerate(owner):
        held_by = holders.get(segment, [])
        wanted = [expected, *state.shares.get(segment, ())]
        if not held_by:
            state.journal.violate(
                "leak",
                f"segment {segment} (owner {expected}) is held by nobody: it was never recycled",
            )
        elif sorted(held_by) != sorted(wanted):
            if len(held_by) > len(wanted):
                problem = "is held by both " + " and ".join(sorted(map(str, held_by)))
            else:
                problem = f"is owned by {expected} but held by {', '.join(map(str, held_by))}"
            state.journal.violate("segment-ownership", f"segment {segment} {problem}")


def check_end(state: NetworkState) -> None:
    """At the end of a finished run: nothing lost, nothing leaked; and, whether the job
    finished or failed over, no spill file left behind."""
    check_consistency(state)
    check_spill_files(state)
    if state.checkpoints.job_failed:
        return  # in flight when the job failed: the restart replays it
    lost = [key for key, state in state.deliveries.items() if state == IN_FLIGHT]
    if lost:
        record, gate = lost[0]
        state.journal.violate(
            "exactly-once",
            f"{len(lost)} record(s) never processed, e.g. record {record} towards {gate}",
        )
    away = [
        s
        for s, owner in enumerate(state.owner)
        if owner != state.home[s] and owner.kind is not OwnerKind.POOL
    ]
    if away:
        state.journal.violate(
            "leak",
            f"{len(away)} segment(s) not back in a pool at the end, e.g. "
            f"segment {away[0]} at {state.owner[away[0]]}",
        )


def check_spill_files(state: NetworkState) -> None:
    """No spill file outlives its recovery: once the job has ended (every task finished, or
    the job failed over and every task with it), every file a task's fetch wrote is deleted,
    whether its state reached the drainer or not (FLINK-40520: a file left behind stays on
    the TaskManager's disk until it shuts down, and every failed recovery adds more). When one
    region failed over, only its subtasks have ended: the others' recoveries go on."""
    region = state.failover is not None
    for name, drainer in state.drainers.items():
        if region and state.task_named(name).failover is None:
            continue
        fetched = drainer.state
        writer = state.readers[name].spill
        if fetched is not None:
            if not fetched.deleted:
                state.journal.violate(
                    "spill-file-leak",
                    f"{len(fetched.files)} spill file(s) of {name} outlive its recovery: "
                    f"fetched, never deleted ({fetched.references} reference(s) still held)",
                )
        elif writer is not None and not writer.deleted and writer.file_count:
            state.journal.violate(
                "spill-file-leak",
                f"{writer.file_count} spill file(s) of {name} outlive its recovery: its fetch "
                "never handed them over, and nothing deleted its spill directory",
            )


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
