"""The simulator as the job grows: steps per second, peak memory and memory per snapshot of a
keyed restart at parallelism P = 4, 16, 64 and 256, and P = 256's whole run against P = 16's.

Subject: ``keyed-upscale`` with ``source_parallelism = parallelism = P`` and
``new_parallelism = P / 2``, 200 records per source, 4 slots per TaskManager (the command of
issue 23's table; from P = 256 on with the max parallelism and the network buffers Flink then
needs, as the README's command), its restart stepped for a fixed number of steps with the
seeded random scheduler, once with the stepper's snapshots (every 256 steps, copy on write from
512 components) and once without (a run nobody steps back through, as the command line's).
Baseline, in the same run: as many steps of the engine on a model whose one action does
nothing (``bench_simulator.NoopModel``): the ratio is what a step of the network model costs
at that size. Peak memory is the Python allocation traced while the steps run (the
restored world itself included); memory per snapshot is what the simulation's snapshots hold
beyond the running world and step 0's, divided by the snapshots kept. Building the job and
running it to its checkpoint comes first and is not timed.

The whole command (``flinkstate run`` to the restart's end, job phase included) at P = 256 is
timed in a process of its own, with its peak resident memory, against the same command at
P = 16 in the same run. And each size's restart run to its end without snapshots (the whole
restored job, its recovery and the records after it: the measure of the issue's table), in
steps per second, P = 64 against the 4 x 4 job per step. Targets (issue 23): at P = 64 the step
rate within 2x of the 4 x 4 job's; P = 256 (65,536 channels per exchange) to its end in under 5
minutes and 4 GB. The smoke run takes P = 4 and 16 only.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time
import tracemalloc
from functools import partial

from benchmarks.bench_simulator import NoopModel
from benchmarks.harness import Measurement, best_of
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import FixedPriority, RunStatus, Simulation, make_scheduler
from flinkstate.sim.core import SNAPSHOT_EVERY

#: the parallelism from which the job needs more than Flink's defaults (README's command)
LARGE_FROM = 256


def overrides(parallelism: int) -> dict[str, int]:
    """The keyed restart of issue 23's table at ``parallelism`` -> ``parallelism / 2``."""
    values = {
        "source_parallelism": parallelism,
        "parallelism": parallelism,
        "new_parallelism": parallelism // 2,
        "records": 200,
        "slots_per_tm": 4,
    }
    if parallelism >= LARGE_FROM:
        # a parallelism above 128 needs a larger max parallelism, and 4 slots' gates of 256
        # channels more network buffers than the default 2048 a TaskManager
        values |= {"max_parallelism": 2 * parallelism, "network_buffers": 16 * parallelism}
    return values


def restart(parallelism: int) -> NetworkWorld:
    """The restart of :func:`overrides`, ready to step."""
    run = prepare_scenario("keyed-upscale", overrides=overrides(parallelism), seed=0)
    assert run.simulation is not None, run.message
    model = run.simulation.model
    assert isinstance(model, NetworkWorld)
    return model


def stepped(world: NetworkWorld, steps: int, *, snapshots: bool = True) -> Simulation:
    """``steps`` seeded random steps of the restart, with the stepper's snapshots or none (a
    run nobody steps back through, as the command line's)."""
    every = SNAPSHOT_EVERY if snapshots else None
    # as the stepper starts (``prepare_scenario``): a snapshot of the restored world, or a
    # whole copy for a run without snapshots
    start = world.snapshot if snapshots else world.clone
    simulation = Simulation(start, make_scheduler("random", 0), every)
    simulation.run(steps)
    return simulation


#: runs the command line in-process and reports its peak resident memory (KiB) on stderr
_MEASURED_CLI = (
    "import resource, sys\n"
    "from flinkstate.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def whole_run(parallelism: int) -> tuple[float, int]:
    """``flinkstate run keyed-upscale`` at ``parallelism`` to its end in a fresh process: its
    wall time and peak resident bytes."""
    command = [sys.executable, "-c", _MEASURED_CLI, "run", "keyed-upscale", "--json"]
    for key, value in overrides(parallelism).items():
        command += ["--set", f"{key}={value}"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"P = {parallelism}: {done.stderr.strip()[-500:]}")
    outcome = json.loads(done.stdout)["outcome"]
    if outcome != "recovered":
        raise RuntimeError(f"P = {parallelism} ended {outcome}, not recovered")
    return seconds, int(done.stderr.split()[-1]) * 1024


def run(smoke: bool) -> list[Measurement]:
    measurements = stepping(smoke)
    measurements.append(restart_rates(smoke))
    if not smoke:
        measurements.append(whole_runs())
    return measurements


def restart_to_its_end(world: NetworkWorld) -> int:
    """The restart run to its end without snapshots, as the command line runs it: its steps."""
    simulation = Simulation(world.clone, make_scheduler("random", 0), None)
    result = simulation.run()
    if result.status is not RunStatus.FINISHED:
        raise RuntimeError(f"the restart ended {result.status.value}, not finished")
    return simulation.step_count


def restart_rates(smoke: bool) -> Measurement:
    """Each size's restart run to its end (the issue's table's measure: the whole restored
    job, its recovery and the records after it, as ``flinkstate run`` steps it), in steps per
    second, best of three; the largest size against the 4 x 4 job, per step."""
    sizes = (4, 16) if smoke else (4, 16, 64)
    rates: dict[int, tuple[float, int]] = {}
    for parallelism in sizes:
        world = restart(parallelism)
        steps = restart_to_its_end(world)
        seconds = best_of(partial(restart_to_its_end, world), 1 if smoke else 3)
        rates[parallelism] = (seconds, steps)
    base_seconds, base_steps = rates[4]
    largest = sizes[-1]
    seconds, steps = rates[largest]
    print(
        "scaling     restart to its end: "
        + ", ".join(f"P = {p} {n:,} steps {n / s:,.0f} steps/s" for p, (s, n) in rates.items())
        + f"; P = {largest} {seconds / steps / (base_seconds / base_steps):.2f} x the 4 x 4 "
        "job's time per step"
    )
    return Measurement(
        f"keyed restart {largest} -> {largest // 2} to its end, per step",
        seconds,
        "the 4 x 4 restart's time per step",
        base_seconds / base_steps * steps,
        steps,
    )


def whole_runs() -> Measurement:
    """P = 256's whole command against P = 16's, each in a process of its own."""
    base_seconds, base_peak = whole_run(16)
    seconds, peak = whole_run(LARGE_FROM)
    print(
        f"scaling     whole run  P = {LARGE_FROM}: {seconds:6.1f} s, peak {peak / 2**30:4.2f} GiB "
        f"({seconds / base_seconds:5.1f} x the time and {peak / base_peak:4.1f} x the memory of "
        f"P = 16: {base_seconds:4.1f} s, {base_peak / 2**30:4.2f} GiB)"
    )
    return Measurement(
        f"keyed restart {LARGE_FROM} -> {LARGE_FROM // 2} whole run",
        seconds,
        "P = 16 whole run",
        base_seconds,
        1,
    )


def stepping(smoke: bool) -> list[Measurement]:
    """Steps per second, peak memory and bytes per snapshot at each size."""
    sizes = (4, 16) if smoke else (4, 16, 64, LARGE_FROM)
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
            kept = len(simulation.snapshot_steps) - 1  # beyond step 0's, which every run keeps
            simulation.forget_snapshots()
            gc.collect()
            without, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        per_snapshot = (with_snapshots - without) / max(kept, 1)
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
