"""The invariants the model checks, beyond each move's own check in the ledger.

Every segment sits in exactly the container its owner names and in each of its sharers'
(``check_consistency``, every ``audit_interval`` steps and at the end); at the end nothing is
lost and nothing is leaked (``check_end``); and when the job ends or fails over, no spill file
of a V2 recovery is left (``check_spill_files``, FLINK-40520). What a completed checkpoint
keeps is checked in ``checkpoint_invariants``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from flinkstate.runtime.buffer.owners import Owner, OwnerKind
from flinkstate.runtime.partition.record_writer import IN_FLIGHT
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
