"""A topology's run written as a trace and loaded back to the same state; version 1 traces too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.topology_trace import (
    load_topology_trace,
    topology_trace_header,
    write_topology_trace,
)
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import Simulation, make_scheduler
from flinkstate.sim.trace import DIFFERENT_RUN, TraceError

OVERRIDES = {"records": "10", "checkpoint_interval": "20"}


def _run(steps: int | None = None, **changes: str) -> Simulation:
    item = topology("keyed")
    overrides = {**OVERRIDES, **changes}
    simulation = Simulation(
        lambda: item.build(overrides, seed=3, full_check_every=1), make_scheduler("random", 3)
    )
    simulation.run(steps)
    return simulation


def _world(simulation: Simulation) -> NetworkWorld:
    assert isinstance(simulation.model, NetworkWorld)
    return simulation.model


def _trace(tmp_path: Path) -> tuple[Path, Simulation]:
    simulation = _run()
    path = tmp_path / "keyed.jsonl"
    header = topology_trace_header("keyed", OVERRIDES, seed=3, scheduler="random")
    assert header.overrides == {"records": 10, "checkpoint_interval": 20}
    assert header.parameters == topology("keyed").resolve(OVERRIDES)
    assert write_topology_trace(path, header, simulation.events) == simulation.step_count
    return path, simulation


def test_a_trace_loads_back_to_the_same_state(tmp_path: Path) -> None:
    path, simulation = _trace(tmp_path)
    loaded = load_topology_trace(path)
    assert loaded.step_count == simulation.step_count
    assert _world(loaded).fingerprint() == _world(simulation).fingerprint()
    assert [e.to_json() for e in loaded.events] == [e.to_json() for e in simulation.events]
    middle = simulation.step_count // 3
    at = load_topology_trace(path, step=middle)
    fresh = _run(middle)
    assert at.step_count == middle
    assert _world(at).fingerprint() == _world(fresh).fingerprint()
    assert [e.to_json() for e in at.events] == [e.to_json() for e in fresh.events]
    at.run()  # the scheduler goes on exactly as recorded
    assert _world(at).fingerprint() == _world(simulation).fingerprint()
    with pytest.raises(InvalidParameterError, match="outside phase run's recorded steps"):
        load_topology_trace(path, step=simulation.step_count + 1)


def test_version_1_traces_load(tmp_path: Path) -> None:
    simulation = _run()
    path = tmp_path / "v1.jsonl"
    header = {
        "format": "flinkstate-trace",
        "version": 1,
        "scenario": "keyed",
        "parameters": topology("keyed").resolve(OVERRIDES),
        "scheduler": "random",
        "seed": 3,
    }
    lines = [header, *(e.to_json() for e in simulation.events)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    loaded = load_topology_trace(path)
    assert _world(loaded).fingerprint() == _world(simulation).fingerprint()


def _rewrite_header(path: Path, **changes: object) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[0] = json.dumps({**json.loads(lines[0]), **changes}) + "\n"
    path.write_text("".join(lines))


def _refusal(path: Path) -> str:
    with pytest.raises(TraceError) as error:
        load_topology_trace(path)
    message = str(error.value)
    assert str(path) in message
    assert "\n" not in message
    return message


def test_a_trace_of_another_run_is_refused(tmp_path: Path) -> None:
    path, _ = _trace(tmp_path)
    original = path.read_text()
    header = json.loads(original.splitlines()[0])
    parameters = header["parameters"]
    _rewrite_header(path, parameters={**parameters, "records": 11})
    assert _refusal(path) == (
        f"{path}:1: parameter records is 11 in the trace, 10 here; {DIFFERENT_RUN}"
    )
    path.write_text(original)
    _rewrite_header(path, parameters={**parameters, "gone": 1})
    assert "parameter gone is unknown here" in _refusal(path)
    path.write_text(original)
    _rewrite_header(path, name="nope")
    assert f"{path}:1: unknown topology 'nope'" in _refusal(path)
    path.write_text(original)
    _rewrite_header(path, scheduler="fair")
    assert "unknown scheduling policy 'fair'" in _refusal(path)
    path.write_text(original)
    _rewrite_header(path, kind="scenario")
    assert "not of a topology; load it with load_scenario_trace" in _refusal(path)
    path.write_text(original)
    changed = {**parameters, "parallelism": 2}
    _rewrite_header(path, overrides={**header["overrides"], "parallelism": 2}, parameters=changed)
    message = _refusal(path)
    assert message.startswith(f"{path}:4: step 1 replayed differently: moves recorded [[8185, ")
    assert message.endswith(f"; {DIFFERENT_RUN}")
