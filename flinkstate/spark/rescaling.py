"""What rescaling does to a checkpoint's in-flight data, computed by Spark at any size.

The answer comes in two sizes. The plan is small and computed on the driver with the model's
own functions: per exchange, :func:`~flinkstate.rescale.exchange.rescale_exchange` for every
new parallelism asked about, turned into buffer routes (:mod:`flinkstate.rescale.routes`).
The data is large and stays with Spark. A rescale routes whole channels, so Spark reduces it
first to what routing needs: per channel with data, its buffers and bytes (small: a row per
channel, on the driver), and per (channel, selection key), its record starts (a row per channel
and key group on a keyed exchange, however many records). Each record's key group comes from
Flink's key-group functions written as Spark column expressions
(:mod:`flinkstate.spark.channel_selection`, :mod:`flinkstate.spark.key_groups`): no Python runs
on the executors, so no record crosses from the JVM to Python and back. The channels meet their
routes in pandas; the record sums meet them in a broadcast join, where the subtask the
partitioner selects for each sum at the route's parallelism decides whether the receiving
subtask keeps it. Only aggregates reach the driver: a row per (parallelism, exchange, side, old
subtask, new subtask) at most, and the channels.

Counting rules, the same as the model's: a record counts once, where its first byte is (a
record cut by the barrier starts in the input state and ends in the output state of the same
channel); *spanning* records are those that go on into a later buffer; a *filtered* record
reaches a subtask through a virtual channel that filters and belongs to another subtask (it is
read and dropped; its bytes still had to be read). Output state copied to several new
subpartitions is counted once per receiving subtask, which is why the bytes delivered can
exceed the bytes persisted.

Between calls the work that does not depend on the new parallelism (the channels, the record
sums per key group) stays cached, so a notebook slider only pays for the routing.

Everything that can be refused without the data is refused before Spark starts:
:func:`~flinkstate.spark.tables.job_shape` reads the two small tables on the driver and
:func:`sweep_plan` checks the question against them. A failed Spark job is a
:class:`~flinkstate.errors.SparkJobError` in one line (:mod:`flinkstate.spark.failures`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from flinkstate.errors import InvalidParameterError, SparkJobError
from flinkstate.javahash import JavaType
from flinkstate.rescale.channel_selection import ChannelSelection
from flinkstate.rescale.exchange import ExchangeRescale
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.rescale.routes import MAX_SWEEP, OUTPUT, JobShape, SweepPlan
from flinkstate.spark.channel_selection import key_hash_code, selected_subtask_at, selection_key
from flinkstate.spark.failures import spark_errors
from flinkstate.spark.key_groups import with_murmur_hash
from flinkstate.spark.progress import ProgressCallback, SparkProgress
from flinkstate.spark.tables import SparkDataset

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

MOVEMENT_KEYS = ["to", "exchange", "side", "old_subtask", "new_subtask"]
MOVEMENT_SUMS = [
    "buffers",
    "bytes",
    "records",
    "kept_records",
    "filtered_records",
    "filtered_bytes",
    "spanning_records",
]
MOVEMENT_COLUMNS = [*MOVEMENT_KEYS, *MOVEMENT_SUMS]
SUBTASK_COLUMNS = [
    "to",
    "exchange",
    "operator",
    "subtask",
    "reads_from",
    "buffers",
    "bytes",
    "input_bytes",
    "output_bytes",
    "records",
    "kept_records",
    "filtered_records",
    "filtered_bytes",
    "spanning_records",
    "virtual_channels",
    "filtering_virtual_channels",
    "virtual_channels_with_data",
]
SWEEP_COLUMNS = [
    "to",
    "exchange",
    "old_parallelism",
    "new_parallelism",
    "persisted_bytes",
    "delivered_bytes",
    "amplification",
    "moved_bytes",
    "records",
    "filtered_records",
    "filtered_share",
    "filtered_bytes",
    "spanning_records",
    "max_subtask_bytes",
    "skew",
    "virtual_channels",
]


@dataclass(frozen=True)
class RescaleResult:
    """The answer for one or more new parallelisms (``to``), as small pandas tables.

    ``movement``: per (to, exchange, side, old subtask, new subtask) of the downstream operator,
    the buffers, bytes and records that old consumer's in-flight data sends to that new one.
    ``subtasks``: per new downstream subtask, what it must read and filter, and its virtual
    channels. ``sweep``: a row per (to, exchange) to compare parallelisms. ``persisted``: the
    checkpoint's own in-flight data per exchange and side.
    """

    description: str
    shape: JobShape
    rescaled: tuple[str, ...]
    targets: tuple[int, ...]
    parallelism: Mapping[int, Mapping[str, int]]
    plans: Mapping[int, Mapping[str, ExchangeRescale]]
    persisted: pd.DataFrame
    movement: pd.DataFrame
    subtasks: pd.DataFrame
    sweep: pd.DataFrame

    @property
    def exchanges(self) -> tuple[str, ...]:
        """Exchanges that carry channel state (the only ones a rescale moves data on)."""
        return tuple(
            name for name, plan in self.plans[self.targets[0]].items() if plan.carries_channel_state
        )


#: what a failed Spark job is called in its one line
_FAILED = "the Spark job failed"
#: up to this many buffers, every task gets each buffer's channel (a hash table of about 50
#: bytes a buffer: 100 MB here, 6 x 10^8 records of 100 bytes on 32 KiB segments) instead of a
#: sort of all records by buffer; beyond, Spark sorts (slower, and bounded in memory)
BROADCAST_BUFFERS = 2_000_000


def rescale_scenarios(
    shape: JobShape, to: int | Sequence[int], operators: Sequence[str] | None = None
) -> dict[int, dict[str, int]]:
    """Per new parallelism in ``to``: every operator's parallelism after rescaling
    ``operators`` (every operator when None) to it. Refuses what Flink would refuse."""
    rescaled = (
        tuple(op.name for op in shape.operators)
        if operators is None
        else tuple(dict.fromkeys(operators))
    )
    return {t: shape.new_parallelism(t, rescaled) for t in _targets(to)}


def sweep_plan(
    shape: JobShape,
    to: int | Sequence[int],
    operators: Sequence[str] | None = None,
    *,
    recover_output_on_downstream: bool = False,
) -> SweepPlan:
    """The plan :meth:`RescalingPipeline.analyse` follows, with every refusal it can raise
    before reading the data (a parallelism out of range, an unknown operator, an exchange
    Flink cannot rescale)."""
    return shape.sweep(
        rescale_scenarios(shape, to, operators),
        recover_output_on_downstream=recover_output_on_downstream,
    )


class RescalingPipeline:
    """One checkpoint dataset in Spark, ready to answer "what if we rescale it to N"."""

    def __init__(self, dataset: SparkDataset) -> None:
        self.dataset = dataset
        self.spark: SparkSession = dataset.buffers.sparkSession
        self.shape = dataset.shape
        self._buffers: DataFrame | None = None
        self._records: DataFrame | None = None
        self._channels: pd.DataFrame | None = None
        self._persisted: pd.DataFrame | None = None
        #: per keyed exchange: in-flight records and keyed state per key group (no new
        #: parallelism in them, so a slider move costs no Spark job)
        self._key_group_contents: dict[str, pd.DataFrame] = {}

    @property
    def description(self) -> str:
        return str(self.dataset.manifest.get("description", ""))

    def close(self) -> None:
        """Drop what this pipeline cached in Spark."""
        for frame in (self._buffers, self._records):
            if frame is not None:
                frame.unpersist()
        self._buffers = self._records = None
        self._channels = None

    # -- cached, independent of the new parallelism ------------------------------------------

    def buffers(self) -> DataFrame:
        if self._buffers is None:
            from pyspark.sql import functions as F

            self._buffers = self.dataset.buffers.select(
                "buffer_id",
                "exchange",
                "side",
                "subtask",
                F.col("channel_or_subpartition").alias("channel"),
                "size",
            ).cache()
        return self._buffers

    def channels(self) -> pd.DataFrame:
        """Per channel that holds in-flight data (exchange, side, subtask, channel or
        subpartition): its ``buffers`` and ``bytes``, on the driver.

        A rescale routes whole channels (every buffer of one goes where the channel goes), so
        routing reads this table and never a buffer. It has a row per channel with data
        whatever the number of buffers: at most both sides of every exchange's channels.
        """
        if self._channels is None:
            from pyspark.sql import functions as F

            with spark_errors(SparkJobError, _FAILED):
                frame = (
                    self.buffers()
                    .groupBy(*ROUTE_KEYS)
                    .agg(F.count("*").alias("buffers"), F.sum("size").alias("bytes"))
                    .toPandas()
                )
            self._channels = _ints(frame, ["buffers", "bytes"])
        return self._channels

    def records(self) -> DataFrame:
        """Record starts aggregated per channel and selection key: the key group for a keyed
        exchange (Flink's murmur hash of the key's ``hashCode()`` by its Java type, Spark
        expressions), the key itself for a custom partitioner, -1 where the partitioner does
        not select by the record's key. Columns: the channel's (``exchange``, ``side``, ``subtask``,
        ``channel``), ``selection_key``, ``records``, ``bytes``, ``spanning``.

        Every record of a channel is routed as its channel is, and the subtask the partitioner
        selects for it at any new parallelism follows from its selection key, so these sums
        answer every question: a row per (channel, key group) for a keyed exchange, however many
        records.
        """
        if self._records is None:
            from pyspark.sql import functions as F

            # exchanges and sides by numbers from 1 while the records are grouped: a string
            # among the keys would cost the aggregation its fixed-width hash map
            names = self._exchange_names()
            code = {name: index for index, name in enumerate(names, start=1)}
            sides = sorted({str(side) for side in self.channels()["side"].dropna()})
            selections = self.shape.channel_selections()
            coded = {code[name]: sel for name, sel in selections.items() if name in code}
            types = {
                code[name]: kind
                for name, kind in self.shape.key_types().items()
                if name in code and selections[name][0] is ChannelSelection.KEY_GROUP
            }
            strings = JavaType.STRING in types.values()
            channel = self.buffers().select(
                "buffer_id",
                _numbered(F.col("exchange"), names).alias("exchange_code"),
                _numbered(F.col("side"), sides).alias("side_code"),
                "subtask",
                "channel",
            )
            if int(self.channels()["buffers"].sum()) <= BROADCAST_BUFFERS:
                # each task looks its records' buffers up in a copy of their channels; left
                # to itself, Spark would shuffle and sort every record by its buffer id once
                # the buffers' cached size passes its broadcast threshold
                channel = F.broadcast(channel)
            starts = (
                self.dataset.fragments.where(~F.col("continues_from_previous"))
                .select(
                    "buffer_id",
                    "key",
                    *(["key_string"] if strings else []),
                    "record_bytes",
                    "continues_into_next",
                )
                .join(channel, "buffer_id")
            )
            # the key's hash in projections of their own: one expression is too deep for
            # Spark Connect's protocol
            hash_code = key_hash_code(F.col("exchange_code"), types)
            starts = with_murmur_hash(starts, hash_code, "key_murmur")
            selection = selection_key(
                F.col("exchange_code"), F.col("key"), coded, F.col("key_murmur")
            )
            grouped = starts.groupBy(
                "exchange_code", "side_code", "subtask", "channel", selection.alias("selection_key")
            ).agg(
                F.count("*").alias("records"),
                F.sum(F.col("record_bytes").cast("long")).alias("bytes"),
                F.sum(F.col("continues_into_next").cast("long")).alias("spanning"),
            )
            self._records = grouped.select(
                _named(F.col("exchange_code"), names).alias("exchange"),
                _named(F.col("side_code"), sides).alias("side"),
                "subtask",
                "channel",
                "selection_key",
                "records",
                "bytes",
                "spanning",
            ).cache()
        return self._records

    def _exchange_names(self) -> list[str]:
        """The exchanges the buffers belong to (null aside), in the order of their names."""
        return sorted({str(name) for name in self.channels()["exchange"].dropna()})

    def persisted(self) -> pd.DataFrame:
        """Per exchange and side: buffers, bytes and records in the checkpoint."""
        with spark_errors(SparkJobError, _FAILED):
            return self._persisted_volume()

    def _persisted_volume(self) -> pd.DataFrame:
        if self._persisted is None:
            from pyspark.sql import functions as F

            volume = (
                self.channels()
                .groupby(["exchange", "side"], dropna=False)[["buffers", "bytes"]]
                .sum()
                .reset_index()
            )
            contents = (
                self.records()
                .groupBy("exchange", "side")
                .agg(F.sum("records").alias("records"), F.sum("spanning").alias("spanning"))
                .toPandas()
            )
            frame = volume.merge(contents, on=["exchange", "side"], how="left")
            self._persisted = _ints(frame, ["buffers", "bytes", "records", "spanning"]).sort_values(
                ["exchange", "side"], ignore_index=True
            )
        return self._persisted

    # -- per question ------------------------------------------------------------------------

    def analyse(
        self,
        to: int | Sequence[int],
        operators: Sequence[str] | None = None,
        *,
        recover_output_on_downstream: bool = False,
        progress: bool | ProgressCallback = True,
    ) -> RescaleResult:
        """Rescale ``operators`` (every operator when None) to each parallelism in ``to``."""
        return self.analyse_parallelisms(
            rescale_scenarios(self.shape, to, operators),
            recover_output_on_downstream=recover_output_on_downstream,
            progress=progress,
        )

    def analyse_parallelisms(
        self,
        scenarios: Mapping[int, Mapping[str, int]],
        *,
        recover_output_on_downstream: bool = False,
        progress: bool | ProgressCallback = True,
    ) -> RescaleResult:
        """Each scenario (label -> operator -> new parallelism; operators not named keep
        theirs) in one Spark job; the label is the ``to`` column of the tables."""
        plan = self.shape.sweep(
            scenarios, recover_output_on_downstream=recover_output_on_downstream
        )
        targets, parallelism, plans = plan.targets, plan.parallelism, plan.plans
        rescaled = tuple(
            op.name
            for op in self.shape.operators
            if any(p[op.name] != op.parallelism for p in parallelism.values())
        )
        bar = SparkProgress(self.spark, 4, "rescale " + ",".join(map(str, targets)), progress)
        try:
            with spark_errors(SparkJobError, _FAILED):
                persisted, movement, active = self._volumes(bar, plan)
            with bar.phase("summing up"):
                subtasks = _subtasks(movement, active, plans, self.shape)
                sweep = _sweep(movement, subtasks, persisted, plans, self.shape)
        finally:
            bar.close()
        return RescaleResult(
            self.description,
            self.shape,
            rescaled,
            targets,
            parallelism,
            plans,
            persisted,
            movement,
            subtasks,
            sweep,
        )

    def _volumes(
        self, bar: SparkProgress, plan: SweepPlan
    ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """The Spark part of a sweep: the checkpoint's volume, the movement, and the virtual
        channels with data."""
        with bar.phase("reading the checkpoint"):
            persisted = self._persisted_volume()
        with bar.phase("routing buffers"):
            routes = routes_frame(plan)
            routed = routed_channels(self.channels(), routes)
            movement = self._movement(routed, routes, plan)
        with bar.phase("virtual channels"):
            active = _active_virtual_channels(routed)
        return persisted, movement, active

    def key_groups(self, exchange: str, to: int) -> pd.DataFrame:
        """Per key group of a keyed exchange's consumer: the subtask whose range holds it before
        and after rescaling it to ``to``, the in-flight records and bytes in it, and its keyed
        state entries."""
        shape = self.shape.exchange(exchange)
        if shape.partitioner is not Partitioner.HASH:
            raise InvalidParameterError(
                f"{exchange} is a {shape.partitioner.datastream_call} exchange; key groups "
                "belong to keyBy() exchanges"
            )
        operator = self.shape.operator(shape.downstream)
        new = self.shape.checked({operator.name: to})[operator.name]
        max_p = operator.max_parallelism
        if exchange not in self._key_group_contents:
            with spark_errors(SparkJobError, _FAILED):
                self._key_group_contents[exchange] = self._key_group_volume(exchange, operator.name)
        contents = self._key_group_contents[exchange]
        groups = np.arange(max_p, dtype=np.int64)
        frame = pd.DataFrame(
            {
                "key_group": groups.astype(np.int32),
                "old_subtask": ChannelSelection.KEY_GROUP.select_each(
                    groups, max_p, operator.parallelism
                ),
                "new_subtask": ChannelSelection.KEY_GROUP.select_each(groups, max_p, new),
            }
        )
        frame = frame.merge(contents, on="key_group", how="left")
        return _ints(frame, ["records", "bytes", "state_entries"])

    def _key_group_volume(self, exchange: str, operator: str) -> pd.DataFrame:
        """Per key group of ``exchange``: in-flight records and bytes, and keyed state entries
        of its consumer ``operator``."""
        from pyspark.sql import functions as F

        volume: pd.DataFrame = (
            self.records()
            .where(F.col("exchange") == exchange)
            .groupBy(F.col("selection_key").cast("int").alias("key_group"))
            .agg(F.sum("records").alias("records"), F.sum("bytes").alias("bytes"))
            .toPandas()
        )
        state = (
            self.dataset.keyed_state.where(F.col("operator") == operator)
            .groupBy("key_group")
            .agg(F.sum("entries").alias("state_entries"))
            .toPandas()
        )
        return volume.merge(state, on="key_group", how="outer")

    # -- helpers -----------------------------------------------------------------------------

    def _movement(
        self, routed: pd.DataFrame, routes: pd.DataFrame, plan: SweepPlan
    ) -> pd.DataFrame:
        from pyspark.sql import functions as F

        volume = routed.groupby(MOVEMENT_KEYS)[["buffers", "bytes"]].sum()
        # each channel's record groups meet each of its routes, and the subtask the partitioner
        # selects for a group at that route's parallelism decides whether the receiving subtask
        # keeps it
        table = self.spark.createDataFrame(
            routes[[*ROUTE_KEYS, "to", "old_subtask", "new_subtask", "filtered"]]
        )
        records = self.records().withColumnRenamed("exchange", "records_exchange")
        selected = selected_subtask_at(
            F.col("records_exchange"), F.col("selection_key"), F.col("to"), plan, self.shape
        )
        drops = F.col("filtered") & (selected != F.col("new_subtask"))
        joined = records.join(
            F.broadcast(table),
            [
                F.col("records_exchange") == table["exchange"],
                records["side"] == table["side"],
                records["subtask"] == table["subtask"],
                records["channel"] == table["channel"],
            ],
        )
        contents = (
            joined.groupBy(
                F.col("to"),
                table["exchange"],
                table["side"],
                F.col("old_subtask"),
                F.col("new_subtask"),
            )
            .agg(
                F.sum("records").alias("records"),
                F.sum(F.when(drops, 0).otherwise(F.col("records"))).alias("kept_records"),
                F.sum(F.when(drops, F.col("records")).otherwise(0)).alias("filtered_records"),
                F.sum(F.when(drops, F.col("bytes")).otherwise(0)).alias("filtered_bytes"),
                F.sum("spanning").alias("spanning_records"),
            )
            .toPandas()
        )
        contents = _ints(contents, ["to", "old_subtask", "new_subtask"])
        frame = volume.reset_index().merge(contents, on=MOVEMENT_KEYS, how="left")
        frame = _ints(frame, MOVEMENT_COLUMNS[5:])
        return frame[MOVEMENT_COLUMNS].sort_values(MOVEMENT_KEYS, ignore_index=True)


#: a buffer's route follows from these columns alone, which the routes table is keyed by
ROUTE_KEYS = ["exchange", "side", "subtask", "channel"]


def routed_channels(channels: pd.DataFrame, routes: pd.DataFrame) -> pd.DataFrame:
    """Each channel with data (its exchange, side, subtask and channel, its ``buffers``)
    beside each of its routes (a row per new parallelism, or more where output state is
    copied); a channel with none is refused: the checkpoint does not fit the job it names."""
    routed = channels.merge(routes, on=ROUTE_KEYS, how="left")
    unrouted = routed[routed["to"].isna()]
    if not unrouted.empty:
        where = ", ".join(sorted({f"{r.exchange} ({r.side})" for r in unrouted.itertuples()}))
        raise InvalidParameterError(
            f"{int(unrouted['buffers'].sum())} persisted buffer(s) of {where} belong to no "
            "channel of the job the checkpoint describes (an aligned exchange, or a channel "
            "index beyond the parallelism): the checkpoint is inconsistent"
        )
    return _ints(routed, ["to", "old_subtask", "new_subtask", "vc_subtask", "vc_channel"])


def _numbered(column: Column, names: Sequence[str]) -> Column:
    """Each value of ``column`` as its position in ``names`` from 1 (null for any other)."""
    from pyspark.sql import functions as F

    number = F.lit(None).cast("int")
    for index, name in enumerate(names, start=1):
        number = F.when(column == F.lit(name), index).otherwise(number)
    return number


def _named(number: Column, names: Sequence[str]) -> Column:
    """The name a :func:`_numbered` number stands for (null for null)."""
    from pyspark.sql import functions as F

    return F.element_at(
        F.array(F.lit(None).cast("string"), *[F.lit(name) for name in names]),
        F.coalesce(number + 1, F.lit(1)),
    )


def _active_virtual_channels(routed: pd.DataFrame) -> pd.DataFrame:
    """Per (to, exchange, new subtask): how many of its virtual channels carry data (a
    channel with data routed through them)."""
    keys = ["to", "exchange", "new_subtask"]
    frame = (
        routed[[*keys, "vc_subtask", "vc_channel"]]
        .drop_duplicates()
        .groupby(keys)
        .size()
        .reset_index(name="virtual_channels_with_data")
    )
    return _ints(frame, ["to", "new_subtask", "virtual_channels_with_data"]).rename(
        columns={"new_subtask": "subtask"}
    )


def _targets(to: int | Sequence[int]) -> tuple[int, ...]:
    values = [to] if isinstance(to, int) else list(to)
    if not values:
        raise InvalidParameterError("name at least one new parallelism")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise InvalidParameterError(f"a parallelism must be a whole number, got {value!r}")
    unique = tuple(sorted({int(v) for v in values}))
    if len(unique) > MAX_SWEEP:
        raise InvalidParameterError(
            f"a sweep of {len(unique)} parallelisms is more than {MAX_SWEEP}; narrow it"
        )
    return unique


ROUTE_COLUMNS = [
    "to",
    "exchange",
    "side",
    "subtask",
    "channel",
    "old_subtask",
    "reader",
    "new_subtask",
    "new_channel",
    "vc_subtask",
    "vc_channel",
    "filtered",
]


def routes_frame(plan: SweepPlan) -> pd.DataFrame:
    """A sweep's buffer routes as a table (the dataset's buffer columns are its join keys)."""
    frame = pd.DataFrame(
        [
            (
                to,
                r.exchange,
                r.side,
                r.subtask,
                r.channel,
                r.old_consumer,
                r.reader,
                r.new_consumer,
                r.new_channel,
                r.virtual_channel[0],
                r.virtual_channel[1],
                r.filtered,
            )
            for to, r in plan.routes
        ],
        columns=ROUTE_COLUMNS,
    )
    ints = [c for c in frame.columns if c not in ("exchange", "side", "filtered")]
    frame[ints] = frame[ints].astype("int32")
    frame["filtered"] = frame["filtered"].astype(bool)
    return frame


def _ints(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    frame = frame.copy()
    for column in columns:
        if column in frame:
            frame[column] = frame[column].fillna(0).astype("int64")
    return frame


def _subtasks(
    movement: pd.DataFrame,
    active: pd.DataFrame,
    plans: Mapping[int, Mapping[str, ExchangeRescale]],
    shape: JobShape,
) -> pd.DataFrame:
    sums = MOVEMENT_SUMS
    by_subtask = movement.groupby(["to", "exchange", "new_subtask"])[sums].sum()
    by_side = movement.pivot_table(
        index=["to", "exchange", "new_subtask"],
        columns="side",
        values="bytes",
        aggfunc="sum",
        fill_value=0,
    )
    active_by = active.set_index(["to", "exchange", "subtask"])["virtual_channels_with_data"]
    rows = []
    for to, by_exchange in plans.items():
        for name, plan in by_exchange.items():
            if not plan.carries_channel_state:
                continue
            operator = shape.exchange(name).downstream
            for consumer in plan.downstream:
                key = (to, name, consumer.subtask)
                found = by_subtask.loc[key] if key in by_subtask.index else None
                channels = consumer.all_virtual_channels if consumer.demultiplexes else ()
                row = {
                    "to": to,
                    "exchange": name,
                    "operator": operator,
                    "subtask": consumer.subtask,
                    "reads_from": " ".join(map(str, consumer.input_state_from)),
                    **{s: 0 if found is None else int(found[s]) for s in sums},
                    "input_bytes": _side(by_side, key, "input"),
                    "output_bytes": _side(by_side, key, OUTPUT),
                    "virtual_channels": len(channels),
                    "filtering_virtual_channels": sum(vc.filtered for vc in channels),
                    "virtual_channels_with_data": int(active_by.get(key, 0)),
                }
                rows.append(row)
    return pd.DataFrame(rows, columns=SUBTASK_COLUMNS)


def _side(by_side: pd.DataFrame, key: tuple[int, str, int], side: str) -> int:
    if side not in by_side.columns or key not in by_side.index:
        return 0
    return int(by_side.loc[key, side])


def _sweep(
    movement: pd.DataFrame,
    subtasks: pd.DataFrame,
    persisted: pd.DataFrame,
    plans: Mapping[int, Mapping[str, ExchangeRescale]],
    shape: JobShape,
) -> pd.DataFrame:
    persisted_bytes = persisted.groupby("exchange")["bytes"].sum()
    rows = []
    for to, by_exchange in plans.items():
        for name, plan in by_exchange.items():
            if not plan.carries_channel_state:
                continue
            moved = movement[(movement["to"] == to) & (movement["exchange"] == name)]
            per_subtask = subtasks[(subtasks["to"] == to) & (subtasks["exchange"] == name)]
            delivered = int(moved["bytes"].sum())
            stored = int(persisted_bytes.get(name, 0))
            records = int(moved["records"].sum())
            filtered = int(moved["filtered_records"].sum())
            mean = float(per_subtask["bytes"].mean()) if len(per_subtask) else 0.0
            biggest = int(per_subtask["bytes"].max()) if len(per_subtask) else 0
            rows.append(
                {
                    "to": to,
                    "exchange": name,
                    "old_parallelism": plan.downstream_parallelism[0],
                    "new_parallelism": plan.downstream_parallelism[1],
                    "persisted_bytes": stored,
                    "delivered_bytes": delivered,
                    "amplification": delivered / stored if stored else 0.0,
                    "moved_bytes": int(
                        moved.loc[moved["old_subtask"] != moved["new_subtask"], "bytes"].sum()
                    ),
                    "records": records,
                    "filtered_records": filtered,
                    "filtered_share": filtered / records if records else 0.0,
                    "filtered_bytes": int(moved["filtered_bytes"].sum()),
                    "spanning_records": int(moved["spanning_records"].sum()),
                    "max_subtask_bytes": biggest,
                    "skew": biggest / mean if mean else 0.0,
                    "virtual_channels": int(per_subtask["virtual_channels"].sum()),
                }
            )
    return pd.DataFrame(rows, columns=SWEEP_COLUMNS)
