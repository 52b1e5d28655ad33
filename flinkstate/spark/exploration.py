"""Breadth-first search over a state space larger than one machine holds: the frontier and the
set of states seen live in Spark, partitioned by each state's digest, a level at a time.

A state is never shipped as an object. It is named by its path: the index, among the actions
its model enables (in the model's own, deterministic order), of the action taken at each step
from the start. An :class:`Expander` (the model's side, given by the caller and pickled to the
executors) rebuilds the start in each Python worker once, replays a partition's paths in
sorted order (consecutive paths share their prefix, so a replay costs a few steps), checks
each state as a run would and names its children by the digest of their fingerprints (a
digest every process computes alike). This module knows nothing of the model.

Each level: the frontier (digest, path), partitioned by digest and sorted by path, is expanded
(``mapInArrow``): a row per state (its outcome and findings) and a row per child (digest,
path). Children are deduplicated by digest, keeping the least path (lexicographically, so
the path is the one the single-process breadth-first search stores: the first it reaches),
anti-joined against every digest seen, and the new ones become the next frontier, their
digests added to the seen set. Both are checkpointed locally per level, so no lineage grows.
Only counts, each finding's (kind, name, least path) and a few ranks reach the driver.

Bounds: a depth (the deepest level is checked, not expanded), distinct states (the level that
crosses it keeps its least paths, as the single-process search keeps the states it reaches
first), and time (read between levels: the level under way finishes first).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from flinkstate.errors import SparkJobError
from flinkstate.spark.failures import spark_errors

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

#: rows of an expansion's Arrow batch at most
BATCH_ROWS = 4096
#: the rows an expansion writes: a state's (outcome, findings) or a child's (digest, path)
EXPANDED_SCHEMA = (
    "digest binary, path array<int>, outcome string, "
    "findings array<struct<kind: string, name: string>>"
)


class Outcome(StrEnum):
    """What a state is when checked: it goes on (actions enabled), or its run ended there."""

    OPEN = "open"
    FINISHED = "finished"
    #: an invariant is broken (the state ends its path)
    BROKEN = "broken"
    DEADLOCK = "deadlock"


class SearchStop(StrEnum):
    """Why a search ended (the explorer's ``StopReason`` values of the bounds it has)."""

    EXHAUSTED = "exhausted"
    MAX_DEPTH = "max-depth"
    MAX_STATES = "max-states"
    TIME = "time"


@dataclass(frozen=True)
class Expansion:
    """What an expander says of one state: its outcome, its findings (kind, name), and its
    children (digest, index of the action), those only when asked to follow."""

    outcome: Outcome
    findings: tuple[tuple[str, str], ...] = ()
    children: tuple[tuple[bytes, int], ...] = ()


class Expander(Protocol):
    """The model's side of the search, pickled to the executors."""

    def expand(
        self, paths: Iterable[list[int]], follow: bool
    ) -> Iterator[tuple[list[int], Expansion]]:
        """Each path with its state's expansion (checked and, if ``follow``, its children),
        in the paths' order (given sorted: consecutive paths share prefixes)."""
        ...


@dataclass(frozen=True)
class FoundPath:
    """A finding's least path among the shallowest states it holds at, and the distinct states
    stored when the single-process search would first have found it."""

    kind: str
    name: str
    path: tuple[int, ...]
    found_after: int


@dataclass(frozen=True)
class LevelProgress:
    """After a level: its depth, the states on it, distinct states so far, seconds spent."""

    depth: int
    frontier: int
    distinct: int
    elapsed: float


@dataclass(frozen=True)
class SearchAnswer:
    """A search's counts (``states``: every arrival, the start and each transition) and its
    findings, each by (kind, name) at its shallowest."""

    states: int
    distinct: int
    depth: int
    finished: int
    broken: int
    elapsed: float
    stopped_by: SearchStop
    findings: tuple[FoundPath, ...]


@dataclass
class _Tally:
    """The running counts of a search."""

    states: int = 1
    distinct: int = 1
    depth: int = 0
    finished: int = 0
    broken: int = 0
    stopped_by: SearchStop = SearchStop.EXHAUSTED


def breadth_first(
    spark: SparkSession,
    expander: Expander,
    root: bytes,
    *,
    max_depth: int | None = None,
    max_states: int | None = None,
    time_budget: float | None = None,
    progress: Callable[[LevelProgress], None] | None = None,
) -> SearchAnswer:
    """Every state reachable from the start whose digest is ``root``, level by level, within
    the bounds. A failed Spark job is one :class:`SparkJobError`."""
    with spark_errors(SparkJobError, "the exploration's Spark job failed"):
        return _Search(spark, expander, max_depth, max_states, time_budget, progress).run(root)


class _Search:
    def __init__(
        self,
        spark: SparkSession,
        expander: Expander,
        max_depth: int | None,
        max_states: int | None,
        time_budget: float | None,
        progress: Callable[[LevelProgress], None] | None,
    ) -> None:
        self.spark = spark
        self.expander = expander
        self.max_depth = max_depth
        self.max_states = max_states
        self.started = time.monotonic()
        self.deadline = None if time_budget is None else self.started + time_budget
        self.progress = progress
        self.tally = _Tally()
        #: the states on the level last checked
        self.level_size = 1
        self.found: dict[tuple[str, str], FoundPath] = {}

    def run(self, root: bytes) -> SearchAnswer:
        frontier = self.spark.createDataFrame([(root, [])], "digest binary, path array<int>")
        seen = frontier.select("digest")
        depth = 0
        while True:
            follow = self.max_depth is None or depth < self.max_depth
            last = self.tally.stopped_by is not SearchStop.EXHAUSTED
            children = self.level(frontier, depth, follow and not last)
            self.tell(depth)
            if last:
                break
            if not follow:
                break
            if self.deadline is not None and time.monotonic() >= self.deadline:
                self.tally.stopped_by = SearchStop.TIME
                break
            fresh, count = self.new_states(children, seen)
            if count == 0:
                break
            depth += 1
            self.tally.depth = depth
            self.tally.distinct += count
            seen = seen.unionByName(fresh.select("digest")).localCheckpoint()
            frontier = fresh
        t = self.tally
        findings = sorted(self.found.values(), key=lambda f: (len(f.path), f.kind, f.name))
        return SearchAnswer(
            t.states,
            t.distinct,
            t.depth,
            t.finished,
            t.broken,
            time.monotonic() - self.started,
            t.stopped_by,
            tuple(findings),
        )

    def tell(self, depth: int) -> None:
        if self.progress is not None:
            elapsed = time.monotonic() - self.started
            self.progress(LevelProgress(depth, self.level_size, self.tally.distinct, elapsed))

    def level(self, frontier: DataFrame, depth: int, follow: bool) -> DataFrame:
        """Check and expand the frontier (states ``depth`` steps deep): the counts and findings
        noted, its children (digest, path) returned."""
        from pyspark.sql import functions as F

        expander = self.expander

        def expand(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            return expanded_batches(expander, batches, follow)

        # the frontier is partitioned by digest: a partition's paths, sorted, still share
        # all but their last few steps
        out = frontier.sortWithinPartitions("path").mapInArrow(expand, EXPANDED_SCHEMA)
        out = out.localCheckpoint()
        counts = {
            row["outcome"]: row["n"]
            for row in out.groupBy("outcome").agg(F.count("*").alias("n")).collect()
        }
        children = out.where(F.col("outcome").isNull()).select("digest", "path")
        self.level_size = sum(n for outcome, n in counts.items() if outcome is not None)
        self.tally.finished += counts.get(Outcome.FINISHED.value, 0)
        self.tally.broken += counts.get(Outcome.BROKEN.value, 0)
        cut_off = not follow and counts.get(Outcome.OPEN.value, 0)
        if cut_off and self.tally.stopped_by is SearchStop.EXHAUSTED:
            self.tally.stopped_by = SearchStop.MAX_DEPTH  # states left that go deeper
        self.tally.states += counts.get(None, 0)
        if counts.get(Outcome.BROKEN.value, 0) or counts.get(Outcome.DEADLOCK.value, 0):
            self.note_findings(out.where(F.col("outcome").isNotNull()), frontier)
        return children

    def note_findings(self, states: DataFrame, frontier: DataFrame) -> None:
        """Each (kind, name) not found at a shallower level, with its least path on this one
        and when the single-process search would have found it (the distinct states before
        this level, and those of this level with lesser paths, and itself)."""
        from pyspark.sql import functions as F

        rows = (
            states.where(F.size("findings") > 0)
            .select(F.explode("findings").alias("f"), "path")
            .groupBy("f.kind", "f.name")
            .agg(F.min("path").alias("path"))
            .collect()
        )
        new = [r for r in rows if (r["kind"], r["name"]) not in self.found]
        if not new:
            return
        before = self.tally.distinct - self.level_size
        ranks = lesser_paths(frontier, [list(r["path"]) for r in new])
        for row, rank in zip(new, ranks, strict=True):
            path = tuple(row["path"])
            self.found[(row["kind"], row["name"])] = FoundPath(
                row["kind"], row["name"], path, before + rank + 1
            )

    def new_states(self, children: DataFrame, seen: DataFrame) -> tuple[DataFrame, int]:
        """The children not seen before, each once with its least path (the least paths
        only, as many as the bound on distinct states leaves room for), and how many."""
        from pyspark.sql import functions as F

        least = children.groupBy("digest").agg(F.min("path").alias("path"))
        fresh = least.join(seen, "digest", "left_anti").localCheckpoint()
        count = fresh.count()
        room = None if self.max_states is None else self.max_states - self.tally.distinct
        if room is not None and count > room:
            self.tally.stopped_by = SearchStop.MAX_STATES
            fresh = fresh.orderBy("path").limit(room).localCheckpoint()
            count = room
        return fresh, count


def lesser_paths(frontier: DataFrame, paths: Sequence[list[int]]) -> list[int]:
    """For each path, how many of the frontier's paths are less (one Spark job for all)."""
    from pyspark.sql import functions as F

    if not paths:
        return []
    sums = []
    for index, path in enumerate(paths):
        literal = F.array(*[F.lit(i) for i in path]).cast("array<int>")
        sums.append(F.sum(F.when(F.col("path") < literal, 1).otherwise(0)).alias(f"r{index}"))
    row = frontier.agg(*sums).collect()[0]
    return [int(row[f"r{index}"] or 0) for index in range(len(paths))]


def expanded_batches(
    expander: Expander, batches: Iterable[pa.RecordBatch], follow: bool
) -> Iterator[pa.RecordBatch]:
    """The expansion's rows (``EXPANDED_SCHEMA``) of a partition's frontier batches, batch by
    batch (the expander's replay cache lives across them: it is one generator)."""
    import pyarrow as pa

    schema = pa.schema(
        [
            ("digest", pa.binary()),
            ("path", pa.list_(pa.int32())),
            ("outcome", pa.string()),
            (
                "findings",
                pa.list_(pa.struct([("kind", pa.string()), ("name", pa.string())])),
            ),
        ]
    )

    def paths() -> Iterator[list[int]]:
        for batch in batches:
            yield from batch.column("path").to_pylist()

    rows: dict[str, list[object]] = {name: [] for name in schema.names}
    for path, expansion in expander.expand(paths(), follow):
        rows["digest"].append(None)
        rows["path"].append(path)
        rows["outcome"].append(expansion.outcome.value)
        rows["findings"].append([{"kind": k, "name": n} for k, n in expansion.findings])
        for digest, index in expansion.children:
            rows["digest"].append(digest)
            rows["path"].append([*path, index])
            rows["outcome"].append(None)
            rows["findings"].append(None)
        if len(rows["path"]) >= BATCH_ROWS:
            yield pa.RecordBatch.from_pydict(rows, schema=schema)
            rows = {name: [] for name in schema.names}
    if rows["path"]:
        yield pa.RecordBatch.from_pydict(rows, schema=schema)
