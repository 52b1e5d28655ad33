"""The record filter of an ambiguous virtual channel: does this new subtask keep a record?

When several new subtasks read the same old subtask's in-flight data, each of them receives all
of its records and keeps only those that the exchange's partitioner, set up for the new
parallelism, would send to it (Flink's ``PartitionerRecordFilter``, which
``VirtualChannelRecordFilterFactory.createFilter`` builds from the partitioner, the subtask
index, the number of channels and the max parallelism: it keeps a record iff
``partitioner.selectChannel(record) == subtaskIndex``). Which subtask the partitioner selects
is decided by :class:`~flinkstate.rescale.channel_selection.ChannelSelection` alone; a filter
is that selection asked on behalf of one subtask, with its inputs checked, for the API and the
``mapping`` command.
"""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError
from flinkstate.javahash import long_key
from flinkstate.keygroups import check_parallelism_against_max
from flinkstate.rescale.channel_selection import ChannelSelection
from flinkstate.rescale.partitioner import Partitioner


@dataclass(frozen=True)
class PartitionerRecordFilter:
    """New subtask ``subtask`` of ``parallelism`` keeps a record iff ``partitioner``, set up
    for ``parallelism`` channels and ``max_parallelism`` key groups, sends the record's key to
    it. Only exchanges whose partitioner selects a subtask by the record's key (keyBy,
    partitionCustom) have ambiguous old subtasks, so only they filter; any other partitioner is
    refused.

    Examples
    --------
    New subtask 1 of 3 after a keyBy, over 128 key groups (its range is 43 to 85): the
    ``Long`` key 42 is in key group 29, 4294967295 in key group 80:

    >>> kept_by_1 = PartitionerRecordFilter.of("keyBy", 1, 3, 128)
    >>> kept_by_1.selected_subtask(42), kept_by_1.keeps(42)
    (0, False)
    >>> kept_by_1.selected_subtask(4294967295), kept_by_1.keeps(4294967295)
    (1, True)

    A rebalance does not select by key, so it never filters:

    >>> PartitionerRecordFilter.of("rebalance", 1, 3, 128)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: rebalance() gives a record no owner, ...
    """

    partitioner: Partitioner
    subtask: int
    parallelism: int
    max_parallelism: int

    def __post_init__(self) -> None:
        if not isinstance(self.partitioner, Partitioner):
            raise InvalidParameterError(
                f"partitioner must be a Partitioner, got {self.partitioner!r} (name one with "
                "PartitionerRecordFilter.of)"
            )
        if ChannelSelection.of(self.partitioner) is ChannelSelection.NONE:
            # the command line prints this text as it always has
            raise InvalidParameterError(
                f"{self.partitioner.datastream_call} gives a record no owner, so its records "
                "are never filtered: only keyBy and partitionCustom exchanges filter"
            )
        check_parallelism_against_max(self.parallelism, self.max_parallelism)
        if isinstance(self.subtask, bool) or not isinstance(self.subtask, int):
            raise InvalidParameterError(f"subtask must be a whole number, got {self.subtask!r}")
        if not 0 <= self.subtask < self.parallelism:
            raise InvalidParameterError(
                f"subtask {self.subtask} is out of range 0 to {self.parallelism - 1} "
                f"(parallelism {self.parallelism})"
            )

    @classmethod
    def of(
        cls,
        partitioner: Partitioner | str,
        subtask: int,
        parallelism: int,
        max_parallelism: int,
    ) -> PartitionerRecordFilter:
        """The filter of new subtask ``subtask``, the partitioner given by any of its names
        (``keyBy``, ``KeyGroupStreamPartitioner``, ``partitionCustom``, ...)."""
        return cls(Partitioner.parse(partitioner), subtask, parallelism, max_parallelism)

    def selected_subtask(self, key: int) -> int:
        """The new subtask the partitioner selects for a record of ``Long`` key ``key``
        (Flink's ``selectChannel``)."""
        selection = ChannelSelection.of(self.partitioner)
        return selection.select(long_key(key), self.max_parallelism, self.parallelism)

    def keeps(self, key: int) -> bool:
        """Whether this subtask keeps a record of ``Long`` key ``key`` (Flink's ``filter``)."""
        return self.selected_subtask(key) == self.subtask
