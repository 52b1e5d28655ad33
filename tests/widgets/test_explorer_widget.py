"""Drive the interleaving explorer as a user would: pick, run, stop, read the findings, open
one in the stepper and step through it; type bad values."""

from __future__ import annotations

import html
import re
import threading
import time
from collections.abc import Hashable, Iterator

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.lab.counterexample import SubjectKind, failing_step
from flinkstate.lab.reproducers import SEQUENTIAL_READER
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.action import Action
from flinkstate.sim.explore import FindingKind, StopReason, default_memory_budget
from flinkstate.widgets.interleaving_explorer import InterleavingExplorer

#: the keyed job at 2 x 2, one record per source, every channel local (tests/cli)
SMALL_KEYED = {
    "records": 1,
    "parallelism": 2,
    "source_parallelism": 2,
    "slots_per_tm": 2,
    "checkpoint_interval": 0,
    "network_buffers": 16,
}


def said(explorer: InterleavingExplorer) -> str:
    """The widget's message line as the page shows it."""
    return html.unescape(re.sub("<[^>]+>", "", explorer.message.value))


def world_after(name: str, faults: frozenset[str], trace: tuple[Action, ...]) -> Hashable:
    """The fingerprint of the state a trace reaches from the restart the explorer started at."""
    run = prepare_scenario(name, seed=4, overrides=SEQUENTIAL_READER, faults=faults)
    assert run.simulation is not None
    for action in trace:
        run.simulation.step(action)
    assert isinstance(run.simulation.model, NetworkWorld)
    return run.simulation.model.fingerprint()


def test_a_deadlock_opens_in_the_stepper_where_it_is_stuck() -> None:
    explorer = InterleavingExplorer(
        "selective-reading-all-gates", overrides=SEQUENTIAL_READER, seed=4, background=False
    )
    assert explorer.run()
    assert explorer.message.value == ""
    assert "explored 1081 distinct states to depth 18: 1 deadlock" in explorer.verdict.value
    verdict = "selective-reading-all-gates (restart)</b>, bfs, sleep sets, seed 4"
    assert verdict in explorer.verdict.value
    assert "1,081 distinct" in explorer.progress_line.value  # the last report: the end
    assert explorer.run_button.disabled is False
    assert explorer.stop_button.disabled is True
    header, row = (explorer.findings_table.children[i : i + 5] for i in (0, 5))
    assert [cell.value for cell in header[:4]] == [
        "<b>kind</b>",
        "<b>name</b>",
        "<b>depth</b>",
        "<b>distinct states when found</b>",
    ]
    kind, name, depth, found, _ = row
    assert (kind.value, depth.value, found.value) == ("deadlock", "18", "1,080")
    assert "request-partitions sequential[0]&lt;first -&gt; task sequential[0]" in name.value
    assert explorer.open_buttons[0].description == "open in stepper"

    explorer.open_buttons[0].click()
    stepper = explorer.stepper
    assert stepper is not None
    assert explorer.stepper_box.children == (stepper.widget,)
    assert stepper.current_step == stepper.total == 18  # the deadlock's state, the last step
    assert stepper.summary["outcome"] == "deadlock"
    assert stepper.deadlock_box.layout.display == ""  # the waits-for graph under the canvas
    assert "stuck here" in stepper.badge.value
    assert "following the trace <code>deadlock-1.jsonl</code>" in stepper.badge.value
    assert "The stepper shows it at step <b>18</b>" in explorer.stepper_note.value
    result = explorer.result
    assert result is not None
    (finding,) = result.findings
    expected = world_after("selective-reading-all-gates", frozenset(), finding.trace)
    world = stepper.world
    assert world is not None
    assert world.fingerprint() == expected


@pytest.mark.slow
def test_without_reduction_it_follows_every_transition_to_the_same_verdict() -> None:
    explorer = InterleavingExplorer(
        "selective-reading-all-gates",
        overrides=SEQUENTIAL_READER,
        seed=4,
        reduction="none",
        background=False,
    )
    assert explorer.run()
    verdict = "(restart)</b>, bfs, seed 4: explored 1081 distinct states to depth 18: 1 deadlock"
    assert verdict in explorer.verdict.value


def test_a_violation_with_a_fault_opens_at_the_step_that_broke_it() -> None:
    explorer = InterleavingExplorer(
        "selective-reading-per-gate",
        overrides=SEQUENTIAL_READER,
        seed=4,
        faults=["convert-before-consumed"],
        background=False,
    )
    assert explorer.run()
    result = explorer.result
    assert result is not None
    (finding,) = result.findings
    assert finding.kind is FindingKind.VIOLATION
    assert finding.name == "conversion-with-buffers"
    assert explorer.open(0)
    stepper = explorer.stepper
    assert stepper is not None
    assert stepper.faults == frozenset({"convert-before-consumed"})
    assert stepper.current_step == failing_step(finding) == finding.depth == 3
    assert "invariant broken</b> step 3: conversion-with-buffers" in stepper.badge.value
    assert "with the fault convert-before-consumed put back on purpose" in stepper.badge.value
    # back and forward follow the counterexample, not the scheduler's run
    stepper.back_button.click()
    stepper.back_button.click()
    assert stepper.current_step == 1
    stepper.step_button.click()
    stepper.step_button.click()
    simulation = stepper.simulation
    assert simulation is not None
    assert tuple(e.action for e in simulation.events) == finding.trace
    world = stepper.world
    assert world is not None
    fault = frozenset({"convert-before-consumed"})
    expected = world_after("selective-reading-per-gate", fault, finding.trace)
    assert world.fingerprint() == expected
    # a setting changed: the scheduler's run again, without the fault
    stepper.seed.value = 5
    assert stepper.faults == frozenset()
    assert "following the trace" not in stepper.badge.value


@pytest.mark.slow
def test_a_topology_is_explored_but_its_run_does_not_open_in_the_stepper() -> None:
    explorer = InterleavingExplorer(
        "keyed", overrides=SMALL_KEYED, faults=["duplicate-record"], background=False
    )
    assert explorer.subject.value == (SubjectKind.TOPOLOGY, "keyed")
    assert explorer.phase.layout.display == "none"  # a topology runs once
    assert "records" in explorer.parameters.controls  # every parameter of the topology
    assert explorer.run()
    assert ": 3 invariant violations" in explorer.verdict.value
    assert all(button.disabled for button in explorer.open_buttons)
    assert not explorer.open(0)
    assert "keyed is a topology: the stepper steps scenarios' runs" in said(explorer)
    assert explorer.stepper is None
    explorer.subject.value = (SubjectKind.SCENARIO, "baseline-recovery")
    assert explorer.phase.layout.display == ""
    assert list(explorer.parameters.controls)[:2] == ["records", "record_size"]


@pytest.mark.slow
def test_it_explores_in_the_background_with_progress_and_stops() -> None:
    explorer = InterleavingExplorer(
        "selective-reading-all-gates", overrides=SEQUENTIAL_READER, seed=4
    )
    explorer.run_button.click()
    assert explorer.wait(120)
    assert "1 deadlock" in explorer.verdict.value
    assert "distinct states/s" in explorer.progress_line.value
    assert explorer.progress.layout.display == "none"

    # a large space, stopped from "the notebook" while the explorer runs in its thread
    big = InterleavingExplorer("keyed", overrides={"records": 3}, max_states=10**6)
    big.run_button.click()
    assert big.running
    assert big.run_button.disabled
    assert not big.run()  # one exploration at a time
    assert said(big) == "Already exploring: stop it first."
    deadline = time.monotonic() + 120
    while big.progress.value == 0 and time.monotonic() < deadline:  # exploring, not preparing
        time.sleep(0.05)
    big.stop_button.click()
    assert big.wait(120)
    # stopped as a bound stops it: what it explored so far is the result
    assert big.result is not None
    assert big.result.stopped_by is StopReason.STOPPED
    assert big.result.distinct < 10**6
    assert "every invariant holds so far; stopped by request" in big.verdict.value
    assert not big.run_button.disabled
    assert big.stop_button.disabled


@pytest.mark.parametrize(
    ("box", "typed", "message"),
    [
        ("max_states", "0", "max states takes a whole number of at least 1, got '0'"),
        ("max_states", "many", "max states takes a whole number of at least 1, got 'many'"),
        ("max_depth", "-2", "max depth takes a whole number of at least 1, got '-2'"),
        ("time", "nan", "time takes a positive number of seconds, got 'nan'"),
        ("walks", "3", "walks counts random walks: pick random walks to use it"),
        (
            "max_memory",
            "lots",
            "max memory: memory size 'lots' does not start with a whole number (for example "
            "64m or 1g)",
        ),
        ("max_memory", "0", "max memory takes a memory size of at least 1mb (512mb, 2gb), got '0'"),
    ],
)
def test_a_bad_bound_is_one_line_and_runs_nothing(box: str, typed: str, message: str) -> None:
    explorer = InterleavingExplorer("keyed", overrides=SMALL_KEYED, background=False)
    getattr(explorer, box).value = typed
    assert not explorer.run()
    assert explorer.message.value.count("<span") == 1
    assert said(explorer) == f"Not run: {message}"
    assert explorer.result is None
    assert explorer.progress_line.value == ""


def test_the_memory_budget_stops_it_as_a_bound_does() -> None:
    explorer = InterleavingExplorer(
        "keyed", overrides=SMALL_KEYED, max_memory="1mb", background=False
    )
    assert explorer.max_memory.value == "1mb"
    assert explorer.run()
    assert explorer.result is not None
    assert explorer.result.stopped_by is StopReason.MAX_MEMORY
    assert "so far; stopped by the memory budget (" in explorer.verdict.value
    assert " resident of 1 MiB)" in explorer.verdict.value
    # empty: the default budget, which a small exploration stays under
    explorer.max_memory.value = ""
    assert explorer.max_memory.placeholder.endswith(" if empty")
    assert explorer.run()
    assert explorer.result is not None
    assert explorer.result.bounds.max_memory == default_memory_budget()
    assert explorer.result.stopped_by is not StopReason.MAX_MEMORY
    with pytest.raises(InvalidParameterError, match="max_memory: memory size 'x'"):
        InterleavingExplorer("keyed", max_memory="x")


def test_bad_parameters_and_seeds_are_one_line() -> None:
    explorer = InterleavingExplorer("keyed", overrides=SMALL_KEYED, background=False)
    explorer.seed.value = -1
    assert not explorer.run()
    assert said(explorer) == "Not run: seed must be between 0 and 2147483647, got -1"
    explorer.seed.value = 0
    explorer.parameters.controls["parallelism"].value = 0
    assert not explorer.run()
    assert "parallelism = 0 is below its minimum 1" in said(explorer)
    # refused only once it is prepared: a restart needs a checkpoint to restore from
    explorer = InterleavingExplorer(
        "baseline-recovery",
        overrides={"records": 2, "checkpoint_interval": 0},
        background=False,
    )
    assert not explorer.run()
    assert "baseline-recovery has no restart to explore: no-checkpoint" in said(explorer)
    assert explorer.progress_line.value == ""
    assert not explorer.run_button.disabled


def test_unknown_names_are_refused_when_built() -> None:
    with pytest.raises(InvalidParameterError, match="unknown topology or scenario 'nosuch'"):
        InterleavingExplorer("nosuch")
    with pytest.raises(InvalidParameterError, match=r"unknown fault\(s\) \['gremlins'\]"):
        InterleavingExplorer("keyed", faults=["gremlins"])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"max_states": 0}, "max states takes a whole number of at least 1, got '0'"),
        ({"max_depth": -1}, "max depth takes a whole number of at least 1, got '-1'"),
        ({"time": -1}, "time takes a positive number of seconds, got '-1'"),
        ({"seed": -1}, "seed must be between 0 and 2147483647, got -1"),
        ({"walks": 5}, "walks counts random walks: pick random walks to use it"),
    ],
)
def test_the_constructor_holds_seed_and_bounds_to_runs_rules(
    arguments: dict[str, int], message: str
) -> None:
    """Each was taken into its box and refused only when run was pressed."""
    with pytest.raises(InvalidParameterError, match=re.escape(message)):
        InterleavingExplorer("keyed", overrides=SMALL_KEYED, background=False, **arguments)


def test_no_subject_is_refused_in_words_and_the_subject_stays() -> None:
    """``subject.value = None`` (code can set it; the page cannot) was an exception."""
    explorer = InterleavingExplorer("keyed", overrides=SMALL_KEYED, background=False)
    before = explorer.subject.value
    explorer.subject.value = None
    assert said(explorer) == "Not applied: explore must be one of its choices, got None"
    assert explorer.subject.value == before
    assert explorer.parameters.values()["records"] == 1  # the subject's controls kept
    explorer.phase.value = None  # was explored as the restart without a word
    assert said(explorer) == "Not applied: the phase must be one of its choices, got None"
    assert explorer.phase.value == "restart"


@pytest.fixture(autouse=True)
def no_stray_threads() -> Iterator[None]:
    """Every exploration a test starts has ended when it ends."""
    yield
    assert not [t for t in threading.enumerate() if t.name == "flinkstate-explore"]


@pytest.mark.slow
def test_the_traces_it_opens_are_written_in_a_folder_of_its_own() -> None:
    explorer = InterleavingExplorer(
        "selective-reading-all-gates", overrides=SEQUENTIAL_READER, seed=4, background=False
    )
    assert explorer.run()
    assert explorer.open(0)
    stepper = explorer.stepper
    assert stepper is not None
    assert stepper.trace_path is not None
    folder = stepper.trace_path.parent
    assert folder.name.startswith("flinkstate-counterexamples-")
    assert [p.name for p in folder.iterdir()] == ["deadlock-1.jsonl"]
    assert str(stepper.trace_path) in explorer.stepper_note.value
