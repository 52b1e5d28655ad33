"""Flink's unaligned-checkpoint bugs the model replays, as data: for each, when it was reported,
the release that fixed it, the family of invariants that catches it, what Flink's users saw,
and the scenarios that run the code as it was (``before``) and as fixed (``after``).

The mechanisms live in the runtime, each chosen by a typed option named after Flink's
versions; the scenarios (``catalogue/scenarios``) set those options. This table only groups
them into a history a learner can walk and a reviewer can check: every bug named here has its
pair, and each scenario of a pair names its bug.

Examples
--------
>>> bug("FLINK-17315").family.heading
'Capture completeness and order'
>>> bug("FLINK-17315").before, bug("FLINK-17315").after
(('local-channel-forgets-in-flight',), ('local-channel-persists-in-flight',))
>>> [b.issue for b in BUGS if b.reported < "2021"][:2]
['FLINK-17315', 'FLINK-18139']
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from flinkstate.errors import InvalidParameterError


class BugFamily(StrEnum):
    """The invariants that catch a bug, grouped as Flink's bug history groups them."""

    #: every in-flight buffer lands in exactly one snapshot, and comes back in order
    CAPTURE = "capture"
    #: a checkpoint taken during recovery declines, or captures what is not yet consumed
    CHECKPOINTS_DURING_RECOVERY = "checkpoints-during-recovery"
    #: an unaligned barrier gets past blocked channels; only unaligned barriers overtake
    PRIORITY_BARRIERS = "priority-barriers"
    #: recovery neither waits forever for buffers nor loses or recycles one twice
    BUFFERS = "buffers"
    #: in-flight data is assigned per edge as the job's rescaling plan says
    RESCALE_ASSIGNMENT = "rescale-assignment"

    @property
    def heading(self) -> str:
        """The family's name in a sentence's words.

        Examples
        --------
        >>> BugFamily.BUFFERS.heading
        'Buffers during recovery'
        """
        return _TITLES[self]


_TITLES = {
    BugFamily.CAPTURE: "Capture completeness and order",
    BugFamily.CHECKPOINTS_DURING_RECOVERY: "Checkpoints during recovery",
    BugFamily.PRIORITY_BARRIERS: "Priority barriers",
    BugFamily.BUFFERS: "Buffers during recovery",
    BugFamily.RESCALE_ASSIGNMENT: "Rescale assignment per edge",
}


@dataclass(frozen=True)
class FlinkBug:
    """One of Flink's bugs as the model replays it."""

    issue: str
    #: when it was reported, as year and month ("2020-04")
    reported: str
    #: the first release line with the fix ("master": on master only so far)
    fixed_in: str
    family: BugFamily
    #: what Flink's users saw, in a sentence
    saw: str
    #: scenarios that run the code as it was, and as the fix has it
    before: tuple[str, ...]
    after: tuple[str, ...]

    @property
    def year(self) -> int:
        """The year it was reported.

        Examples
        --------
        >>> bug("FLINK-35351").year
        2024
        """
        return int(self.reported[:4])


#: the bugs replayed, by the date they were reported
BUGS: tuple[FlinkBug, ...] = (
    FlinkBug(
        "FLINK-17315",
        "2020-04",
        "1.11.0",
        BugFamily.CAPTURE,
        "records lost in unaligned checkpoints: a local channel kept nothing of what arrived "
        "between its task's checkpoint start and the barrier",
        ("local-channel-forgets-in-flight",),
        ("local-channel-persists-in-flight",),
    ),
    FlinkBug(
        "FLINK-18139",
        "2020-06",
        "1.11.0",
        BugFamily.CAPTURE,
        "records lost now and then in tasks with two inputs: the second gate's channels were "
        "looked up by the first gate's indices",
        ("second-gate-forgets-in-flight",),
        ("second-gate-persists-in-flight",),
    ),
    FlinkBug(
        "FLINK-18989",
        "2020-08",
        "1.12",
        BugFamily.CHECKPOINTS_DURING_RECOVERY,
        "recovered records lost: a recovered channel could be converted to a real one, and "
        "released, before all its recovered buffers were read",
        ("converted-early-state-lost",),
        ("converted-early-refused",),
    ),
    FlinkBug(
        "FLINK-19907",
        "2020-10",
        "1.11.3",
        BugFamily.CAPTURE,
        "wrong results now and then after a restore: a restored task's operators emitted "
        "records and watermarks before its recovered output was sent, which they overtook",
        ("chain-before-output-restored",),
        ("output-restored-before-chain",),
    ),
    FlinkBug(
        "FLINK-20654",
        "2020-12",
        "1.12.2",
        BugFamily.CHECKPOINTS_DURING_RECOVERY,
        "checkpoints completed that could not be restored: a checkpoint taken while a gate "
        "still replayed its recovered state left those buffers out",
        ("checkpoint-excludes-replaying-gate",),
        ("checkpoint-declined-until-recovered",),
    ),
    FlinkBug(
        "FLINK-22686",
        "2021-05",
        "1.13.1",
        BugFamily.RESCALE_ASSIGNMENT,
        "a rescaled job with two inputs from rescaled producers failed to restore: one subtask "
        "mapping served every gate of the vertex",
        ("two-gates-one-mapping",),
        ("two-gates-mapping-per-gate",),
    ),
    FlinkBug(
        "FLINK-22376",
        "2021-06",
        "1.14",
        BugFamily.BUFFERS,
        "buffers leaked or recycled twice when reading channel state failed: the reader and "
        "the handler each thought they owned the buffer",
        ("recovery-error-recycled-twice",),
        ("recovery-error-recycled-once",),
    ),
    FlinkBug(
        "FLINK-27031",
        "2022-05",
        "1.15.1",
        BugFamily.RESCALE_ASSIGNMENT,
        "records lost after rescaling: a vertex with no state of its own was given none of "
        "its in-flight data",
        ("stateless-sink-not-assigned",),
        ("stateless-sink-assigned",),
    ),
    FlinkBug(
        "FLINK-31963",
        "2023-05",
        "1.17.1",
        BugFamily.RESCALE_ASSIGNMENT,
        "records lost after rescaling: a stateless vertex's in-flight data was not "
        "repartitioned when only its upstream had state",
        ("stateless-sink-not-repartitioned",),
        ("stateless-sink-repartitioned",),
    ),
    FlinkBug(
        "FLINK-35351",
        "2024-05",
        "1.19.1",
        BugFamily.RESCALE_ASSIGNMENT,
        "records lost after rescaling behind a custom partitioner: its in-flight data was kept "
        "where it was instead of split among the new subtasks",
        ("custom-partitioner-input-kept",),
        ("custom-partitioner-input-split",),
    ),
    FlinkBug(
        "FLINK-38930",
        "2026-03",
        "2.3",
        BugFamily.BUFFERS,
        "recovery hung when filtering recovered buffers: the reader's unfiltered buffers took "
        "every buffer the filtered ones needed",
        ("prefilter-deadlock",),
        ("prefilter-heap-fallback",),
    ),
    FlinkBug(
        "FLINK-39018",
        "2026-03",
        "2.3",
        BugFamily.PRIORITY_BARRIERS,
        "checkpoints during recovery timed out: a blocked subpartition held back the priority "
        "barrier that should overtake it",
        ("barrier-held-by-blocked-subpartition",),
        ("barrier-bypasses-blocked-subpartition",),
    ),
    FlinkBug(
        "FLINK-39519",
        "2026-04",
        "master",
        BugFamily.BUFFERS,
        "the same recovery hang, fixed for good: the reader filters through one heap segment "
        "it reuses",
        ("prefilter-deadlock",),
        ("prefilter-heap-segment",),
    ),
    FlinkBug(
        "FLINK-40269",
        "2026-07",
        "2.3 (backport)",
        BugFamily.RESCALE_ASSIGNMENT,
        "records went to the wrong input after rescaling a vertex fed twice by one upstream: "
        "the channel state was matched to the first edge",
        ("same-upstream-first-edge",),
        ("same-upstream-by-data-set",),
    ),
    FlinkBug(
        "FLINK-40345",
        "2026-08",
        "master",
        BugFamily.BUFFERS,
        "a buffer recycled twice when handing filtered data over failed, corrupting the pool",
        ("failed-delivery-recycled-twice",),
        ("failed-delivery-recycled-once",),
    ),
    FlinkBug(
        "FLINK-40482",
        "2026-08",
        "master",
        BugFamily.CHECKPOINTS_DURING_RECOVERY,
        "a checkpoint completed without a failed subtask's state: the plan counted it as finished",
        ("failed-task-counted-as-finished",),
        ("checkpoint-aborted-during-failover",),
    ),
    FlinkBug(
        "FLINK-40518",
        "2026-08",
        "master",
        BugFamily.CHECKPOINTS_DURING_RECOVERY,
        "an aligned checkpoint during recovery could not complete: recovery ran as if "
        "unaligned checkpoints were on",
        ("aligned-checkpoint-during-recovery",),
        ("aligned-restart-recovers-classic",),
    ),
    FlinkBug(
        "FLINK-40519",
        "2026-08",
        "master",
        BugFamily.PRIORITY_BARRIERS,
        "a checkpoint during recovery stalled: a blocked subpartition hid its priority "
        "barrier from a reader with credit",
        ("barrier-hidden-from-credited-reader",),
        ("barrier-credited-reader-fixed",),
    ),
    FlinkBug(
        "FLINK-40517",
        "2026-09",
        "master",
        BugFamily.RESCALE_ASSIGNMENT,
        "records dropped as late after a fan-in rescale: old channels' watermarks passed "
        "through instead of being merged",
        ("merged-watermarks-passed-through", "merged-idle-status-passed-through"),
        ("merged-watermarks-aggregated", "merged-idle-status-aggregated"),
    ),
    FlinkBug(
        "FLINK-40520",
        "2026-09",
        "master",
        BugFamily.BUFFERS,
        "spill files of an aborted recovery were left on disk",
        ("spill-files-left-on-abort",),
        ("spill-files-deleted-on-abort",),
    ),
)


def bug(issue: str) -> FlinkBug:
    """The bug of that FLINK id; one clear error for an unknown one.

    Examples
    --------
    >>> bug("FLINK-40519").fixed_in
    'master'
    >>> bug("FLINK-1")
    Traceback (most recent call last):
    ...
    flinkstate.errors.InvalidParameterError: FLINK-1 is not among the bugs replayed; known: ...
    """
    for known in BUGS:
        if known.issue == issue:
            return known
    raise InvalidParameterError(
        f"{issue} is not among the bugs replayed; known: {', '.join(b.issue for b in BUGS)}"
    )
