"""The mailbox's first action on restore: before FLINK-19907 a source's opened chain emits
ahead of its recovered output; since, the output is written first (``StreamTask.beforeInvoke``
of 3ab31a0473c^ and of 3ab31a0473c)."""

from __future__ import annotations

from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.tasks import mailbox
from flinkstate.runtime.world.world import NetworkWorld


def restored(order: str) -> NetworkWorld:
    run = prepare_scenario("output-restored-before-chain", overrides={"restore_order": order})
    assert run.simulation is not None
    world = run.simulation.model
    assert isinstance(world, NetworkWorld)
    return world


def first_kinds(world: NetworkWorld, operator: str) -> set[str]:
    """The first action of each restored subtask of ``operator`` that has output state."""
    kinds = set()
    for task in world.tasks.values():
        if task.operator == operator and task.output_state:
            assert task.phase is TaskPhase.RESTORING_OUTPUT
            first = mailbox.task_action(world, task)
            assert first is not None
            kinds.add(first.kind)
    return kinds


def test_before_the_fix_a_restored_source_emits_before_it_writes_its_output_state() -> None:
    assert first_kinds(restored("flink-1.11.2"), "source") == {ActionKind.EMIT}


def test_since_the_fix_a_restored_source_writes_its_output_state_first() -> None:
    assert first_kinds(restored("flink-1.11.3"), "source") == {ActionKind.RECOVER_OUTPUT}


def test_a_restored_task_with_input_reads_nothing_before_its_output_either_way() -> None:
    for order in ("flink-1.11.2", "flink-1.11.3"):
        assert first_kinds(restored(order), "counter") <= {ActionKind.RECOVER_OUTPUT}
