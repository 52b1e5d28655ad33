"""A restart whose checkpoint holds 100,000 in-flight buffers: how long until every task runs
again (its recovered state consumed), how long to the job's end, and the peak memory.

Subject: ``keyed-upscale`` as a production job would run it (:data:`LARGE`): 256 source subtasks
keyed into 128 counters, Flink's default buffers (2 exclusive a channel, 8 floating a gate),
four slots per TaskManager, and its keyed operators restarted at 64. The counters read twice
the data each source subtask writes and spend two steps more on each record, so the job is
back-pressured: by the checkpoint, at step 850,000, the sources' subpartitions and the counters'
channels are all but full, and it persists ``LARGE_BUFFERS`` buffers or more (the run summary's
"checkpoint 1: ..." line counts the same). Each record is sent as soon as it is written (buffer
timeout 0), so one buffer carries one record. The restart is stepped by the seeded random
scheduler with no snapshots in one run to its end, as the command line runs it; whether every
task runs is looked at every :data:`CHECK_EVERY` steps, the exact step read from the events.

Baseline, in the same run: steps of the engine on a model whose one action does nothing
(``bench_simulator.NoopModel``), timed first while the heap is small and scaled to as many as
the restart took until every task ran: the ratio is what a step of the restart costs.
Processor seconds are printed beside wall seconds: on a shared machine they change less with
the other work on it. Everything runs in a process of its own, so that its peak resident
memory is this run's; the job to its checkpoint and the restored job's setup come first and
are timed apart. Target (issue 23): every task running in under 60 s. The smoke run takes the
same job at 8 -> 4 -> 2 with 60 records per source.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from typing import Any

from benchmarks.bench_simulator import NoopModel
from benchmarks.harness import Measurement
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.runtime.task_phase import TaskPhase
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import FixedPriority, RunStatus, Simulation

#: the restart of a production-sized back-pressured job (see the module's docstring)
LARGE: dict[str, object] = {
    "source_parallelism": 256,
    "parallelism": 128,
    "new_parallelism": 64,
    "records": 800,
    "cost": 2,
    "slots_per_tm": 4,
    "network_buffers": 8192,
    "flush_every_record": True,
    "checkpoint_interval": 850_000,
}
#: the same job, small enough to check that the benchmark runs
SMOKE: dict[str, object] = {
    **LARGE,
    "source_parallelism": 8,
    "parallelism": 4,
    "new_parallelism": 2,
    "records": 60,
    "checkpoint_interval": 2_000,
}
#: the buffers the large checkpoint holds at least (issue 23)
LARGE_BUFFERS = 100_000
#: every how many steps the restart is asked whether every task runs
CHECK_EVERY = 1_000
#: the no-op engine's steps, timed before the job is built (scaled to the restart's steps)
NOOP_STEPS = 200_000
#: the step limit of the restart (its end takes about 2,000,000)
MAX_STEPS = 3_000_000


def every_task_running(world: NetworkWorld) -> bool:
    """Whether every task of the restored job has left restoring (its recovered state
    consumed); looked at every :data:`CHECK_EVERY` steps only."""
    return world.step % CHECK_EVERY == 0 and all(
        task.phase is TaskPhase.RUNNING for task in world.tasks.values()
    )


def measure(overrides: dict[str, object]) -> dict[str, Any]:
    """The job to its checkpoint, then its restart until every task runs and to its end: the
    checkpoint's buffers, each phase's seconds and steps, and the no-op engine's seconds for
    as many steps as the restart took until every task ran. Run in a process of its own."""
    # the baseline first, while the heap is small: the collector's pass after a long block
    # (``collector_paused``) would otherwise walk the restart's millions of objects in it
    started, started_cpu = time.perf_counter(), time.process_time()
    Simulation(NoopModel, FixedPriority(), None).run(NOOP_STEPS, max_steps=NOOP_STEPS)
    noop, noop_cpu = time.perf_counter() - started, time.process_time() - started_cpu
    started = time.perf_counter()
    run = prepare_scenario("keyed-upscale", overrides=overrides, keep_snapshots=False)
    prepared = time.perf_counter() - started
    if run.simulation is None or run.checkpoint is None:
        raise RuntimeError(f"the job did not restart: {run.outcome.value} {run.message}")
    checkpoint = run.checkpoint
    simulation = run.simulation
    world = simulation.model
    assert isinstance(world, NetworkWorld)
    # when (wall and processor seconds) and at which step every task ran
    recovered: list[tuple[float, float, int]] = []

    def note(model: object) -> bool:
        if not recovered and every_task_running(world):
            recovered.append((time.perf_counter(), time.process_time(), world.step))
        return False  # one run to the end, as the command line's

    restarted, restarted_cpu = time.perf_counter(), time.process_time()
    result = simulation.run(note, max_steps=MAX_STEPS)
    whole, whole_cpu = time.perf_counter() - restarted, time.process_time() - restarted_cpu
    if result.status is not RunStatus.FINISHED or result.violations:
        raise RuntimeError(f"the restart ended {result.status.value}: {result.violations[:1]}")
    run.conclude(result)
    recovered_at, recovered_cpu, recovered_steps = recovered[0]
    per_noop = recovered_steps / NOOP_STEPS  # the baseline for as many steps
    return {
        "input_buffers": sum(len(s.buffers) for s in checkpoint.input_channel_state),
        "output_buffers": sum(len(s.buffers) for s in checkpoint.result_subpartition_state),
        "job_and_setup_seconds": prepared,
        "job_steps": len(run.earlier["job"]),
        "recovered_seconds": recovered_at - restarted,
        "recovered_cpu_seconds": recovered_cpu - restarted_cpu,
        "recovered_steps": recovered_steps,
        "resumed_step": run.resumed_step,
        "restart_seconds": whole,
        "restart_cpu_seconds": whole_cpu,
        "restart_steps": result.steps,
        "noop_seconds": noop * per_noop,
        "noop_cpu_seconds": noop_cpu * per_noop,
        "peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }


def measured(smoke: bool) -> dict[str, Any]:
    """:func:`measure` of the smoke or the large restart, in a fresh process."""
    command = [
        sys.executable,
        "-c",
        "import json, sys\n"
        "from benchmarks.bench_large_restart import measure\n"
        "print(json.dumps(measure(json.loads(sys.argv[1]))))\n",
        json.dumps(SMOKE if smoke else LARGE),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the large restart failed: {done.stderr.strip()[-500:]}")
    figures: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return figures


def run(smoke: bool) -> list[Measurement]:
    figures = measured(smoke)
    buffers = figures["input_buffers"] + figures["output_buffers"]
    if not smoke and buffers < LARGE_BUFFERS:
        raise RuntimeError(f"the checkpoint holds {buffers:,} buffers, fewer than the target")
    print(
        f"large_restart  checkpoint {buffers:,} buffers ({figures['input_buffers']:,} input, "
        f"{figures['output_buffers']:,} output) after {figures['job_steps']:,} steps "
        f"({figures['job_and_setup_seconds']:.0f} s with the restored job's setup); restart: "
        f"every task running after {figures['recovered_seconds']:.1f} s "
        f"(step {figures['resumed_step']:,}), its end after {figures['restart_seconds']:.1f} s "
        f"({figures['restart_steps']:,} steps); processor seconds "
        f"{figures['recovered_cpu_seconds']:.1f} and {figures['restart_cpu_seconds']:.1f} "
        f"({figures['recovered_cpu_seconds'] / figures['noop_cpu_seconds']:.1f} x no-op); "
        f"peak {figures['peak_bytes'] / 2**30:.2f} GiB"
    )
    return [
        Measurement(
            "restart until every task runs",
            figures["recovered_seconds"],
            "no-op steps",
            figures["noop_seconds"],
            figures["recovered_steps"],
        )
    ]
