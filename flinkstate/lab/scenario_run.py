"""Running a recovery scenario: a catalogued topology runs until its first checkpoint completes
(the job then "fails"), that checkpoint is split for the restarted job (same or new
parallelism), and the restored job runs to its end; the run's outcome is set against the
scenario's expectation.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flinkstate.catalogue.parameters import (
    CONNECTED_MAPPING_LOOKUP,
    INPUT_REASSIGNMENT,
    MAPPING_SCOPE,
    STATELESS_ASSIGNMENT,
)
from flinkstate.catalogue.scenario import RESTORE_PARAMETERS, Outcome, Scenario
from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.catalogue.topologies import topology
from flinkstate.catalogue.topology import Topology
from flinkstate.errors import InvalidParameterError, UnsupportedRescaleError
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.checkpoint.checkpoint import Checkpoint
from flinkstate.runtime.checkpoint.state_assignment import StateAssignment, assign_state
from flinkstate.runtime.failover.failover import failover_summary
from flinkstate.runtime.options import (
    CheckpointFailure,
    CheckpointFailureReason,
    Fault,
)
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.world.metrics import BufferCounts
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import SNAPSHOT_EVERY, Event, RunResult, RunStatus, Simulation
from flinkstate.sim.scheduler import make_scheduler


@dataclass
class ScenarioRun:
    """What one run of a scenario showed."""

    scenario: Scenario
    seed: int
    values: dict[str, Any]
    outcome: Outcome
    checkpoint: Checkpoint | None = None
    #: the job as it was when the checkpoint completed
    job: NetworkWorld | None = None
    #: with ``then_parallelism``: the first restart (stopped at its first completed checkpoint)
    #: and that checkpoint, which the simulated (last) restart restores from
    between: NetworkWorld | None = None
    second_checkpoint: Checkpoint | None = None
    assignment: StateAssignment | None = None
    simulation: Simulation | None = None
    result: RunResult | None = None
    message: str = ""
    #: why Flink refused the configuration (``Outcome.REJECTED``), as raised
    refused: Exception | None = None
    buffers: BufferCounts | None = None
    #: owner of every segment when the restored job starts (replaying events from here)
    initial_owners: list[Owner] = field(default_factory=list)
    #: which run the simulation steps: the restarted job, or the job before its checkpoint
    #: (or, with ``then_parallelism``, the first restart: ``RUN_PHASES``)
    phase: str = "restart"
    #: the scheduling policy (its canonical name), the step limit of each phase, and the faults
    #: the caller added to the scenario's own: with seed and values, what rebuilds the run
    scheduler: str = "random"
    max_steps: int = 2_000_000
    faults: frozenset[Fault] = frozenset()
    #: the events of the phases run before ``phase`` to reach its step 0, by phase in run order
    #: (the job to its first checkpoint; the first restart to its first checkpoint)
    earlier: dict[str, list[Event]] = field(default_factory=dict)

    def conclude(self, result: RunResult) -> None:
        """Record how the run ended (after the simulation stopped stepping)."""
        assert self.simulation is not None
        self.result = result
        self.buffers = BufferCounts.start(self.initial_owners).apply_all(self.simulation.events)
        self.message = ""
        self.outcome = {
            RunStatus.FINISHED: Outcome.RECOVERED,
            RunStatus.DEADLOCK: Outcome.DEADLOCK,
            RunStatus.VIOLATION: Outcome.VIOLATION,
            RunStatus.STOPPED: Outcome.STOPPED,
        }[result.status]
        if self.phase == "job" and self.outcome is Outcome.RECOVERED:
            self.outcome = Outcome.FINISHED
        world = self.world
        # a broken invariant is the finding even where the job failed over with it
        if (
            world is not None
            and world.checkpoints.job_failed
            and self.outcome is not Outcome.VIOLATION
        ):
            self.outcome = Outcome.JOB_FAILED
            self.message = world.checkpoints.job_failed
            return
        if self.outcome is Outcome.RECOVERED and world is not None and world.checkpoints.expired:
            self.outcome = Outcome.CHECKPOINT_EXPIRED
            self.message = f"checkpoint(s) {world.checkpoints.expired} expired after the restart"

    def phase_events(self) -> list[tuple[str, list[Event]]]:
        """Every phase this run went through, in order, with its events (what a trace
        holds): the earlier ones, then the simulated one up to its current step."""
        phases = list(self.earlier.items())
        if self.simulation is not None:
            phases.append((self.phase, self.simulation.events))
        return phases

    @property
    def as_expected(self) -> bool:
        return self.outcome is self.scenario.expected

    def differences(self) -> dict[str, Any]:
        """The parameters this run has that the scenario, as defined, does not: where its
        title's figures (``4 -> 7``) are not this run's."""
        defined = self.scenario.resolve()
        return {k: v for k, v in self.values.items() if defined.get(k) != v}

    @property
    def world(self) -> NetworkWorld | None:
        model = None if self.simulation is None else self.simulation.model
        return model if isinstance(model, NetworkWorld) else None

    @property
    def restored_from(self) -> Checkpoint | None:
        """The job's first completed checkpoint, which the restart starts from: in the job
        phase the stepped world's own (it is taken during the run on display, so exercises can
        read its size off the badge), otherwise the one the restart restored."""
        if self.phase != "job":
            return self.checkpoint
        world = self.world
        return world.checkpoints.completed[0] if world and world.checkpoints.completed else None

    @property
    def recovered_bytes(self) -> int:
        return 0 if self.assignment is None else self.assignment.recovered_bytes

    @property
    def filtered_records(self) -> int:
        world = self.world
        return 0 if world is None else len(world.filtered)

    @property
    def spill(self) -> dict[str, int]:
        """V2's disk figures: bytes written, files and segments written, files alive at most."""
        return spill_figures(self.world)

    @property
    def first_checkpoint_step(self) -> int | None:
        """The step (counted as the stepper counts: the n-th action) at which the restart's
        first checkpoint completed (None: none did)."""
        world = self.world
        if world is None or not world.checkpoints.completed:
            return None
        return world.checkpoints.completed[0].completed_at

    @property
    def resumed_step(self) -> int | None:
        """The step at which the last task finished restoring and normal processing began."""
        world = self.world
        if self.simulation is None or world is None:
            return None
        return resumed_step(world, self.simulation.events)

    def summary(self) -> dict[str, Any]:
        result = self.result
        return {
            "scenario": self.scenario.name,
            "seed": self.seed,
            "outcome": self.outcome.value,
            "expected": self.scenario.expected.value,
            "as_expected": self.as_expected,
            "differs_from_scenario": self.differences(),
            "steps": None if result is None else result.steps,
            "checkpoint_bytes": None
            if self.restored_from is None
            else self.restored_from.in_flight_bytes,
            "second_checkpoint_bytes": None
            if self.second_checkpoint is None
            else self.second_checkpoint.in_flight_bytes,
            "recovered_bytes": self.recovered_bytes,
            "filtered_records": self.filtered_records,
            "heap_peak_bytes": 0 if self.world is None else self.world.heap_peak,
            "effective_generation": None
            if self.world is None
            else self.world.effective_generation.value,
            "recovery_note": "" if self.world is None else self.world.recovery_note,
            **self.spill,
            "first_checkpoint_step": self.first_checkpoint_step,
            "failed_checkpoints": 0 if self.world is None else len(self.world.checkpoints.failures),
            "resumed_step": self.resumed_step,
            "violations": [] if result is None else [str(v) for v in result.violations],
            "deadlock": None
            if result is None or result.deadlock is None
            else result.deadlock.describe(),
            "message": self.message,
            **self.event_time,
            **({} if self.world is None else failover_summary(self.world)),
        }

    @property
    def event_time(self) -> dict[str, Any]:
        """For a job with watermarks: those in the checkpoint, and the records found late."""
        world = self.world
        if world is None or not world.graph.event_time:
            return {}
        return {
            "watermarks_in_checkpoint": None
            if self.checkpoint is None
            else len(self.checkpoint.persisted_watermarks),
            "late_records": len(world.event_time.late),
        }


_RESTORE_ENDS = frozenset(
    {
        ActionKind.FINISH_OUTPUT,
        ActionKind.CONVERT,
        ActionKind.REQUEST_PARTITIONS,
        ActionKind.INSTALL_DRAINER,
    }
)


def spill_figures(world: NetworkWorld | None) -> dict[str, int]:
    """V2's disk figures of a restored run: bytes written, files and segments written, files
    alive at most (zeros without a world or without V2)."""
    states = [] if world is None else [d.state for d in world.drainers.values() if d.state]
    return {
        "spilled_bytes": 0 if world is None else world.spill.bytes_written,
        "spill_files": sum(len(s.files) for s in states),
        "spill_segments": sum(len(s.segments) for s in states),
        "spill_files_peak": 0 if world is None else world.spill.files_peak,
    }


def resumed_step(world: NetworkWorld, events: Sequence[Event]) -> int | None:
    """The step (counted as the stepper counts) at which the last task of a restored run
    finished restoring and normal processing began; None while a task is still restoring."""
    if not all(t.phase is TaskPhase.RUNNING for t in world.tasks.values()):
        return None
    # a task leaves restoring with its last gate conversion (V2: the drainer installed,
    # or partitions requested with nothing to drain), or right after its output state
    # when it has no gates
    ends = [e.step for e in events if e.action.kind in _RESTORE_ENDS]
    return max(ends, default=-1) + 1


#: the two runs of a scenario a user can step through
PHASES = ("restart", "job")
#: with ``then_parallelism``: the restart from the job's checkpoint, whose own first
#: checkpoint the last restart (``restart``) restores from
FIRST_RESTART = "first-restart"
#: every phase ``prepare_scenario`` can start, in the order a run goes through them
RUN_PHASES = ("job", FIRST_RESTART, "restart")


def run_scenario(
    scenario: str | Scenario,
    *,
    seed: int = 0,
    overrides: Mapping[str, object] | None = None,
    scheduler: str = "random",
    max_steps: int = 2_000_000,
    progress: Callable[[int], None] | None = None,
    faults: Collection[Fault] = (),
    keep_snapshots: bool = False,
) -> ScenarioRun:
    """Run a scenario: the job until its first checkpoint, then the restarted job to its end.

    ``faults`` break the restarted job(s) on purpose (the world's ``FAULTS``), to see which
    invariant catches what the fix prevents. A run to its end is read (its summary, figures,
    timelines replayed from its start), not stepped back through, so by default its simulation
    keeps only its start (``Simulation.snapshot_every``): a snapshot every few hundred steps
    costs a small job about a third of its run, and a job of many subtasks (copying on write
    after each) more than half. ``keep_snapshots`` keeps them, for stepping back and forth
    through the finished run; stepping back without them replays from the start, exactly."""
    run = prepare_scenario(
        scenario,
        seed=seed,
        overrides=overrides,
        scheduler=scheduler,
        max_steps=max_steps,
        faults=faults,
        keep_snapshots=keep_snapshots,
    )
    if run.simulation is not None:
        run.conclude(_run_with_progress(run.simulation, max_steps, progress))
    return run


def no_checkpoint_message(failures: Sequence[CheckpointFailure], job_failed: str) -> str:
    """Why the job before the restart completed no checkpoint, and what to change: where its
    checkpoints failed (a timeout too short for the job's size, most often), the first
    failure and the parameter behind it; otherwise the job ended before the first trigger."""
    if not failures:
        return "the job completed no checkpoint before it ended; lower checkpoint_interval"
    first = failures[0]
    hint = (
        "raise checkpoint_timeout"
        if first.reason is CheckpointFailureReason.CHECKPOINT_EXPIRED
        else "see the failure's reason"
    )
    ended = "failed over" if job_failed else "ended"
    return (
        f"the job completed no checkpoint before it {ended}: {first.describe()}"
        f"{f' (and {len(failures) - 1} more)' if len(failures) > 1 else ''}; {hint}"
    )


def prepare_scenario(
    scenario: str | Scenario,
    *,
    seed: int = 0,
    overrides: Mapping[str, object] | None = None,
    scheduler: str = "random",
    max_steps: int = 2_000_000,
    phase: str = "restart",
    faults: Collection[Fault] = (),
    keep_snapshots: bool = True,
) -> ScenarioRun:
    """A scenario's run at step 0 of ``phase``, its simulation ready to step (the stepper's
    start). ``restart`` first runs the job to its first checkpoint and restores from it (with
    ``then_parallelism``, runs that restart to its first checkpoint too and restores from
    that); ``job`` is the job from its start, checkpoint included; ``first-restart``, only with
    ``then_parallelism``, is the restart from the job's checkpoint. A configuration Flink
    refuses, or a job that completes no checkpoint, comes back concluded with no simulation.
    The events of the phases run on the way are kept in ``earlier``. ``faults`` (the world's
    ``FAULTS``) break the phase stepped: the restarted job(s), beside the scenario's own, or
    with ``phase="job"`` the job itself. Without ``keep_snapshots`` the simulation stepped
    keeps only its start; the phases run on the way never keep more (nobody goes back in
    them)."""
    if phase not in RUN_PHASES:
        raise InvalidParameterError(f"phase must be one of {', '.join(RUN_PHASES)}, got {phase!r}")
    item = scenario if isinstance(scenario, Scenario) else get_scenario(scenario)
    values = item.resolve(overrides)
    if phase == FIRST_RESTART and not _third_phase(values):
        raise InvalidParameterError(
            f"phase {FIRST_RESTART} needs then_parallelism (a third phase); {item.name} "
            "restarts once"
        )
    job = topology(item.topology)
    job_values = {k: v for k, v in values.items() if k not in _RESTORE_NAMES}
    scheduler = make_scheduler(scheduler, seed).name
    run = ScenarioRun(
        item,
        seed,
        values,
        Outcome.STOPPED,
        phase=phase,
        scheduler=scheduler,
        max_steps=max_steps,
        faults=frozenset(faults),
    )
    try:
        # the caller's faults break the phase it steps: the job itself when that is the job
        first = job.build(
            job_values, seed=seed, faults=frozenset(faults) if phase == "job" else frozenset()
        )
    except InvalidParameterError as refused:
        return _refused(run, refused)
    every = SNAPSHOT_EVERY if keep_snapshots else None
    if phase == "job":
        run.initial_owners = list(first.owner)
        run.simulation = Simulation(_start(first, every), make_scheduler(scheduler, seed), every)
        return run
    before = Simulation(first.clone, make_scheduler(scheduler, seed), None)
    before.run(lambda model: bool(_world(model).checkpoints.completed), max_steps=max_steps)
    run.earlier["job"] = before.events
    coordinator = _world(before.model).checkpoints
    completed = coordinator.completed
    if not completed:
        run.outcome = Outcome.NO_CHECKPOINT
        run.message = no_checkpoint_message(coordinator.failures, coordinator.job_failed)
        return run
    run.checkpoint = completed[0]
    run.job = _world(before.model)
    restart_values = _restart_values(job_values, values)
    try:
        restored = _restore(run, job, restart_values, run.checkpoint)
    except (InvalidParameterError, UnsupportedRescaleError) as refused:
        return _refused(run, refused)
    if _third_phase(values) and phase != FIRST_RESTART:
        again = _restart_again(run, job, restored, restart_values, scheduler, max_steps)
        if again is None:
            return run
        restored = again
    run.initial_owners = list(restored.owner)
    run.simulation = Simulation(_start(restored, every), make_scheduler(scheduler, seed), every)
    return run


def _refused(run: ScenarioRun, refused: Exception) -> ScenarioRun:
    """The run concluded where Flink refused its configuration, with Flink's reason."""
    run.outcome, run.message, run.refused = Outcome.REJECTED, str(refused), refused
    return run


def _restart_values(job_values: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """The job's parameters as the restarted job runs with them: its own checkpoint interval
    and alignment where the scenario sets them."""
    restart_values = dict(job_values)
    if values["restart_checkpoint_interval"]:
        restart_values["checkpoint_interval"] = values["restart_checkpoint_interval"]
    if values["restart_aligned"]:
        restart_values["unaligned"] = False
    return restart_values


def _restore(
    run: ScenarioRun, job: Topology, restart_values: Mapping[str, Any], checkpoint: Checkpoint
) -> NetworkWorld:
    """The restarted job restored from ``checkpoint``: its state split for the new
    parallelism (kept in ``run.assignment``), broken by the scenario's and the caller's
    faults. Flink's refusals (a bad parameter, a rescale it cannot do) are raised."""
    item, values = run.scenario, run.values
    run.assignment = assign_state(
        checkpoint,
        _parallelism(item, job, values, checkpoint),
        recover_output_on_downstream=values["recover_output_on_downstream"],
        connected_mapping=_connected_mapping(values),
        input_reassignment=_input_reassignment(values),
        stateless_assignment=_stateless_assignment(values),
        mapping_scope=str(values.get(MAPPING_SCOPE.name, MAPPING_SCOPE.default)),
    )
    return job.build(
        restart_values,
        seed=run.seed,
        faults=item.faults | run.faults,
        restore=run.assignment,
    )


def _start(world: NetworkWorld, every: int | None) -> Callable[[], NetworkWorld]:
    """How a simulation of ``world`` makes its model: with snapshots (every ``every`` steps),
    a snapshot of ``world``, which its steps copy on write as they do after each snapshot, not
    a whole copy first (at P = 64 that copy cost a stepper's first 5,000 steps a tenth of their
    time); without, a whole copy, which shares nothing, so that no step works out what to copy.
    ``world`` itself is never stepped."""
    return world.clone if every is None else world.snapshot


def _restart_again(
    run: ScenarioRun,
    job: Topology,
    restored: NetworkWorld,
    restart_values: dict[str, Any],
    scheduler: str,
    max_steps: int,
) -> NetworkWorld | None:
    """The third phase: run the restart to its first completed checkpoint (taken during
    recovery if the interval is short), then restore from it at ``then_parallelism``. None
    (with the run concluded) when the restart breaks an invariant or completes no checkpoint."""
    middle = Simulation(restored.clone, make_scheduler(scheduler, run.seed), None)
    result = middle.run(
        lambda model: bool(_world(model).checkpoints.completed), max_steps=max_steps
    )
    run.earlier[FIRST_RESTART] = middle.events
    between = _world(middle.model)
    run.between = between
    if result.violations:
        run.outcome = Outcome.VIOLATION
        run.message = f"the first restart broke an invariant: {result.violations[0]}"
        return None
    if not between.checkpoints.completed:
        run.outcome = Outcome.NO_CHECKPOINT
        run.message = "the first restart completed no checkpoint to restart from again"
        return None
    second = run.second_checkpoint = between.checkpoints.completed[0]
    assert second.graph is not None
    parallelism = {}
    for op in second.graph.operators:
        key = "then_source_parallelism" if op.kind.value == "source" else "then_parallelism"
        if run.values[key]:
            parallelism[op.name] = run.values[key]
    try:
        run.assignment = assign_state(
            second,
            parallelism,
            recover_output_on_downstream=run.values["recover_output_on_downstream"],
            connected_mapping=_connected_mapping(run.values),
            input_reassignment=_input_reassignment(run.values),
            stateless_assignment=_stateless_assignment(run.values),
            mapping_scope=str(run.values.get(MAPPING_SCOPE.name, MAPPING_SCOPE.default)),
        )
        return job.build(
            restart_values, seed=run.seed, faults=restored.options.faults, restore=run.assignment
        )
    except (InvalidParameterError, UnsupportedRescaleError) as refused:
        run.outcome, run.message, run.refused = Outcome.REJECTED, str(refused), refused
        return None


def _third_phase(values: Mapping[str, Any]) -> bool:
    """Whether the scenario restarts twice (``then_parallelism`` or ``then_source_parallelism``)."""
    return bool(values["then_parallelism"] or values["then_source_parallelism"])


def _run_with_progress(
    simulation: Simulation, max_steps: int, progress: Callable[[int], None] | None
) -> RunResult:
    if progress is None:
        return simulation.run(max_steps=max_steps)
    chunk = 2000
    while True:
        target = min(simulation.step_count + chunk, max_steps)
        result = simulation.run(target)
        progress(simulation.step_count)
        if result.status is not RunStatus.STOPPED or simulation.step_count >= max_steps:
            return result


_RESTORE_NAMES = frozenset(p.name for p in RESTORE_PARAMETERS)


def _world(model: object) -> NetworkWorld:
    assert isinstance(model, NetworkWorld)
    return model


def _connected_mapping(values: Mapping[str, Any]) -> str:
    """The state assignment's lookup of channel mappings: a parameter of the topologies that
    connect two operators twice only (the lookups differ nowhere else), Flink's since
    FLINK-40269 for the others."""
    return str(values.get(CONNECTED_MAPPING_LOOKUP.name, CONNECTED_MAPPING_LOOKUP.default))


def _input_reassignment(values: Mapping[str, Any]) -> str:
    """The version of Flink's rule that decides whether a consumer's input state is split
    anew: a parameter of the topologies with a custom partitioner only (the versions differ
    nowhere else), Flink's since FLINK-35351 for the others."""
    return str(values.get(INPUT_REASSIGNMENT.name, INPUT_REASSIGNMENT.default))


def _stateless_assignment(values: Mapping[str, Any]) -> str:
    """The version of Flink's rule for a vertex with no state of its own: a parameter of the
    topologies built to show it, Flink's since FLINK-31963 for the others."""
    return str(values.get(STATELESS_ASSIGNMENT.name, STATELESS_ASSIGNMENT.default))


def _parallelism(
    scenario: Scenario, job: Topology, values: Mapping[str, Any], checkpoint: Checkpoint
) -> dict[str, int]:
    assert checkpoint.graph is not None
    parallelism: dict[str, int] = {}
    if values["new_job_parallelism"]:
        job_values = {k: v for k, v in values.items() if k not in _RESTORE_NAMES}
        rescaled = job.resolve({**job_values, "parallelism": values["new_job_parallelism"]})
        for op in job._build(rescaled).operators:
            parallelism[op.name] = op.parallelism
    for op in checkpoint.graph.operators:
        key = "new_source_parallelism" if op.kind.value == "source" else "new_parallelism"
        if values[key]:
            parallelism[op.name] = values[key]
    parallelism.update(scenario.rescale)
    return parallelism
