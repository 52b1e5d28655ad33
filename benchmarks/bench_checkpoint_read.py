"""A checkpoint of production size read by Spark's executors and rescaled, against reading
the same bytes in the same run.

``writer.write_checkpoint`` makes the input in Flink's format: ``FLINKSTATE_BENCH_CHECKPOINT_MB``
of in-flight data (default 20; 2 in the smoke run) over ``FLINKSTATE_BENCH_PARALLELISM``
subtasks on each side of a keyBy (default 256; 16 in the smoke run). Measured: writing it;
reading its files (the baseline); framing and key extraction alone (``batch_columns``, one
core, every channel's bytes in batches of ``checkpoint_source.BATCH_BYTES``) by the Long key
``f0`` and by the String key ``f1``; the ``fragments`` rows of every channel on one core as
the executors make them (``read_fragments``: state files read, framed, keyed and checked
against the subtasks' key groups, cut into fragments); and Spark (``local[2]``,
``spark.driver.memory=1g``) reading it with ``mapInArrow`` and rescaling it to half the
parallelism. Items are payload bytes.

Measured for issue 24 (2 cores shared with other work, 256x256 channels, each size once;
``FLINKSTATE_BENCH_CHECKPOINT_MB=200`` and ``=2000 python -m benchmarks --only
checkpoint_read``); seconds, MB/s of payload, and the ratio to reading the files in the same
run (0.030 s at 200 MB, 0.215 s at 2 GB, from the page cache):

===============================================  ========================  ========================
                                                 200 MB (3 KB a channel)   2 GB (30 KB a channel)
===============================================  ========================  ========================
framing + Long key ``f0``, one core              0.76 s, 261 MB/s, 25x     7.6 s, 262 MB/s, 36x
framing + String key ``f1``, one core            1.23 s, 163 MB/s, 40x     12.7 s, 157 MB/s, 59x
an executor's read (files to fragments), 1 core  4.2 s, 48 MB/s, 137x      16.3 s, 123 MB/s, 76x
Spark read + rescale, local[2], driver 1g        25 s, 125 ms/MB, 827x     85 s, 43 ms/MB, 397x
===============================================  ========================  ========================

Before batching (a channel at a time) the 200 MB read took 26 s in one process and 107 s in
Spark. Spark's time is affine, not worse: about 33 ms per MB ((85 - 25) s over 1.8 GB) on
top of 14-18 s of fixed cost (the pipeline's Spark jobs; 13.6 s at 2 MB), with the 1 GB
driver. The executor's read at 200 MB includes parsing ``_metadata`` and planning (about
2 s, a cost per channel and chunk, not per byte).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from benchmarks.harness import Measurement, best_of
from flinkstate.flinkcheckpoint.channel_state_file import read_channel
from flinkstate.flinkcheckpoint.export import ExchangeSpec
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.record_columns import batch_columns
from flinkstate.flinkcheckpoint.writer import KEY, RECORD_TYPE, write_checkpoint
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.spark.checkpoint_source import BATCH_BYTES, plan_read, read_fragments

EXCHANGE = "upstream->downstream"


def _read_files(folder: Path) -> int:
    total = 0
    for path in sorted(folder.iterdir()):
        with path.open("rb") as file:
            while block := file.read(1 << 22):
                total += len(block)
    return total


def _channel_bytes(folder: Path, exchanges: dict[str, ExchangeSpec]) -> list[list[bytes]]:
    """Every channel's bytes (its two sides joined), in batches of about ``BATCH_BYTES``."""
    plan, _, _ = plan_read(folder, exchanges, RECORD_TYPE)
    batches: list[list[bytes]] = [[]]
    size = 0
    with StateFiles(plan.directory) as files:
        for channel in plan.channels:
            data = b"".join(
                read_channel(h, files).data for h in (channel.input, channel.output) if h
            )
            batches[-1].append(data)
            size += len(data)
            if size >= BATCH_BYTES:
                batches.append([])
                size = 0
    return batches


def _framed_and_keyed(batches: list[list[bytes]], spec: str, max_p: int) -> int:
    """Framing and key extraction of every batch: the records found."""
    key = key_function(spec, RECORD_TYPE)
    records = 0
    for channels in batches:
        bounds = np.cumsum([0] + [len(c) for c in channels], dtype=np.int64)
        found = batch_columns(b"".join(channels), bounds, RECORD_TYPE, key, max_p)
        if found is None:
            raise AssertionError("the writer's channels are clean: a batch must be read whole")
        records += len(found.offsets)
    return records


def run(smoke: bool) -> list[Measurement]:
    megabytes = float(os.environ.get("FLINKSTATE_BENCH_CHECKPOINT_MB", 2 if smoke else 20))
    parallelism = int(os.environ.get("FLINKSTATE_BENCH_PARALLELISM", 16 if smoke else 256))
    exchanges = {EXCHANGE: ExchangeSpec(Partitioner.HASH, key_function(KEY, RECORD_TYPE))}
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        written = write_checkpoint(tmp, int(megabytes * 1e6), parallelism=parallelism)
        writing = time.perf_counter() - start
        size = written.payload_bytes
        label = f"{size / 1e6:.0f} MB over {parallelism}x{parallelism} channels"
        read = best_of(lambda: _read_files(written.directory), 2)
        batches = _channel_bytes(written.directory, exchanges)
        long_key = best_of(lambda: _framed_and_keyed(batches, KEY, written.max_parallelism), 2)
        string_key = best_of(lambda: _framed_and_keyed(batches, "f1", written.max_parallelism), 2)

        def fragments_in_one_process() -> int:
            _, spec, groups = plan_read(written.directory, exchanges, RECORD_TYPE)
            tasks = pa.RecordBatch.from_pylist(
                [{"channels": c, "first_buffers": f} for c, f in groups]
            )
            return sum(b.num_rows for b in read_fragments(spec, iter([tasks])))

        one_process = best_of(fragments_in_one_process, 1)

        from flinkstate.spark.checkpoint_source import load_checkpoint
        from flinkstate.spark.rescaling import RescalingPipeline
        from flinkstate.spark.session import spark_session

        spark = spark_session("local[2]", driver_memory="1g")
        spark.range(1).count()  # the session and its Python workers started, not timed

        def spark_rescale() -> int:
            pipeline = RescalingPipeline(
                load_checkpoint(spark, written.directory, exchanges, RECORD_TYPE)
            )
            try:
                result = pipeline.analyse(max(1, parallelism // 2), progress=False)
            finally:
                pipeline.close()
            return int(result.sweep["records"].sum())

        spark_time = best_of(spark_rescale, 1)
        return [
            Measurement(f"checkpoint written ({label})", writing, "reading its files", read, size),
            Measurement(
                f"framing + Long key f0, numpy, one core ({label})",
                long_key,
                "reading its files",
                read,
                size,
            ),
            Measurement(
                f"framing + String key f1, numpy, one core ({label})",
                string_key,
                "reading its files",
                read,
                size,
            ),
            Measurement(
                f"an executor's read: files, framing, Long keys, fragments, one core ({label})",
                one_process,
                "reading its files",
                read,
                size,
            ),
            Measurement(
                f"Spark read (mapInArrow) + rescale, local[2], driver 1g ({label})",
                spark_time,
                "reading its files",
                read,
                size,
            ),
        ]
