"""Whom a checkpoint is triggered at, whom it waits for, and who counts as finished.

Flink's ``DefaultCheckpointPlanCalculator`` computes this plan from every subtask's
``ExecutionState`` before a checkpoint gets its id. While no subtask has FINISHED, the plan
triggers every source subtask and waits for every subtask. Once some subtask has FINISHED
(``execution.checkpointing.checkpoints-after-tasks-finish``, on by default), it marks which
subtasks still run, waits for those only, triggers the running ones that have no running
predecessor, and records the others as finished: in the completed checkpoint their operators'
state is "finished" (``FinishedOperatorSubtaskState``, or ``FullyFinishedOperatorState`` for an
operator with no running subtask), which a restore honours by starting them without state or as
finished. Either way, every subtask waited for must be RUNNING, or the plan is refused with
``NOT_ALL_REQUIRED_TASKS_RUNNING`` (``checkTasksStarted``).

What "still runs" means is FLINK-40482: the calculator asked ``Execution.isFinished()``, which
was ``state.isTerminal()``, so a FAILED or CANCELED subtask (a failover in progress) counted as
finished too. ``TerminalTaskRule`` keeps both rules. A pure function of the graph and the
states, so Flink's declarative tests (``DefaultCheckpointPlanCalculatorTest``) port to it
directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from flinkstate.runtime.execution_state import ExecutionState
from flinkstate.runtime.jobgraph import Exchange, JobGraph, SubtaskId
from flinkstate.runtime.options import CheckpointFailureReason, TerminalTaskRule

#: Flink's key for checkpoints after some tasks finished (FLIP-147; on by default)
CHECKPOINTS_AFTER_TASKS_FINISH_KEY = "execution.checkpointing.checkpoints-after-tasks-finish"


@dataclass(frozen=True)
class CheckpointPlan:
    """``CheckpointPlan``: each list in the graph's topological order, subtasks by index.

    Examples
    --------
    Once ``source[0]`` has FINISHED, the checkpoint starts at ``source[1]`` only, waits for the
    three running subtasks and records ``source[0]`` as finished:

    >>> from flinkstate.rescale.partitioner import Partitioner
    >>> from flinkstate.runtime.jobgraph import Operator, OperatorKind
    >>> source = Operator("source", 2, OperatorKind.SOURCE)
    >>> sink = Operator("sink", 2, OperatorKind.SINK)
    >>> job = JobGraph((source, sink), (Exchange("source", "sink", Partitioner.REBALANCE),))
    >>> states = {subtask: ExecutionState.RUNNING for subtask in all_running_plan(job).to_wait_for}
    >>> plan = calculate_plan(job, states | {SubtaskId("source", 0): ExecutionState.FINISHED})
    >>> [str(s) for s in plan.to_trigger], len(plan.to_wait_for), [str(s) for s in plan.finished]
    (['source[1]'], 3, ['source[0]'])
    """

    #: where the checkpoint starts: sources, or running subtasks with no running predecessor
    to_trigger: tuple[SubtaskId, ...]
    #: whose acknowledgement completes it (also the subtasks it commits to)
    to_wait_for: tuple[SubtaskId, ...]
    #: subtasks the completed checkpoint records as finished, with no state of their own
    finished: tuple[SubtaskId, ...] = ()
    #: operators none of whose subtasks runs (``FullyFinishedOperatorState``)
    fully_finished: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanRefusal:
    """The ``CheckpointException`` the calculator throws instead of a plan: the attempt fails
    before any barrier exists and before it has an id.

    Examples
    --------
    >>> reason = CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING
    >>> PlanRefusal(reason, "sink[0] is FAILED, not RUNNING").reason.value
    'Not all required tasks are currently running.'
    """

    reason: CheckpointFailureReason
    why: str


def all_running_plan(graph: JobGraph) -> CheckpointPlan:
    """``calculateWithAllTasksRunning``: trigger every source subtask, wait for every subtask.

    Examples
    --------
    >>> from flinkstate.rescale.partitioner import Partitioner
    >>> from flinkstate.runtime.jobgraph import Operator, OperatorKind
    >>> source = Operator("source", 2, OperatorKind.SOURCE)
    >>> sink = Operator("sink", 2, OperatorKind.SINK)
    >>> job = JobGraph((source, sink), (Exchange("source", "sink", Partitioner.REBALANCE),))
    >>> plan = all_running_plan(job)
    >>> [str(s) for s in plan.to_trigger], [str(s) for s in plan.to_wait_for]
    (['source[0]', 'source[1]'], ['source[0]', 'source[1]', 'sink[0]', 'sink[1]'])
    """
    order = graph.topological_order()
    return CheckpointPlan(
        to_trigger=tuple(
            s for name in order if not graph.inputs_of(name) for s in _of(graph, name)
        ),
        to_wait_for=tuple(s for name in order for s in _of(graph, name)),
    )


def calculate_plan(
    graph: JobGraph,
    states: Mapping[SubtaskId, ExecutionState],
    rule: TerminalTaskRule = TerminalTaskRule.ABORT,
    *,
    after_tasks_finish: bool = True,
) -> CheckpointPlan | PlanRefusal:
    """``DefaultCheckpointPlanCalculator.calculateCheckpointPlan`` for ``states`` (every
    subtask of ``graph``), under ``rule``; ``after_tasks_finish`` is
    ``CHECKPOINTS_AFTER_TASKS_FINISH_KEY``. FINISHED counts as such only when it is FINISHED
    (Flink counts a vertex finished on ``markFinished``), so a failed or canceled subtask alone
    never takes the after-finished branch.

    Examples
    --------
    While ``source[0]`` is FAILED (a failover in progress), the fixed rule refuses the plan; the
    old rule (FLINK-40482) took FAILED as finished, and refuses it only when it checks the
    subtasks waited for:

    >>> from flinkstate.rescale.partitioner import Partitioner
    >>> from flinkstate.runtime.jobgraph import Operator, OperatorKind
    >>> source = Operator("source", 2, OperatorKind.SOURCE)
    >>> sink = Operator("sink", 2, OperatorKind.SINK)
    >>> job = JobGraph((source, sink), (Exchange("source", "sink", Partitioner.REBALANCE),))
    >>> states = {subtask: ExecutionState.RUNNING for subtask in all_running_plan(job).to_wait_for}
    >>> states[SubtaskId("source", 0)] = ExecutionState.FAILED
    >>> calculate_plan(job, states).why
    'source[0] is FAILED: a failover is in progress'
    >>> calculate_plan(job, states, TerminalTaskRule.AS_FINISHED).why
    'source[0] is FAILED, not RUNNING'
    """
    order = graph.topological_order()
    subtasks = [s for name in order for s in _of(graph, name)]
    has_finished = any(states[s] is ExecutionState.FINISHED for s in subtasks)
    if has_finished and not after_tasks_finish:
        return PlanRefusal(
            CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING,
            f"some subtasks have finished and {CHECKPOINTS_AFTER_TASKS_FINISH_KEY} is off",
        )
    if rule is TerminalTaskRule.ABORT:
        failed = [f"{s} is {states[s].value}" for s in subtasks if states[s] in _FAILED_OR_CANCELED]
        if failed:
            return PlanRefusal(
                CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING,
                f"{', '.join(failed)}: a failover is in progress",
            )
    plan = _after_tasks_finished(graph, states) if has_finished else all_running_plan(graph)
    for subtask in plan.to_wait_for:  # ``checkTasksStarted``
        if states[subtask] is not ExecutionState.RUNNING:
            return PlanRefusal(
                CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING,
                f"{subtask} is {states[subtask].value}, not RUNNING",
            )
    return plan


_FAILED_OR_CANCELED = frozenset({ExecutionState.FAILED, ExecutionState.CANCELED})


def _of(graph: JobGraph, operator: str) -> tuple[SubtaskId, ...]:
    return tuple(SubtaskId(operator, i) for i in range(graph.operator(operator).parallelism))


def _after_tasks_finished(
    graph: JobGraph, states: Mapping[SubtaskId, ExecutionState]
) -> CheckpointPlan:
    """``calculateAfterTasksFinished``. A subtask runs unless terminal
    (``collectTaskRunningStatus``): under either rule, as the fixed rule has refused FAILED and
    CANCELED ones before this point."""
    order = graph.topological_order()
    running = {name: tuple(not states[s].is_terminal for s in _of(graph, name)) for name in order}
    trigger: list[SubtaskId] = []
    wait: list[SubtaskId] = []
    finished: list[SubtaskId] = []
    fully_finished: list[str] = []
    for name in order:
        flags = running[name]
        if not any(flags):
            fully_finished.append(name)
            finished.extend(_of(graph, name))
            continue
        inputs = graph.inputs_of(name)
        # only where no input connects every subtask to a running predecessor
        may_trigger = not any(_active_upstream(graph, e, running) for e in inputs)
        for index, runs in enumerate(flags):
            subtask = SubtaskId(name, index)
            if not runs:
                finished.append(subtask)
                continue
            wait.append(subtask)
            if may_trigger and not _running_predecessor(graph, inputs, index, running):
                trigger.append(subtask)
    return CheckpointPlan(tuple(trigger), tuple(wait), tuple(finished), tuple(fully_finished))


def _active_upstream(
    graph: JobGraph, exchange: Exchange, running: Mapping[str, tuple[bool, ...]]
) -> bool:
    """``hasActiveUpstreamVertex``: an all-to-all input with any running producer, or a
    pointwise one whose producers all run, gives every subtask a running predecessor."""
    flags = running[exchange.upstream]
    if exchange.partitioner.is_pointwise:
        return all(flags)
    return any(flags)


def _running_predecessor(
    graph: JobGraph,
    inputs: tuple[Exchange, ...],
    index: int,
    running: Mapping[str, tuple[bool, ...]],
) -> bool:
    """``hasRunningPrecedentTasks``: a running producer on a pointwise input (the all-to-all
    inputs have none left, or the subtask would not be a candidate)."""
    return any(
        running[exchange.upstream][producer]
        for exchange in inputs
        if exchange.partitioner.is_pointwise
        for producer in graph.producers(exchange, index)
    )
