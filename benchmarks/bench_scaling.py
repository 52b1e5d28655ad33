"""The simulator as the job grows: steps per second, peak memory and memory per snapshot of a
keyed restart at parallelism P = 4, 16 and 64.

Subject: ``keyed-upscale`` with ``source_parallelism = parallelism = P`` and
``new_parallelism = P / 2``, 200 records per source, 4 slots per TaskManager (the command of
issue 23's table), its restart stepped for a fixed number of steps with the seeded random
scheduler, once with the stepper's snapshots (every 256 steps, copy on write from 512
components) and once without (a run nobody steps back through, as the command line's).
Baseline, in the same run: as many steps of the engine on a model whose one action does
nothing (``bench_simulator.NoopModel``): the ratio is what a step of the network model costs
at that size. Peak memory is the Python allocation traced while the steps run (the
restored world itself included); memory per snapshot is what the simulation's snapshots hold
beyond the running world, divided by the snapshots kept. Building the job and running it to
its checkpoint comes first and is not timed. Targets (issue 23): at P = 64 the step rate within
2x of the 4 x 4 job's; P = 256 (65,536 channels per exchange) to its end in under 5 minutes.
P = 256 is left out: building its job phase alone takes longer than the whole benchmark.
"""

from __future__ import annotations

import gc
import time
import tracemalloc

from benchmarks.bench_simulator import NoopModel
from benchmarks.harness import Measurement
from flinkstate.network.world import NetworkWorld
from flinkstate.recovery.scenarios import prepare_scenario
from flinkstate.sim import FixedPriority, Simulation, make_scheduler
from flinkstate.sim.core import SNAPSHOT_EVERY


def restart(parallelism: int) -> NetworkWorld:
    """The keyed restart of issue 23's table at ``parallelism`` -> ``parallelism / 2``."""
    run = prepare_scenario(
        "keyed-upscale",
        overrides={
            "source_parallelism": parallelism,
            "parallelism": parallelism,
            "new_parallelism": parallelism // 2,
            "records": 200,
            "slots_per_tm": 4,
        },
        seed=0,
    )
    assert run.simulation is not None, run.message
    model = run.simulation.model
    assert isinstance(model, NetworkWorld)
    return model


def stepped(world: NetworkWorld, steps: int, *, snapshots: bool = True) -> Simulation:
    """``steps`` seeded random steps of the restart, with the stepper's snapshots or none (a
    run nobody steps back through, as the command line's)."""
    every = SNAPSHOT_EVERY if snapshots else None
    simulation = Simulation(world.clone, make_scheduler("random", 0), every)
    simulation.run(steps)
    return simulation


def run(smoke: bool) -> list[Measurement]:
    sizes = (4, 16) if smoke else (4, 16, 64)
    steps = 1_000 if smoke else 5_000
    measurements = []
    rows = []
    for parallelism in sizes:
        world = restart(parallelism)
        gc.collect()
        started = time.perf_counter()
        simulation = stepped(world, steps)
        seconds = time.perf_counter() - started
        taken = simulation.step_count
        started = time.perf_counter()
        bare = stepped(world, steps, snapshots=False)
        bare_seconds = time.perf_counter() - started
        assert bare.step_count == taken
        del bare
        started = time.perf_counter()
        Simulation(NoopModel, FixedPriority()).run(taken)
        noop_seconds = time.perf_counter() - started

        del simulation
        gc.collect()
        tracemalloc.start()
        try:
            simulation = stepped(world, steps)
            _, peak = tracemalloc.get_traced_memory()
            with_snapshots, _ = tracemalloc.get_traced_memory()
            kept = len(simulation._snapshots)
            simulation._snapshots.clear()
            gc.collect()
            without, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        per_snapshot = (with_snapshots - without) / kept
        rows.append(
            f"P = {parallelism:3}  {world.component_count:6,} components  "
            f"{taken / seconds:8,.0f} steps/s ({taken / bare_seconds:8,.0f} without snapshots)  "
            f"{seconds / noop_seconds:6.1f} x no-op  "
            f"peak {peak / 2**20:7.1f} MiB  {per_snapshot / 2**10:8.1f} KiB per snapshot "
            f"({kept} kept)"
        )
        measurements.append(
            Measurement(
                f"keyed restart {parallelism} -> {parallelism // 2} steps",
                seconds,
                "no-op steps",
                noop_seconds,
                taken,
            )
        )
    for row in rows:
        print(f"scaling     {row}")
    return measurements
