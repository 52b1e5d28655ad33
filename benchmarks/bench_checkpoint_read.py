"""A checkpoint of production size read by Spark's executors and rescaled, against reading
the same bytes in the same run.

``writer.write_checkpoint`` makes the input in Flink's format: ``FLINKSTATE_BENCH_CHECKPOINT_MB``
of in-flight data (default 20; 2 in the smoke run) over ``FLINKSTATE_BENCH_PARALLELISM``
subtasks on each side of a keyBy (default 256; 16 in the smoke run). Measured: writing it;
reading its files (the baseline); every channel framed and keyed in one process with numpy
(``channel_rows``); and Spark (``local[2]``, ``spark.driver.memory=1g``) reading it with
``mapInArrow`` and rescaling it to half the parallelism. Items are payload bytes.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Measurement, best_of
from flinkstate.flinkcheckpoint.channel_rows import ChannelName, ChannelSide, fragment_rows
from flinkstate.flinkcheckpoint.channel_state_file import read_channel
from flinkstate.flinkcheckpoint.export import ExchangeSpec
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.writer import KEY, RECORD_TYPE, write_checkpoint
from flinkstate.spark.checkpoint_source import plan_read

EXCHANGE = "upstream->downstream"


def _read_files(folder: Path) -> int:
    total = 0
    for path in sorted(folder.iterdir()):
        with path.open("rb") as file:
            while block := file.read(1 << 22):
                total += len(block)
    return total


def run(smoke: bool) -> list[Measurement]:
    megabytes = float(os.environ.get("FLINKSTATE_BENCH_CHECKPOINT_MB", 2 if smoke else 20))
    parallelism = int(os.environ.get("FLINKSTATE_BENCH_PARALLELISM", 16 if smoke else 256))
    exchanges = {EXCHANGE: ExchangeSpec("hash", key_function(KEY, RECORD_TYPE))}
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        written = write_checkpoint(tmp, int(megabytes * 1e6), parallelism=parallelism)
        writing = time.perf_counter() - start
        size = written.payload_bytes
        label = f"{size / 1e6:.0f} MB over {parallelism}x{parallelism} channels"
        read = best_of(lambda: _read_files(written.directory), 2)

        def numpy_rows() -> int:
            plan, _, _ = plan_read(written.directory, exchanges, RECORD_TYPE)
            rows = 0
            with StateFiles(plan.directory) as files:
                for channel in plan.channels:
                    sides = [
                        ChannelSide(s, "", read_channel(h, files))
                        for s, h in (("input", channel.input), ("output", channel.output))
                        if h is not None
                    ]
                    name = ChannelName(str(channel.edge), "downstream", 0, 0)
                    rows += fragment_rows(sides, name, 0, 0, None).num_rows
            return rows

        one_process = best_of(numpy_rows, 1)

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
                f"channels framed into fragments, numpy, one process ({label})",
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
