"""A swarm: many seeded, bounded searches spread over Spark's executors, each on its own, their
states counted together and their findings brought back.

Where breadth first cannot finish, many small searches that go deep in different random orders
find what lies deep sooner (swarm verification). Each searcher is a seed; a :class:`Searcher`
(the model's side, pickled to the executors) runs one and writes a row per distinct state it
reached (its digest: counted distinct across the swarm in Spark) and a row per finding (kind,
name and its path of action indices, the shortest the searcher saw). Only the counts and, per
(kind, name), the shortest path of any searcher (the least among those) reach the driver.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from flinkstate.errors import SparkJobError
from flinkstate.spark.failures import spark_errors

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

#: the rows a searcher writes: a state reached (digest), or a finding (kind, name, path); and
#: once, its transitions (``arrivals``) and deepest depth
SWARM_SCHEMA = (
    "digest binary, outcome string, kind string, name string, path array<int>, "
    "found_after long, arrivals long, deepest int"
)


@dataclass(frozen=True)
class Searched:
    """What one searcher did: its states' digests and outcomes (``Outcome`` values), its
    findings ((kind, name) -> the shortest path it saw, and its distinct states when it saw
    it), its arrivals (the start and each transition) and deepest depth."""

    digests: list[bytes]
    outcomes: list[str]
    findings: dict[tuple[str, str], tuple[list[int], int]]
    arrivals: int
    deepest: int


class Searcher(Protocol):
    """The model's side of a swarm, pickled to the executors."""

    def search(self, seed: int) -> Searched:
        """One bounded search, its random order chosen by ``seed``."""
        ...


@dataclass(frozen=True)
class SwarmAnswer:
    """A swarm's counts (``distinct`` across all searchers) and its findings: per (kind,
    name), the shortest path any searcher found (the least of those), and the distinct states
    its searcher had stored then."""

    searchers: int
    states: int
    distinct: int
    finished: int
    broken: int
    depth: int
    elapsed: float
    findings: tuple[tuple[str, str, tuple[int, ...], int], ...]


def swarm(spark: SparkSession, searcher: Searcher, seeds: range) -> SwarmAnswer:
    """Run a searcher per seed over the executors (a task per seed). A failed Spark job is one
    :class:`SparkJobError`."""
    from pyspark.sql import functions as F

    started = time.monotonic()

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return searched_batches(searcher, batches)

    with spark_errors(SparkJobError, "the swarm's Spark job failed"):
        seeded = spark.range(seeds.start, seeds.stop, seeds.step, numPartitions=len(seeds))
        rows = seeded.mapInArrow(run, SWARM_SCHEMA).localCheckpoint()
        totals = rows.agg(
            F.coalesce(F.sum("arrivals"), F.lit(0)).alias("states"),
            F.coalesce(F.max("deepest"), F.lit(0)).alias("depth"),
            F.countDistinct("digest").alias("distinct"),
            F.countDistinct(F.when(F.col("outcome") == "finished", F.col("digest"))).alias("fin"),
            F.countDistinct(F.when(F.col("outcome") == "broken", F.col("digest"))).alias("bad"),
        ).collect()[0]
        shortest = (
            rows.where(F.col("kind").isNotNull())
            .groupBy("kind", "name")
            .agg(
                F.min(F.struct(F.size("path").alias("length"), "path", "found_after")).alias(
                    "least"
                )
            )
            .collect()
        )
    findings = [
        (row["kind"], row["name"], tuple(row["least"]["path"]), int(row["least"]["found_after"]))
        for row in shortest
    ]
    return SwarmAnswer(
        len(seeds),
        int(totals["states"]),
        int(totals["distinct"]),
        int(totals["fin"]),
        int(totals["bad"]),
        int(totals["depth"]),
        time.monotonic() - started,
        tuple(sorted(findings, key=lambda f: (len(f[2]), f[0], f[1]))),
    )


def searched_batches(
    searcher: Searcher, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """The rows (``SWARM_SCHEMA``) of the searches whose seeds are in ``batches``."""
    import pyarrow as pa

    for batch in batches:
        for seed in batch.column("id").to_pylist():
            done = searcher.search(seed)
            count = len(done.digests)
            found = list(done.findings.items())
            yield pa.RecordBatch.from_pydict(
                {
                    "digest": [*done.digests, *[None] * (len(found) + 1)],
                    "outcome": [*done.outcomes, *[None] * (len(found) + 1)],
                    "kind": [*[None] * count, *[k for (k, _), _ in found], None],
                    "name": [*[None] * count, *[n for (_, n), _ in found], None],
                    "path": [*[None] * count, *[p for _, (p, _) in found], None],
                    "found_after": [*[None] * count, *[n for _, (_, n) in found], None],
                    "arrivals": [*[None] * (count + len(found)), done.arrivals],
                    "deepest": [*[None] * (count + len(found)), done.deepest],
                },
                schema=pa.schema(
                    [
                        ("digest", pa.binary()),
                        ("outcome", pa.string()),
                        ("kind", pa.string()),
                        ("name", pa.string()),
                        ("path", pa.list_(pa.int32())),
                        ("found_after", pa.int64()),
                        ("arrivals", pa.int64()),
                        ("deepest", pa.int32()),
                    ]
                ),
            )
