"""Traces: a run written as JSON lines, and replayed to the same state.

The first line is a header naming the scenario, its parameters, the scheduler and the seed;
each further line is one :class:`~flinkstate.sim.core.Event`. Replaying applies the recorded
actions to a fresh model and checks that every step produces the same event again, so a trace
doubles as a regression test of determinism.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flinkstate.errors import FlinkstateError
from flinkstate.sim.core import Action, Event, Simulation

TRACE_FORMAT = "flinkstate-trace"
TRACE_VERSION = 1


class TraceError(FlinkstateError):
    """A trace file that cannot be read or does not replay to the same events."""


@dataclass(frozen=True)
class TraceHeader:
    scenario: str
    parameters: dict[str, Any]
    scheduler: str
    seed: int


def write_trace(path: Path, header: TraceHeader, events: Iterable[Event]) -> int:
    """Write the header and events; returns the number of events written."""
    count = 0
    with path.open("w", encoding="utf-8") as out:
        out.write(
            json.dumps(
                {
                    "format": TRACE_FORMAT,
                    "version": TRACE_VERSION,
                    "scenario": header.scenario,
                    "parameters": header.parameters,
                    "scheduler": header.scheduler,
                    "seed": header.seed,
                }
            )
            + "\n"
        )
        for event in events:
            out.write(json.dumps(event.to_json()) + "\n")
            count += 1
    return count


def read_trace(path: Path) -> tuple[TraceHeader, list[dict[str, Any]]]:
    """Parse a trace file; every problem is a :class:`TraceError` naming the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise TraceError(f"cannot read trace {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise TraceError(f"{path} is not a text trace file") from None
    records = list(_parse(path, lines))
    if not records:
        raise TraceError(f"{path} is empty, expected a {TRACE_FORMAT} header")
    head = records[0]
    if head.get("format") != TRACE_FORMAT:
        raise TraceError(f"{path}:1: not a {TRACE_FORMAT} file")
    if head.get("version") != TRACE_VERSION:
        raise TraceError(
            f"{path}:1: trace version {head.get('version')!r}, this flinkstate reads "
            f"version {TRACE_VERSION}"
        )
    try:
        header = TraceHeader(
            str(head["scenario"]),
            dict(head["parameters"]),
            str(head["scheduler"]),
            int(head["seed"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise TraceError(f"{path}:1: incomplete header ({error})") from None
    return header, records[1:]


def _parse(path: Path, lines: list[str]) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise TraceError(f"{path}:{number}: not JSON ({error.msg})") from None
        if not isinstance(value, dict):
            raise TraceError(f"{path}:{number}: expected a JSON object")
        yield value


def replay(simulation: Simulation, events: list[dict[str, Any]]) -> Simulation:
    """Apply the recorded actions to ``simulation`` (reset first), checking each event."""
    simulation.reset()
    for number, recorded in enumerate(events, start=1):
        try:
            action = Action(recorded["actor"], recorded["kind"], recorded.get("target", ""))
        except KeyError as error:
            raise TraceError(f"event {number}: missing field {error}") from None
        if action not in simulation.enabled_actions():
            raise TraceError(
                f"event {number} (step {recorded.get('step')}): {action} is not enabled here; "
                "the trace was made with another scenario, parameters or flinkstate version"
            )
        event = simulation.step(action)
        assert event is not None
        if event.to_json() != recorded:
            raise TraceError(
                f"event {number} (step {recorded.get('step')}) replayed differently: "
                f"recorded {recorded}, got {event.to_json()}"
            )
    return simulation
