"""Reproducers: for each bug the model can put back (``FAULTS``) and each known hazard, a small
configuration from which exploring every interleaving breadth first finds it.

A seeded run samples one interleaving, so a bug that needs one particular order of steps may
hide from a hundred seeds. A reproducer names a topology or a scenario, the ``--set``
overrides that make it small, the seed (of a scenario: the schedule its job runs to the
checkpoint with, which decides what the restart recovers), and what breadth first exploration
finds there: an invariant's violation, a deadlock, or a broken :class:`Property`, a check the
world does not make itself (the job failing over; a barrier a blocked subpartition withholds).
``within`` bounds the distinct states the explorer needs, for the tests;
``tools/explorer-faults.py`` measures the figures and how often plain seeded runs show the same
thing (docs/research/exploring-interleavings.md).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Self

from flinkstate.catalogue.scenarios import SCENARIOS
from flinkstate.catalogue.topologies import CATALOGUE
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.counterexample import SCHEDULER, exploration_subject
from flinkstate.runtime.options import Fault
from flinkstate.runtime.partition.consumer.input_gate import Channel
from flinkstate.runtime.partition.consumer.result_subpartition_view import sub_head
from flinkstate.runtime.world.exploration.footprint import Resource
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.action import Action
from flinkstate.sim.core import Event, Model, RunResult, RunStatus, Simulation, Violation
from flinkstate.sim.deadlock import Wait
from flinkstate.sim.explore import Bounds, ExplorationResult, Finding, FindingKind, explore
from flinkstate.sim.scheduler import make_scheduler

#: the sequential reader's job at parallelism 1, two small records per source, the checkpoint two
#: steps in: with seed 4 it holds both inputs in flight (its restart: about a thousand states)
SEQUENTIAL_READER: Mapping[str, object] = {
    "records": 2,
    "record_size": 100,
    "checkpoint_interval": 2,
    "cost": 0,
    "parallelism": 1,
    "source_parallelism": 1,
    "network_buffers": 32,
}
#: what a reproducer finds when the run can go no further (``FindingKind.DEADLOCK``)
DEADLOCK = "deadlock"


@dataclass(frozen=True)
class Property:
    """A check of the world that is no invariant of the model, for a bug whose symptom Flink
    shows some other way: ``broken`` says why the world breaks it ("" while it holds)."""

    name: str
    broken: Callable[[NetworkWorld], str]


def _failed_over(world: NetworkWorld) -> str:
    why = world.checkpoints.job_failed
    return f"the job fails over: {why}" if why else ""


def blocked_priority_heads(world: NetworkWorld) -> list[Channel]:
    """The channels whose subpartition is blocked with a priority event at its head."""
    heads = []
    for channel in world.channels.values():
        if not channel.subpartition or channel.recovered:
            continue  # a recovered channel reads its state, not the subpartition
        sub = world.subpartitions[channel.subpartition]
        if sub.blocked and sub.queue and sub.queue[0].priority:
            heads.append(channel)
    return heads


def _withheld_priority_event(world: NetworkWorld) -> str:
    for channel in blocked_priority_heads(world):
        sub = world.subpartitions[channel.subpartition]
        if sub_head(world, channel) is not sub.queue[0]:
            return (
                f"the barrier of checkpoint {sub.queue[0].checkpoint} heads blocked "
                f"{sub.name}, which does not hand it to {channel.name}"
            )
    return ""


#: Flink declines or expires a checkpoint a bug spoils, counted towards
#: ``tolerable-failed-checkpoints``: at the default tolerance the job fails over. A failover is
#: Flink working as designed, so no invariant of the model forbids it; where it is a bug's only
#: symptom, this property makes it a finding
NO_FAILOVER = Property("no-failover", _failed_over)
#: a priority event (an unaligned barrier) at the head of a blocked subpartition is handed to
#: its consumer: what FLINK-39018's fix does (``PipelinedSubpartitionWithReadViewTest.
#: testPriorityEventBypassesBlockedSubpartition``) and FLINK-40519's completes for credited
#: remote readers. The symptom of withholding it is a checkpoint that expires, which steps do
#: not time faithfully (docs/research/exploring-interleavings.md#barrier-held)
PRIORITY_EVENT_HANDED_OUT = Property("priority-event-handed-out", _withheld_priority_event)
PROPERTIES = {p.name: p for p in (NO_FAILOVER, PRIORITY_EVENT_HANDED_OUT)}


@dataclass
class Checked:
    """A world with one more :class:`Property` checked: broken, it is a violation of the
    property's name (every other answer is the world's own). The property is read from the
    state asked about; a run and the explorer stop at the first state that breaks it."""

    world: NetworkWorld
    check: Property

    @property
    def step(self) -> int:
        return self.world.step

    @property
    def violations(self) -> list[Violation]:
        found = self.world.violations
        why = self.check.broken(self.world)
        if not why:
            return found
        # found as soon as a step breaks it: the last step taken is the one that did
        return [*found, Violation(self.check.name, self.world.step - 1, why)]

    def enabled_actions(self) -> Sequence[Action]:
        return self.world.enabled_actions()

    def apply(self, action: Action) -> Event:
        return self.world.apply(action)

    def is_finished(self) -> bool:
        return self.world.is_finished()

    def waits(self) -> Sequence[Wait[Hashable]]:
        return self.world.waits()

    def check_end(self) -> None:
        self.world.check_end()

    def clone(self) -> Self:
        return type(self)(self.world.clone(), self.check)

    def fingerprint(self) -> Hashable:
        return self.world.fingerprint()

    def footprint(self, action: Action) -> frozenset[Resource] | None:
        """What ``action`` may touch, for partial-order reduction: the world's answer, since a
        property reads only the state, which independent actions reach alike in either
        order."""
        return self.world.footprint(action)


@dataclass(frozen=True)
class Reproducer:
    """A small configuration and what exploring it breadth first finds.

    ``subject`` is a topology (explored from its start) or a scenario (explored from its
    restart, after its job ran to the checkpoint with ``seed``'s schedule); ``faults`` are
    switched on in what is explored (a scenario adds its own); ``finds`` is an invariant's name,
    ``DEADLOCK`` or a property of ``PROPERTIES``; ``within`` the distinct states within which
    breadth first search finds it; ``after``, where breadth first search cannot reach the
    finding from the start within the tests' budget, the steps ``seed``'s schedule takes first
    (of a scenario: of its restart); ``why`` what makes the configuration show it."""

    name: str
    subject: str
    overrides: Mapping[str, object]
    finds: str
    within: int
    why: str
    seed: int = 0
    faults: frozenset[Fault] = field(default_factory=frozenset)
    after: int = 0

    def __post_init__(self) -> None:
        if self.subject not in SCENARIOS and self.subject not in CATALOGUE:
            raise InvalidParameterError(
                f"{self.name}: {self.subject!r} is neither a topology nor a scenario"
            )

    @property
    def is_scenario(self) -> bool:
        return self.subject in SCENARIOS

    def initial(self, seed: int | None = None) -> Model:
        """What a plain run with ``seed`` (by default the reproducer's) starts from, as
        ``flinkstate explore`` names it (``exploration_subject``): the topology's fresh job or
        the scenario's restart, with the property checked. A scenario whose job completes no
        checkpoint with that seed has none: an :class:`InvalidParameterError` says so."""
        subject = exploration_subject(
            self.subject,
            overrides=self.overrides,
            seed=self.seed if seed is None else seed,
            faults=self.faults,
        )
        prop = PROPERTIES.get(self.finds)
        return subject.initial if prop is None else Checked(subject.initial, prop)

    def start(self) -> Model:
        """The state exploration starts from: the start, or ``after`` steps into the seed's
        run."""
        model = self.initial()
        if not self.after:
            return model
        simulation = Simulation(model.clone, make_scheduler(SCHEDULER, self.seed))
        simulation.run(self.after)
        if simulation.step_count < self.after:
            raise InvalidParameterError(
                f"{self.name}: seed {self.seed}'s run ends after {simulation.step_count} "
                f"steps, before step {self.after}"
            )
        return simulation.model

    def explore(self, bounds: Bounds | None = None) -> ExplorationResult:
        """Every interleaving from the start, breadth first (by default within ``within``
        distinct states)."""
        return explore(self.start(), bounds=bounds or Bounds(max_states=self.within))

    def found(self, result: ExplorationResult) -> Finding | None:
        """The finding this reproducer is about, if the exploration found it."""
        return found(result, self.finds)

    def run(self, seed: int) -> RunResult | None:
        """A plain run with ``seed``, as ``flinkstate run`` does it (the seed chooses the keys,
        the schedule and, of a scenario, what its job's checkpoint holds), the property checked
        at every step; None for a scenario whose job gives no restart with that seed."""
        try:
            initial = self.initial(seed)
        except InvalidParameterError:
            if not self.is_scenario:
                raise
            return None  # the reproducer's own seed has a restart (the tests start from it)
        return Simulation(initial.clone, make_scheduler(SCHEDULER, seed)).run()

    def shows(self, seed: int) -> bool:
        """Whether the plain run with ``seed`` shows what the explorer finds."""
        result = self.run(seed)
        return result is not None and self.shows_in(result)

    def shows_in(self, result: RunResult) -> bool:
        """Whether a run ended with what the explorer finds."""
        if self.finds == DEADLOCK:
            return result.status is RunStatus.DEADLOCK
        return self.finds in {v.invariant for v in result.violations}


def found(result: ExplorationResult, what: str) -> Finding | None:
    """The shallowest finding of ``what`` (an invariant, ``DEADLOCK`` or a property)."""
    for finding in result.findings:  # sorted by depth
        if (finding.kind is FindingKind.DEADLOCK and what == DEADLOCK) or (
            finding.kind is FindingKind.VIOLATION and finding.name == what
        ):
            return finding
    return None


@dataclass(frozen=True)
class Hazard:
    """A known hazard: the reproducer of its scenario before the fix, and the scenario after
    the fix (its pair), explored from the same configuration within ``fixed_bounds`` with
    nothing found (exhaustively, unless a depth bound says how far)."""

    before: Reproducer
    fixed: str
    fixed_bounds: Bounds

    @property
    def name(self) -> str:
        return self.before.name

    @property
    def fixed_variant(self) -> Reproducer:
        """The same configuration, seed and property with the pair's other scenario."""
        return replace(self.before, subject=self.fixed, faults=frozenset())


#: the keyed job at its smallest with two sources and two counters: one record per source,
#: every channel local (two slots per TaskManager), no checkpoint
TWO_BY_TWO: Mapping[str, object] = {
    "parallelism": 2,
    "source_parallelism": 2,
    "records": 1,
    "slots_per_tm": 2,
    "checkpoint_interval": 0,
    "network_buffers": 16,
}
#: two sources into one counter (and its sink), one record each, flushed as it is written: the
#: smallest job with a task that reads two channels and takes an unaligned checkpoint
TWO_INTO_ONE: Mapping[str, object] = {
    "parallelism": 1,
    "source_parallelism": 2,
    "records": 1,
    "flush_every_record": True,
    "slots_per_tm": 2,
    "network_buffers": 16,
}
#: the interval of a restart that takes no checkpoint of its own
NO_RESTART_CHECKPOINT = 10_000_000
#: a restart at its smallest: one source and one counter, two records of which the checkpoint
#: two steps in catches one in flight, no checkpoint after the restart
ONE_BY_ONE_RESTART: Mapping[str, object] = {
    "parallelism": 1,
    "source_parallelism": 1,
    "records": 2,
    "record_size": 100,
    "cost": 0,
    "checkpoint_interval": 2,
    "slots_per_tm": 2,
    "network_buffers": 16,
    "restart_checkpoint_interval": NO_RESTART_CHECKPOINT,
}
#: the same restart with the counter doubled: its old state is read by both new counters,
#: each filtering what it does not own
ONE_TO_TWO_RESTART: Mapping[str, object] = {**ONE_BY_ONE_RESTART, "new_parallelism": 2}


def _fault(
    fault: Fault,
    subject: str,
    overrides: Mapping[str, object],
    finds: str,
    within: int,
    why: str,
    *,
    seed: int = 0,
    after: int = 0,
) -> Reproducer:
    return Reproducer(
        fault.value, subject, overrides, finds, within, why, seed, frozenset({fault}), after
    )


#: for every fault of ``FAULTS``, the configuration breadth first search finds its violation from
FAULT_REPRODUCERS: dict[Fault, Reproducer] = {
    Fault(r.name): r
    for r in (
        _fault(
            Fault.DOUBLE_RECYCLE,
            "keyed",
            TWO_BY_TWO,
            "double-recycle",
            50,
            "The first buffer a task finishes reading goes back to its pool twice; the ledger "
            "refuses the second return at once.",
        ),
        _fault(
            Fault.LEAK_BUFFER,
            "keyed",
            {**TWO_BY_TWO, "keys": 1},
            "leak",
            2_500,
            "No buffer a task has read goes back. Only the end of the run, where every segment "
            "must be home, tells, so breadth first search explores every earlier state first; "
            "one key sends both records to one counter, which halves them.",
        ),
        _fault(
            Fault.LOSE_RECORD,
            "keyed",
            {**TWO_BY_TWO, "records": 2, "keys": 1},
            "exactly-once",
            9_000,
            "The deserializer drops the last record it completes once the job has more than "
            "three records (two sources with two each). The loss shows at the end, where a "
            "record was never processed.",
        ),
        _fault(
            Fault.DUPLICATE_RECORD,
            "keyed",
            TWO_BY_TWO,
            "exactly-once",
            300,
            "Record 1 is handed to its counter twice the first time it is processed.",
        ),
        _fault(
            Fault.REORDER_BUFFERS,
            "keyed",
            {**TWO_BY_TWO, "records": 2, "keys": 1, "record_size": 3000},
            "channel-order",
            250,
            "Two 3,000-byte records fill two buffers of a subpartition; if the second is "
            "finished while the first still waits there, the fault swaps them and the counter "
            "reads the second record's tail first.",
        ),
        _fault(
            Fault.WRONG_KEY_GROUP,
            "keyed",
            TWO_BY_TWO,
            "key-group",
            50,
            "Every record is routed to the counter beside its key's owner.",
        ),
        _fault(
            Fault.PERSIST_TWICE,
            "keyed",
            {**TWO_INTO_ONE, "checkpoint_interval": 3},
            "checkpoint-consistency",
            20_000,
            "The counter starts the checkpoint at the first source's barrier and persists "
            "what it then reads from the other source's channel before that channel's barrier "
            "(FLINK-40016's path): twice, with the fault. It needs the second source to "
            "snapshot late, after the counter has read its record, and the checkpoint must "
            "complete to be checked.",
        ),
        _fault(
            Fault.FORGET_IN_FLIGHT,
            "keyed",
            {**TWO_INTO_ONE, "slots_per_tm": 1, "checkpoint_interval": 4},
            "checkpoint-consistency",
            6_000,
            "One slot per TaskManager makes source[1]'s channel to the counter remote. A record "
            "it has sent but the counter not yet read must be persisted with the counter's "
            "snapshot; the fault forgets it. It needs the record to reach the counter's side "
            "before the barrier overtakes it, and the counter's snapshot before it reads it.",
        ),
        _fault(
            Fault.NO_FILTER,
            "keyed-upscale",
            ONE_TO_TWO_RESTART,
            "exactly-once",
            1_200,
            "One counter restarted as two: both read the old counter's in-flight records and "
            "must drop those of the other's key groups; without the filter a counter processes "
            "a record that was never sent to it.",
        ),
        _fault(
            Fault.DROP_RECOVERED,
            "baseline-recovery",
            ONE_BY_ONE_RESTART,
            "exactly-once",
            500,
            "The first recovered record vanishes in the deserializer; the end of the run finds "
            "it never processed.",
        ),
        _fault(
            Fault.NO_UPSTREAM_BLOCK,
            "keyed-downscale",
            {
                **ONE_BY_ONE_RESTART,
                "parallelism": 2,
                "source_parallelism": 2,
                "new_parallelism": 1,
                "record_size": 5000,
            },
            "exactly-once",
            9_500,
            "Two counters restarted as one, whose gate demultiplexes both sources' recovered "
            "output. With the fault a subpartition that handed out its end-of-output event is "
            "not blocked: the counter reads the first half of a live 5,000-byte record on that "
            "channel while it still demultiplexes the other, then ends demultiplexing with the "
            "record incomplete. The violation lies some 40 steps into the restart, beyond "
            "breadth first search's reach: exploration starts 20 steps into seed 3's restart.",
            seed=3,
            after=20,
        ),
        _fault(
            Fault.KEEP_PREFILTER_BUFFER,
            "prefilter-heap-segment",
            {
                **ONE_TO_TWO_RESTART,
                "records": 3,
                "flush_every_record": True,
                "checkpoint_interval": 5,
            },
            "one-buffer-at-a-time",
            100,
            "FLINK-39519's reader takes its one heap pre-filter segment for every source buffer "
            "it filters; the fault never marks it returned, so the second source buffer of a "
            "task breaks the one-buffer-at-a-time check. Seed 2's checkpoint leaves a counter "
            "two buffers to filter (records flushed one by one, its input and the source's "
            "output state both handed to it).",
            seed=2,
        ),
        _fault(
            Fault.IGNORE_INPUT_SELECTION,
            "sequential-reading",
            {**TWO_BY_TWO, "parallelism": 1, "source_parallelism": 1},
            "input-selection",
            100,
            "The sequential reader polls its second input while it reads the first: it needs "
            "the second source's record to arrive before the first input ends.",
        ),
        _fault(
            Fault.MISSING_RECOVERY_BARRIER,
            "checkpoint-during-drain",
            {
                **ONE_BY_ONE_RESTART,
                "new_parallelism": 0,
                "restart_checkpoint_interval": 1,
                "checkpoints": 2,
            },
            NO_FAILOVER.name,
            500,
            "V2 restarted with checkpoints from its first step: a checkpoint that reaches the "
            "counter while its channel is still in recovery finds no recovery barrier there, "
            "and master declines it as CHECKPOINT_DECLINED, which fails the job at the default "
            "tolerance. Flink's own check catches the bug, so the symptom is the failover.",
        ),
        _fault(
            Fault.FORGET_SPILL_SLICE,
            "checkpoint-during-drain",
            {
                **ONE_BY_ONE_RESTART,
                "new_parallelism": 0,
                "restart_checkpoint_interval": 1,
                "checkpoints": 2,
            },
            "checkpoint-consistency",
            800,
            "A checkpoint cut while the drainer has not yet read the spill file must persist "
            "the file's undrained rest; the fault forgets it, and the recovered record is in "
            "neither place. It needs the checkpoint before the drain, which the first "
            "checkpoint after the restart rarely is.",
        ),
        _fault(
            Fault.PERSIST_MIGRATED,
            "prefilter-heap-fallback",
            {
                **ONE_BY_ONE_RESTART,
                "source_parallelism": 2,
                "new_parallelism": 0,
                "record_size": 3000,
                "restart_checkpoint_interval": 1,
            },
            "checkpoint-consistency",
            10_000,
            "Flink 2.3 (V1) restarted from two sources into one counter, checkpoints from the "
            "first step: buffers still queued at the gate's conversion migrate into the "
            "channels, and checkpoint 1 persists them when it starts at the counter; "
            "consuming one before its channel's barrier persists it again with the fault "
            "(FLINK-40016). The checkpoint must complete to be checked, some 15 steps after the "
            "counter's snapshot: exploration starts where seed 174's restart has the counter "
            "take its first barrier (step 23), a run that goes on without the bug.",
            seed=174,
            after=23,
        ),
        _fault(
            Fault.CONVERT_BEFORE_CONSUMED,
            "baseline-recovery",
            ONE_BY_ONE_RESTART,
            "conversion-with-buffers",
            100,
            "The counter's gate requests its partitions as soon as the reader is done, while "
            "its recovered channel still queues buffers: Flink's toInputChannel refuses.",
        ),
    )
}


#: the known hazards (docs/concepts/hazards.md), each from its scenario's smallest
#: configuration, and its fixed variant explored within bounds
HAZARDS: tuple[Hazard, ...] = (
    Hazard(
        Reproducer(
            "prefilter-deadlock",
            "prefilter-deadlock",
            {**ONE_TO_TWO_RESTART, "buffers_per_channel": 0, "floating_buffers": 1},
            DEADLOCK,
            12_000,
            "V1's reader needs a pre-filter buffer and a post-filter buffer of the same "
            "channel at once (1 + k with k = 1 for a 100-byte record); with no exclusive "
            "buffer and one floating buffer per gate (E + L = 1), it waits for the buffer it "
            "holds. Every interleaving deadlocks.",
        ),
        "prefilter-heap-segment",
        Bounds(max_states=1_000_000),
    ),
    Hazard(
        Reproducer(
            "barrier-held-by-blocked-subpartition",
            "barrier-held-by-blocked-subpartition",
            {
                "records": 3,
                "record_size": 100,
                "parallelism": 1,
                "source_parallelism": 2,
                "checkpoint_interval": 3,
                "cost": 0,
                "slots_per_tm": 2,
                "network_buffers": 16,
            },
            PRIORITY_EVENT_HANDED_OUT.name,
            7_000,
            "Two sources into one counter over local channels, restarted with checkpoints as "
            "soon as every task runs: the counter takes one source's end-of-output event, "
            "blocking its subpartition, before that source's snapshot puts the barrier at its "
            "head; before FLINK-39018 the subpartition withholds it until it is resumed.",
            seed=46,
        ),
        "barrier-bypasses-blocked-subpartition",
        Bounds(max_depth=18),
    ),
    Hazard(
        Reproducer(
            "selective-reading-all-gates",
            "selective-reading-all-gates",
            SEQUENTIAL_READER,
            DEADLOCK,
            1_200,
            "The sequential reader at parallelism 1, two records per source; seed 4's schedule "
            "takes the checkpoint with both inputs in flight. The task waits for its first "
            "gate's conversion, the conversion for the second gate's state, which the task "
            "will not read yet.",
            seed=4,
        ),
        "selective-reading-per-gate",
        Bounds(max_states=1_000_000),
    ),
    Hazard(
        Reproducer(
            "partitions-requested-before-consumed",
            "partitions-requested-before-consumed",
            {**ONE_BY_ONE_RESTART, "new_parallelism": 0},
            "conversion-with-buffers",
            100,
            "One source and one counter restarted as they were: the counter's gate asks to be "
            "converted as soon as the reader is done, while its channel still queues a "
            "recovered buffer, and toInputChannel refuses.",
        ),
        "keyed-upscale",
        Bounds(max_states=1_000_000),
    ),
    Hazard(
        Reproducer(
            "unfiltered-checkpoint-during-recovery",
            "unfiltered-checkpoint-during-recovery",
            {**ONE_TO_TWO_RESTART, "restart_checkpoint_interval": 1, "then_parallelism": 0},
            "exactly-once",
            1_200,
            "FLIP-547's cycle at its smallest: one counter restarted as two with checkpoints "
            "during recovery (V2), records not filtered: a counter processes a record of the "
            "other's key groups, which a checkpoint would persist at both.",
        ),
        "flip-547-rescale-cycle",
        Bounds(max_depth=22),
    ),
)
