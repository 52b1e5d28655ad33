"""Traces of a catalogued topology's run (``flinkstate run TOPOLOGY --trace FILE``), and
loading one back to a :class:`~flinkstate.sim.core.Simulation` at the same state.

A topology run is one phase, ``run``; the format is :mod:`flinkstate.sim.trace`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.options import Fault
from flinkstate.sim.core import Event, Simulation
from flinkstate.sim.scheduler import make_scheduler
from flinkstate.sim.trace import (
    SINGLE_PHASE,
    TraceError,
    TraceHeader,
    TraceReader,
    check_parameters,
    check_step,
    replay_phase,
    write_trace,
)

#: the ``kind`` of a topology's trace
TOPOLOGY_TRACE = "topology"


def topology_trace_header(
    name: str,
    overrides: Mapping[str, object],
    *,
    seed: int,
    scheduler: str,
    max_steps: int | None = None,
) -> TraceHeader:
    """The header of a run of topology ``name``; every value is checked here, so a bad one
    is refused before the run."""
    item = topology(name)
    values = item.resolve(overrides)
    return TraceHeader(
        TOPOLOGY_TRACE,
        name,
        seed,
        make_scheduler(scheduler, seed).name,
        {key: values[key] for key in overrides},
        values,
        max_steps,
    )


def write_topology_trace(path: Path, header: TraceHeader, events: Sequence[Event]) -> int:
    """Write the run whole or not at all; returns the number of events written."""
    return write_trace(path, header, [(SINGLE_PHASE, events)])


def load_topology_trace(path: Path, *, step: int | None = None) -> Simulation:
    """Rebuild the traced run and replay it, checking every event, to ``step`` (default: the
    last recorded). Version 1 traces load too. Every problem with the file is a
    :class:`TraceError` naming it and the line."""
    with TraceReader(path) as reader:
        header = reader.header
        where = reader.where(reader.header_line)
        reader.expect_kind(TOPOLOGY_TRACE, {"scenario": "load_scenario_trace"})
        try:
            item = topology(header.name)
            check_parameters(reader, item.resolve(header.overrides))
            initial = item.build(
                header.overrides, seed=header.seed, faults=Fault.parse_all(header.faults)
            )
            scheduler = make_scheduler(header.scheduler, header.seed)
        except InvalidParameterError as error:
            raise TraceError(f"{where}: {error}") from None
        simulation = Simulation(initial.clone, scheduler)
        target: int | None = None
        for marker, events in reader.phases():
            if marker.name != SINGLE_PHASE:
                raise TraceError(
                    f"{reader.where(marker.line)}: a topology's trace has one phase, "
                    f"{SINGLE_PHASE}, not {marker.name}"
                )
            target = check_step(marker, step)
            replay_phase(simulation, events, reader)
    if target is None:
        raise TraceError(f"{path} has no phase {SINGLE_PHASE}")
    if target != simulation.step_count:
        simulation.goto(target)
    return simulation
