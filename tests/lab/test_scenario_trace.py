"""Scenario runs written as traces of every phase and loaded back to the same state, at any
recorded step of any phase; traces of other runs refused by line."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.scenarios import get_scenario
from flinkstate.catalogue.topologies import topology
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import ScenarioRun, prepare_scenario, run_scenario
from flinkstate.lab.scenario_trace import (
    load_scenario_trace,
    scenario_trace_header,
    write_scenario_trace,
)
from flinkstate.lab.topology_trace import topology_trace_header, write_topology_trace
from flinkstate.sim import Simulation, make_scheduler
from flinkstate.sim.trace import DIFFERENT_RUN, TraceError, scan_trace

#: small runs of each kind of ending: recovered, three phases, a deadlock, a failed job, and a
#: task failure's failover with (before FLINK-40482) and without a broken invariant
CASES = [
    ("keyed-upscale", {"records": "20"}, Outcome.RECOVERED, ("job", "restart")),
    ("flip-547-rescale-cycle", {}, Outcome.RECOVERED, ("job", "first-restart", "restart")),
    ("prefilter-deadlock", {}, Outcome.DEADLOCK, ("job", "restart")),
    ("missing-recovery-barrier", {}, Outcome.JOB_FAILED, ("job", "restart")),
    ("failed-task-counted-as-finished", {}, Outcome.VIOLATION, ("job", "restart")),
    ("checkpoint-aborted-during-failover", {}, Outcome.JOB_FAILED, ("job", "restart")),
]


def _traced(tmp_path: Path, name: str, overrides: dict[str, str]) -> tuple[Path, ScenarioRun]:
    run = run_scenario(name, seed=1, overrides=overrides)
    path = tmp_path / f"{name}.jsonl"
    total = sum(len(events) for _, events in run.phase_events())
    assert write_scenario_trace(path, run) == total
    return path, run


@pytest.mark.parametrize(("name", "overrides", "outcome", "phases"), CASES)
def test_a_trace_loads_back_to_the_end_of_the_run(
    tmp_path: Path,
    name: str,
    overrides: dict[str, str],
    outcome: Outcome,
    phases: tuple[str, ...],
) -> None:
    path, run = _traced(tmp_path, name, overrides)
    assert run.outcome is outcome
    scanned = scan_trace(path)
    assert tuple(m.name for m in scanned.phases) == phases
    assert [m.steps for m in scanned.phases] == [len(e) for _, e in run.phase_events()]
    assert scanned.header.overrides == {k: int(v) for k, v in overrides.items()}
    loaded = load_scenario_trace(path)
    assert (loaded.phase, loaded.seed, loaded.scheduler) == ("restart", 1, "random")
    assert loaded.step == loaded.steps == scanned.phases[-1].steps
    assert loaded.phases == scanned.phases
    assert loaded.run.outcome is outcome
    assert loaded.summary == run.summary()
    assert loaded.run.world is not None
    assert run.world is not None
    assert loaded.run.world.fingerprint() == run.world.fingerprint()


@pytest.mark.parametrize(("name", "overrides", "outcome", "phases"), CASES)
def test_any_step_of_any_phase_is_the_prepared_run_at_that_step(
    tmp_path: Path,
    name: str,
    overrides: dict[str, str],
    outcome: Outcome,
    phases: tuple[str, ...],
) -> None:
    path, _ = _traced(tmp_path, name, overrides)
    for marker in scan_trace(path).phases:
        step = marker.steps * 2 // 3
        loaded = load_scenario_trace(path, phase=marker.name, step=step)
        assert (loaded.phase, loaded.step, loaded.steps) == (marker.name, step, marker.steps)
        fresh = prepare_scenario(
            name, seed=loaded.seed, overrides=loaded.overrides, phase=marker.name
        )
        assert fresh.simulation is not None
        fresh.simulation.run(step)
        simulation = loaded.run.simulation
        assert simulation is not None
        assert simulation.step_count == step
        assert loaded.run.world is not None
        assert fresh.world is not None
        assert loaded.run.world.fingerprint() == fresh.world.fingerprint()
        assert [e.to_json() for e in simulation.events] == [
            e.to_json() for e in fresh.simulation.events
        ]


def test_the_job_phase_ends_at_its_checkpoint(tmp_path: Path) -> None:
    path, run = _traced(tmp_path, "keyed-upscale", {"records": "20"})
    loaded = load_scenario_trace(path, phase="job")
    assert loaded.run.outcome is Outcome.STOPPED
    assert loaded.run.world is not None
    assert run.job is not None
    assert loaded.run.world.fingerprint() == run.job.fingerprint()
    assert loaded.run.world.checkpoints.completed


def test_writing_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    written = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        written.append(_traced(tmp_path / folder, "prefilter-deadlock", {})[0].read_bytes())
    assert written[0] == written[1]


def test_only_catalogued_scenarios_are_traced(tmp_path: Path) -> None:
    run = prepare_scenario("baseline-recovery", overrides={"records": 20}, phase="job")
    assert scenario_trace_header(run).overrides == {"records": 20}
    changed = replace(get_scenario("baseline-recovery"), title="changed")
    run = prepare_scenario(changed, overrides={"records": 20}, phase="job")
    with pytest.raises(InvalidParameterError, match="only catalogued scenarios"):
        write_scenario_trace(tmp_path / "t.jsonl", run)
    assert list(tmp_path.iterdir()) == []


def _rewrite(path: Path, index: int, **changes: object) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[index] = json.dumps({**json.loads(lines[index]), **changes}) + "\n"
    path.write_text("".join(lines))


def _refusal(path: Path, phase: str = "restart") -> str:
    with pytest.raises(TraceError) as error:
        load_scenario_trace(path, phase=phase)
    message = str(error.value)
    assert "\n" not in message
    assert str(path) in message
    return message


def test_a_trace_of_another_run_is_refused_by_line(tmp_path: Path) -> None:
    path, run = _traced(tmp_path, "keyed-upscale", {"records": "20"})
    original = path.read_text()
    header = json.loads(original.splitlines()[0])
    job_steps = len(run.earlier["job"])
    _rewrite(path, 0, name="nope")
    assert _refusal(path).startswith(f"{path}:1: unknown scenario 'nope'")
    path.write_text(original)
    _rewrite(path, 0, parameters={**header["parameters"], "records": 21})
    assert _refusal(path) == (
        f"{path}:1: parameter records is 21 in the trace, 20 here; {DIFFERENT_RUN}"
    )
    path.write_text(original)
    _rewrite(path, 0, overrides={"records": 20, "new_parallelism": 600})
    assert "new_parallelism = 600 is above its maximum" in _refusal(path)
    # an event of the job, compared while the restart is loaded; one of the restart, replayed
    for line in (5, job_steps + 10):
        path.write_text(original)
        _rewrite(path, line - 1, note="edited")
        message = _refusal(path)
        assert message.startswith(f"{path}:{line}: step ")
        assert 'replayed differently: note recorded "edited"' in message
        assert message.endswith(DIFFERENT_RUN)
    path.write_text(original)
    _rewrite(path, 0, seed=2)
    assert f"{path}:3: step 0 replayed differently" in _refusal(path, phase="job")


def test_phases_that_do_not_match_are_refused(tmp_path: Path) -> None:
    path, _ = _traced(tmp_path, "flip-547-rescale-cycle", {})
    header = json.loads(path.read_text().splitlines()[0])
    parameters = {**header["parameters"], "then_parallelism": 0}
    _rewrite(path, 0, overrides={"then_parallelism": 0}, parameters=parameters)
    message = _refusal(path)
    assert "phase first-restart where this flinkstate runs restart" in message
    two_phases, _ = _traced(tmp_path, "keyed-upscale", {"records": "20"})
    with pytest.raises(TraceError, match="has no phase 'first-restart'; it has job, restart"):
        load_scenario_trace(two_phases, phase="first-restart")


def test_bad_requests_and_files_are_refused(tmp_path: Path) -> None:
    path, run = _traced(tmp_path, "prefilter-deadlock", {})
    with pytest.raises(InvalidParameterError, match="phase must be one of job, first-restart"):
        load_scenario_trace(path, phase="sideways")
    with pytest.raises(InvalidParameterError, match="outside phase job's recorded steps 0 to"):
        load_scenario_trace(path, phase="job", step=len(run.earlier["job"]) + 1)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-3]))
    assert "truncated" in _refusal(path)
    path.write_text("".join(lines)[:-100])
    assert "truncated: the last line is cut short" in _refusal(path)
    path.write_text("".join(lines[:5]) + "not json\n" + "".join(lines[6:]))
    assert f"{path}:6: not JSON" in _refusal(path)
    other = tmp_path / "keyed.jsonl"
    item = topology("keyed")
    simulation = Simulation(lambda: item.build({"records": 5}, seed=0), make_scheduler("random", 0))
    simulation.run()
    header = topology_trace_header("keyed", {"records": 5}, seed=0, scheduler="random")
    write_topology_trace(other, header, simulation.events)
    assert "not of a scenario; load it with load_topology_trace" in _refusal(other)
