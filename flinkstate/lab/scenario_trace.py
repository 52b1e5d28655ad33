"""Traces of a recovery scenario's run, every phase of it (``flinkstate run SCENARIO --trace
FILE``), and loading one back to the same state.

A scenario's trace (the format is :mod:`flinkstate.sim.trace`'s, kind ``scenario``) holds the
phases in the order the run went through them: ``job`` (the job until its first checkpoint),
with ``then_parallelism`` ``first-restart`` (the restart from it until its own first
checkpoint), then ``restart`` (the restart run to its end); a run that ends early (refused, no
checkpoint, an invariant broken in the first restart) holds the phases it ran. The header's
overrides are the parameters that differ from the scenario's own, so
``prepare_scenario(name, overrides=...)`` rebuilds the run, and the loaded run can be handed to
anything that prepares scenarios the same way (the recovery stepper).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flinkstate.catalogue.scenarios import SCENARIOS, get_scenario
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import RUN_PHASES, ScenarioRun, prepare_scenario
from flinkstate.runtime.options import Fault
from flinkstate.sim.action import Action
from flinkstate.sim.core import RunResult, RunStatus, Simulation
from flinkstate.sim.trace import (
    PhaseMarker,
    TraceError,
    TraceHeader,
    TraceReader,
    check_parameters,
    check_step,
    compare_phase,
    different_run,
    replay_phase,
    scan_trace,
    write_trace,
)

#: the ``kind`` of a scenario's trace
SCENARIO_TRACE = "scenario"


@dataclass(frozen=True)
class LoadedScenarioTrace:
    """A scenario's run rebuilt from its trace: ``run.simulation`` is at ``step`` of
    ``phase``; with ``seed``, ``overrides``, ``scheduler`` and ``max_steps``,
    ``prepare_scenario`` makes the same run again."""

    run: ScenarioRun
    phase: str
    step: int
    #: steps the trace records for ``phase`` (the last step it can be moved to)
    steps: int
    seed: int
    overrides: Mapping[str, Any]
    scheduler: str
    max_steps: int
    #: every phase the trace holds, in run order
    phases: tuple[PhaseMarker, ...]
    #: how the recorded phase ends (``ScenarioRun.summary`` at its last step)
    summary: Mapping[str, Any] = field(repr=False)
    #: the actions the trace records for ``phase``, every one (``step`` may be earlier): with
    #: ``sim.scheduler.Recorded`` a prepared run steps through the recorded run again, also
    #: one no scheduler chose (the explorer's)
    actions: tuple[Action, ...] = field(default=(), repr=False)
    #: the faults the run was traced with (beside the scenario's own)
    faults: frozenset[Fault] = frozenset()


def scenario_trace_header(run: ScenarioRun) -> TraceHeader:
    """The header that rebuilds ``run``: its scenario (a catalogued one, unchanged), seed,
    scheduler, step limit, added faults, and the parameters that differ from the scenario's."""
    item = run.scenario
    if SCENARIOS.get(item.name) != item:
        raise InvalidParameterError(
            f"only catalogued scenarios can be traced; {item.name} is not one, or is changed"
        )
    defaults = item.resolve()
    overrides = {k: v for k, v in run.values.items() if k not in defaults or defaults[k] != v}
    return TraceHeader(
        SCENARIO_TRACE,
        item.name,
        run.seed,
        run.scheduler,
        overrides,
        dict(run.values),
        run.max_steps,
        tuple(sorted(run.faults)),
    )


def write_scenario_trace(path: Path, run: ScenarioRun) -> int:
    """Write every phase ``run`` went through, whole or not at all; returns the events
    written."""
    return write_trace(path, scenario_trace_header(run), run.phase_events())


def load_scenario_trace(
    path: Path, *, phase: str = "restart", step: int | None = None
) -> LoadedScenarioTrace:
    """Rebuild a traced scenario run at ``step`` of ``phase`` (default: its last recorded step).

    The scenario is prepared with the trace's parameters, seed, scheduler and step limit; the
    phases before ``phase`` are compared with the trace event by event, and the recorded
    actions of ``phase`` are replayed, each step checked against its recorded event. Any
    difference, and every problem with the file, is a :class:`TraceError` naming the file and
    the line."""
    if phase not in RUN_PHASES:
        raise InvalidParameterError(f"phase must be one of {', '.join(RUN_PHASES)}, got {phase!r}")
    scanned = scan_trace(path)  # the whole file's shape first, before anything runs
    with TraceReader(path) as reader:
        header = reader.header
        where = reader.where(reader.header_line)
        reader.expect_kind(SCENARIO_TRACE, {"topology": "load_topology_trace"})
        marker = scanned.phase(phase)
        target = check_step(marker, step)
        max_steps = header.max_steps if header.max_steps is not None else 2_000_000
        try:
            item = get_scenario(header.name)
            check_parameters(reader, item.resolve(header.overrides))
            run = prepare_scenario(
                item,
                seed=header.seed,
                overrides=header.overrides,
                scheduler=header.scheduler,
                max_steps=max_steps,
                phase=phase,
                faults=Fault.parse_all(header.faults),
            )
        except InvalidParameterError as error:
            raise TraceError(f"{where}: {error}") from None
        _replay(reader, run, phase)
    summary = run.summary()
    assert run.simulation is not None
    actions = tuple(run.simulation.history)
    if target != run.simulation.step_count:
        run.simulation.goto(target)
    return LoadedScenarioTrace(
        run,
        phase,
        target,
        marker.steps,
        header.seed,
        dict(header.overrides),
        run.scheduler,
        max_steps,
        scanned.phases,
        summary,
        actions,
        run.faults,
    )


def _replay(reader: TraceReader, run: ScenarioRun, phase: str) -> None:
    """Compare the phases before ``phase`` with those ``run`` went through, replay ``phase``
    on its simulation and conclude it; the phases after it are only read."""
    pending = list(run.earlier)
    reached = False
    for found, events in reader.phases():
        if reached:
            continue
        where = reader.where(found.line)
        expected = pending[0] if pending else phase
        if found.name != expected:
            raise TraceError(
                f"{where}: phase {found.name} where this flinkstate runs {expected}; "
                f"{different_run(reader)}"
            )
        if pending:
            compare_phase(found, events, run.earlier[pending.pop(0)], reader)
            continue
        simulation = run.simulation
        if simulation is None:
            raise TraceError(
                f"{where}: here the scenario ends before phase {phase} ({run.outcome.value}: "
                f"{run.message}); {different_run(reader)}"
            )
        replay_phase(simulation, events, reader)
        run.conclude(_ending(simulation))
        reached = True


def _ending(simulation: Simulation) -> RunResult:
    """How a replayed phase ended: finished, deadlocked or broken where nothing more could
    run, stopped (at a checkpoint or the step limit) where something could."""
    if simulation.enabled_actions() and not simulation.model.violations:
        return RunResult(RunStatus.STOPPED, simulation.step_count)
    return simulation.run(max_steps=1)  # steps nothing: reports the end, as a run would
