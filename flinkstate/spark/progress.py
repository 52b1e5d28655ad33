"""Progress of a multi-job Spark computation: one step per phase, live task counts inside.

Spark's own console bar needs the web UI, which the embedded session turns off; this reads the
same counts from the status tracker while a phase's jobs run, so a long job on ten million
records shows it is moving: a terminal bar, or a callback (a widget's progress bar). A Spark
Connect session has no status tracker; there the counts come from the progress the server sends
with each query (a progress handler), every couple of seconds while it runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from flinkstate.spark.session import is_connect

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: called with (phases done, phases in all, what runs now); while a phase runs, again from a
#: watcher thread as its tasks complete ("routing buffers: 12/40 tasks")
ProgressCallback = Callable[[int, int, str], None]


class SparkProgress:
    """``with progress.phase("routing buffers"): ...`` around each phase's Spark actions.

    ``show``: True for a tqdm bar, a callback, or False for nothing.
    """

    def __init__(
        self,
        spark: SparkSession,
        phases: int,
        label: str,
        show: bool | ProgressCallback = True,
        poll_seconds: float = 0.5,
    ) -> None:
        self.spark = spark
        self.phases = phases
        self.done = 0
        self.poll_seconds = poll_seconds
        self.callback: ProgressCallback | None = show if callable(show) else None
        self.bar: Any = None
        if show is True:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=phases, desc=label, unit="phase")

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if self.bar is None and self.callback is None:
            yield
            return
        self._tell(name)
        if is_connect(self.spark):
            # a plain function is what the handlers' protocol calls
            watch = cast(Any, self._connect_watch(name))
            self.spark.registerProgressHandler(watch)
            try:
                yield
            finally:
                self.spark.removeProgressHandler(watch)
                self.done += 1
                if self.bar is not None:
                    self.bar.update(1)
                self._tell(name)
            return
        stop = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(name, stop), daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()
            self.done += 1
            if self.bar is not None:
                self.bar.update(1)
            self._tell(name)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def _tell(self, what: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(what)
        if self.callback is not None:
            self.callback(self.done, self.phases, what)

    def _watch(self, name: str, stop: threading.Event) -> None:
        tracker = self.spark.sparkContext.statusTracker()
        while not stop.wait(self.poll_seconds):
            done = total = 0
            for stage in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
            if total and not stop.is_set():
                self._tell(f"{name}: {done}/{total} tasks")

    def _connect_watch(self, name: str) -> Callable[..., None]:
        """A Connect progress handler telling the task counts of the query that runs."""

        def watch(
            stages: Iterable[Any] | None, inflight_tasks: int, operation_id: Any, done: bool
        ) -> None:  # pyspark calls it by these names
            found = list(stages or ())
            total = sum(stage.num_tasks for stage in found)
            finished = sum(stage.num_completed_tasks for stage in found)
            if total and not done:
                self._tell(f"{name}: {finished}/{total} tasks")

        return watch
