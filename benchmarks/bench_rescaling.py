"""The Spark rescaling pipeline against pandas computing the same answer on one machine.

The subject is :meth:`RescalingPipeline.analyse_parallelisms` sweeping a generated keyBy
checkpoint (source(4) -keyBy-> counter(8), max parallelism 128) to several new parallelisms of
the keyed operator, each repetition on a fresh pipeline, so reading the Parquet tables and
key-grouping every record are included. The baseline, measured in the same run on the same
files, is :class:`benchmarks.pandas_rescaling.PandasRescaling`: same plan, same routes, same
counting rules. The two ``movement`` tables must be equal at every size, or the run fails: a
speed comparison between different answers is worthless. A second measurement times the cached
re-ask (the same pipeline asked one more parallelism), what a notebook slider pays.

Spark runs in a subprocess (``benchmarks.spark_sweep``) with ``spark.driver.memory=1g``: the
heap is fixed when the JVM starts, and one small driver at every size is the proof that nothing
is collected to the driver. The JVM's start is reported but not timed. Embedded Spark uses every
core (``local[*]``); pandas uses one.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from benchmarks.harness import Measurement
from benchmarks.pandas_rescaling import PandasRescaling, normalised
from flinkstate.generator import GeneratorSpec, generate

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "build" / "bench-data"
OPERATOR = "counter"  # the keyed consumer of the generated source -keyBy-> counter job
SWEEP = (3, 5, 6, 12, 16)
REASK = 7
DRIVER_MEMORY = "1g"
#: an hour: far beyond any healthy run, only there so a wedged JVM cannot hang the benchmark
SPARK_TIMEOUT = 3600


@dataclass(frozen=True)
class Size:
    """One dataset size and how many fresh repetitions of each engine to take the best of."""

    label: str
    records: int
    repeat: int


SMOKE_SIZES = (Size("20K", 20_000, 2),)
FULL_SIZES = (Size("1M", 1_000_000, 3), Size("10M", 10_000_000, 3))


def spec(records: int) -> GeneratorSpec:
    """The benchmark's checkpoint: 100-byte records on 32 KiB segments, 4 x 8 channels."""
    return GeneratorSpec(
        records=records,
        partitioner="keyBy",
        source_parallelism=4,
        parallelism=8,
        max_parallelism=128,
        record_size=100,
        keys=1_000_000,
        segment_size=32_768,
        input_buffers=3,
        seed=1,
    )


def dataset(name: str, wanted: GeneratorSpec) -> Path:
    """``build/bench-data/<name>``, generated unless it exists with the same spec (written
    beside it as ``<name>.spec.json``), so reruns time the same files and skip writing 100 MB."""
    directory = DATA / name
    spec_file = DATA / f"{name}.spec.json"
    expected = asdict(wanted)
    if (directory / "manifest.json").exists() and spec_file.exists():
        try:
            if json.loads(spec_file.read_text(encoding="utf-8")) == expected:
                return directory
        except (OSError, json.JSONDecodeError):
            pass
    shutil.rmtree(directory, ignore_errors=True)
    spec_file.unlink(missing_ok=True)
    with tqdm(
        total=wanted.records, unit="rec", unit_scale=True, desc=f"generating {name}", leave=False
    ) as bar:
        generate(wanted, directory, progress=bar.update)
    spec_file.write_text(json.dumps(expected, indent=2) + "\n", encoding="utf-8")
    return directory


def run(smoke: bool) -> list[Measurement]:
    results = []
    for size in SMOKE_SIZES if smoke else FULL_SIZES:
        results.extend(_measure(size))
    return results


def _measure(size: Size) -> list[Measurement]:
    started = time.perf_counter()
    directory = dataset(f"keyby-{size.label.lower()}", spec(size.records))
    ready = time.perf_counter() - started  # seconds to generate, or to find it cached
    scenarios = {to: {OPERATOR: to} for to in SWEEP}
    again = {REASK: {OPERATOR: REASK}}

    pandas_fresh: list[float] = []
    pandas_reask: list[float] = []
    expected = expected_reask = pd.DataFrame()
    for _ in range(size.repeat):
        start = time.perf_counter()
        engine = PandasRescaling(directory)  # fresh: reading and key-grouping included
        expected = engine.movement(scenarios)
        pandas_fresh.append(time.perf_counter() - start)
        start = time.perf_counter()
        expected_reask = engine.movement(again)
        pandas_reask.append(time.perf_counter() - start)
        del engine

    spark_wall = time.perf_counter()
    spark = spark_sweep(directory, size.repeat)
    spark_wall = time.perf_counter() - spark_wall
    _same(pd.DataFrame(spark["movement"]), expected, f"{size.label} sweep {SWEEP}")
    _same(pd.DataFrame(spark["reask_movement"]), expected_reask, f"{size.label} re-ask {REASK}")

    records = size.records
    sweep = ",".join(map(str, SWEEP))
    fresh = spark["fresh_seconds"]
    heap = spark["jvm_peak_heap_bytes"]
    print(
        f"rescaling   {size.label} records ({directory.name}, ready in {ready:.1f} s):\n"
        f"              pandas fresh {_samples(pandas_fresh)} ({records / min(pandas_fresh):,.0f}"
        f" records/s), re-ask {_samples(pandas_reask)}; this process max RSS "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:,.0f} MiB\n"
        f"              Spark  fresh {_samples(fresh)} ({records / min(fresh):,.0f} records/s), "
        f"re-ask {_samples(spark['reask_seconds'])}; {spark['master']}, driver "
        f"{spark['driver_memory']} (max heap {spark['jvm_max_heap_bytes'] / 2**20:,.0f} MiB, "
        f"peak use {', '.join(f'{k} {v / 2**20:,.0f} MiB' for k, v in heap.items())}), "
        f"Python driver max RSS {spark['python_driver_max_rss_bytes'] / 2**20:,.0f} MiB, "
        f"session start {spark['session_seconds']:.1f} s, subprocess wall {spark_wall:.1f} s\n"
        f"              answers equal: {len(expected)} movement rows (sha256 "
        f"{spark['checksum'][:12]}), re-ask {len(expected_reask)} rows",
        flush=True,
    )
    return [
        Measurement(
            f"Spark sweep to {sweep}, fresh pipeline, {size.label} records, driver 1g "
            f"(best of {size.repeat})",
            min(spark["fresh_seconds"]),
            "pandas, same answer",
            min(pandas_fresh),
            records,
        ),
        Measurement(
            f"Spark cached re-ask to {REASK}, {size.label} records (best of {size.repeat})",
            min(spark["reask_seconds"]),
            "pandas cached re-ask",
            min(pandas_reask),
            records,
        ),
    ]


def spark_sweep(directory: Path, repeat: int) -> dict[str, Any]:
    """Run ``benchmarks.spark_sweep`` in its own JVM with a 1g driver; its JSON report."""
    command = [
        sys.executable,
        "-m",
        "benchmarks.spark_sweep",
        str(directory),
        "--to",
        ",".join(map(str, SWEEP)),
        "--operator",
        OPERATOR,
        "--reask",
        str(REASK),
        "--repeat",
        str(repeat),
        "--driver-memory",
        DRIVER_MEMORY,
    ]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=SPARK_TIMEOUT, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = "\n".join(done.stderr.splitlines()[-40:])
        raise RuntimeError(
            f"the Spark sweep ({' '.join(command[1:])}) exited with {done.returncode}:\n{tail}"
        )
    report: dict[str, Any] = json.loads(lines[-1])
    return report


def _same(spark: pd.DataFrame, expected: pd.DataFrame, what: str) -> None:
    """Fail the benchmark unless Spark and pandas gave the same movement table."""
    try:
        pd.testing.assert_frame_equal(normalised(spark), normalised(expected))
    except AssertionError as error:
        raise AssertionError(f"Spark and pandas disagree on the {what}: {error}") from None


def _samples(seconds: list[float]) -> str:
    return "/".join(f"{s:.2f}" for s in seconds) + " s"
