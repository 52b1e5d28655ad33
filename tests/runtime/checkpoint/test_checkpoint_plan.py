"""The coordinator's checkpoint plan, held to Flink's ``DefaultCheckpointPlanCalculatorTest``
(its declarative graphs, finished subtasks and expected triggers), and FLINK-40482's rule for
FAILED and CANCELED subtasks before and after the fix."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pytest

from flinkstate.rescale.partitioner import Partitioner
from flinkstate.runtime.checkpoint.checkpoint_plan import (
    CheckpointPlan,
    PlanRefusal,
    all_running_plan,
    calculate_plan,
)
from flinkstate.runtime.execution_state import ExecutionState
from flinkstate.runtime.jobgraph import Exchange, JobGraph, Operator, OperatorKind, SubtaskId
from flinkstate.runtime.options import CheckpointFailureReason, TerminalTaskRule

ALL_TO_ALL = Partitioner.REBALANCE
POINTWISE = Partitioner.RESCALE
RUNNING = ExecutionState.RUNNING
FINISHED = ExecutionState.FINISHED
NOT_RUNNING = CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING


def vertex(index: int) -> str:
    return f"vertex_{index}"


def graph_of(
    parallelisms: Sequence[int], edges: Iterable[tuple[int, int, Partitioner]]
) -> JobGraph:
    """Flink's ``VertexDeclaration``s and ``EdgeDeclaration``s: a vertex without inputs is an
    input vertex (a source)."""
    edges = list(edges)
    targets = {target for _, target, _ in edges}
    return JobGraph(
        tuple(
            Operator(vertex(i), p, OperatorKind.MAP if i in targets else OperatorKind.SOURCE)
            for i, p in enumerate(parallelisms)
        ),
        tuple(Exchange(vertex(s), vertex(t), partitioner) for s, t, partitioner in edges),
    )


def states_of(
    graph: JobGraph, special: Mapping[int, Mapping[int, ExecutionState]]
) -> dict[SubtaskId, ExecutionState]:
    """Every subtask RUNNING but those named (vertex -> subtask -> state)."""
    return {
        SubtaskId(op.name, i): special.get(int(op.name.split("_")[1]), {}).get(i, RUNNING)
        for op in graph.operators
        for i in range(op.parallelism)
    }


def finished(indices: Iterable[int]) -> dict[int, ExecutionState]:
    return dict.fromkeys(indices, FINISHED)


def subtasks(declared: Mapping[int, Iterable[int]]) -> set[SubtaskId]:
    return {SubtaskId(vertex(v), i) for v, indices in declared.items() for i in indices}


def check(
    parallelisms: Sequence[int],
    edges: Sequence[tuple[int, int, Partitioner]],
    finished_subtasks: Mapping[int, Iterable[int]],
    expected_trigger: Mapping[int, Iterable[int]],
) -> None:
    """``runSingleTest``: the plan triggers the expected subtasks, waits for every subtask not
    finished, records the finished ones, and names the vertices with none running; the same
    under both rules, as no subtask failed."""
    graph = graph_of(parallelisms, edges)
    done = {v: set(indices) for v, indices in finished_subtasks.items()}
    states = states_of(graph, {v: finished(indices) for v, indices in done.items()})
    for rule in TerminalTaskRule:
        plan = calculate_plan(graph, states, rule)
        assert isinstance(plan, CheckpointPlan), plan
        assert set(plan.to_trigger) == subtasks(expected_trigger)
        assert set(plan.finished) == subtasks(done)
        assert set(plan.to_wait_for) == set(states) - subtasks(done)
        assert set(plan.fully_finished) == {
            vertex(v) for v, indices in done.items() if len(indices) == parallelisms[v]
        }


def test_compute_all_running_graph() -> None:
    check(
        [3, 4, 5, 6],
        [(0, 2, ALL_TO_ALL), (1, 2, POINTWISE), (2, 3, ALL_TO_ALL)],
        {},
        {0: range(3), 1: range(4)},
    )


def test_all_to_all_edge_with_some_sources_finished() -> None:
    check([3, 4], [(0, 1, ALL_TO_ALL)], {0: range(2)}, {0: range(2, 3)})


def test_one_to_one_edge_with_some_sources_finished() -> None:
    check([4, 4], [(0, 1, POINTWISE)], {0: range(2)}, {0: range(2, 4), 1: range(2)})


def test_one_to_one_edge_with_some_sources_and_targets_finished() -> None:
    check([4, 4], [(0, 1, POINTWISE)], {0: range(2), 1: [0]}, {0: range(2, 4), 1: range(1, 2)})


def test_compute_with_multiple_inputs() -> None:
    check(
        [3, 5, 5, 5],
        [(0, 3, ALL_TO_ALL), (1, 3, POINTWISE), (2, 3, POINTWISE)],
        {0: range(3), 1: [0, 2, 3], 2: [2, 4], 3: [2]},
        {1: [1, 4], 2: [0, 1, 3]},
    )


def test_compute_with_multiple_levels() -> None:
    check(
        [16, 16, 16, 16, 16],
        [
            (0, 2, POINTWISE),
            (0, 3, POINTWISE),
            (1, 2, ALL_TO_ALL),
            (1, 3, POINTWISE),
            (2, 4, POINTWISE),
            (3, 4, ALL_TO_ALL),
        ],
        {0: range(4), 1: range(16), 2: range(2)},
        {0: range(4, 16), 2: range(2, 4), 3: range(4)},
    )


#: every state but RUNNING that a not-yet-running subtask can be in; FINISHED is left out:
#: Flink's test sets it without ``markFinished``, so its calculator does not see a finished
#: vertex, while the model's one state is counted as finished
_NOT_RUNNING = [s for s in ExecutionState if s not in (RUNNING, FINISHED)]


@pytest.mark.parametrize("state", _NOT_RUNNING)
@pytest.mark.parametrize(
    ("running_is_source", "other_is_source"),
    [(True, True), (True, False), (False, False), (False, True)],
)
def test_the_plan_fails_when_one_task_is_not_running(
    state: ExecutionState, running_is_source: bool, other_is_source: bool
) -> None:
    """``testPlanCalculationWhenOneTaskNotRunning``: one vertex RUNNING, one in ``state``,
    sources connected to the other vertices all-to-all (two "non-sources" without a source are
    input vertices too)."""
    if running_is_source and not other_is_source:
        graph = graph_of([1, 1], [(0, 1, ALL_TO_ALL)])
    elif other_is_source and not running_is_source:
        graph = graph_of([1, 1], [(1, 0, ALL_TO_ALL)])
    else:
        graph = graph_of([1, 1], [])
    states = states_of(graph, {1: {0: state}})
    for rule in TerminalTaskRule:
        refused = calculate_plan(graph, states, rule)
        assert isinstance(refused, PlanRefusal)
        assert refused.reason is NOT_RUNNING


# -- FLINK-40482 ----------------------------------------------------------------------------

#: two independent pipelines, 0 -> 1 at parallelism 1 and 2 -> 3 at parallelism 2, over
#: pointwise exchanges: the first finished; subtask 1 of the second failed over
_REGIONS = ([1, 1, 2, 2], [(0, 1, POINTWISE), (2, 3, POINTWISE)])
_FAILOVER = {
    0: {0: FINISHED},
    1: {0: FINISHED},
    2: {1: ExecutionState.CANCELED},
    3: {1: ExecutionState.FAILED},
}


def test_before_the_fix_failed_and_canceled_subtasks_count_as_finished() -> None:
    """A finished subtask takes the plan to ``calculateAfterTasksFinished``, where a terminal
    subtask did not run: the failed region is left out of the subtasks to wait for and is
    recorded as finished, and ``checkTasksStarted`` sees only RUNNING ones."""
    graph = graph_of(*_REGIONS)
    plan = calculate_plan(graph, states_of(graph, _FAILOVER), TerminalTaskRule.AS_FINISHED)
    assert isinstance(plan, CheckpointPlan)
    assert plan.to_trigger == (SubtaskId("vertex_2", 0),)
    assert plan.to_wait_for == (SubtaskId("vertex_2", 0), SubtaskId("vertex_3", 0))
    assert set(plan.finished) == {
        SubtaskId("vertex_0", 0),
        SubtaskId("vertex_1", 0),
        SubtaskId("vertex_2", 1),
        SubtaskId("vertex_3", 1),
    }
    assert plan.fully_finished == ("vertex_0", "vertex_1")


def test_the_fix_aborts_the_plan_naming_the_failed_and_canceled_subtasks() -> None:
    graph = graph_of(*_REGIONS)
    refused = calculate_plan(graph, states_of(graph, _FAILOVER), TerminalTaskRule.ABORT)
    assert isinstance(refused, PlanRefusal)
    assert refused.reason is NOT_RUNNING
    assert refused.why == (
        "vertex_2[1] is CANCELED, vertex_3[1] is FAILED: a failover is in progress"
    )


def test_before_the_fix_a_failover_of_every_running_subtask_plans_to_wait_for_none() -> None:
    """The extreme case of the PR: nothing left to wait for; ``PendingCheckpoint`` refuses
    such a plan, which masked the rule (the coordinator turns that into a trigger failure)."""
    graph = graph_of([1, 1, 1, 1], [(0, 1, POINTWISE), (2, 3, POINTWISE)])
    states = states_of(
        graph,
        {
            0: {0: FINISHED},
            1: {0: FINISHED},
            2: {0: ExecutionState.CANCELED},
            3: {0: ExecutionState.FAILED},
        },
    )
    plan = calculate_plan(graph, states, TerminalTaskRule.AS_FINISHED)
    assert isinstance(plan, CheckpointPlan)
    assert plan.to_wait_for == ()
    assert plan.fully_finished == ("vertex_0", "vertex_2", "vertex_1", "vertex_3")


def test_without_a_finished_subtask_a_failed_one_was_refused_before_the_fix_too() -> None:
    """Only the after-finished branch classified by ``isFinished``: while no subtask has
    FINISHED, every subtask is waited for and a FAILED one fails ``checkTasksStarted``."""
    graph = graph_of(*_REGIONS)
    states = states_of(graph, {3: {1: ExecutionState.FAILED}})
    refused = calculate_plan(graph, states, TerminalTaskRule.AS_FINISHED)
    assert refused == PlanRefusal(NOT_RUNNING, "vertex_3[1] is FAILED, not RUNNING")


def test_a_canceling_subtask_is_not_terminal_and_fails_the_running_check() -> None:
    graph = graph_of(*_REGIONS)
    states = states_of(
        graph, {0: {0: FINISHED}, 1: {0: FINISHED}, 2: {1: ExecutionState.CANCELING}}
    )
    for rule in TerminalTaskRule:
        refused = calculate_plan(graph, states, rule)
        assert refused == PlanRefusal(NOT_RUNNING, "vertex_2[1] is CANCELING, not RUNNING")


def test_finished_subtasks_without_checkpoints_after_tasks_finish_refuse_the_plan() -> None:
    graph = graph_of(*_REGIONS)
    states = states_of(graph, {0: {0: FINISHED}})
    refused = calculate_plan(graph, states, after_tasks_finish=False)
    assert isinstance(refused, PlanRefusal)
    assert refused.reason is NOT_RUNNING
    assert "checkpoints-after-tasks-finish" in refused.why


def test_the_all_running_plan_triggers_the_sources_and_waits_for_everyone() -> None:
    graph = graph_of([2, 3], [(0, 1, ALL_TO_ALL)])
    plan = all_running_plan(graph)
    assert plan.to_trigger == (SubtaskId("vertex_0", 0), SubtaskId("vertex_0", 1))
    assert len(plan.to_wait_for) == 5
    assert calculate_plan(graph, states_of(graph, {})) == plan
