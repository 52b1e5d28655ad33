"""What the explorer starts from, named as a user names it, and its findings as runs' traces
that load back at the step where they go wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.lab.counterexample import (
    SubjectKind,
    exploration_subject,
    failing_step,
    seconds_bound,
    trace_file_names,
    whole_bound,
    write_counterexamples,
)
from flinkstate.lab.reproducers import SEQUENTIAL_READER
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.lab.scenario_trace import load_scenario_trace
from flinkstate.sim.core import Violation
from flinkstate.sim.explore import Finding, FindingKind, explore

#: the job of FLINK-40482's scenario cut down: a manual checkpoint asked for while sink[1]'s
#: region is down completes without it in a few interleavings only
SMALL_FAILOVER = {
    "records": 1,
    "bounded_records": 1,
    "checkpoint_interval": 0,
    "fail_after_records": 1,
    "restart_delay": 2,
    "slots_per_tm": 4,
}


def test_a_scenarios_violation_loads_back_at_the_step_that_broke_it(tmp_path: Path) -> None:
    subject = exploration_subject(
        "selective-reading-per-gate",
        overrides=SEQUENTIAL_READER,
        seed=4,
        faults=frozenset({"convert-before-consumed"}),
    )
    assert subject.kind is SubjectKind.SCENARIO
    assert subject.describe() == "selective-reading-per-gate (restart)"
    (finding,) = explore(subject.initial).findings
    assert finding.violation is not None
    assert failing_step(finding) == finding.violation.step + 1 == finding.depth == 3
    [path] = write_counterexamples(tmp_path / "found", subject, [finding])
    assert path.name == "violation-conversion-with-buffers.jsonl"
    loaded = load_scenario_trace(path, step=failing_step(finding))
    assert loaded.actions == finding.trace
    assert loaded.faults == frozenset({"convert-before-consumed"})
    assert loaded.step == 3
    world = loaded.run.world
    assert world is not None
    assert [v.invariant for v in world.violations] == ["conversion-with-buffers"]


@pytest.mark.slow
def test_a_deadlock_goes_wrong_at_its_last_step() -> None:
    subject = exploration_subject(
        "selective-reading-all-gates", overrides=SEQUENTIAL_READER, seed=4
    )
    (finding,) = explore(subject.initial).findings
    assert finding.kind is FindingKind.DEADLOCK
    assert failing_step(finding) == finding.depth == 18


def test_a_jobs_faults_break_the_job_when_it_is_the_phase_explored() -> None:
    run = prepare_scenario(
        "failed-task-counted-as-finished",
        overrides=SMALL_FAILOVER,
        phase="job",
        faults=["duplicate-record"],
    )
    assert run.world is not None
    assert run.world.options.faults == frozenset({"duplicate-record"})
    restart = prepare_scenario(
        "selective-reading-per-gate",
        overrides=SEQUENTIAL_READER,
        seed=4,
        faults=["duplicate-record"],
    )
    assert restart.job is not None
    assert restart.job.options.faults == frozenset()  # the job before a restart runs as it is
    assert restart.world is not None
    assert restart.world.options.faults == frozenset({"duplicate-record"})


def test_file_names_name_violations_and_number_deadlocks() -> None:
    broken = Violation("key-order", 4, "record 3 before record 2")
    findings = [
        Finding(FindingKind.DEADLOCK, "a -> b -> a", ()),
        Finding(FindingKind.VIOLATION, "key-order", (), violation=broken),
        Finding(FindingKind.DEADLOCK, "c -> c", ()),
    ]
    assert trace_file_names(findings) == [
        "deadlock-1.jsonl",
        "violation-key-order.jsonl",
        "deadlock-2.jsonl",
    ]


def test_bounds_typed_as_text() -> None:
    assert whole_bound(None, "max states", 7) == 7
    assert whole_bound("12", "max states") == 12
    assert seconds_bound(None, "time") is None
    assert seconds_bound("2.5", "time") == 2.5
    with pytest.raises(InvalidParameterError, match="max depth takes a whole number"):
        whole_bound("1.5", "max depth")
    with pytest.raises(InvalidParameterError, match="time takes a positive number of seconds"):
        seconds_bound("inf", "time")


def test_names_phases_and_checkpoints_are_refused_in_one_line() -> None:
    with pytest.raises(InvalidParameterError, match="unknown topology or scenario 'x'"):
        exploration_subject("x")
    with pytest.raises(InvalidParameterError, match="phase must be one of restart, job"):
        exploration_subject("baseline-recovery", phase="first-restart")
    with pytest.raises(InvalidParameterError, match="has no restart to explore: no-checkpoint"):
        exploration_subject("baseline-recovery", overrides={"records": 2, "checkpoint_interval": 0})
