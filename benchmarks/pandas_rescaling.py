"""The Spark rescaling pipeline's ``movement`` table, computed by pandas on one machine.

This is the baseline of ``benchmarks/bench_rescaling.py``: the same answer as
:meth:`flinkstate.spark.rescaling.RescalingPipeline.analyse_parallelisms` (its ``movement``
table), from the same plan, the same buffer routes (``routes_frame``) met by the channels the
same way (``routed_channels``, pandas in both) and the same counting rules, with only the engine
of the large part changed. Without it a Spark timing says nothing: a baseline that
computes the same thing in the obvious single-process way tells whether Spark earns its start-up
cost at a given size.

The work is laid out as the Spark pipeline's is, so the two compare like for like: buffers are
summed per channel (a rescale routes a channel's buffers together), record starts (fragments that
do not continue from a previous buffer) are reduced once per (channel, selection key) -- the key
group for keyBy, the key for a custom partitioner, -1 otherwise -- and those caches answer any
number of new parallelisms. Everything is vectorised: numpy for Flink's
key-group functions, pandas joins and group-bys for routing and sums; the Python loops run over
exchanges and new parallelisms only, never over records or buffers.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq

from flinkstate.errors import InvalidParameterError
from flinkstate.javahash import JavaType
from flinkstate.rescale.routes import SweepPlan
from flinkstate.spark.rescaling import (
    MOVEMENT_COLUMNS,
    MOVEMENT_KEYS,
    MOVEMENT_SUMS,
    ROUTE_KEYS,
    routed_channels,
    routes_frame,
)
from flinkstate.spark.tables import job_shape

_BUFFER_COLUMNS = ["buffer_id", "exchange", "side", "subtask", "channel_or_subpartition", "size"]


class PandasRescaling:
    """One checkpoint dataset in pandas, answering "what moves where if we rescale to N".

    Like a ``RescalingPipeline``, an instance caches what does not depend on the new
    parallelism (the channels' volumes, and record starts per channel and selection key), so a
    second question only pays for routing; a fresh instance pays for reading and key-grouping
    too.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.shape = job_shape(directory)  # checked as Spark's load() checks it, first
        self._buffers: pd.DataFrame | None = None
        self._channels: pd.DataFrame | None = None
        self._records: pd.DataFrame | None = None

    # -- cached, independent of the new parallelism ------------------------------------------

    def buffers(self) -> pd.DataFrame:
        """Every persisted buffer, with ``channel_row``: its channel's row in :meth:`channels`."""
        if self._buffers is None:
            self._read_buffers()
        assert self._buffers is not None
        return self._buffers

    def channels(self) -> pd.DataFrame:
        """Per channel with data (exchange, side, subtask, channel): ``buffers`` and
        ``bytes``; its row number is ``channel_row``."""
        if self._channels is None:
            self._read_buffers()
        assert self._channels is not None
        return self._channels

    def _read_buffers(self) -> None:
        table = pq.read_table(self.directory / "buffers.parquet", columns=_BUFFER_COLUMNS)
        frame = table.to_pandas().rename(columns={"channel_or_subpartition": "channel"})
        grouped = frame.groupby(ROUTE_KEYS, sort=False, dropna=False)
        frame["channel_row"] = grouped.ngroup().to_numpy()
        channels = grouped["size"].agg(["size", "sum"]).reset_index()
        self._channels = channels.rename(columns={"size": "buffers", "sum": "bytes"}).assign(
            channel_row=np.arange(len(channels), dtype=np.int64)
        )
        self._buffers = frame

    def records(self) -> pd.DataFrame:
        """Record starts summed per (channel row, selection key): ``records``, ``bytes``,
        ``spanning``.

        Only fragments with ``continues_from_previous`` false are read (a record counts where
        its first byte is); ones whose buffer is not in the buffers table are dropped, as the
        Spark pipeline's inner join drops them.
        """
        if self._records is None:
            buffers = self.buffers()
            types = self.shape.key_types()
            strings = JavaType.STRING in types.values()  # a version-1 dataset has none
            table = pq.read_table(
                self.directory / "fragments.parquet",
                columns=[
                    "buffer_id",
                    "key",
                    *(["key_string"] if strings else []),
                    "record_bytes",
                    "continues_into_next",
                ],
                filters=[("continues_from_previous", "==", False)],
            )
            index = pd.Index(buffers["buffer_id"].to_numpy())
            if not index.is_unique:
                raise InvalidParameterError("buffer ids of the buffers table are not unique")
            buffer = index.get_indexer(table.column("buffer_id").to_numpy())
            known = buffer >= 0
            keys = table.column("key").to_numpy(zero_copy_only=False)
            texts = table.column("key_string").to_numpy(zero_copy_only=False) if strings else keys
            record_bytes = pc.cast(table.column("record_bytes"), "int64").to_numpy()
            spanning = table.column("continues_into_next").to_numpy(zero_copy_only=False)
            if not known.all():
                buffer, keys, texts = buffer[known], keys[known], texts[known]
                record_bytes, spanning = record_bytes[known], spanning[known]
            channel = buffers["channel_row"].to_numpy()[buffer]
            exchange = self._exchange_codes()[channel]
            selection_key = np.full(len(buffer), -1, dtype=np.int64)
            selections = self.shape.channel_selections().items()
            for code, (name, (selection, max_p)) in enumerate(selections):
                mask = exchange == code
                kind = types[name]
                column = texts if kind is JavaType.STRING else keys
                selection_key[mask] = selection.selection_keys(column[mask], max_p, kind)
            frame = pd.DataFrame(
                {
                    "channel_row": channel,
                    "selection_key": selection_key,
                    "bytes": record_bytes,
                    "spanning": spanning.astype(np.int64),
                }
            )
            self._records = (
                frame.groupby(["channel_row", "selection_key"], sort=False)
                .agg(
                    records=("bytes", "size"),
                    bytes=("bytes", "sum"),
                    spanning=("spanning", "sum"),
                )
                .reset_index()
            )
        return self._records

    # -- per question ------------------------------------------------------------------------

    def movement(
        self,
        scenarios: Mapping[int, Mapping[str, int]],
        *,
        recover_output_on_downstream: bool = False,
    ) -> pd.DataFrame:
        """The ``movement`` table of ``analyse_parallelisms(scenarios)``: per (to, exchange,
        side, old subtask, new subtask), buffers, bytes and records delivered, kept, filtered
        and spanning."""
        plan = self.shape.sweep(
            scenarios, recover_output_on_downstream=recover_output_on_downstream
        )
        routed = routed_channels(self.channels(), routes_frame(plan))
        volume = routed.groupby(MOVEMENT_KEYS, sort=False)[["buffers", "bytes"]].sum()
        selected = self._selected(plan)
        joined = routed[["channel_row", *MOVEMENT_KEYS, "filtered"]].merge(
            selected, on=["channel_row", "to"]
        )
        drops = joined["filtered"].to_numpy() & (
            joined["selected"].to_numpy() != joined["new_subtask"].to_numpy()
        )
        records = joined["records"].to_numpy()
        joined["kept_records"] = np.where(drops, 0, records)
        joined["filtered_records"] = np.where(drops, records, 0)
        joined["filtered_bytes"] = np.where(drops, joined["bytes"].to_numpy(), 0)
        contents = joined.groupby(MOVEMENT_KEYS, sort=False).agg(
            records=("records", "sum"),
            kept_records=("kept_records", "sum"),
            filtered_records=("filtered_records", "sum"),
            filtered_bytes=("filtered_bytes", "sum"),
            spanning_records=("spanning", "sum"),
        )
        frame = volume.join(contents, how="left").reset_index()
        for column in MOVEMENT_SUMS:
            frame[column] = frame[column].fillna(0).astype("int64")
        return frame[MOVEMENT_COLUMNS].sort_values(MOVEMENT_KEYS, ignore_index=True)

    # -- helpers -----------------------------------------------------------------------------

    def _selected(self, plan: SweepPlan) -> pd.DataFrame:
        """Per (channel row, to, selected subtask): the record starts' sums, each subtask the
        partitioner selects by Flink's key-group functions at that new parallelism (the same
        selections as Spark's ``selected_subtask_at``)."""
        records = self.records()
        channel = records["channel_row"].to_numpy()
        selection_key = records["selection_key"].to_numpy()
        exchange = self._exchange_codes()[channel]
        masks = [
            (selection, exchange == code)
            for code, selection in enumerate(plan.selections_of(self.shape).values())
        ]
        parts = []
        for index, to in enumerate(plan.targets):
            selected = np.full(len(records), -1, dtype=np.int32)
            for (selection, max_p, parallelism), mask in masks:
                at = parallelism[index]
                selected[mask] = selection.select_each(selection_key[mask], max_p, at)
            parts.append(
                pd.DataFrame(
                    {
                        "channel_row": channel,
                        "to": np.int64(to),
                        "selected": selected,
                        "records": records["records"].to_numpy(),
                        "bytes": records["bytes"].to_numpy(),
                        "spanning": records["spanning"].to_numpy(),
                    }
                )
                .groupby(["channel_row", "to", "selected"], sort=False)
                .sum()
                .reset_index()
            )
        return pd.concat(parts, ignore_index=True)

    def _exchange_codes(self) -> npt.NDArray[np.int64]:
        """Each channel's exchange as its index in the job's exchanges (-1: not in the job):
        integer masks instead of string comparisons."""
        names = pd.Index([e.name for e in self.shape.exchanges])
        return np.asarray(names.get_indexer(self.channels()["exchange"]), dtype=np.int64)


def normalised(frame: pd.DataFrame) -> pd.DataFrame:
    """A movement table in one canonical form (column order, dtypes, row order), so two
    engines' answers compare with ``pandas.testing.assert_frame_equal``."""
    frame = frame[MOVEMENT_COLUMNS].copy()
    for column in MOVEMENT_COLUMNS:
        if column in ("exchange", "side"):
            frame[column] = frame[column].astype(str)
        else:
            frame[column] = frame[column].astype("int64")
    return frame.sort_values(MOVEMENT_KEYS, ignore_index=True)


def resident_bytes(field: str) -> int:
    """A memory field of this process from ``/proc/self/status`` (Linux), in bytes: ``VmRSS``
    now, ``VmHWM`` its peak."""
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise ValueError(f"no {field} in /proc/self/status")


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.pandas_rescaling DIR --to 3,5 --operator counter``: one fresh
    sweep in a process of its own, so that its peak memory is the baseline's alone. The last
    line on stdout is JSON: seconds, rows, and resident memory once the libraries are loaded
    and at the peak."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pandas_rescaling")
    parser.add_argument("directory", type=Path, help="a checkpoint dataset")
    parser.add_argument("--to", required=True, help="new parallelisms, comma separated")
    parser.add_argument("--operator", required=True, help="the operator to rescale")
    args = parser.parse_args(argv)
    start_bytes = resident_bytes("VmRSS")
    start = time.perf_counter()
    movement = PandasRescaling(args.directory).movement(
        {int(to): {args.operator: int(to)} for to in args.to.split(",")}
    )
    report = {
        "seconds": time.perf_counter() - start,
        "movement_rows": len(movement),
        "start_rss_bytes": start_bytes,
        "peak_rss_bytes": resident_bytes("VmHWM"),
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
