"""The explorer: distinct states per second, memory per stored state, and the reduction factor.

Subject: breadth first exploration (sleep sets on, as ``flinkstate explore`` runs it) of a
2 x 2 keyed restart (``baseline-recovery`` restored at parallelism 2, two records per source,
bounded by a number of distinct states). Baseline, in the same run: as many plain seeded
simulation steps of the same restored world, so the ratio is what a distinct state costs
against one step (a state costs a copy, a step and its fingerprint); and the same exploration
with whole copies of every state (``explore(partial=False)``), what copying only the
components each action may change saves. The reduction factor:
every interleaving of a 2 x 2 keyed job (one record per source, exhausted) with sleep sets
against every transition, and with persistent sets (states stored, against every
transition's). Memory: the peak Python allocation of a depth first exploration
(which holds one path of whole worlds) per distinct state stored. And the same restart with
Flink's default 2048 network buffers per TaskManager against its 16, bounded alike (the same
states are reached): what the segments no step touches cost each state. Targets (issue 22):
20,000 distinct states per second on one core.
"""

from __future__ import annotations

import random
import tracemalloc

from benchmarks.harness import Measurement, best_of
from flinkstate.catalogue.topologies import topology
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.explore import NO_REDUCTION, Bounds, PersistentSets, SleepSets, explore

#: the restart explored: a 2 x 2 keyed job, its checkpoint four steps in
RESTART = {
    "parallelism": 2,
    "source_parallelism": 2,
    "records": 2,
    "network_buffers": 16,
    "checkpoint_interval": 4,
}
#: Flink's default network buffers per TaskManager (the topologies' default)
DEFAULT_NETWORK_BUFFERS = 2048
#: the job explored to its end, with and without sleep sets
JOB = {
    "records": 1,
    "parallelism": 2,
    "source_parallelism": 2,
    "network_buffers": 16,
    "checkpoint_interval": 0,
}


def restarted(network_buffers: int | None = None) -> NetworkWorld:
    overrides = (
        RESTART if network_buffers is None else {**RESTART, "network_buffers": network_buffers}
    )
    run = prepare_scenario("baseline-recovery", overrides=overrides, seed=0)
    assert run.simulation is not None, run.message
    model = run.simulation.model
    assert isinstance(model, NetworkWorld)
    return model


def random_steps(start: NetworkWorld, steps: int) -> None:
    """``steps`` seeded random steps from ``start``, starting again at each run's end."""
    rng = random.Random(0)
    world = start.clone()
    for _ in range(steps):
        enabled = world.enabled_actions()
        if not enabled or world.violations:
            world = start.clone()
            enabled = world.enabled_actions()
        world.apply(enabled[rng.randrange(len(enabled))])


def run(smoke: bool) -> list[Measurement]:
    bound = 1_000 if smoke else 20_000
    repeat = 1 if smoke else 3
    start = restarted()
    bounds = Bounds(max_states=bound)
    explored = explore(start, bounds=bounds, reduction=SleepSets())
    explore_seconds = best_of(lambda: explore(start, bounds=bounds, reduction=SleepSets()), repeat)
    step_seconds = best_of(lambda: random_steps(start, explored.distinct), repeat)
    whole = explore(start, bounds=bounds, reduction=SleepSets(), partial=False)
    assert (whole.distinct, whole.states) == (explored.distinct, explored.states)
    whole_seconds = best_of(
        lambda: explore(start, bounds=bounds, reduction=SleepSets(), partial=False), repeat
    )

    job = topology("keyed").build(JOB if not smoke else {**JOB, "slots_per_tm": 2})
    reduced = explore(job, reduction=SleepSets())
    plain = explore(job, reduction=NO_REDUCTION)
    assert reduced.exhausted
    assert reduced.distinct == plain.distinct
    reduced_seconds = best_of(lambda: explore(job, reduction=SleepSets()), repeat)
    plain_seconds = best_of(lambda: explore(job, reduction=NO_REDUCTION), repeat)
    persistent = explore(job, reduction=PersistentSets())
    assert persistent.exhausted
    assert persistent.finished == plain.finished
    persistent_seconds = best_of(lambda: explore(job, reduction=PersistentSets()), repeat)

    tracemalloc.start()
    try:
        deep = explore(start, strategy="dfs", bounds=bounds, reduction=SleepSets())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(
        f"explorer    {explored.distinct:,} distinct states of the 2 x 2 keyed restart "
        f"({explored.states:,} reached, depth {explored.depth}); job exhausted: "
        f"{plain.distinct:,} states, {plain.states:,} transitions without reduction, "
        f"{reduced.states:,} with sleep sets (reduction factor "
        f"{plain.states / reduced.states:.2f}); {persistent.distinct:,} states with persistent "
        f"sets (reduction factor {plain.distinct / persistent.distinct:.2f}, "
        f"{persistent.persistent:,} followed by one actor's actions alone); "
        f"memory: {peak / deep.distinct:,.0f} bytes per "
        f"stored state (depth first peak over {deep.distinct:,} states)"
    )
    # the same restart with Flink's default network buffers: what a state costs should not
    # grow with segments no step touches
    wide = restarted(DEFAULT_NETWORK_BUFFERS)
    wide_bounds = Bounds(max_states=bound // 4)
    wide_explored = explore(wide, bounds=wide_bounds, reduction=SleepSets())
    narrow_explored = explore(start, bounds=wide_bounds, reduction=SleepSets())
    assert (wide_explored.distinct, wide_explored.states) == (
        narrow_explored.distinct,
        narrow_explored.states,
    )
    wide_seconds = best_of(lambda: explore(wide, bounds=wide_bounds, reduction=SleepSets()), repeat)
    narrow_seconds = best_of(
        lambda: explore(start, bounds=wide_bounds, reduction=SleepSets()), repeat
    )
    return [
        Measurement(
            "explore 2x2 keyed restart (distinct states)",
            explore_seconds,
            "random simulation steps",
            step_seconds,
            explored.distinct,
        ),
        Measurement(
            "explore 2x2 keyed restart, partial copies",
            explore_seconds,
            "whole copies",
            whole_seconds,
            explored.distinct,
        ),
        Measurement(
            "explore 2x2 keyed job to its end, sleep sets",
            reduced_seconds,
            "every transition",
            plain_seconds,
            reduced.distinct,
        ),
        Measurement(
            "explore 2x2 keyed job to its end, persistent sets",
            persistent_seconds,
            "sleep sets",
            reduced_seconds,
            persistent.distinct,
        ),
        Measurement(
            f"explore 2x2 keyed restart, {DEFAULT_NETWORK_BUFFERS} network buffers",
            wide_seconds,
            f"{RESTART['network_buffers']} network buffers",
            narrow_seconds,
            wide_explored.distinct,
        ),
    ]
