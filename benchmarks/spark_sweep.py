"""``python -m benchmarks.spark_sweep DIR --to 3,5,6,12,16 [--driver-memory 1g]``: time the
Spark rescaling sweep in a JVM of its own.

A JVM's heap is fixed when it starts, so a run with a small driver (the proof that the pipeline
collects nothing large to the driver) needs a fresh process; the benchmark runs every Spark
timing here so all sizes share one configuration. Each repetition builds a fresh
:class:`RescalingPipeline` (reading and key-grouping included, since a pipeline caches them),
sweeps the new parallelisms, then asks the same pipeline one more parallelism (what a notebook
slider pays once the cache is warm). The last line on stdout is JSON: timings, the JVM's heap
limit and peak use, and the answers (the small ``movement`` tables, plus a checksum of each) for
the caller to compare with its own.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import time
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.pandas_rescaling import normalised


def checksum(movement: pd.DataFrame) -> str:
    """SHA-256 of the normalised table as CSV: equal answers, equal checksums."""
    text = normalised(movement).to_csv(index=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _peak_heap(jvm: Any) -> dict[str, int]:
    """Each heap pool's peak use since the JVM started (G1: eden, survivor, old gen): how
    close the run came to the heap limit, the old generation being what stayed live."""
    management = jvm.java.lang.management
    heap = management.MemoryType.HEAP
    return {
        str(pool.getName()): int(pool.getPeakUsage().getUsed())
        for pool in management.ManagementFactory.getMemoryPoolMXBeans()
        if pool.getType() == heap
    }


def _max_rss_bytes() -> int:
    """This process's peak resident memory. Linux's ``ru_maxrss`` carries the parent's peak
    over ``fork`` and ``exec`` (here: the benchmark's pandas runs), so ``VmHWM`` comes first."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.spark_sweep")
    parser.add_argument("directory", type=Path, help="a checkpoint dataset")
    parser.add_argument("--to", required=True, help="new parallelisms, comma separated")
    parser.add_argument(
        "--operator",
        help="the operator to rescale (default: the consumer of the dataset's first exchange)",
    )
    parser.add_argument("--reask", type=int, help="one more parallelism for the cached pipeline")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--driver-memory", help="spark.driver.memory, e.g. 1g")
    parser.add_argument("--master", help="Spark master (default: flinkstate's, local[*])")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    from flinkstate.spark.rescaling import RescalingPipeline
    from flinkstate.spark.session import spark_session
    from flinkstate.spark.tables import load

    started = time.perf_counter()
    # its own JVM: the figures are of an embedded driver, never a Spark Connect server's
    spark = spark_session(args.master, driver_memory=args.driver_memory, connect=False)
    spark.range(1).count()  # the first job starts the executor threads: not the pipeline's cost
    session_seconds = time.perf_counter() - started
    jvm: Any = spark.sparkContext._jvm  # the embedded session's py4j view of the JVM
    runtime = jvm.java.lang.Runtime.getRuntime()

    targets = [int(value) for value in args.to.split(",")]
    fresh: list[float] = []
    reask: list[float] = []
    answer: pd.DataFrame | None = None
    reask_answer: pd.DataFrame | None = None
    for _ in range(args.repeat):
        start = time.perf_counter()
        pipeline = RescalingPipeline(load(spark, args.directory))
        operator = args.operator or pipeline.shape.exchanges[0].downstream
        result = pipeline.analyse_parallelisms(
            {to: {operator: to} for to in targets}, progress=False
        )
        fresh.append(time.perf_counter() - start)
        answer = result.movement
        if args.reask is not None:
            start = time.perf_counter()
            again = pipeline.analyse_parallelisms(
                {args.reask: {operator: args.reask}}, progress=False
            )
            reask.append(time.perf_counter() - start)
            reask_answer = again.movement
        pipeline.close()
    if answer is None:  # unreachable with repeat >= 1; narrows the type
        raise RuntimeError("no repetition ran")
    report: dict[str, Any] = {
        "master": spark.sparkContext.master,
        "driver_memory": spark.conf.get("spark.driver.memory", None),
        "jvm_max_heap_bytes": int(runtime.maxMemory()),
        "jvm_peak_heap_bytes": _peak_heap(jvm),
        "python_driver_max_rss_bytes": _max_rss_bytes(),
        "session_seconds": session_seconds,
        "fresh_seconds": fresh,
        "reask_seconds": reask,
        "checksum": checksum(answer),
        "movement": normalised(answer).to_dict("records"),
    }
    if reask_answer is not None:
        report["reask_checksum"] = checksum(reask_answer)
        report["reask_movement"] = normalised(reask_answer).to_dict("records")
    spark.stop()
    print(json.dumps(report, default=int))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
