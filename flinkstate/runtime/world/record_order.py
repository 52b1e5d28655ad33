"""What the order invariants remember about records already on their way.

Flink promises order per channel and, over keyBy exchanges, per key; the simulator checks both
as records are processed (``mailbox.do_process``) and checks a checkpoint's cut against when
each record was written (``invariants``). This component is that memory: the path each record
took, the last sequence number seen per path and per key, and when each delivery was written.
It is no part of Flink's state, only of the checks, and copies on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.runtime.buffer.records import Path
from flinkstate.runtime.copying import NotState, StateKey


@dataclass(slots=True)
class RecordOrder:
    """Paths, the last sequence numbers per path and per key, and write steps."""

    #: the path of each record at each task that processed it
    paths: dict[tuple[int, str], Path] = field(default_factory=dict)
    #: the last seq per (source subtask, path)
    path_seq: dict[tuple[str, Path], int] = field(default_factory=dict)
    #: the last seq per (operator, source subtask, key): per-key order at keyed operators
    key_seq: dict[tuple[str, str, int], int] = field(default_factory=dict)
    #: step at which each delivery finished being written, and by which task
    emitted_at: dict[tuple[int, str], tuple[int, str]] = field(default_factory=dict)

    NOT_STATE: ClassVar[NotState] = {}

    def state_key(self, cut: Mapping[str, int]) -> StateKey:
        """Lookups by record, path and key, as sets: the order entries were added in is no
        state (a checkpoint's check walks ``emitted_at`` only to report what it finds). A
        write step is read only against its producer's snapshot in the pending checkpoint
        (``cut``: task name -> snapshot step), so it is keyed as whether it came after it: a
        step before any snapshot yet to come is before it too."""
        return (
            frozenset(self.paths.items()),
            frozenset(self.path_seq.items()),
            frozenset(self.key_seq.items()),
            frozenset(
                [
                    (key, producer, producer in cut and step >= cut[producer])
                    for key, (step, producer) in self.emitted_at.items()
                ]
            ),
        )

    @staticmethod
    def path_id(upstream: Path, channel: str) -> Path:
        """The path that continues ``upstream`` through ``channel``.

        Examples:
            >>> RecordOrder.path_id(RecordOrder.path_id(0, "map[0]<source[1]"), "sink[0]<map[0]")
            ((0, 'map[0]<source[1]'), 'sink[0]<map[0]')
        """
        return (upstream, channel)

    def copy(self) -> RecordOrder:
        return RecordOrder(
            dict(self.paths),
            dict(self.path_seq),
            dict(self.key_seq),
            dict(self.emitted_at),
        )
