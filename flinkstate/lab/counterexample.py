"""What the explorer of every interleaving starts from, named as a user names it, and what it
finds written as a run's trace: the one mechanism ``flinkstate explore --trace-dir`` and the
explorer widget share.

A subject is a topology's fresh run or a scenario's phase (its restart as ``prepare_scenario``
makes it: the job run to its first checkpoint with the seed's schedule, then restored; or the
job from its start). A finding's trace is the actions from the subject's start; written as a
run's JSON-lines trace (:mod:`flinkstate.sim.trace`), it loads back with
``load_topology_trace`` or ``load_scenario_trace`` to the state found, and into the recovery
stepper at the step where it goes wrong (:func:`failing_step`), which then steps through the
recorded actions (``sim.scheduler.Recorded``), back and forward.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from flinkstate.catalogue.scenarios import SCENARIOS
from flinkstate.catalogue.topologies import CATALOGUE, topology
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import PHASES, ScenarioRun, prepare_scenario
from flinkstate.lab.scenario_trace import write_scenario_trace
from flinkstate.lab.topology_trace import topology_trace_header, write_topology_trace
from flinkstate.output import directory_written_whole
from flinkstate.runtime.options import Fault
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.action import Action
from flinkstate.sim.core import Simulation
from flinkstate.sim.explore import Finding
from flinkstate.sim.scheduler import make_scheduler
from flinkstate.sim.trace import MAX_LINE_CHARS, TRACE_FORMAT

#: distinct states explored when no bound is given (a bound keeps memory in hand)
DEFAULT_MAX_STATES = 100_000
#: the scheduler of a scenario's phases before the one explored (``flinkstate run``'s default),
#: named in every trace written here
SCHEDULER = "random"
#: what a folder of written counterexamples holds, in refusals
COUNTEREXAMPLES = "counterexample traces"


class SubjectKind(StrEnum):
    """What a subject's name names."""

    TOPOLOGY = "topology"
    SCENARIO = "scenario"


@dataclass(frozen=True)
class ExplorationSubject:
    """The start of an exploration and how a trace from it is written as a run's trace."""

    name: str
    kind: SubjectKind
    #: a scenario's phase explored (``restart`` or ``job``); None for a topology
    phase: str | None
    seed: int
    overrides: Mapping[str, object]
    faults: frozenset[Fault]
    initial: NetworkWorld
    #: writes the run that takes the given actions from the start to a trace file
    _write: Callable[[Path, Sequence[Action]], None] = field(repr=False, compare=False)

    def describe(self) -> str:
        """Its name, with the phase of a scenario: ``selective-reading-all-gates (restart)``."""
        return self.name if self.phase is None else f"{self.name} ({self.phase})"

    def write_trace(self, path: Path, actions: Sequence[Action]) -> Path:
        """Write the run that takes ``actions`` from the start as a trace (whole or not at
        all): a topology's run, or every phase of the scenario's run, the explored one ending
        with them."""
        self._write(path, actions)
        return path


def exploration_subject(
    name: str,
    *,
    overrides: Mapping[str, object] | None = None,
    seed: int = 0,
    phase: str | None = None,
    faults: frozenset[Fault] = frozenset(),
) -> ExplorationSubject:
    """The world a name gives to explore from: a scenario's phase (``restart`` unless
    ``phase`` says ``job``), or a topology's fresh run. Every parameter and fault is checked
    here, so bad input is one :class:`InvalidParameterError` before anything is explored."""
    overrides = dict(overrides or {})
    if name in SCENARIOS:
        return _scenario(name, phase or "restart", overrides, seed, faults)
    if name not in CATALOGUE:
        raise InvalidParameterError(
            f"unknown topology or scenario {name!r}; topologies: "
            f"{', '.join(sorted(CATALOGUE))}; scenarios: {', '.join(sorted(SCENARIOS))}"
        )
    if phase is not None:
        raise InvalidParameterError(
            f"--phase picks a scenario's run; {name} is a topology, which runs once"
        )
    item = topology(name)
    initial = item.build(overrides, seed=seed, faults=faults)  # checks every parameter
    header = dataclasses.replace(
        topology_trace_header(name, overrides, seed=seed, scheduler=SCHEDULER),
        faults=tuple(sorted(faults)),
    )

    def write(path: Path, actions: Sequence[Action]) -> None:
        simulation = _replayed(Simulation(initial.clone, make_scheduler(SCHEDULER, seed)), actions)
        write_topology_trace(path, header, simulation.events)

    return ExplorationSubject(
        name, SubjectKind.TOPOLOGY, None, seed, overrides, faults, initial, write
    )


def _scenario(
    name: str, phase: str, overrides: dict[str, object], seed: int, faults: frozenset[Fault]
) -> ExplorationSubject:
    if phase not in PHASES:
        raise InvalidParameterError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")

    def prepare() -> ScenarioRun:
        return prepare_scenario(
            name, seed=seed, overrides=overrides, scheduler=SCHEDULER, phase=phase, faults=faults
        )

    run = prepare()
    if run.simulation is None:
        raise InvalidParameterError(
            f"{name} has no {phase} to explore: {run.outcome.value}"
            + (f" ({run.message})" if run.message else "")
        )
    initial = run.simulation.model
    assert isinstance(initial, NetworkWorld)

    def write(path: Path, actions: Sequence[Action]) -> None:
        fresh = prepare()  # the earlier phases again, and the explored one from its step 0
        assert fresh.simulation is not None
        _replayed(fresh.simulation, actions)
        write_scenario_trace(path, fresh)

    return ExplorationSubject(
        name, SubjectKind.SCENARIO, phase, seed, overrides, faults, initial, write
    )


def _replayed(simulation: Simulation, actions: Sequence[Action]) -> Simulation:
    for action in actions:
        simulation.step(action)
    return simulation


def failing_step(finding: Finding) -> int:
    """The step where a counterexample goes wrong, counted as the stepper counts (the n-th
    action is step n): the step that broke the invariant, or the last one of a deadlock (the
    state where nothing can run)."""
    if finding.violation is not None:
        return min(finding.violation.step + 1, finding.depth)
    return finding.depth


def trace_file_names(findings: Sequence[Finding]) -> list[str]:
    """A file name per finding, in their order: a violation's named by its invariant,
    deadlocks numbered."""
    names: list[str] = []
    for finding in findings:
        if finding.violation is not None:
            slug = re.sub(r"[^a-z0-9]+", "-", finding.name.lower()).strip("-")
            names.append(f"violation-{slug}.jsonl")
        else:
            names.append(f"deadlock-{sum(n.startswith('deadlock-') for n in names) + 1}.jsonl")
    return names


def write_counterexamples(
    folder: Path, subject: ExplorationSubject, findings: Sequence[Finding]
) -> list[Path]:
    """Each finding's trace in one folder (named by :func:`trace_file_names`), swapped in
    whole when all are written; the files, in the order of the findings."""
    names = trace_file_names(findings)
    with directory_written_whole(folder, is_trace_folder, COUNTEREXAMPLES) as temporary:
        for finding, file_name in zip(findings, names, strict=True):
            subject.write_trace(temporary / file_name, finding.trace)
    return [folder / file_name for file_name in names]


def is_trace_folder(folder: Path) -> bool:
    """A folder that holds only traces (what an earlier write wrote): replaceable."""
    for entry in folder.iterdir():
        if entry.suffix != ".jsonl" or not entry.is_file():
            return False
        try:
            with entry.open(encoding="utf-8") as trace:
                first: Any = json.loads(trace.readline(MAX_LINE_CHARS))
        except (OSError, ValueError):
            return False
        if not isinstance(first, dict) or first.get("format") != TRACE_FORMAT:
            return False
    return True


def whole_bound(raw: str | None, what: str, default: int | None = None) -> int | None:
    """A bound typed as text (a command-line option, a widget's box): a whole number of at
    least 1, or ``default`` when none is given (None); anything else is refused naming
    ``what``."""
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise InvalidParameterError(f"{what} takes a whole number of at least 1, got {raw!r}")
    return value


def seconds_bound(raw: str | None, what: str) -> float | None:
    """A time budget typed as text: a positive, finite number of seconds, or None when none
    is given (None)."""
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise InvalidParameterError(f"{what} takes a positive number of seconds, got {raw!r}")
    return value
