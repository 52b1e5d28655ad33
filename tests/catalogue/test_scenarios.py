"""Every recovery scenario reaches the outcome it expects, over many seeds."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.scenarios import SCENARIOS, get_scenario
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.runtime.world.world import COPY_ON_WRITE_FROM, NetworkWorld

SEEDS = range(6)
#: every scenario at every seed; make test-fast runs each at its first seed, but for the ITCase
#: jobs (up to 12 subtasks a side), whose runs take seconds
SCENARIO_SEEDS = [
    pytest.param(name, seed, marks=pytest.mark.slow if seed or name.startswith("itcase-") else ())
    for name in sorted(SCENARIOS)
    for seed in SEEDS
]


@pytest.mark.parametrize(("name", "seed"), SCENARIO_SEEDS)
def test_scenario_reaches_its_expected_outcome(name: str, seed: int) -> None:
    run = run_scenario(name, seed=seed)
    summary = run.summary()
    assert run.as_expected, summary
    if run.outcome is Outcome.RECOVERED:
        # the checkpoint the simulated restart restored from (a third phase's is the second)
        restored_from = run.second_checkpoint or run.checkpoint
        assert restored_from is not None
        assert restored_from.in_flight_bytes > 0, "the scenario recovers no in-flight data"
        assert run.recovered_bytes >= restored_from.in_flight_bytes
        assert run.resumed_step is not None


@pytest.mark.slow
def test_rescaling_scenarios_filter_and_plain_restart_does_not() -> None:
    assert run_scenario("baseline-recovery", seed=1).filtered_records == 0
    assert run_scenario("keyed-upscale", seed=1).filtered_records > 0


def test_recover_output_on_downstream_leaves_the_sources_nothing_to_read() -> None:
    run = run_scenario("recover-output-on-downstream", seed=2)
    assert run.assignment is not None
    assert run.assignment.recover_output_on_downstream
    sources = [s for s in run.assignment.subtasks.values() if s.operator == "source"]
    assert all(not s.output_state for s in sources)
    assert any(c.upstream_output for s in run.assignment.subtasks.values() for c in s.input_state)


def test_small_page_size_is_refused_with_flinks_message() -> None:
    run = run_scenario("small-page-size")
    assert run.outcome is Outcome.REJECTED
    assert "Minimum memory segment size is 4096" in run.message
    assert "taskmanager.memory.segment-size" in run.message


def test_overrides_change_the_outcome_and_are_checked() -> None:
    run = run_scenario("small-page-size", overrides={"segment_size": 4096})
    assert run.outcome is Outcome.RECOVERED
    assert not run.as_expected
    with pytest.raises(InvalidParameterError, match="unknown parameter 'pool'"):
        run_scenario("baseline-recovery", overrides={"pool": 3})
    with pytest.raises(InvalidParameterError, match="new_parallelism = 600 is above"):
        run_scenario("baseline-recovery", overrides={"new_parallelism": 600})


def test_a_job_that_never_checkpoints_says_so() -> None:
    run = run_scenario("baseline-recovery", overrides={"checkpoint_interval": 0})
    assert run.outcome is Outcome.NO_CHECKPOINT
    assert "checkpoint_interval" in run.message


def test_a_run_keeps_the_events_of_the_job_before_its_restart() -> None:
    run = run_scenario("baseline-recovery", seed=2, overrides={"records": 20})
    job = prepare_scenario("baseline-recovery", seed=2, overrides={"records": 20}, phase="job")
    assert job.simulation is not None
    assert job.earlier == {}
    job.simulation.run(lambda world: bool(world.checkpoints.completed))
    assert [e.to_json() for e in run.earlier["job"]] == [e.to_json() for e in job.simulation.events]
    assert run.simulation is not None
    assert [(name, len(events)) for name, events in run.phase_events()] == [
        ("job", job.simulation.step_count),
        ("restart", run.simulation.step_count),
    ]
    assert (run.scheduler, run.max_steps, run.faults) == ("random", 2_000_000, frozenset())


def test_a_run_without_snapshots_is_the_same_run_and_keeps_only_its_start() -> None:
    # a run to its end keeps only its start unless told: nobody steps back through it
    overrides = {"records": 20}
    kept = run_scenario("keyed-upscale", seed=4, overrides=overrides, keep_snapshots=True)
    bare = run_scenario("keyed-upscale", seed=4, overrides=overrides)
    assert kept.simulation is not None
    assert bare.simulation is not None
    assert [(n, [e.to_json() for e in events]) for n, events in bare.phase_events()] == [
        (n, [e.to_json() for e in events]) for n, events in kept.phase_events()
    ]
    assert bare.summary() == kept.summary()
    assert bare.simulation.snapshot_every is None
    assert len(kept.simulation._snapshots) > 1
    assert list(bare.simulation._snapshots) == [0]
    bare.simulation.back(5)  # still exact: replayed from the start
    kept.simulation.back(5)
    assert bare.simulation.model.fingerprint() == kept.simulation.model.fingerprint()


def test_a_run_that_ends_before_its_restart_keeps_the_job() -> None:
    run = run_scenario("baseline-recovery", overrides={"checkpoint_interval": 0})
    assert [name for name, _ in run.phase_events()] == ["job"]
    assert run_scenario("small-page-size").phase_events() == []


def test_the_scheduler_is_named_as_the_policy_names_itself() -> None:
    run = prepare_scenario("baseline-recovery", scheduler="round_robin", phase="job")
    assert run.scheduler == "round-robin"
    with pytest.raises(InvalidParameterError, match="unknown scheduling policy"):
        prepare_scenario("baseline-recovery", scheduler="fair")


def test_unknown_scenario_is_named() -> None:
    with pytest.raises(InvalidParameterError, match="unknown scenario 'nope'; known: "):
        get_scenario("nope")


def test_progress_is_reported_while_the_restart_runs() -> None:
    seen: list[int] = []
    run = run_scenario("keyed-upscale", seed=0, progress=seen.append)
    assert run.result is not None
    assert seen
    assert seen == sorted(seen)
    assert seen[-1] == run.result.steps


def test_sources_can_be_rescaled_with_the_rest() -> None:
    run = run_scenario(
        "keyed-downscale", seed=2, overrides={"new_source_parallelism": 3, "new_parallelism": 5}
    )
    assert run.outcome is Outcome.RECOVERED
    assert run.assignment is not None
    assert run.assignment.graph.operator("source").parallelism == 3
    splits = [s for share in run.assignment.subtasks.values() for s in share.source_splits]
    assert len(splits) == 4  # the four original sequences, now read by three subtasks


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        (
            3,
            {
                "source": 3,
                "global": 3,
                "rebalance": 4,
                "upscale": 6,
                "downscale": 4,
                "keyby": 3,
                "rescale": 4,
                "failing-map": 3,
                "sink": 1,
            },
        ),
        (
            7,
            {
                "source": 7,
                "global": 7,
                "rebalance": 8,
                "upscale": 14,
                "downscale": 8,
                "keyby": 7,
                "rescale": 10,
                "failing-map": 7,
                "sink": 1,
            },
        ),
    ],
)
def test_itcase_pipeline_parallelisms_follow_the_job_parallelism(
    p: int, expected: dict[str, int]
) -> None:
    """UnalignedCheckpointRescaleITCase: p+1, 2p, max(p+1, 3p/2), a parallelism-1 sink."""
    other = 7 if p == 3 else 3
    # the assignment is made before the restart: prepared, the run need not step through it
    run = prepare_scenario(f"itcase-pipeline-{other}-to-{p}", seed=0)
    assert run.assignment is not None
    got = {op.name: op.parallelism for op in run.assignment.graph.operators}
    assert got == expected


def test_resumed_step_is_when_the_last_task_finished_restoring() -> None:
    run = run_scenario("keyed-upscale", seed=0)
    assert run.simulation is not None
    resumed = run.resumed_step
    assert resumed is not None
    run.simulation.goto(resumed - 1)  # one step earlier a task was still restoring
    assert run.resumed_step is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "itcase-keyed-different-parallelism-12-to-7",
            {"source0": 3, "rescale0": 4, "source1": 2, "rescale1": 3, "co-process": 7},
        ),
        (
            "itcase-keyed-broadcast-7-to-2",
            {"source0": 2, "map": 2, "process": 4, "source-1": 1, "source-3": 1, "sink": 1},
        ),
        ("itcase-broadcast-5-to-2", {"source0": 2, "source": 2, "map": 2, "process": 4}),
        ("itcase-multi-input-2-to-3", {"source2": 3, "min1": 3, "min2": 3, "failing-map": 3}),
        ("itcase-union-3-to-2", {"source1": 2, "upscale2": 4, "failing-map": 2, "sink": 1}),
    ],
)
def test_itcase_topologies_follow_the_job_parallelism(name: str, expected: dict[str, int]) -> None:
    """p/2 and p/3 pipelines, a process at p + 2 or 2p, parallelism-1 broadcast sources."""
    run = prepare_scenario(name, seed=0)  # the assignment, made before the restart runs
    assert run.assignment is not None
    got = {op.name: op.parallelism for op in run.assignment.graph.operators}
    assert {name: got[name] for name in expected} == expected


@pytest.mark.parametrize(
    ("name", "aligned"),
    [
        ("itcase-keyed-broadcast-7-to-2", ["map->process", "source-1->process"]),
        ("itcase-broadcast-2-to-5", ["map->process", "source->process"]),
        ("itcase-multi-input-3-to-2", ["min1->min2", "rescale2->min2"]),
    ],
)
def test_inputs_of_operators_reading_broadcast_or_forward_carry_no_state(
    name: str, aligned: list[str]
) -> None:
    run = prepare_scenario(name, seed=1)  # the checkpoint and the assignment: before the restart
    assert run.assignment is not None
    assert run.checkpoint is not None
    for exchange in aligned:
        assert not run.assignment.exchanges[exchange].carries_channel_state, exchange
        consumer = exchange.split("->")[1]
        assert not [
            s for s in run.checkpoint.input_channel_state if s.channel.startswith(consumer + "[")
        ]
    assert run.checkpoint.in_flight_bytes > 0


@pytest.mark.slow
@pytest.mark.parametrize("keep", [True, False])
def test_a_big_restart_s_stepper_starts_from_a_snapshot_and_a_run_from_a_whole_copy(
    keep: bool,
) -> None:
    # with snapshots the model shares the restored world's components, copied on write as after
    # every snapshot (no whole copy first); without, it shares nothing, so no step works out
    # what to copy; either way the same run
    values = {"source_parallelism": 32, "parallelism": 32, "new_parallelism": 16, "records": 4}
    run = prepare_scenario("keyed-upscale", overrides=values, keep_snapshots=keep)
    world = run.world
    assert world is not None
    assert world.component_count >= COPY_ON_WRITE_FROM
    assert run.simulation is not None
    restored = run.simulation.factory.__self__  # type: ignore[attr-defined]
    assert isinstance(restored, NetworkWorld)
    shared = [name for name, c in world.channels.items() if restored.channels[name] is c]
    assert len(shared) == (len(world.channels) if keep else 0)
    assert (world.owned is not None) is keep
    run.simulation.run(300)
    other = prepare_scenario("keyed-upscale", overrides=values, keep_snapshots=not keep)
    assert other.simulation is not None
    other.simulation.run(300)
    assert other.simulation.model.fingerprint() == run.simulation.model.fingerprint()
