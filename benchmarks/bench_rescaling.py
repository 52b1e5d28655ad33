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

The full run ends with a size pandas cannot take on this machine, 200M records (2 GB of
Parquet, generated once under ``build/``; ``$FLINKSTATE_BENCH_LARGE_RECORDS`` sets another
size, 0 leaves it out). pandas is not run there: what it would need is printed against this
machine's memory, from its peak memory above its start per record, measured in a process of
its own (``python -m benchmarks.pandas_rescaling``) at the largest size it ran. Spark runs it
once with the same 1g driver; its baseline is its own time at the largest size scaled by the
records, so the ratio says how far the cost is from linear. Every answer, at every size, must
keep each record exactly once at each new parallelism (the subtask its key selects keeps it,
every other reader drops it): at the large size, the one check of it.
"""

from __future__ import annotations

import json
import os
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
#: best of five at the issue's size: the JVM compiles the pipeline's code over its first two or
#: three runs (6 s, 2.5 s, then 1.5-1.8 s here), and pandas' first runs pay for fresh memory
#: (3 s, then 0.65-1.8 s); the same number of runs for both engines
FULL_SIZES = (Size("1M", 1_000_000, 3), Size("10M", 10_000_000, 5))
#: the full run's last size, Spark only; the variable sets another (0: none)
LARGE_RECORDS = 200_000_000
LARGE_RECORDS_ENV = "FLINKSTATE_BENCH_LARGE_RECORDS"


@dataclass(frozen=True)
class Measured:
    """What a size measured that a larger one is compared with."""

    directory: Path
    records: int
    spark_seconds: float


def large_size() -> Size | None:
    """The full run's Spark-only size: ``$FLINKSTATE_BENCH_LARGE_RECORDS`` or 200M."""
    text = os.environ.get(LARGE_RECORDS_ENV, "").strip().replace("_", "")
    records = int(text) if text else LARGE_RECORDS
    if records <= 0:
        return None
    label = f"{records // 1_000_000}M" if records % 1_000_000 == 0 else f"{records:,}"
    return Size(label, records, 1)


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
    sizes = SMOKE_SIZES if smoke else FULL_SIZES
    large = None if smoke else large_size()
    measured: list[Measured] = []
    for size in sizes:
        found, measurements = _measure(size)
        measured.append(found)
        results.extend(measurements)
    if large is not None:
        results.extend(_measure_large(large, measured[-1]))
    return results


def _ready(size: Size) -> tuple[Path, float]:
    """The size's dataset, and the seconds it took to generate it or to find it cached."""
    started = time.perf_counter()
    directory = dataset(f"keyby-{size.label.lower().replace(',', '')}", spec(size.records))
    return directory, time.perf_counter() - started


def _measure(size: Size) -> tuple[Measured, list[Measurement]]:
    directory, ready = _ready(size)
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
    _kept_once(pd.DataFrame(spark["movement"]), size)

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
    return Measured(directory, records, min(fresh)), [
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


def _measure_large(size: Size, smaller: Measured) -> list[Measurement]:
    """Spark alone at ``size``: pandas' memory projected from ``smaller`` (the largest size
    it ran), Spark's cost per record compared with its own there."""
    pandas = pandas_memory(smaller.directory)
    pandas_per_record = (pandas["peak_rss_bytes"] - pandas["start_rss_bytes"]) / smaller.records
    needed = pandas["start_rss_bytes"] + pandas_per_record * size.records
    memory = machine_memory_bytes()
    fits = needed < memory
    verdict = (
        f"pandas would need {needed / 2**30:,.1f} GiB (a process of its own at "
        f"{smaller.records:,} records: {pandas['start_rss_bytes'] / 2**20:,.0f} MiB with its "
        f"libraries loaded, peak {pandas['peak_rss_bytes'] / 2**20:,.0f} MiB, so "
        f"{pandas_per_record:,.0f} bytes per record, times {size.records:,}), "
        + (
            f"which fits in this machine's {memory / 2**30:,.1f} GiB, yet it is not run"
            if fits
            else f"more than this machine's {memory / 2**30:,.1f} GiB: it is not run"
        )
    )
    directory, ready = _ready(size)
    spark_wall = time.perf_counter()
    spark = spark_sweep(directory, size.repeat)
    spark_wall = time.perf_counter() - spark_wall
    _kept_once(pd.DataFrame(spark["movement"]), size)
    fresh = min(spark["fresh_seconds"])
    per_record = fresh / size.records
    before = smaller.spark_seconds / smaller.records
    heap = spark["jvm_peak_heap_bytes"]
    print(
        f"rescaling   {size.label} records ({directory.name}, "
        f"{_folder_bytes(directory) / 2**30:,.2f} GiB, ready in {ready:.1f} s): {verdict}\n"
        f"              Spark  fresh {_samples(spark['fresh_seconds'])} "
        f"({size.records / fresh:,.0f} records/s, {per_record * 1e9:,.1f} ns per record: "
        f"{per_record / before:.2f} x its {before * 1e9:,.1f} ns at {smaller.records:,}), "
        f"re-ask {_samples(spark['reask_seconds'])}; driver {spark['driver_memory']} (max heap "
        f"{spark['jvm_max_heap_bytes'] / 2**20:,.0f} MiB, peak use "
        f"{', '.join(f'{k} {v / 2**20:,.0f} MiB' for k, v in heap.items())}), Python driver "
        f"max RSS {spark['python_driver_max_rss_bytes'] / 2**20:,.0f} MiB, subprocess wall "
        f"{spark_wall:.1f} s\n"
        f"              every record kept once at each parallelism: "
        f"{len(spark['movement'])} movement rows (sha256 {spark['checksum'][:12]})",
        flush=True,
    )
    return [
        Measurement(
            f"Spark sweep to {','.join(map(str, SWEEP))}, fresh pipeline, {size.label} records, "
            f"driver 1g (once; pandas {'not run' if fits else 'does not fit'})",
            fresh,
            f"Spark at {smaller.records:,} records scaled linearly",
            before * size.records,
            size.records,
        )
    ]


def machine_memory_bytes() -> int:
    """This machine's memory for a process: MemTotal, or the cgroup's limit when lower."""
    total = 0
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                total = int(line.split()[1]) * 1024
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text(encoding="ascii").strip()
    except OSError:
        return total
    return min(total, int(limit)) if limit.isdigit() else total


def _folder_bytes(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.iterdir() if path.is_file())


def _kept_once(movement: pd.DataFrame, size: Size) -> None:
    """Fail the benchmark unless each new parallelism keeps every generated record exactly
    once: the subtask its key selects keeps it, every other reader filters it."""
    kept = movement.groupby("to")["kept_records"].sum()
    wrong = {int(to): int(count) for to, count in kept.items() if count != size.records}
    if wrong or len(kept) != len(SWEEP):
        raise AssertionError(
            f"at {size.label} records, the records kept per new parallelism are {wrong or kept}, "
            f"not {size.records:,} at each of {SWEEP}"
        )


def pandas_memory(directory: Path) -> dict[str, Any]:
    """Run ``benchmarks.pandas_rescaling`` once on ``directory`` in a process of its own;
    its JSON report (resident memory with the libraries loaded and at the peak)."""
    command = [
        sys.executable,
        "-m",
        "benchmarks.pandas_rescaling",
        str(directory),
        "--to",
        ",".join(map(str, SWEEP)),
        "--operator",
        OPERATOR,
    ]
    return _json_report(command, " ".join(command[1:]))


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
    return _json_report(command, f"the Spark sweep ({' '.join(command[1:])})")


def _json_report(command: list[str], what: str) -> dict[str, Any]:
    """Run ``command`` in a process of its own; the JSON report it prints last (its last
    lines of stderr in the error when it fails or prints none)."""
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=SPARK_TIMEOUT, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = "\n".join(done.stderr.splitlines()[-40:])
        raise RuntimeError(f"{what} exited with {done.returncode}:\n{tail}")
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
